/**
 * OpenAI chat messages as the context model's items and back, for the compaction policy used
 * without Temporal (`chat-plan.ts`).
 *
 * In: the messages are imported like an OpenAI chat file (`src/importers`, the same validation and
 * token counts), each item remembering its message's index. Messages a compaction wrote come back
 * typed as it wrote them, recognised by their first line, so that compacting a compacted
 * conversation again merges the summary instead of summarizing it as a user message, and replaces
 * the carried state instead of stacking a second copy: the summary (`SUMMARY_MESSAGE_PREFIX`),
 * the artifact trail, the open errors, the git diff stat, task lists and memories.
 *
 * Out: items are lowered to the request a model is sent (`lower()`: header first, tool calls and
 * results laid out as the API accepts them, internal fields dropped).
 *
 * Pure module.
 */
import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { MEMORY_PREFIX, TASK_LIST_PREFIX } from '../context/agent-notes';
import { ARTIFACT_TRAIL_HEADING } from '../context/artifact-trail';
import { GIT_DIFF_STAT_HEADING } from '../context/carried-state';
import { EXTRACTIVE_LABEL } from '../context/extractive-summary';
import type { ContextItem, NoteItem } from '../context/items';
import { lower } from '../context/lower';
import { OPEN_ERRORS_HEADING } from '../context/open-errors';
import { SUMMARY_MESSAGE_PREFIX } from '../context/post-compaction';
import { assignRounds } from '../context/segments';
import type { Tokenizer } from '../context/tokenizer';
import { openAIFromValue } from '../importers/openai-chat-import';

/** The first line of each message a compaction writes, and the item type it is read back as. */
const WRITTEN_BY_COMPACTION: readonly { prefix: string; type: 'COMPACTION_SUMMARY' | NoteItem['type'] }[] = [
  { prefix: SUMMARY_MESSAGE_PREFIX, type: 'COMPACTION_SUMMARY' },
  { prefix: ARTIFACT_TRAIL_HEADING, type: 'ARTIFACT_TRAIL' },
  { prefix: OPEN_ERRORS_HEADING, type: 'OPEN_ERRORS' },
  { prefix: GIT_DIFF_STAT_HEADING, type: 'GIT_DIFF_STAT' },
  { prefix: TASK_LIST_PREFIX, type: 'TASK_LIST' },
  { prefix: MEMORY_PREFIX, type: 'MEMORY' },
];

/** The items of a conversation, and the index of the message each came from. */
export interface MessageItems {
  items: ContextItem[];
  /** Item id → index of its message in the input (the tool list has none). */
  indexOf: ReadonlyMap<string, number>;
}

/** A user message a compaction wrote, typed back as the item it was (the others unchanged). */
function asWritten(item: ContextItem): ContextItem {
  if (item.type !== 'USER_MESSAGE' || typeof item.message.content !== 'string') return item;
  const content = item.message.content;
  const written = WRITTEN_BY_COMPACTION.find((w) => content.startsWith(w.prefix));
  if (!written) return item;
  const base = { ...item, isMeta: true, message: { role: 'user' as const, content } };
  if (written.type === 'COMPACTION_SUMMARY') {
    return {
      ...base,
      type: 'COMPACTION_SUMMARY',
      summarizer: content.includes(EXTRACTIVE_LABEL) ? 'extractive' : 'llm',
    };
  }
  return { ...base, type: written.type };
}

/**
 * The messages (and tools) as token-counted items with rounds, in order.
 * @throws ImportError naming the message (`[3].role`) that is not a chat message
 */
export function itemsOfMessages(
  messages: readonly ChatCompletionMessageParam[],
  tools: readonly ChatCompletionFunctionTool[] | undefined,
  tokenizer: Tokenizer,
): MessageItems {
  const value = tools && tools.length > 0 ? { messages, tools } : messages;
  const imported = openAIFromValue(value, { tokenizer }, 'message:').items;
  // Being meta changes where rounds start: numbered again once the written messages are typed.
  const items = assignRounds(imported.map(asWritten));
  const indexOf = new Map<string, number>();
  for (const item of items) {
    if (item.type !== 'TOOL_DEFINITIONS' && item.origin) indexOf.set(item.id, item.origin.index);
  }
  return { items, indexOf };
}

/** The input index of each item that stands for an input message (a cut form for its original). */
export function indicesOf(items: readonly ContextItem[], indexOf: ReadonlyMap<string, number>): number[] {
  const indices = new Set<number>();
  for (const item of items) {
    const index = indexOf.get(item.sourceId ?? item.id);
    if (index !== undefined) indices.add(index);
  }
  return [...indices].sort((a, b) => a - b);
}

/** The request of the items, as the `openai` package types it. */
export function messagesOfItems(items: readonly ContextItem[]): {
  messages: ChatCompletionMessageParam[];
  tools: ChatCompletionFunctionTool[];
} {
  const request = lower(items);
  // `lower()` writes exactly the API's fields; user content parts are the caller's own parts.
  return {
    messages: request.messages as unknown as ChatCompletionMessageParam[],
    tools: request.tools as ChatCompletionFunctionTool[],
  };
}
