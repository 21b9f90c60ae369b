/**
 * Selective prune (seeds 002 and 003): the deterministic first steps of every compaction, each
 * going no further than it must — it stops as soon as the context is at or under the goal — and
 * each taking the oldest content first:
 *
 * 1. `truncate` (seed 003): tool-call arguments over `toolCallThreshold` (500) tokens and results
 *    over `toolResultThreshold` (600) tokens are cut to their first `previewTokens` (200) tokens
 *    plus `[TRUNCATED original~N tokens]`, oldest first.
 * 2. `tool_blocks` (seed 003): whole tool blocks are removed, oldest first; the newest
 *    `toolBlocksKeepRecent` (5) always stay.
 * 3. The per-type rules (seed 002), from the lowest priority up: DROP removes items of the type,
 *    TRUNCATE keeps at least the `keepRecent` newest (for TOOL_RESULT: tool blocks, whole; orphan
 *    results first), NONE never touches it. User and assistant messages of the newest
 *    `protectedRounds` (12) rounds are never removed (seed 003).
 *
 * The seeds' counts are minimums of what stays: where the budget allows, more stays. A cut item is
 * a new item whose `sourceId` points at the original (DESIGN.md §2), planned by `item-cuts.ts`.
 *
 * Pure module: the tokenizer is an argument.
 */
import { selectiveRules, type CompactionConfig, type SelectiveRule } from './config';
import type { ContextItem, ItemType } from './items';
import {
  longestCut,
  mayCut,
  MIN_PREVIEW_TOKENS,
  planCut,
  planPreview,
  planReasoning,
  planShortestPreview,
  previewFitting,
} from './item-cuts';
import type { Tokenizer } from './tokenizer';
import { WorkingContext, type WorkingUnit } from './working-context';

/** Stats of the prune (seed 003's meta event fields). */
export interface PruneStats {
  toolBlocksKept: number;
  toolBlocksDropped: number;
  toolCallsTruncated: number;
  toolResultsTruncated: number;
  /** Items removed, by type. */
  itemsDropped: Partial<Record<ItemType, number>>;
  /** Steps that ran, in order (`truncate`, `tool_blocks`, then `<TYPE>:<strategy>`). */
  rulesApplied: string[];
}

export function emptyPruneStats(): PruneStats {
  return {
    toolBlocksKept: 0,
    toolBlocksDropped: 0,
    toolCallsTruncated: 0,
    toolResultsTruncated: 0,
    itemsDropped: {},
    rulesApplied: [],
  };
}

/** Records a unit's removal in the stats. */
export function countRemoval(unit: WorkingUnit, stats: PruneStats): void {
  if (unit.kind === 'block') stats.toolBlocksDropped++;
  for (const item of unit.originals) stats.itemsDropped[item.type] = (stats.itemsDropped[item.type] ?? 0) + 1;
}

/** A step: changes the working context, oldest first, until its total is at or under `goal`. */
export type Step = (ctx: WorkingContext, goal: number) => void;

/**
 * Step 1: cut oversized tool arguments and results, oldest first. `previewTokens` is a minimum: the
 * cut that brings the context under the goal keeps as long a preview as the goal leaves room for,
 * so one large result is not cut to 200 tokens where 2,000 fit.
 */
export function truncateStep(config: CompactionConfig, tokenizer: Tokenizer, stats: PruneStats): Step {
  return (ctx, goal) => {
    let total = ctx.total();
    for (const unit of ctx.cuttable()) {
      if (unit.kind !== 'block') continue;
      const { originals, cuts } = unit;
      for (let i = 0; i < originals.length; i++) {
        if (total <= goal) return;
        const item = originals[i] as ContextItem;
        if (cuts[i] || !mayCut(item, config)) continue;
        let cut = planCut(item, config, tokenizer);
        if (!cut) continue;
        // The preview grows to what the goal leaves room for.
        const slack = goal - (total - item.tokens + cut.tokens);
        if (slack > 0) cut = longestCut(item, config, tokenizer, cut.tokens + slack) ?? cut;
        ctx.cut(unit, i, cut);
        total = ctx.total();
        stats.toolCallsTruncated += cut.calls;
        stats.toolResultsTruncated += cut.results;
      }
    }
  };
}

