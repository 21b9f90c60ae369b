/**
 * Recall probes (issue 24): for one compaction, strings that were only in what it compacted away —
 * a line of a file the agent read, an error a tool reported, a line a command printed — each with
 * the query a model would plausibly write to get it back: the file's path, the error's words, the
 * command. Nothing here is tuned to a session: the kinds and the queries follow from the tool calls.
 *
 * Pure module.
 */
import { callFacts, resultErrorOf } from '../context/item-facts';
import type { ContextItem, ToolCall, ToolResultItem } from '../context/items';
import { readableText } from '../store/search-document';

export const PROBE_KINDS = ['file_line', 'error', 'command_output'] as const;
export type ProbeKind = (typeof PROBE_KINDS)[number];

export interface RecallProbe {
  kind: ProbeKind;
  /** The query, as a model would write it. */
  query: string;
  /** A line only the compacted span held: a result among the top 3 must contain it. */
  expected: string;
  /** The original item that holds it. */
  itemId: string;
}

/** Probes per kind per compaction, spread over the compacted span. */
export const PROBES_PER_KIND = 3;
/** Shortest line worth probing (shorter ones are braces, blank lines, prompts). */
const MIN_LINE_CHARS = 24;
const MAX_LINE_CHARS = 160;
/** A line that reports an error, in the words tools use. */
const ERROR_WORDS = /\b(error|exception|failed|failure|cannot|not found|denied|traceback|fatal)\b/i;
/** Words of an error message a model would search with. */
const ERROR_QUERY_WORDS = 8;

/** A line worth looking for: long enough, mostly letters and digits, not a prompt or a rule. */
function distinctive(line: string): boolean {
  const t = line.trim();
  if (t.length < MIN_LINE_CHARS || t.length > MAX_LINE_CHARS) return false;
  const alnum = t.replace(/[^\p{L}\p{N}]/gu, '').length;
  return alnum / t.length >= 0.5 && /\p{L}{3}/u.test(t);
}

/** `count` items spread evenly over `list` (all of it when shorter). */
function spreadPick<T>(list: readonly T[], count: number): T[] {
  if (list.length <= count) return [...list];
  return Array.from({ length: count }, (_, i) => list[Math.floor(((i + 0.5) * list.length) / count)] as T);
}

/**
 * The probes of a compaction that turned `before` into `after`: the compacted span is every
 * original item of `before` (not a cut form) whose id `after` no longer holds; a probe's line is
 * in none of `after`'s texts (a preview that kept it needs no recall).
 */
export function recallProbes(before: readonly ContextItem[], after: readonly ContextItem[]): RecallProbe[] {
  const kept = new Set(after.map((i) => i.id));
  const afterText = after.map(readableText).join('\n');
  const beforeTexts = before.map(readableText);
  // A line several items hold (a tool's footer, a file read twice) does not tell one item apart.
  const unique = (line: string): boolean => {
    let holders = 0;
    for (const text of beforeTexts) if (text.includes(line) && ++holders > 1) return false;
    return holders === 1;
  };
  const calls = new Map<string, ToolCall>();
  const candidates: Record<ProbeKind, RecallProbe[]> = { file_line: [], error: [], command_output: [] };
  const seen = new Set<string>();
  const add = (probe: RecallProbe): void => {
    const key = `${probe.kind}\n${probe.expected}`;
    if (seen.has(key) || afterText.includes(probe.expected) || !unique(probe.expected)) return;
    seen.add(key);
    candidates[probe.kind].push(probe);
  };
  for (const item of before) {
    if (item.type === 'ASSISTANT_MESSAGE') {
      for (const call of item.message.tool_calls ?? []) calls.set(call.id, call);
      continue;
    }
    if (item.type !== 'TOOL_RESULT' || item.sourceId !== undefined || kept.has(item.id)) continue;
    const call = calls.get(item.message.tool_call_id);
    if (!call) continue;
    probesOfResult(item, call).forEach(add);
  }
  return PROBE_KINDS.flatMap((kind) => spreadPick(candidates[kind], PROBES_PER_KIND));
}

/** The candidate probes of one compacted tool result and its call. */
function probesOfResult(item: ToolResultItem, call: ToolCall): RecallProbe[] {
  const facts = callFacts(call);
  const out: RecallProbe[] = [];
  const lines = item.message.content.split('\n').filter(distinctive);
  // The error the tool reported, else a line of the output that reads as one.
  const reported = resultErrorOf(item, call.function.name, facts.printsOnly === true);
  const errorLine = [...(reported?.split('\n') ?? []), ...lines.filter((l) => ERROR_WORDS.test(l))].find(
    distinctive,
  );
  if (reported !== null || errorLine !== undefined) {
    if (errorLine !== undefined) {
      const words = errorLine.match(/[\p{L}\p{N}_./:-]+/gu) ?? [];
      out.push({
        kind: 'error',
        query: words.slice(0, ERROR_QUERY_WORDS).join(' '),
        expected: errorLine.trim(),
        itemId: item.id,
      });
    }
    return out;
  }
  const read = facts.touches.find((t) => t.op === 'read');
  // The middle line: not the first lines a preview would keep.
  const middle = lines[Math.floor(lines.length / 2)];
  if (read && middle !== undefined) {
    out.push({ kind: 'file_line', query: read.path, expected: middle.trim(), itemId: item.id });
  } else if (facts.command && middle !== undefined) {
    out.push({ kind: 'command_output', query: facts.command, expected: middle.trim(), itemId: item.id });
  }
  return out;
}
