/**
 * The extractive summarizer: seed 002's five sections filled deterministically from the transcript,
 * with no model call — for offline use (`npm start` without an LLM, `eval`, replaying recorded
 * sessions) and as a summarizer a user can choose (`summarizer: extractive`). Its text says it is
 * extractive in its first line.
 *
 * It merges as the LLM's update prompt does: a previous extractive summary is read back into its
 * lists and united with the new span's (one task overview; requests, files, commands, findings and
 * errors carried; no nested "earlier summary" chains); a previous summary it cannot read (an LLM's,
 * an imported pi summary) is kept verbatim at the top, before anything new, so a new summary never
 * cuts it off. Over its budget, the oldest entries of the least useful lists go first.
 *
 * Pure module.
 */
import { collectArtifactTrail } from './artifact-trail';
import { messageText, type ContextItem, type OpenError } from './items';
import { resultErrorOf, resultSources, type ResultSource } from './item-facts';
import { SUMMARY_MESSAGE_PREFIX } from './post-compaction';
import { headerRoles } from './segments';
import { NEXT_STEP_TEXT } from './text-signals';
import type { Tokenizer } from './tokenizer';
import { pairToolCalls } from './tool-pairs';

/** The label the extractive summary starts with. */
export const EXTRACTIVE_LABEL = '(Extractive summary: assembled from the transcript without an LLM.)';
const EARLIER_LABEL = 'Earlier summary, kept verbatim:';

/** The lists of an extractive summary, oldest entries first. */
export interface ExtractiveData {
  task: string | null;
  /** Summaries of another kind, kept verbatim. */
  earlier: string[];
  requests: string[];
  covered: { fromRound: number; toRound: number; messages: number; toolCalls: number } | null;
  modified: string[];
  read: string[];
  commands: string[];
  findings: string[];
  errors: string[];
  nextSteps: string[];
  preserve: string[];
}

type ListKey =
  'requests' | 'modified' | 'read' | 'commands' | 'findings' | 'errors' | 'nextSteps' | 'preserve';

/** How each list is labelled in the text. */
const LABELS: Record<ListKey, string> = {
  requests: 'User requests:',
  modified: 'Files modified:',
  read: 'Files read:',
  commands: 'Commands run:',
  findings: 'Findings and decisions:',
  errors: 'Errors:',
  nextSteps: 'Next steps:',
  preserve: 'To preserve:',
};
/** Most entries a merged list keeps. */
const LIMITS: Record<ListKey, number> = {
  requests: 12,
  modified: 200,
  read: 200,
  commands: 12,
  findings: 12,
  errors: 8,
  nextSteps: 8,
  preserve: 12,
};
/** Lists shortened first when over budget (oldest entries first). */
const SHRINK_ORDER: ListKey[] = [
  'commands',
  'read',
  'findings',
  'requests',
  'preserve',
  'errors',
  'modified',
  'nextSteps',
];

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

function textOf(item: ContextItem): string {
  return item.type === 'TOOL_DEFINITIONS' ? '' : messageText(item.message);
}

function emptyData(): ExtractiveData {
  return {
    task: null,
    earlier: [],
    requests: [],
    covered: null,
    modified: [],
    read: [],
    commands: [],
    findings: [],
    errors: [],
    nextSteps: [],
    preserve: [],
  };
}

/** A previous extractive summary read back into its lists (null when it is not one). */
export function parseExtractiveSummary(text: string): ExtractiveData | null {
  const body = text.startsWith(SUMMARY_MESSAGE_PREFIX)
    ? text.slice(SUMMARY_MESSAGE_PREFIX.length).trim()
    : text.trim();
  if (!body.startsWith(EXTRACTIVE_LABEL)) return null;
  const data = emptyData();
  const lines = body.slice(EXTRACTIVE_LABEL.length).split('\n');
  const labelOf = new Map(Object.entries(LABELS).map(([k, v]) => [v, k as ListKey]));
  let list: ListKey | null = null;
  let inEarlier = false;
  const earlier: string[] = [];
  for (const line of lines) {
    if (line === EARLIER_LABEL) {
      inEarlier = true;
      continue;
    }
    if (line.startsWith('## ')) {
      if (inEarlier && earlier.length > 0) data.earlier.push(earlier.join('\n').trim());
      inEarlier = false;
      list = null;
      continue;
    }
    if (inEarlier) {
      if (line === '---' && earlier.length > 0) {
        data.earlier.push(earlier.join('\n').trim());
        earlier.length = 0;
      } else earlier.push(line);
      continue;
    }
    const label = labelOf.get(line.trim());
    if (label) {
      list = label;
      continue;
    }
    const covered = /^Covered: rounds (\d+)–(\d+) \((\d+) messages, (\d+) tool calls\)\.$/.exec(line);
    if (covered) {
      data.covered = {
        fromRound: Number(covered[1]),
        toRound: Number(covered[2]),
        messages: Number(covered[3]),
        toolCalls: Number(covered[4]),
      };
      continue;
    }
    if (line.startsWith('Task: ')) {
      data.task = line.slice('Task: '.length);
      continue;
    }
    if (list && line.startsWith('- ')) data[list].push(line.slice(2));
  }
  return data;
}

