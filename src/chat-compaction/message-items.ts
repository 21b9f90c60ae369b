/**
 * OpenAI chat messages as the context model's items and back, for the compaction policy used
 * without Temporal (`chat-plan.ts`).
 *
 * In: the messages are imported like an OpenAI chat file (`src/importers`, the same validation and
 * token counts), each item remembering its message's index. Messages a compaction wrote come back
 * typed as it wrote them (`written-items.ts`), so that compacting a compacted conversation again
 * merges the summary and replaces the carried state, keeping every path its trail named.
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
import type { ContextItem } from '../context/items';
import { lower } from '../context/lower';
import type { Tokenizer } from '../context/tokenizer';
import { openAIFromValue } from '../importers/openai-chat-import';

/** The items of a conversation, and the index of the message each came from. */
export interface MessageItems {
  items: ContextItem[];
  /** Item id → index of its message in the input (the tool list has none). */
  indexOf: ReadonlyMap<string, number>;
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
  // Messages a compaction wrote come back typed (the importer reads them so).
  const { items } = openAIFromValue(value, { tokenizer }, 'message:');
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
