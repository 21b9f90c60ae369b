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
 * a new item whose `sourceId` points at the original (DESIGN.md §2); its id is derived from the
 * original's, so planning again gives the same ids, and a cut form is never cut again.
 *
 * Pure module: the tokenizer is an argument.
 */
import { selectiveRules, type CompactionConfig, type SelectiveRule } from './config';
import type { AssistantMessageItem, ContextItem, ItemType, ToolResultItem } from './items';
import { countItemTokens, MESSAGE_OVERHEAD_TOKENS, TOOL_CALL_OVERHEAD_TOKENS } from './token-accounting';
import { framingTokensOf } from './item-facts';
import type { Tokenizer } from './tokenizer';
import { handleOf } from './recall-handle';
import { WorkingContext, type PlannedCut, type WorkingUnit } from './working-context';

/**
 * Seed 003's marker after a cut field; with the original's recall handle when given (issue 24):
 * `[TRUNCATED original~N tokens; recall #a1f3c2]`.
 */
export function truncationMarker(originalTokens: number, handle?: string): string {
  return `[TRUNCATED original~${originalTokens} tokens${handle ? `; recall ${handle}` : ''}]`;
}

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

/** Tokens a cut field adds beyond its preview: the line break and the marker, with room to spare. */
function markerTokens(): number {
  // "\n[TRUNCATED original~N tokens; recall #a1f3c2]" is at most 21 tokens in o200k_base and
  // cl100k_base for any N under 10^9 (the marker 12, the handle's hex digits up to 9; measured over
  // 20,000 handles); planning on the bound counts nothing (the written cut form is counted exactly).
  return MARKER_TOKENS_BOUND + 2;
}

/** Tokens of a line break and the marker at most (`markerTokens`). */
const MARKER_TOKENS_BOUND = 21;

/** A field's text cut to a preview of `previewTokens` tokens plus the marker naming the original's handle. */
function cutText(
  text: string,
  originalTokens: number,
  previewTokens: number,
  tokenizer: Tokenizer,
  originalId: string,
): string {
  return `${tokenizer.prefix(text, previewTokens)}\n${truncationMarker(originalTokens, handleOf(originalId))}`;
}

