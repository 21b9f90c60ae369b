/**
 * What one compaction did to the context, item by item: which items of the version it started
 * from were kept, dropped (selective prune), truncated (a new item whose `sourceId` points at the
 * original) or summarized, and the summary that replaced them. Pure: the versions' items in, the
 * classification out.
 */
import { messageText, type CompactionSummaryItem, type ContextItem } from '../context/items';

/** One item as `inspect` lists it. */
export interface ItemEntry {
  id: string;
  type: ContextItem['type'];
  role: string;
  tokens: number;
  round: number;
  /** The first characters of its text, on one line. */
  preview: string;
}

export interface TruncatedEntry {
  original: ItemEntry;
  /** The shortened form that replaced it. */
  replacement: ItemEntry;
  /** The shortened form was then folded into the summary (not kept). */
  thenSummarized: boolean;
}

export interface CompactionDiff {
  kept: ItemEntry[];
  /** Removed by the selective prune (or by drop_oldest): gone without a summary. */
  dropped: ItemEntry[];
  truncated: TruncatedEntry[];
  /** Folded into the summary. */
  summarized: ItemEntry[];
  /** The summary item (a COMPACTION_SUMMARY new in the result), if any. */
  summary: (ItemEntry & { text: string }) | null;
  tokens: { before: number; after: number; kept: number; dropped: number; summarized: number };
}

const PREVIEW_CHARS = 72;

/** An item's list entry. */
export function itemEntry(item: ContextItem, previewChars = PREVIEW_CHARS): ItemEntry {
  const text =
    item.type === 'TOOL_DEFINITIONS'
      ? `tools: ${item.tools.map((t) => t.function.name).join(', ')}`
      : item.message.role === 'assistant' && item.message.tool_calls?.length
        ? `${messageText(item.message)} [calls ${item.message.tool_calls.map((c) => c.function.name).join(', ')}]`
        : messageText(item.message);
  const flat = text.replace(/\s+/g, ' ').trim();
  return {
    id: item.id,
    type: item.type,
    role: item.type === 'TOOL_DEFINITIONS' ? 'tools' : item.message.role,
    tokens: item.tokens,
    round: item.round,
    preview: flat.length > previewChars ? `${flat.slice(0, previewChars - 1)}…` : flat,
  };
}

const sum = (entries: readonly { tokens: number }[]): number => entries.reduce((n, e) => n + e.tokens, 0);

/**
 * Classifies the items of `base` (the version the compaction started from) against `pruned` (the
 * version the selective prune staged; null when unknown: then `final` stands in) and `final` (the
 * version it committed or last staged).
 */
export function diffCompaction(
  base: readonly ContextItem[],
  pruned: readonly ContextItem[] | null,
  final: readonly ContextItem[],
): CompactionDiff {
  const finalIds = new Set(final.map((i) => i.id));
  const prunedItems = pruned ?? final;
  const prunedIds = new Set(prunedItems.map((i) => i.id));
  const baseIds = new Set(base.map((i) => i.id));
  // Shortened forms: new items (not in base) that point at an item of base.
  const replacements = new Map<string, ContextItem>();
  for (const item of [...prunedItems, ...final]) {
    if (item.sourceId && !baseIds.has(item.id) && item.type !== 'COMPACTION_SUMMARY')
      replacements.set(item.sourceId, item);
  }
  const summaryItem =
    final.find((i): i is CompactionSummaryItem => i.type === 'COMPACTION_SUMMARY' && !baseIds.has(i.id)) ??
    null;
  const diff: CompactionDiff = {
    kept: [],
    dropped: [],
    truncated: [],
    summarized: [],
    summary: summaryItem ? { ...itemEntry(summaryItem), text: messageText(summaryItem.message) } : null,
    tokens: { before: sum(base), after: sum(final), kept: 0, dropped: 0, summarized: 0 },
  };
  for (const item of base) {
    const entry = itemEntry(item);
    const replacement = replacements.get(item.id);
    if (finalIds.has(item.id)) diff.kept.push(entry);
    else if (replacement) {
      diff.truncated.push({
        original: entry,
        replacement: itemEntry(replacement),
        thenSummarized: !finalIds.has(replacement.id),
      });
    } else if (prunedIds.has(item.id) && summaryItem) diff.summarized.push(entry);
    else diff.dropped.push(entry);
  }
  diff.tokens.kept = sum(diff.kept);
  diff.tokens.dropped = sum(diff.dropped);
  diff.tokens.summarized = sum(diff.summarized);
  return diff;
}

/** An item entry as one line: `  #12 TOOL_RESULT tool  1,204 tok  r3  "the text…"`. */
export function formatItemEntry(entry: ItemEntry): string {
  return (
    `${entry.type.padEnd(18)} ${entry.role.padEnd(9)} ${entry.tokens.toLocaleString('en-US').padStart(7)} tok` +
    `  r${entry.round}  ${entry.preview ? JSON.stringify(entry.preview) : '(empty)'}`
  );
}

/** The diff as lines, section by section, with token totals. */
export function formatCompactionDiff(diff: CompactionDiff): string[] {
  const n = (x: number): string => x.toLocaleString('en-US');
  const lines: string[] = [];
  const section = (title: string, entries: ItemEntry[], tokens: number): void => {
    lines.push(`${title}: ${entries.length} item${entries.length === 1 ? '' : 's'}, ${n(tokens)} tokens`);
    for (const entry of entries) lines.push(`  ${formatItemEntry(entry)}`);
  };
  section('dropped', diff.dropped, diff.tokens.dropped);
  const cut = diff.truncated;
  lines.push(
    `truncated: ${cut.length} item${cut.length === 1 ? '' : 's'}, ` +
      `${n(sum(cut.map((c) => c.original)))} → ${n(sum(cut.map((c) => c.replacement)))} tokens`,
  );
  for (const c of cut) {
    lines.push(`  ${formatItemEntry(c.original)}`);
    lines.push(
      `    → ${n(c.replacement.tokens)} tok${c.thenSummarized ? ', then summarized' : ''}  ${JSON.stringify(c.replacement.preview)}`,
    );
  }
  section('summarized', diff.summarized, diff.tokens.summarized);
  section('kept', diff.kept, diff.tokens.kept);
  if (diff.summary) {
    lines.push(`summary (${n(diff.summary.tokens)} tokens, item ${diff.summary.id}):`);
    for (const line of diff.summary.text.split('\n')) lines.push(`  ${line}`);
  } else lines.push('summary: none');
  lines.push(`tokens: ${n(diff.tokens.before)} → ${n(diff.tokens.after)}`);
  return lines;
}
