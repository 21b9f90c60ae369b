/**
 * The summary request (DESIGN.md §5; seeds 000, 001, 002): the context the seeds preserve
 * (original task, pinned content, the last memories, the task list, and the carried state: the
 * artifact trail, the open errors, the git diff stat), the previous summary to merge into, then
 * the span to compress serialized as a transcript (so the model reads it instead of continuing it),
 * the structured prompt and optional focus text.
 *
 * Pure module.
 */
import type { CompactionConfig } from './config';
import { messageText, type ChatMessage, type ContextItem } from './items';
import { headerRoles } from './segments';
import {
  FOCUS_PREFIX,
  middleCutMarker,
  SUMMARIZER_SYSTEM_PROMPT,
  SUMMARY_PROMPT,
  UPDATE_SUMMARY_PROMPT,
} from './summary-prompt';
import { SUMMARY_MESSAGE_PREFIX } from './post-compaction';

export interface SummaryRequestInput {
  /** The whole context with its new carried state: the header and the carried state are read from it. */
  items: readonly ContextItem[];
  /** The items to compress, in context order. */
  toSummarize: readonly ContextItem[];
  /** Summaries already in the context: the new summary merges them (update prompt). */
  previousSummaries: readonly ContextItem[];
  /** The user's focus instructions (`/compact <focus>`), if any. */
  focus: string | null | undefined;
  config: Pick<CompactionConfig, 'summaryInputMaxChars' | 'summaryInputHeadRatio' | 'summaryInputTailRatio'>;
}

export interface SummaryRequest {
  messages: ChatMessage[];
  /** Characters of the serialized span before any cut. */
  inputChars: number;
  /** Characters dropped from the middle (0 when the span fit). */
  droppedChars: number;
}

/** One item as a transcript line; `withCalls` false drops an assistant's tool calls (seed 002). */
function serializeItem(item: ContextItem, withCalls: boolean): string {
  if (item.type === 'TOOL_DEFINITIONS') return '';
  const text = messageText(item.message);
  switch (item.type) {
    case 'ASSISTANT_MESSAGE': {
      const lines = text.trim() ? [`[Assistant]: ${text}`] : [];
      if (withCalls) {
        for (const call of item.message.tool_calls ?? []) {
          lines.push(`[Assistant tool call] ${call.function.name}(${call.function.arguments})`);
        }
      }
      return lines.join('\n');
    }
    case 'TOOL_RESULT':
      return `[Tool result${item.message.name ? ` ${item.message.name}` : ''}]: ${text}`;
    case 'USER_MESSAGE':
      return `[${item.isMeta ? 'System note' : 'User'}]: ${text}`;
    case 'COMPACTION_SUMMARY':
      return `[Earlier summary]: ${text}`;
    default:
      return `[${item.type.toLowerCase().replace(/_/g, ' ')}]: ${text}`;
  }
}

/** Moves a cut position off the middle of a surrogate pair. */
function safeCut(text: string, at: number): number {
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? at - 1 : at;
}

/**
 * Cuts text over `maxChars` to its head and tail (seed 000: 20% and 30% of the limit), with a
 * marker saying how much of the middle went. Returns the text and the characters dropped.
 */
export function headTailCut(
  text: string,
  maxChars: number,
  headRatio: number,
  tailRatio: number,
): { text: string; droppedChars: number } {
  if (text.length <= maxChars) return { text, droppedChars: 0 };
  const head = safeCut(text, Math.floor(maxChars * headRatio));
  const tailStart = safeCut(text, text.length - Math.floor(maxChars * tailRatio));
  const droppedChars = tailStart - head;
  return { text: text.slice(0, head) + middleCutMarker(droppedChars) + text.slice(tailStart), droppedChars };
}

/** The transcript of the span; the last assistant message's tool calls are left out (seed 002). */
export function serializeSpan(items: readonly ContextItem[]): string {
  let lastAssistant = -1;
  items.forEach((item, i) => {
    if (item.type === 'ASSISTANT_MESSAGE') lastAssistant = i;
  });
  const lastIsAssistant = lastAssistant === items.length - 1;
  return items
    .map((item, i) => serializeItem(item, !(lastIsAssistant && i === lastAssistant)))
    .filter((line) => line.length > 0)
    .join('\n\n');
}

function stripPrefix(text: string): string {
  return text.startsWith(SUMMARY_MESSAGE_PREFIX) ? text.slice(SUMMARY_MESSAGE_PREFIX.length).trim() : text;
}

/** What the seeds preserve beside the summary, as a block for the prompt ('' when nothing). */
function preservedContext(items: readonly ContextItem[]): string {
  const roles = headerRoles(items);
  const parts: string[] = [];
  const of = (role: string): string[] =>
    items.flatMap((item, i) =>
      roles[i] === role && item.type !== 'TOOL_DEFINITIONS' ? [messageText(item.message)] : [],
    );
  const task = of('task');
  if (task.length > 0) parts.push(`Original task:\n${task.join('\n')}`);
  const pinned = of('pinned');
  if (pinned.length > 0) parts.push(`Pinned content:\n${pinned.join('\n')}`);
  const memories = of('memory');
  if (memories.length > 0) parts.push(`Recent memories:\n${memories.map((m) => `- ${m}`).join('\n')}`);
  const tasks = of('task_list');
  if (tasks.length > 0) parts.push(`Task list:\n${tasks.join('\n')}`);
  // The carried state (artifact trail, open errors, git diff stat) as the header holds it.
  for (const role of ['artifacts', 'errors', 'git']) parts.push(...of(role));
  return parts.length > 0 ? `<preserved-context>\n${parts.join('\n\n')}\n</preserved-context>` : '';
}

/** Builds the messages of the summary call. Pure; never includes the items' ids or secrets. */
export function buildSummaryRequest(input: SummaryRequestInput): SummaryRequest {
  const transcript = serializeSpan(input.toSummarize);
  const cut = headTailCut(
    transcript,
    input.config.summaryInputMaxChars,
    input.config.summaryInputHeadRatio,
    input.config.summaryInputTailRatio,
  );
  const previous = input.previousSummaries
    .map((item) => (item.type === 'TOOL_DEFINITIONS' ? '' : stripPrefix(messageText(item.message))))
    .filter((text) => text.length > 0);
  // The previous summary first: the update prompt merges the conversation into it.
  const sections = [
    preservedContext(input.items),
    previous.length > 0 ? `<previous-summary>\n${previous.join('\n\n')}\n</previous-summary>` : '',
    `<conversation>\n${cut.text}\n</conversation>`,
    previous.length > 0 ? UPDATE_SUMMARY_PROMPT : SUMMARY_PROMPT,
    input.focus && input.focus.trim() ? `${FOCUS_PREFIX}${input.focus.trim()}` : '',
  ].filter((s) => s.length > 0);
  return {
    messages: [
      { role: 'system', content: SUMMARIZER_SYSTEM_PROMPT },
      { role: 'user', content: sections.join('\n\n') },
    ],
    inputChars: transcript.length,
    droppedChars: cut.droppedChars,
  };
}
