/**
 * Summary strategies (seed 001): each decides which conversation units stay verbatim and which are
 * summarized. Header items always stay; previous summaries are merged into the new one (the update
 * prompt), so they are replaced, not summarized again. Units are whole tool blocks, so no strategy
 * ever separates a tool call from its result.
 *
 * - sliding window: the last 4 user/tool + 5 assistant messages (seed 001 `sliding_window_size` 9);
 * - importance: units scoring ≥ 3.0, plus the last 5 others;
 * - key events: task done, error fixed, changing tool calls, plus the last 5 others;
 * - incremental: chunks of 20 rounds, the last chunk verbatim;
 * - full (last resort): only the last `keepRecentRounds` rounds stay.
 *
 * Pure module.
 */
import type { CompactionConfig } from './config';
import { messageText, type ContextItem } from './items';
import { headerIds } from './segments';
import type { StrategyName } from './task-type';
import { toolCategory } from './task-type';
import { DECISION_TEXT, DONE_TEXT, ERROR_TEXT } from './text-signals';
import { groupUnits, type Unit } from './tool-blocks';

export interface StrategyPlan {
  strategy: StrategyName;
  /** Items that stay verbatim (header included). */
  keepIds: Set<string>;
  /** Conversation items to be summarized. */
  summarizeIds: Set<string>;
  /** Previous summaries the new summary merges and replaces. */
  replaceIds: Set<string>;
}

export interface PlanOptions {
  /** For `full`: rounds kept verbatim. Default `config.keepRecentRounds`. */
  keepRecentRounds?: number | undefined;
}

interface ConversationUnits {
  header: Set<string>;
  /** Pinned conversation items: kept by every strategy. */
  pinned: Set<string>;
  summaries: Unit[];
  units: Unit[];
}

function conversationUnits(items: readonly ContextItem[]): ConversationUnits {
  const header = headerIds(items);
  const pinned = new Set<string>();
  const summaries: Unit[] = [];
  const units: Unit[] = [];
  for (const unit of groupUnits(items)) {
    const first = unit.items[0] as ContextItem;
    if (unit.kind === 'item' && header.has(first.id)) continue;
    if (unit.kind === 'item' && first.type === 'COMPACTION_SUMMARY') summaries.push(unit);
    else if (unit.items.some((i) => i.pinned || header.has(i.id)))
      for (const i of unit.items) pinned.add(i.id);
    else units.push(unit);
  }
  return { header, pinned, summaries, units };
}

// ---- scoring (importance and key events) ----

function unitText(unit: Unit): string {
  return unit.items.map((i) => (i.type === 'TOOL_DEFINITIONS' ? '' : messageText(i.message))).join('\n');
}

function changesThings(unit: Unit): boolean {
  return unit.items.some(
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
export function importanceScore(unit: Unit): number {
  const first = unit.items[0] as ContextItem;
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
 * changes things. An error that nothing later fixed is a key event too: it is still open.
 */
export function keyEventUnits(units: readonly Unit[]): Set<Unit> {
  const key = new Set<Unit>();
  let openError: Unit | null = null;
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

// ---- the plans ----

function plan(
  strategy: StrategyName,
  cu: ConversationUnits,
  keep: (unit: Unit, index: number) => boolean,
): StrategyPlan {
  const keepIds = new Set([...cu.header, ...cu.pinned]);
  const summarizeIds = new Set<string>();
  cu.units.forEach((unit, index) => {
    const target = keep(unit, index) ? keepIds : summarizeIds;
    for (const item of unit.items) target.add(item.id);
  });
  const replaceIds = new Set<string>();
  if (summarizeIds.size > 0)
    for (const s of cu.summaries) for (const item of s.items) replaceIds.add(item.id);
  else for (const s of cu.summaries) for (const item of s.items) keepIds.add(item.id);
  return { strategy, keepIds, summarizeIds, replaceIds };
}

/** Index of the first unit of the newest units satisfying the budget (the newest unit always stays). */
function slidingWindowStart(units: readonly Unit[], userTool: number, assistant: number): number {
  let usedUserTool = 0;
  let usedAssistant = 0;
  for (let i = units.length - 1; i >= 0; i--) {
    const unit = units[i] as Unit;
    const a = unit.items.filter((it) => it.type === 'ASSISTANT_MESSAGE').length;
    const u = unit.items.length - a;
    if (i < units.length - 1 && (usedAssistant + a > assistant || usedUserTool + u > userTool)) return i + 1;
    usedAssistant += a;
    usedUserTool += u;
  }
  return 0;
}

/** Index of the first unit of the last `rounds` rounds (units.length when 0). */
function lastRoundsStart(units: readonly Unit[], rounds: number): number {
  if (rounds <= 0) return units.length;
  const distinct = [...new Set(units.map((u) => u.round))];
  const from = distinct[Math.max(0, distinct.length - rounds)];
  const index = units.findIndex((u) => u.round === from);
  return index < 0 ? units.length : index;
}

/**
 * What a strategy keeps and summarizes on these items (a pruned context). A plan that summarizes
 * nothing means the strategy cannot help here; the workflow moves on to the next one.
 */
export function planStrategy(
  strategy: StrategyName | string,
  items: readonly ContextItem[],
  config: CompactionConfig,
  options: PlanOptions = {},
): StrategyPlan {
  const cu = conversationUnits(items);
  const n = cu.units.length;
  const lastOthers = config.strategyKeepRecentOthers;
  switch (strategy) {
    case 'sliding_window': {
      const start = slidingWindowStart(
        cu.units,
        config.slidingWindowUserToolMessages,
        config.slidingWindowAssistantMessages,
      );
      return plan('sliding_window', cu, (_, i) => i >= start);
    }
    case 'importance': {
      const scored = cu.units.map((u) => importanceScore(u) >= config.importanceScoreThreshold);
      const others = cu.units.map((_, i) => i).filter((i) => !scored[i]);
      const recentOthers = new Set(others.slice(Math.max(0, others.length - lastOthers)));
      return plan('importance', cu, (_, i) => Boolean(scored[i]) || recentOthers.has(i));
    }
    case 'key_events': {
      const key = keyEventUnits(cu.units);
      const others = cu.units.map((_, i) => i).filter((i) => !key.has(cu.units[i] as Unit));
      const recentOthers = new Set(others.slice(Math.max(0, others.length - lastOthers)));
      return plan('key_events', cu, (u, i) => key.has(u) || recentOthers.has(i));
    }
    case 'incremental': {
      // Chunks of `incrementalChunkRounds` rounds from the start; the last chunk stays verbatim.
      const rounds = [...new Set(cu.units.map((u) => u.round))];
      const chunk = config.incrementalChunkRounds;
      const lastChunkFirst = rounds.length === 0 ? 0 : Math.floor((rounds.length - 1) / chunk) * chunk;
      const keepFrom = rounds[lastChunkFirst];
      const start = keepFrom === undefined ? n : cu.units.findIndex((u) => u.round === keepFrom);
      return plan('incremental', cu, (_, i) => i >= start);
    }
    case 'full': {
      const start = lastRoundsStart(cu.units, options.keepRecentRounds ?? config.keepRecentRounds);
      return plan('full', cu, (_, i) => i >= start);
    }
    default:
      throw new Error(`unknown summary strategy "${strategy}"`);
  }
}
