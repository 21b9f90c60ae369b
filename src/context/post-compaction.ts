/**
 * The summary message a compaction injects (seed 000), and seed 004's alternative when a compaction
 * is declined: dropping the oldest rounds without a summary.
 *
 * Pure module.
 */
import type { CompactionSummaryItem, ContextItem } from './items';
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

/** The summary item: the seed's prefix, then the text cut so that the whole item fits its budget; counted. */
export function buildSummaryItem(input: SummaryItemInput): CompactionSummaryItem {
  const framing = MESSAGE_OVERHEAD_TOKENS + input.tokenizer.countText(`${SUMMARY_MESSAGE_PREFIX}\n`);
  const cut = input.tokenizer.truncate(input.text, Math.max(0, input.budgetTokens - framing));
  const draft: CompactionSummaryItem = {
    id: input.id,
    type: 'COMPACTION_SUMMARY',
    summarizer: input.summarizer,
    message: { role: 'user', content: `${SUMMARY_MESSAGE_PREFIX}\n${cut.text}` },
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
    for (const unit of byRound.get(round) ?? []) work.remove(unit);
  }
  const dropped = new Set(work.removedUnits().flatMap((u) => u.originals));
  return items.filter((item) => !dropped.has(item));
}
