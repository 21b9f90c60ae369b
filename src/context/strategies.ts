/**
 * Summary strategies (seed 001), as steps of a compaction: each names the conversation units that
 * must stay verbatim (its minimum) and summarizes the others oldest first, no further than it must
 * — it stops as soon as the context is at or under the goal. The seeds' counts are minimums of what
 * stays: where the budget allows, more stays. Each strategy works on what the previous step left.
 *
 * - sliding window: the newest 4 user/tool + 5 assistant messages (seed 001 `sliding_window_size` 9);
 * - importance: units scoring ≥ 3.0, plus the newest 5 others;
 * - key events: task done, error fixed, changing tool calls, an error still open, plus the newest 5 others;
 * - incremental: chunks of 20 rounds from the oldest, whole chunks summarized, the last chunk stays;
 * - full (the last resort, and the rounds trigger): the newest `keepRecentRounds` rounds stay.
 *
 * Units are whole tool blocks, so no strategy ever separates a tool call from its result; header,
 * pinned and protected units are never candidates (`working-context.ts`).
 *
 * Pure module.
 */
import type { CompactionConfig } from './config';
import { messageText, type ContextItem } from './items';
import type { Step } from './selective-prune';
import type { StrategyName } from './task-type';
import { toolCategory } from './task-type';
import { DECISION_TEXT, DONE_TEXT, ERROR_TEXT } from './text-signals';
import type { WorkingContext, WorkingUnit } from './working-context';

/** What scoring reads of a unit: its items as the context had them. */
type Scored = { originals: readonly ContextItem[] };

function unitText(unit: Scored): string {
  return unit.originals.map((i) => (i.type === 'TOOL_DEFINITIONS' ? '' : messageText(i.message))).join('\n');
}

function changesThings(unit: Scored): boolean {
  return unit.originals.some(
    (i) =>
      i.type === 'ASSISTANT_MESSAGE' &&
      (i.message.tool_calls ?? []).some((c) => toolCategory(c.function.name) === 'code'),
  );
}

/**
 * Importance of a unit (seed 001): a real user message 3; a decision or constraint 1.5; an
 * error 1.5; a completion 2; a tool call that changes things 1.5; a long assistant answer with
 * code 1. Units scoring ≥ `importanceScoreThreshold` (3.0) are kept.
 */
export function importanceScore(unit: Scored): number {
  const first = unit.originals[0] as ContextItem;
  const text = unitText(unit);
  let score = 0;
  if (first.type === 'USER_MESSAGE' && !first.isMeta) score += 3;
  if (DECISION_TEXT.test(text)) score += 1.5;
  if (ERROR_TEXT.test(text)) score += 1.5;
  if (DONE_TEXT.test(text)) score += 2;
  if (changesThings(unit)) score += 1.5;
  if (first.type === 'ASSISTANT_MESSAGE' && text.includes('```') && text.length > 400) score += 1;
  return score;
}

/**
 * Key events (seed 001): a task completed, an error and the unit that fixed it, a tool call that
 * changes things. The latest error that nothing fixed is a key event too: it is still open (an
 * error followed by another before any fix is superseded by it).
 */
export function keyEventUnits<U extends Scored>(units: readonly U[]): Set<U> {
  const key = new Set<U>();
  let openError: U | null = null;
  for (const unit of units) {
    const text = unitText(unit);
    const done = DONE_TEXT.test(text);
    if (ERROR_TEXT.test(text) && !done) {
      openError = unit;
    } else if (done || changesThings(unit)) {
      key.add(unit);
      if (openError && done) {
        key.add(openError);
        openError = null;
      }
    }
  }
  if (openError) key.add(openError);
  return key;
}

/**
 * The newest units holding at most `userTool` user/tool and `assistant` assistant messages (at least
 * one unit). A block's riders (`rides`) are part of its results' message: kept with it, not counted.
 */
