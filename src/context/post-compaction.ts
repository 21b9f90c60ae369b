/**
 * The context after a compaction (DESIGN.md §5, seeds 000 and 004): header → the summary message →
 * the units the strategy kept, in their order; and seed 004's alternative when a compaction is
 * declined, dropping the oldest rounds without a summary.
 *
 * Pure module.
 */
import type { CompactionSummaryItem, ContextItem } from './items';
import { headerIds } from './segments';
import type { StrategyPlan } from './strategies';
import { groupUnits, sumTokens, type Unit } from './tool-blocks';

/** The first line of the summary message (seed 000). */
export const SUMMARY_MESSAGE_PREFIX = '[System] Context cleared. Summary of previous conversation:';

/**
 * The compacted context: the items the plan does not summarize or replace, with the summary
 * placed right after the header (before every kept conversation item). Header items keep their
 * positions among themselves; nothing else moves.
 */
export function buildPostCompactionContext(
  items: readonly ContextItem[],
  plan: Pick<StrategyPlan, 'summarizeIds' | 'replaceIds'>,
  summary: CompactionSummaryItem,
): ContextItem[] {
  const header = headerIds(items);
  const out: ContextItem[] = [];
  const rest: ContextItem[] = [];
  for (const item of items) {
    if (plan.summarizeIds.has(item.id) || plan.replaceIds.has(item.id)) continue;
    (header.has(item.id) ? out : rest).push(item);
  }
  return [...out, summary, ...rest];
}

/**
 * Seed 004's answer to a declined compaction: drop whole rounds, oldest first, until the context
 * is at or under `targetTokens`; the header, pinned items and the newest round always stay, and a
 * tool call never loses its result (rounds are made of whole units).
 */
export function dropOldestRounds(items: readonly ContextItem[], targetTokens: number): ContextItem[] {
  const header = headerIds(items);
  const byRound = new Map<number, Unit[]>();
  for (const unit of groupUnits(items)) {
    if (unit.items.some((i) => header.has(i.id) || i.pinned)) continue;
    const list = byRound.get(unit.round);
    if (list) list.push(unit);
    else byRound.set(unit.round, [unit]);
  }
  const rounds = [...byRound.keys()].sort((a, b) => a - b);
  let tokens = sumTokens(items);
  const dropped = new Set<string>();
  for (const round of rounds.slice(0, -1)) {
    if (tokens <= targetTokens) break;
    for (const unit of byRound.get(round) ?? []) {
      for (const item of unit.items) {
        dropped.add(item.id);
        tokens -= item.tokens;
      }
    }
  }
  return items.filter((item) => !dropped.has(item.id));
}