/**
 * The last resort, after the full summary, when the context started over the target and is still
 * over the goal: the kept messages that call tools — the latest one too, whose results the model
 * has not seen — cut to a preview, oldest first: the seed's size, longer where the goal leaves
 * room. Their calls' arguments are cut, whatever their size, once the calls' results are in (a
 * message of many writes, each under the threshold), shorter than the seed's preview (50 tokens at
 * least) where the seed's would leave the request over the window; else their reasoning text, the
 * calls whole; pinned content is never touched. Still over the window, the answered calls' results
 * are cut too, whatever their size, then the kept messages' texts, shorter than the seed's preview
 * (a text cut before, cut again), and at the very last, right before a request (`cutWaiting`), the
 * arguments of calls still waiting for their results (a call is never dropped before its result is
 * in: the result would have no call).
 * Mostly a reply longer than the window allows comes this far (a session replayed at a smaller
 * window than it was recorded at).
 */
export function reasoningStep(
  config: CompactionConfig,
  tokenizer: Tokenizer,
  /** Whether the arguments of calls still waiting may be cut: only right before a request, at the very last. */
  cutWaiting = false,
): Step {
  return (ctx, goal) => {
    for (const unit of ctx.units) {
      const total = ctx.total();
      if (total <= goal) return;
      const item = unit.originals[0] as ContextItem;
      if (unit.removed || unit.protection === 'pinned' || unit.kind !== 'block') continue;
      if (item.type !== 'ASSISTANT_MESSAGE') continue;
      const earlier = unit.cuts[0];
      // Calls whose results are in (each maybe under the threshold, many in one message): their
      // arguments, to the size that reaches the goal or else the seed's preview — also where the
      // prune cut those over the threshold alone.
      const reach = item.tokens - (total - goal);
      const argumentsCut = (tokens: number, shortest: number) =>
        argumentsWithin(item, config, tokenizer, tokens, shortest);
      let args = unit.protection === 'pending_call' ? null : argumentsCut(reach, config.previewTokens);
      // Still over the window with the seed's preview: the previews as long as the window allows
      // (50 tokens at least), as no request may go over it.
      const over = args ? total - ctx.tokensAt(unit, 0) + args.tokens - ctx.windowTokens : 0;
      if (args && over > 0) {
        const shorter = argumentsCut(args.tokens - over, MIN_PREVIEW_TOKENS);
        if (shorter && shorter.tokens < args.tokens) args = shorter;
      }
      if (earlier) {
        if (args && args.tokens < earlier.tokens) ctx.cut(unit, 0, args);
        continue;
      }
      // Else the reasoning: the size that reaches the goal, or else the seed's preview.
      const cut =
        args ??
        planPreview(item, config, tokenizer, reach, config.previewTokens) ??
        planReasoning(item, tokenizer, config.previewTokens);
      if (cut) ctx.cut(unit, 0, cut);
    }
    // Still over the window: the answered calls' results too, each maybe under the threshold, oldest
    // first, as long as the window allows (50 tokens at least: a head with its recall handle serves).
    for (const unit of ctx.units) {
      if (unit.removed || unit.kind !== 'block') continue;
      if (unit.protection === 'pinned' || unit.protection === 'pending_call') continue;
      unit.originals.forEach((result, i) => {
        const over = ctx.total() - ctx.windowTokens;
        if (over <= 0 || result.type !== 'TOOL_RESULT') return;
        const size = ctx.tokensAt(unit, i);
        const cut = resultWithin(result, config, tokenizer, size - over);
        if (cut && cut.tokens < size) ctx.cut(unit, i, cut);
      });
    }
    // Still over the window: the kept messages' texts, a reply's reasoning too (its calls whole,
    // waiting or not), shorter than the seed's preview, a text cut before cut again (50 tokens at
    // least), oldest first; never the current message or pinned content.
    for (const unit of ctx.units) {
      if (unit.removed || unit.protection === 'pinned' || unit.protection === 'current_message') continue;
      for (let i = 0; i < unit.originals.length; i++) {
        const over = ctx.total() - ctx.windowTokens;
        if (over <= 0) return;
        if ((unit.originals[i] as ContextItem).type === 'TOOL_RESULT') continue;
        // On the form as it stands: a cut planned here (the arguments') keeps its own.
        const current = ctx.itemAt(unit, i);
        const size = ctx.tokensAt(unit, i);
        // As short as the window needs, and 50 tokens where even that is not enough.
        const cut =
          planPreview(current, config, tokenizer, size - over, MIN_PREVIEW_TOKENS, true) ??
          planShortestPreview(current, config, tokenizer, MIN_PREVIEW_TOKENS);
        if (cut && cut.tokens < size) ctx.cut(unit, i, cut);
      }
    }
    // Still over the window right before a request, the carried state cut as far as it helps: the
    // arguments of calls still waiting for their results, as long as the window needs (50 tokens at
    // least), oldest first. The calls stay: dropped, their results would come in with no call and
    // never reach the model.
    if (!cutWaiting) return;
    for (const unit of ctx.units) {
      if (unit.removed || unit.protection !== 'pending_call') continue;
      // The results in of a block whose other calls wait first (as the answered ones' above),
      // then the calls' arguments.
      for (let i = unit.originals.length - 1; i >= 0; i--) {
        const over = ctx.total() - ctx.windowTokens;
        if (over <= 0) return;
        const current = ctx.itemAt(unit, i);
        const size = ctx.tokensAt(unit, i);
        const cut =
          i > 0
            ? resultWithin(current, config, tokenizer, size - over)
            : argumentsWithin(current, config, tokenizer, size - over, MIN_PREVIEW_TOKENS);
        if (cut && cut.tokens < size) ctx.cut(unit, i, cut);
      }
    }
  };
}