/** First sentence of a text (or its start). */
function firstSentence(text: string, max: number): string {
  const line = oneLine(text, 1000);
  const end = line.search(/(?<=[.!?])\s/);
  return oneLine(end > 0 ? line.slice(0, end) : line, max);
}

/** What the span holds, as lists. */
function spanData(span: readonly ContextItem[], openErrors: readonly OpenError[]): ExtractiveData {
  const data = emptyData();
  const trail = collectArtifactTrail(span);
  for (const file of trail.files) {
    if (file.ops.some((op) => op === 'write' || op === 'edit' || op === 'delete' || op === 'remove'))
      data.modified.push(file.path);
    if (file.ops.some((op) => op === 'read' || op === 'list' || op === 'search' || op === 'use'))
      data.read.push(file.path);
  }
  data.commands = trail.commands.map((c) => `\`${c.command}\` (round ${c.round})`);
  let messages = 0;
  let toolCalls = 0;
  let fromRound = Infinity;
  let toRound = 0;
  const pairs = pairToolCalls(span);
  const sources = new Map<string, ResultSource>();
  for (const item of span) {
    if (item.type === 'TOOL_DEFINITIONS') continue;
    messages++;
    fromRound = Math.min(fromRound, item.round);
    toRound = Math.max(toRound, item.round);
    const text = textOf(item);
    if (item.type === 'USER_MESSAGE' && !item.isMeta) {
      data.requests.push(`round ${item.round}: ${oneLine(text, 200)}`);
    } else if (item.type === 'ASSISTANT_MESSAGE') {
      const calls = item.message.tool_calls ?? [];
      toolCalls += calls.length;
      resultSources(item).forEach((source, i) => sources.set(`${item.id}#${i}`, source));
      // A message that calls tools says what it is about to do, not what it found.
      if (calls.length === 0 && text.trim()) {
        data.findings.push(`round ${item.round}: ${firstSentence(text, 220)}`);
        const next = text
          .split(/(?<=[.!?])\s+|\n+/)
          .filter((s) => NEXT_STEP_TEXT.test(s))
          .pop();
        if (next) data.nextSteps.push(`round ${item.round}: ${oneLine(next, 200)}`);
      }
    } else if (item.type === 'TOOL_RESULT') {
      const pair = pairs.byResult.get(item.id);
      const source = pair ? sources.get(`${pair.callItemId}#${pair.callIndex}`) : undefined;
      const tool = source?.tool ?? item.message.name ?? 'tool';
      const error = resultErrorOf(item, tool, source?.printsOnly ?? false);
      if (error) {
        const open = openErrors.some((e) => e.text === error && e.round === item.round);
        data.errors.push(
          `round ${item.round}, ${tool}: ${error}${open ? ' (still open)' : ' (resolved later)'}`,
        );
      }
    }
  }
  if (messages > 0) data.covered = { fromRound, toRound, messages, toolCalls };
  return data;
}

/** `previous` and `next` united: an entry already there (in `previous` or earlier in `next`) is not repeated. */
function unite(previous: readonly string[], next: readonly string[], limit: number): string[] {
  const seen = new Set(previous);
  const out = [...previous];
  for (const entry of next) {
    if (seen.has(entry)) continue;
    seen.add(entry);
    out.push(entry);
  }
  return out.slice(Math.max(0, out.length - limit));
}

