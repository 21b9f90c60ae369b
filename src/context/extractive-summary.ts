/**
 * The extractive summarizer: seed 002's five sections filled deterministically from the
 * transcript, with no model call. For offline use (`npm start` without an LLM, replaying recorded
 * sessions) and as a fallback a user can choose (`summarizer: extractive`). Its output says it is
 * extractive in its first line, wherever it appears.
 *
 * Pure module.
 */
import { artifactTrail } from './artifact-trail';
import { messageText, type ContextItem } from './items';
import { SUMMARY_MESSAGE_PREFIX } from './post-compaction';
import { headerRoles } from './segments';
import { DONE_TEXT, ERROR_TEXT, NEXT_STEP_TEXT } from './text-signals';

/** The label the extractive summary starts with. */
export const EXTRACTIVE_LABEL = '(Extractive summary: assembled from the transcript without an LLM.)';

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

function textOf(item: ContextItem): string {
  return item.type === 'TOOL_DEFINITIONS' ? '' : messageText(item.message);
}

/** Errors seen in the span, each with whether something later in the span reported success. */
function errorsSeen(span: readonly ContextItem[]): string[] {
  const out: string[] = [];
  span.forEach((item, i) => {
    if (item.type !== 'TOOL_RESULT' && item.type !== 'ASSISTANT_MESSAGE') return;
    const text = textOf(item);
    if (!ERROR_TEXT.test(text) || DONE_TEXT.test(text)) return;
    const line = text.split('\n').find((l) => ERROR_TEXT.test(l)) ?? text;
    const fixed = span
      .slice(i + 1)
      .some((later) => later.type === 'ASSISTANT_MESSAGE' && DONE_TEXT.test(textOf(later)));
    out.push(`${oneLine(line, 160)} (${fixed ? 'later reported fixed' : 'not seen fixed in this span'})`);
  });
  return out.slice(-8);
}

/** The last sentence of the assistant's that announces a next step. */
function lastNextStep(span: readonly ContextItem[]): string | null {
  for (let i = span.length - 1; i >= 0; i--) {
    const item = span[i] as ContextItem;
    if (item.type !== 'ASSISTANT_MESSAGE') continue;
    const sentences = textOf(item).split(/(?<=[.!?])\s+|\n+/);
    for (let j = sentences.length - 1; j >= 0; j--) {
      const sentence = sentences[j] ?? '';
      if (NEXT_STEP_TEXT.test(sentence)) return oneLine(sentence, 300);
    }
  }
  return null;
}

function list(lines: readonly string[], empty: string): string {
  return lines.length > 0 ? lines.map((l) => `- ${l}`).join('\n') : `- ${empty}`;
}

/**
 * The summary of `toSummarize` (a span of `items`), as the body of a summary message. Previous
 * summaries among `items` are carried over at the end (the most expendable part when the summary
 * is cut to its budget), so nothing they held is lost outright.
 */
export function extractiveSummary(
  items: readonly ContextItem[],
  toSummarize: readonly ContextItem[],
): string {
  const roles = headerRoles(items);
  const task = items.find((_, i) => roles[i] === 'task');
  const pinned = items.filter((_, i) => roles[i] === 'pinned').map(textOf);
  const requests = toSummarize
    .filter((i) => i.type === 'USER_MESSAGE' && !i.isMeta)
    .map((i) => oneLine(textOf(i), 200));
  const trail = artifactTrail(toSummarize);
  const previous = items
    .filter((i) => i.type === 'COMPACTION_SUMMARY')
    .map((i) => textOf(i).replace(SUMMARY_MESSAGE_PREFIX, '').replace(EXTRACTIVE_LABEL, '').trim());
  const toolCalls = toSummarize.reduce(
    (n, i) => n + (i.type === 'ASSISTANT_MESSAGE' ? (i.message.tool_calls?.length ?? 0) : 0),
    0,
  );

  const sections = [
    EXTRACTIVE_LABEL,
    '## 1. Task Overview',
    task ? oneLine(textOf(task), 600) : '(no original task recorded)',
    requests.length > 0 ? `Requests in this span:\n${list(requests.slice(-5), '')}` : '',
    '## 2. Current State',
    `This span held ${toSummarize.length} messages with ${toolCalls} tool calls.`,
    `Files modified:\n${list(trail.modified, 'none recorded')}`,
    `Files read:\n${list(trail.read, 'none recorded')}`,
    `Commands run:\n${list(trail.commands.slice(-10), 'none recorded')}`,
    '## 3. Important Discoveries',
    `Errors seen:\n${list(errorsSeen(toSummarize), 'none')}`,
    '## 4. Next Steps',
    lastNextStep(toSummarize) ?? '(no next step stated in this span)',
    '## 5. Context to Preserve',
    list(
      pinned.map((p) => oneLine(p, 400)),
      'no pinned content',
    ),
    previous.length > 0 ? `Earlier summary:\n${previous.join('\n\n')}` : '',
  ];
  return sections.filter((s) => s.length > 0).join('\n');
}
