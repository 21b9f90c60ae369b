/**
 * The summary message a compaction injects (seed 000), and seed 004's alternative when a compaction
 * is declined: dropping the oldest rounds without a summary.
 *
 * Pure module.
 */
import type { CompactionSummaryItem, ContextItem } from './items';
import { originalHandle } from './recall-handle';
import { countItemTokens, MESSAGE_OVERHEAD_TOKENS } from './token-accounting';
import type { Tokenizer } from './tokenizer';
import { WorkingContext, type WorkingUnit } from './working-context';

/** The first line of the summary message (seed 000). */
export const SUMMARY_MESSAGE_PREFIX = '[System] Context cleared. Summary of previous conversation:';

export interface SummaryItemInput {
  /** The summary's text (an LLM's answer inside `<summary>` tags, or the extractive summary). */
  text: string;
  /** Its id (derived from the compaction's id, so a retried activity writes the same item). */
  id: string;
  summarizer: CompactionSummaryItem['summarizer'];
  /** The most tokens the item may have (prefix and framing included); a longer text is cut. */
  budgetTokens: number;
  /** What it stands for (its round is the newest of theirs). */
  summarized: readonly ContextItem[];
  /** Counts it in the conversation's encoding. */
  tokenizer: Tokenizer;
}

/** The heading of the summary's last line, which names the recall handles of what it stands for (issue 24). */
export const SUMMARY_HANDLES_HEADING = 'Originals (recall by handle, or search them with recall):';

/**
 * Tokens of a summary's budget kept for its line of recall handles: a tenth of the budget, at most
 * 120, none under a budget of 200 (a tiny summary keeps its words).
 */
export function summaryHandlesBudget(budgetTokens: number): number {
  return budgetTokens < 200 ? 0 : Math.min(120, Math.floor(budgetTokens / 10));
}

const LABELS: Partial<Record<ContextItem['type'], string>> = {
  USER_MESSAGE: 'user',
  ASSISTANT_MESSAGE: 'assistant',
  COMPACTION_SUMMARY: 'summary',
};

/** An item as the handles line names it: `#a1f3c2 r12 read_file`. */
function handleEntry(item: ContextItem): string {
  const label =
    item.type === 'TOOL_RESULT'
      ? (item.message.name ?? 'tool')
      : (LABELS[item.type] ?? item.type.toLowerCase());
  return `${originalHandle(item)} r${item.round} ${label}`;
}

/**
 * The line naming the handles of the summarized items within `budgetTokens`, or '' (nothing
 * summarized, or no room): the largest items first (the most detail the summary lost), written in
 * conversation order, then how many more there are.
 */
export function summaryHandlesLine(
  summarized: readonly ContextItem[],
  budgetTokens: number,
  tokenizer: Tokenizer,
): string {
  const candidates = summarized.filter(
    (i) => i.type !== 'TOOL_DEFINITIONS' && !(i.isMeta && i.type !== 'COMPACTION_SUMMARY'),
  );
  if (candidates.length === 0 || budgetTokens <= 0) return '';
  const bySize = candidates
    .map((item, at) => ({ item, at }))
    .sort((a, b) => b.item.tokens - a.item.tokens || b.at - a.at);
  const more = (n: number): string => (n > 0 ? `; +${n} more` : '');
  let used = tokenizer.countText(SUMMARY_HANDLES_HEADING) + 8;
  const chosen: { item: ContextItem; at: number }[] = [];
  for (const entry of bySize) {
    const cost = tokenizer.countText(handleEntry(entry.item)) + 1;
    if (used + cost > budgetTokens) break;
    used += cost;
    chosen.push(entry);
  }
  if (chosen.length === 0) return '';
  chosen.sort((a, b) => a.at - b.at);
  return `${SUMMARY_HANDLES_HEADING} ${chosen.map((c) => handleEntry(c.item)).join(', ')}${more(candidates.length - chosen.length)}`;
}

/**
 * The summary item: the seed's prefix, then the text cut so that the whole item fits its budget,
 * then the line of recall handles of what it summarized (within {@link summaryHandlesBudget}); counted.
 */
export function buildSummaryItem(input: SummaryItemInput): CompactionSummaryItem {
  const framing = MESSAGE_OVERHEAD_TOKENS + input.tokenizer.countText(`${SUMMARY_MESSAGE_PREFIX}\n`);
  const handles = summaryHandlesLine(
    input.summarized,
    summaryHandlesBudget(input.budgetTokens),
    input.tokenizer,
  );
  const handlesTokens = handles === '' ? 0 : input.tokenizer.countText(`\n\n${handles}`);
  const cut = input.tokenizer.truncate(input.text, Math.max(0, input.budgetTokens - framing - handlesTokens));
  const body = handles === '' ? cut.text : `${cut.text}\n\n${handles}`;
  const draft: CompactionSummaryItem = {
    id: input.id,
    type: 'COMPACTION_SUMMARY',
    summarizer: input.summarizer,
    message: { role: 'user', content: `${SUMMARY_MESSAGE_PREFIX}\n${body}` },
    tokens: 0,
    round: input.summarized.reduce((max, i) => Math.max(max, i.round), 0),
    isMeta: true,
    pinned: false,
    ephemeral: false,
  };
  return { ...draft, tokens: countItemTokens(draft, input.tokenizer) };
}

/**
 * Seed 004's answer to a declined compaction: drop whole rounds, oldest first, until the context
 * is at or under `targetTokens`; the header, pinned items, the newest round, a tool call waiting for
 * its result and the current user message always stay, and a tool call never loses its result
 * (rounds are made of whole units).
 */
export function dropOldestRounds(
  items: readonly ContextItem[],
  targetTokens: number,
  window = Infinity,
): ContextItem[] {
  const work = new WorkingContext(items, { window, summaryReserve: null });
  const byRound = new Map<number, WorkingUnit[]>();
  for (const unit of work.candidates()) {
    const list = byRound.get(unit.round);
    if (list) list.push(unit);
    else byRound.set(unit.round, [unit]);
  }
  const newest = Math.max(...work.units.map((u) => u.round), 0);
  for (const round of [...byRound.keys()].sort((a, b) => a - b)) {
    if (work.total() <= targetTokens || round === newest) break;
    for (const unit of byRound.get(round) ?? []) work.remove(unit, 'strategy');
  }
  const dropped = new Set(work.removedUnits().flatMap((u) => u.originals));
  return items.filter((item) => !dropped.has(item));
}