function render(data: ExtractiveData, lists: Record<ListKey, string[]>): string[] {
  const lines: string[] = [EXTRACTIVE_LABEL];
  if (data.earlier.length > 0) lines.push(EARLIER_LABEL, data.earlier.join('\n---\n'));
  const list = (key: ListKey): string[] =>
    lists[key].length === 0 ? [] : [LABELS[key], ...lists[key].map((entry) => `- ${entry}`)];
  lines.push(
    '## 1. Task Overview',
    `Task: ${data.task ?? '(no original task recorded)'}`,
    ...list('requests'),
  );
  lines.push('## 2. Current State');
  if (data.covered) {
    const c = data.covered;
    lines.push(
      `Covered: rounds ${c.fromRound}–${c.toRound} (${c.messages} messages, ${c.toolCalls} tool calls).`,
    );
  }
  lines.push(...list('modified'), ...list('read'), ...list('commands'));
  lines.push('## 3. Important Discoveries', ...list('findings'), ...list('errors'));
  lines.push('## 4. Next Steps', ...list('nextSteps'));
  lines.push('## 5. Context to Preserve', ...list('preserve'));
  return lines;
}

export interface ExtractiveInput {
  /** The context being compacted, whole (the original task, pins, memories, the task list). */
  context: readonly ContextItem[];
  /** What the summary stands for, in context order. */
  toSummarize: readonly ContextItem[];
  /** The summaries it merges. */
  previousSummaries: readonly ContextItem[];
  /** The open errors the carried state holds (to say which errors are still open). */
  openErrors: readonly OpenError[];
  budgetTokens: number;
  tokenizer: Tokenizer;
}

/** The summary of `toSummarize`, merged with the previous summaries, within `budgetTokens` when it can be. */
export function extractiveSummary(input: ExtractiveInput): string {
  const roles = headerRoles(input.context);
  const header = (role: string): ContextItem[] => input.context.filter((_, i) => roles[i] === role);
  const merged = emptyData();
  for (const summary of input.previousSummaries) {
    const text = textOf(summary);
    const parsed = parseExtractiveSummary(text);
    if (!parsed) {
      const body = text.startsWith(SUMMARY_MESSAGE_PREFIX)
        ? text.slice(SUMMARY_MESSAGE_PREFIX.length).trim()
        : text;
      merged.earlier.push(body);
      continue;
    }
    merged.earlier.push(...parsed.earlier);
    merged.task ??= parsed.task;
    merged.covered = parsed.covered;
    for (const key of Object.keys(LABELS) as ListKey[])
      merged[key] = unite(merged[key], parsed[key], LIMITS[key]);
  }
  const span = spanData(input.toSummarize, input.openErrors);
  const task = header('task')[0];
  merged.task = task ? oneLine(textOf(task), 600) : merged.task;
  if (span.covered) {
    const c = merged.covered;
    merged.covered = c
      ? {
          fromRound: Math.min(c.fromRound, span.covered.fromRound),
          toRound: Math.max(c.toRound, span.covered.toRound),
          messages: c.messages + span.covered.messages,
          toolCalls: c.toolCalls + span.covered.toolCalls,
        }
      : span.covered;
  }
  for (const key of Object.keys(LABELS) as ListKey[]) {
    if (key === 'nextSteps' || key === 'preserve') continue;
    merged[key] = unite(merged[key], span[key], LIMITS[key]);
  }
  // Next steps: the open tasks of the latest task list, then what the conversation said it would do.
  const taskList = header('task_list')[0];
  const open = taskList
    ? textOf(taskList)
        .split('\n')
        .filter((l) => /^\s*(- )?\[( |~)\]/.test(l))
        .map((l) => oneLine(l.replace(/^\s*- /, ''), 160))
    : [];
  merged.nextSteps = unite(
    open.length > 0 ? open : merged.nextSteps.slice(-4),
    span.nextSteps,
    LIMITS.nextSteps,
  );
  merged.preserve = [
    ...header('pinned').map((p) => `pinned: ${oneLine(textOf(p).replace(/<\/?Pin>/g, ''), 200)}`),
    ...header('memory').map((m) => `memory: ${oneLine(textOf(m).replace(/^\[Memory\]\s*/, ''), 200)}`),
  ].slice(-LIMITS.preserve);

  // Within the budget: shorten the least useful lists first, oldest entries first.
  const lists = Object.fromEntries(
    (Object.keys(LABELS) as ListKey[]).map((k) => [k, [...merged[k]]]),
  ) as Record<ListKey, string[]>;
  const cost = (line: string): number => input.tokenizer.countText(line) + 1;
  let total = render(merged, lists).reduce((n, l) => n + cost(l), 0);
  for (const key of SHRINK_ORDER) {
    while (total > input.budgetTokens && lists[key].length > 1) {
      total -= cost(`- ${lists[key].shift() as string}`);
    }
  }
  return render(merged, lists).join('\n');
}