/** The original size a cut form's marker states, or null when the text ends with no marker (with or without a handle). */
const MARKER_AT_END = /\n\[TRUNCATED original~(\d+) tokens(?:; recall #[0-9a-f]+)?\]$/;

/**
 * Tokens a cut form's count may exceed its plan by: the preview counted alone can split a token
 * or two differently from the whole text.
 */
function cutMargin(previewTokens: number): number {
  return 3 + Math.ceil(previewTokens / 500);
}

/**
 * The longest preview whose planned cut of a tool result takes at most `tokens` tokens (message
 * framing, marker and margin included); may be 0 or less when nothing fits.
 */
export function previewFitting(tokens: number): number {
  const fixed = MESSAGE_OVERHEAD_TOKENS + markerTokens();
  // The margin grows with the preview: take the one of the largest preview that could fit.
  return tokens - fixed - cutMargin(Math.max(0, tokens - fixed));
}

/**
 * The cut of an item whose tool arguments or result are over their threshold, decided on the
 * stored counts (the text is read only when the cut is written), or null: nothing over, or not
 * smaller. A cut form (`sourceId` set) is cut again only to a shorter preview of the same original
 * (its marker keeps the original's size), so cutting is idempotent.
 */
export function planCut(
  item: ContextItem,
  config: CompactionConfig,
  tokenizer: Tokenizer,
  previewTokens = config.previewTokens,
  /** Cut a result under `toolResultThreshold` too (a removed block coming back as a preview). */
  anySize = false,
): (PlannedCut & { calls: number; results: number }) | null {
  // Most items are not cut: they are turned away before anything is made for them.
  if (item.type === 'TOOL_RESULT') return planResultCut(item, config, tokenizer, previewTokens, anySize);
  if (item.type !== 'ASSISTANT_MESSAGE' || item.sourceId !== undefined || !item.message.tool_calls)
    return null;
  // The whole message (every call and the text) is under the threshold: no argument is over.
  if (item.tokens <= config.toolCallThreshold) return null;
  return planArgumentsCut(item, config, tokenizer, previewTokens);
}

/** Whether {@link planCut} may cut the item at the seed's sizes: what it turns away first, at a glance. */
function mayCut(item: ContextItem, config: CompactionConfig): boolean {
  if (item.type === 'TOOL_RESULT')
    return item.sourceId !== undefined || item.tokens - MESSAGE_OVERHEAD_TOKENS > config.toolResultThreshold;
  return (
    item.type === 'ASSISTANT_MESSAGE' && item.sourceId === undefined && item.tokens > config.toolCallThreshold
  );
}

function planResultCut(
  item: ToolResultItem,
  config: CompactionConfig,
  tokenizer: Tokenizer,
  previewTokens: number,
  anySize: boolean,
): (PlannedCut & { calls: number; results: number }) | null {
  const content = item.message.content;
  const recut = item.sourceId !== undefined ? MARKER_AT_END.exec(content) : null;
  if (item.sourceId !== undefined && !recut) return null;
  // The stored count is the content's plus the message framing (a tool message has no name cost).
  const original = recut ? Number(recut[1]) : item.tokens - MESSAGE_OVERHEAD_TOKENS;
  if ((!anySize && original <= config.toolResultThreshold) || original <= previewTokens) return null;
  const tokens = MESSAGE_OVERHEAD_TOKENS + previewTokens + markerTokens() + cutMargin(previewTokens);
  if (tokens >= item.tokens) return null;
  const text = recut ? content.slice(0, recut.index) : content;
  const source = item.sourceId ?? item.id;
  const id = `${source}~cut${previewTokens}`;
  const write = (): ContextItem => {
    const next: ToolResultItem = {
      ...item,
      id,
      sourceId: source,
      message: { ...item.message, content: cutText(text, original, previewTokens, tokenizer, source) },
    };
    return { ...next, tokens: countItemTokens(next, tokenizer) };
  };
  return { id, tokens, write, calls: 0, results: 1 };
}

function planArgumentsCut(
  item: AssistantMessageItem,
  config: CompactionConfig,
  tokenizer: Tokenizer,
  previewTokens: number,
): (PlannedCut & { calls: number; results: number }) | null {
  const calls = item.message.tool_calls ?? [];
  // The arguments' tokens from the stored count: exact for one call; shared by length among
  // several (the marker says "~").
  const framing =
    MESSAGE_OVERHEAD_TOKENS + framingTokensOf(item, tokenizer) + calls.length * TOOL_CALL_OVERHEAD_TOKENS;
  const argTokens = Math.max(0, item.tokens - framing);
  const argChars = calls.reduce((n, c) => n + c.function.arguments.length, 0) || 1;
  const originals = calls.map((c) => Math.round((argTokens * c.function.arguments.length) / argChars));
  const over = originals.map((n) => n > config.toolCallThreshold && n > previewTokens);
  const cutCount = over.filter(Boolean).length;
  if (cutCount === 0) return null;
  const tokens =
    item.tokens -
    originals.reduce(
      (n, original, i) =>
        over[i] ? n + original - previewTokens - markerTokens() - cutMargin(previewTokens) : n,
      0,
    );
  if (tokens >= item.tokens) return null;
  const id = `${item.id}~cut${previewTokens}`;
  const write = (): ContextItem => {
    const next: AssistantMessageItem = {
      ...item,
      id,
      sourceId: item.id,
      message: {
        ...item.message,
        tool_calls: calls.map((call, i) =>
          over[i]
            ? {
                ...call,
                function: {
                  ...call.function,
                  arguments: cutText(
                    call.function.arguments,
                    originals[i] as number,
                    previewTokens,
                    tokenizer,
                    item.id,
                  ),
                },
              }
            : call,
        ),
      },
    };
    return { ...next, tokens: countItemTokens(next, tokenizer) };
  };
  return { id, tokens, write, calls: cutCount, results: 0 };
}

/**
 * The cut of an item with the longest preview (at least `previewTokens`) that takes at most
 * `tokens`, or null when none is longer than the seed's preview.
 */
export function longestCut(
  item: ContextItem,
  config: CompactionConfig,
  tokenizer: Tokenizer,
  tokens: number,
): ReturnType<typeof planCut> {
  // A result's cut has one preview: its size follows from the tokens.
  if (item.type === 'TOOL_RESULT') return planCut(item, config, tokenizer, previewFitting(tokens));
  // Arguments: a cut's tokens grow with its preview (the calls over it share it); the longest that fits.
  const fits = (preview: number): ReturnType<typeof planCut> => {
    const cut = planCut(item, config, tokenizer, preview);
    return cut && cut.tokens <= tokens ? cut : null;
  };
  let low = config.previewTokens;
  let high = item.tokens;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (fits(mid)) low = mid;
    else high = mid - 1;
  }
  return low > config.previewTokens ? fits(low) : null;
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
    ctx.remove(unit);
    countRemoval(unit, stats);
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
  for (const item of items) if (item.round > 0) distinct.add(item.round);
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