/** Every call's arguments cut: the longest previews within `tokens`, else the `shortest` ones. */
function argumentsWithin(
  item: ContextItem,
  config: CompactionConfig,
  tokenizer: Tokenizer,
  tokens: number,
  shortest: number,
): ReturnType<typeof planCut> {
  return (
    longestCut(item, config, tokenizer, tokens, true, shortest) ??
    planCut(item, config, tokenizer, shortest, true)
  );
}

/** A tool result cut to the longest preview within `tokens`, 50 tokens at least (a head with its recall handle serves). */
function resultWithin(
  result: ContextItem,
  config: CompactionConfig,
  tokenizer: Tokenizer,
  tokens: number,
): ReturnType<typeof planCut> {
  return planCut(result, config, tokenizer, Math.max(MIN_PREVIEW_TOKENS, previewFitting(tokens)), true);
}

/** Removes `candidates` oldest first, never the newest `keep`, until the total is at or under `goal`. */
function removeOldest(
  ctx: WorkingContext,
  goal: number,
  candidates: readonly WorkingUnit[],
  keep: number,
  stats: PruneStats,
): void {
  const removable = candidates.slice(0, Math.max(0, candidates.length - keep));
  for (const unit of removable) {
    if (ctx.reached(goal)) return;
    const riders = ctx.ridersOf(unit).filter((rider) => !rider.removed);
    ctx.remove(unit, 'prune');
    countRemoval(unit, stats);
    for (const rider of riders) if (rider.removed) countRemoval(rider, stats);
  }
}

/** Every kept block, protected ones included: the seeds count the newest blocks, whatever they hold. */
function keptBlocks(ctx: WorkingContext): WorkingUnit[] {
  return ctx.units.filter((u) => !u.removed && u.kind === 'block');
}

/** Step 2: remove whole tool blocks, oldest first, keeping the newest `toolBlocksKeepRecent`. */
export function toolBlocksStep(config: CompactionConfig, stats: PruneStats): Step {
  return (ctx, goal) => {
    const blocks = keptBlocks(ctx);
    const newest = new Set(blocks.slice(Math.max(0, blocks.length - config.toolBlocksKeepRecent)));
    const candidates = blocks.filter((b) => !b.protected && !newest.has(b));
    removeOldest(ctx, goal, candidates, 0, stats);
  };
}

/** The newest `protectedRounds` distinct rounds among real rounds (seed 003). */
export function protectedRoundSet(items: readonly ContextItem[], protectedRounds: number): Set<number> {
  if (protectedRounds <= 0) return new Set();
  const distinct = new Set<number>();
  // Items of a round are mostly consecutive: each run of one round is added once.
  let previous = 0;
  for (const item of items) {
    if (item.round !== previous && item.round > 0) distinct.add(item.round);
    previous = item.round;
  }
  const rounds = [...distinct].sort((a, b) => a - b);
  return new Set(rounds.slice(-protectedRounds));
}