function slidingWindow(
  units: readonly WorkingUnit[],
  userTool: number,
  assistant: number,
  rides: (unit: WorkingUnit) => boolean,
): Set<WorkingUnit> {
  const keep = new Set<WorkingUnit>();
  let usedUserTool = 0;
  let usedAssistant = 0;
  let riders: WorkingUnit[] = [];
  for (let i = units.length - 1; i >= 0; i--) {
    const unit = units[i] as WorkingUnit;
    if (rides(unit)) {
      riders.push(unit);
      continue;
    }
    const a = unit.originals.filter((it) => it.type === 'ASSISTANT_MESSAGE').length;
    const u = unit.originals.length - a;
    if (keep.size > 0 && (usedAssistant + a > assistant || usedUserTool + u > userTool)) break;
    usedAssistant += a;
    usedUserTool += u;
    keep.add(unit);
    for (const rider of riders) keep.add(rider);
    riders = [];
  }
  return keep;
}

/** The units not in `scored`, newest `n` of them. */
function newestOthers(
  units: readonly WorkingUnit[],
  scored: ReadonlySet<WorkingUnit>,
  n: number,
): WorkingUnit[] {
  const others = units.filter((u) => !scored.has(u));
  return others.slice(Math.max(0, others.length - n));
}

/** The units of the newest `rounds` distinct rounds. */
function lastRounds(units: readonly WorkingUnit[], rounds: number): Set<WorkingUnit> {
  if (rounds <= 0) return new Set();
  const distinct = [...new Set(units.map((u) => u.round))];
  const from = new Set(distinct.slice(Math.max(0, distinct.length - rounds)));
  return new Set(units.filter((u) => from.has(u.round)));
}

/**
 * The removal order of a strategy on the kept units: groups removed together, oldest first. Units
 * in no group are the strategy's minimum.
 */
export function strategyGroups(
  strategy: StrategyName,
  kept: readonly WorkingUnit[],
  config: CompactionConfig,
  keepRecentRounds: number = config.keepRecentRounds,
  /** Whether a unit rides a kept block (`WorkingContext.ridden`): the window counts it with the block. */
  rides: (unit: WorkingUnit) => boolean = () => false,
): WorkingUnit[][] {
  const singles = (minimum: ReadonlySet<WorkingUnit>): WorkingUnit[][] =>
    kept.filter((u) => !minimum.has(u)).map((u) => [u]);
  const others = config.strategyKeepRecentOthers;
  switch (strategy) {
    case 'sliding_window':
      return singles(
        slidingWindow(
          kept,
          config.slidingWindowUserToolMessages,
          config.slidingWindowAssistantMessages,
          rides,
        ),
      );
    case 'importance': {
      const scored = new Set(kept.filter((u) => importanceScore(u) >= config.importanceScoreThreshold));
      return singles(new Set([...scored, ...newestOthers(kept, scored, others)]));
    }
    case 'key_events': {
      const key = keyEventUnits(kept);
      return singles(new Set([...key, ...newestOthers(kept, key, others)]));
    }
    case 'incremental': {
      // Chunks of `incrementalChunkRounds` rounds from the oldest; the last chunk stays.
      const rounds = [...new Set(kept.map((u) => u.round))];
      const chunkOf = new Map(rounds.map((r, i) => [r, Math.floor(i / config.incrementalChunkRounds)]));
      const last = rounds.length === 0 ? 0 : Math.floor((rounds.length - 1) / config.incrementalChunkRounds);
      const groups: WorkingUnit[][] = [];
      for (const unit of kept) {
        const chunk = chunkOf.get(unit.round) ?? last;
        if (chunk === last) continue;
        (groups[chunk] ??= []).push(unit);
      }
      return groups.filter((g) => g.length > 0);
    }
    case 'full':
      return singles(lastRounds(kept, keepRecentRounds));
  }
}

/**
 * A strategy as a step: its groups are summarized oldest first until the total is at or under the
 * goal. Protected units count toward a strategy's minimum (they are the newest) but are never
 * removed.
 */
export function strategyStep(
  strategy: StrategyName,
  config: CompactionConfig,
  keepRecentRounds?: number,
): Step {
  return (ctx: WorkingContext, goal: number) => {
    const kept = ctx.units.filter((u) => !u.removed);
    const rides = (unit: WorkingUnit): boolean => ctx.ridden(unit)?.removed === false;
    for (const group of strategyGroups(strategy, kept, config, keepRecentRounds, rides)) {
      if (ctx.reached(goal)) return;
      for (const unit of group) {
        ctx.remove(unit, 'strategy');
      }
    }
  };
}