/** Step 3: one per-type rule of seed 002. */
export function typeRuleStep(
  type: ItemType,
  rule: SelectiveRule,
  /** The newest `protectedRounds` rounds (asked for when the rule removes dialogue). */
  protectedRounds: () => ReadonlySet<number>,
  stats: PruneStats,
): Step {
  return (ctx, goal) => {
    const keep = rule.strategy === 'truncate' ? (rule.keepRecent ?? 0) : 0;
    if (type === 'TOOL_RESULT') {
      // Results go with their calls: the rule counts whole blocks; orphan results go first.
      const orphans = ctx.candidates().filter((u) => u.kind === 'orphan');
      removeOldest(ctx, goal, orphans, 0, stats);
      const blocks = keptBlocks(ctx);
      const newest = new Set(blocks.slice(Math.max(0, blocks.length - keep)));
      removeOldest(
        ctx,
        goal,
        blocks.filter((b) => !b.protected && !newest.has(b)),
        0,
        stats,
      );
      return;
    }
    const dialogue = type === 'USER_MESSAGE' || type === 'ASSISTANT_MESSAGE';
    const ofType = ctx.units.filter(
      (u) => !u.removed && u.kind === 'item' && (u.originals[0] as ContextItem).type === type,
    );
    const newest = new Set(ofType.slice(Math.max(0, ofType.length - keep)));
    const rounds = dialogue ? protectedRounds() : null;
    const candidates = ofType.filter((u) => !u.protected && !newest.has(u) && !rounds?.has(u.round));
    removeOldest(ctx, goal, candidates, 0, stats);
  };
}

/** The prune's steps in order, each with its name. */
export function pruneSteps(
  items: readonly ContextItem[],
  config: CompactionConfig,
  tokenizer: Tokenizer,
  stats: PruneStats,
): { name: string; run: Step }[] {
  let rounds: Set<number> | undefined;
  const protectedRounds = (): Set<number> => (rounds ??= protectedRoundSet(items, config.protectedRounds));
  const rules = Object.entries(selectiveRules(config))
    .filter(
      (entry): entry is [ItemType, SelectiveRule] => entry[1] !== undefined && entry[1].strategy !== 'none',
    )
    .sort((a, b) => a[1].priority - b[1].priority || a[0].localeCompare(b[0]));
  return [
    { name: 'truncate', run: truncateStep(config, tokenizer, stats) },
    { name: 'tool_blocks', run: toolBlocksStep(config, stats) },
    ...rules.map(([type, rule]) => ({
      name: `${type}:${rule.strategy}`,
      run: typeRuleStep(type, rule, protectedRounds, stats),
    })),
  ];
}

export interface PruneResult {
  /** The pruned context, in the order of the input. */
  items: ContextItem[];
  /** Items made by the prune (cut forms); each has `sourceId`. */
  newItems: ContextItem[];
  tokensBefore: number;
  tokensAfter: number;
  stats: PruneStats;
}

/**
 * The prune alone, with no summary to stand for what it removes: its steps run in order until the
 * context is at or under `targetTokens`. Tokens never grow; the order of the items is kept;
 * applying it to its own output changes nothing.
 */
export function selectivePrune(
  input: readonly ContextItem[],
  config: CompactionConfig,
  tokenizer: Tokenizer,
  targetTokens: number,
): PruneResult {
  const stats = emptyPruneStats();
  const ctx = new WorkingContext(input, { window: config.maxContextTokens, summaryReserve: null });
  const tokensBefore = input.reduce((n, i) => n + i.tokens, 0);
  for (const step of pruneSteps(input, config, tokenizer, stats)) {
    if (ctx.reached(targetTokens)) break;
    step.run(ctx, targetTokens);
    stats.rulesApplied.push(step.name);
  }
  stats.toolBlocksKept = keptBlocks(ctx).length;
  const kept = new Map<ContextItem, ContextItem>();
  for (const unit of ctx.units) {
    if (unit.removed) continue;
    const now = ctx.unitItems(unit);
    unit.originals.forEach((item, i) => kept.set(item, now[i] as ContextItem));
  }
  const inUnits = new Set(ctx.units.flatMap((u) => u.originals));
  // The input's order, removed items out, cut forms in their originals' places.
  const items = input.flatMap((item): ContextItem[] => {
    if (!inUnits.has(item)) return [item];
    const now = kept.get(item);
    return now ? [now] : [];
  });
  return {
    items,
    newItems: items.filter((item) => item.sourceId !== undefined && !input.includes(item)),
    tokensBefore,
    tokensAfter: items.reduce((n, i) => n + i.tokens, 0),
    stats,
  };
}
