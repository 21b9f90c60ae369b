/**
 * What a compaction does, decided before any model call (DESIGN.md §5): a pure function of the
 * context, the configuration and the trigger, shared by the compaction activities and `eval`, so
 * that what `eval` measures is what the workflow does.
 *
 * 1. Carried state (`carried-state.ts`) is built from the whole context, before anything is
 *    pruned, and replaces the previous one.
 * 2. Steps run in order, each no further than it must, stopping at the first that brings the
 *    context at or under the goal: the prune (`selective-prune.ts`: truncate, tool blocks, the
 *    per-type rules), the task type's strategy chain and then seed 001's fixed fallback order
 *    (`strategies.ts`), then the full summary keeping `keepRecentRounds` rounds, then fewer. The
 *    rounds trigger runs the full summary directly (seed 001). Each step works on what the
 *    previous one left. A context that started over the target and is still over the goal then
 *    has the reasoning text of its replies cut, the last resort (`reasoningStep`). Still over the
 *    window right before a request (precheck, overflow), the plan is made again with the carried
 *    state cut to what the window leaves it, and, still over it, with the arguments of calls still
 *    waiting for their results cut (the calls stay: a result never comes in without its call).
 * 3. What the steps removed is summarized (seed 003: the summary always runs, here over only the
 *    oldest units it had to take); the summary merges the previous summaries and has a budget that
 *    leaves room for the header, the carried state and what no step may remove: header + carried
 *    state + summary + kept items ≤ target.
 * 4. The room the summary leaves goes back to what stays (`finishCompaction`): cut items grow back
 *    newest first, then the newest removed units return, whole or as previews.
 *
 * The goal is the target (`targetRatio` × window). A compaction asked for when the context is
 * already under the target (manual, marker, rounds, events) halves the conversation instead.
 *
 * Pure module.
 */
import type { CompactionConfig } from './config';
import { targetTokens } from './config';
import { buildCarriedState, isCarried, type CarriedState } from './carried-state';
import type { CompactionSummaryItem, ContextItem } from './items';
import { longestCut, MIN_PREVIEW_TOKENS, planCut, planPreview, smallestCutTokens } from './item-cuts';
import { emptyPruneStats, pruneSteps, reasoningStep, type PruneStats, type Step } from './selective-prune';
import { strategyStep } from './strategies';
import { headerRoles } from './segments';
import { detectTaskType, fullStrategyChain, type StrategyName, type TaskType } from './task-type';
import { countingOnce, type Tokenizer } from './tokenizer';
import { isAutomatic, type TriggerKind } from './triggers';
import { MIN_SUMMARY_TOKENS, WorkingContext, type PlannedCut, type WorkingUnit } from './working-context';

/** Triggers whose compacted context is sent as the next request. */
const SENT_NEXT: ReadonlySet<TriggerKind> = new Set(['precheck', 'overflow']);

export interface PlanInput {
  /** The context being compacted (the active version), in order. */
  items: readonly ContextItem[];
  config: CompactionConfig;
  tokenizer: Tokenizer;
  trigger: TriggerKind;
  /** The compaction's id: new items' ids derive from it (planning again gives the same ids). */
  compactionId: string;
  /** The workspace's `git diff --stat` (null: not a git repository; undefined: keep the context's). */
  gitDiffStat?: string | null | undefined;
  /**
   * Whether the compacted context is sent as the next request, with nothing to compact it again
   * before (default: the precheck and overflow triggers; the library's `compactMessages` too).
   */
  sentNext?: boolean;
}

/** One step that ran. */
export interface PlanStep {
  name: string;
  /** The context's total after it (the summary counted at its budget once anything is removed). */
  tokensAfter: number;
}

export interface CompactionPlan {
  trigger: TriggerKind;
  tokensBefore: number;
  /** `targetRatio` × window. */
  targetTokens: number;
  /** What the plan aims at: the target, or half the conversation when it is already under it. */
  goalTokens: number;
  headerTokens: number;
  taskType: TaskType;
  /** The strategies that follow the prune: the task type's chain, then the fixed fallback order. */
  chain: StrategyName[];
  carried: CarriedState;
  /** The steps that ran, in order. */
  steps: PlanStep[];
  /** The last step that ran (`full(keep 1)`, `sliding_window`, `tool_blocks`, ...), or null. */
  strategy: string | null;
  /** Original forms of what the summary stands for, in context order (empty: no summary). */
  toSummarize: ContextItem[];
  /** The previous summaries the new one merges (empty when nothing is summarized: they stay). */
  previousSummaries: ContextItem[];
  /** Tokens the summary may have. */
  summaryBudget: number;
  stats: PruneStats;
  /** Set when the plan cannot reach the goal even removing everything it may. */
  overTarget: boolean;
  /** The most items the compacted context may hold (the events trigger's threshold, scaled like tokens). */
  itemGoal: number;
  /** Whether the item goal, not the tokens, made the plan remove more (the context is then under the target). */
  itemBound: boolean;
  /**
   * Set when an automatic compaction cannot help: the header, carried state and smallest summary
   * alone are over the target. The compaction is skipped with this reason.
   */
  impossible: string | null;
  /** The working context, configuration and tokenizer, for {@link finishCompaction}. */
  work: WorkingContext;
  config: CompactionConfig;
  tokenizer: Tokenizer;
}

function sumTokens(items: readonly ContextItem[]): number {
  return items.reduce((n, i) => n + i.tokens, 0);
}

/**
 * The summary's budget: `summaryMaxTokens`, at most `summaryRoomRatio` of what the header leaves.
 * With previous summaries to merge, room for them and something new — up to twice
 * `summaryMaxTokens` and half the room: a summary that filled its budget would otherwise grow it by
 * 200 tokens at every compaction, taking the room of what stays verbatim.
 */
export function summaryBudgetFor(config: CompactionConfig, room: number, previousTokens: number): number {
  const share = Math.floor(Math.max(0, room) * config.summaryRoomRatio);
  let budget = Math.min(config.summaryMaxTokens, Math.max(MIN_SUMMARY_TOKENS, share));
  if (previousTokens > 0) {
    const merged = Math.min(previousTokens + MIN_SUMMARY_TOKENS, 2 * config.summaryMaxTokens);
    budget = Math.max(budget, Math.min(merged, Math.floor(room / 2)));
  }
  return Math.max(0, Math.min(budget, room));
}

/**
 * What the carried state may grow to keep every path and open error whole: `carriedStateMaxRatio`
 * of the target, or of what the rest of the header leaves under it when that is less (a long
 * system prompt leaves the conversation its room).
 */
function carriedLimit(items: readonly ContextItem[], config: CompactionConfig, target: number): number {
  const roles = headerRoles(items);
  let header = 0;
  for (let i = 0; i < items.length; i++) {
    const role = roles[i];
    if (role !== undefined && role !== 'artifacts' && role !== 'errors' && role !== 'git')
      header += (items[i] as ContextItem).tokens;
  }
  return Math.floor(config.carriedStateMaxRatio * Math.min(target, Math.max(0, target - header)));
}

/** The steps of a compaction, in order (see the module comment), each made when it is reached. */
function* stepsFor(plan: {
  items: readonly ContextItem[];
  config: CompactionConfig;
  tokenizer: Tokenizer;
  trigger: TriggerKind;
  chain: StrategyName[];
  stats: PruneStats;
  /** Whether the context started over the target: only then may the last resort cut the latest reply. */
  startedOverTarget: boolean;
  /** Whether the last resort may cut the arguments of calls still waiting for their results. */
  cutWaiting: boolean;
}): Generator<{ name: string; run: Step; prune: boolean; lastResort?: true }> {
  const { config } = plan;
  if (plan.trigger !== 'rounds') {
    for (const step of pruneSteps(plan.items, config, plan.tokenizer, plan.stats))
      yield { ...step, prune: true };
    for (const name of plan.chain) yield { name, run: strategyStep(name, config), prune: false };
  }
  for (let k = config.keepRecentRounds; k >= 0; k--) {
    yield { name: `full(keep ${k})`, run: strategyStep('full', config, k), prune: false };
  }
  if (plan.startedOverTarget) {
    yield {
      name: 'reasoning',
      run: reasoningStep(config, plan.tokenizer, plan.cutWaiting),
      prune: false,
      lastResort: true,
    };
  }
}

/** Plans a compaction (see the module comment). Never modifies its input. */
export function planCompaction(input: PlanInput): CompactionPlan {
  const window = input.config.maxContextTokens;
  const sent = input.sentNext ?? SENT_NEXT.has(input.trigger);
  const { plan, cap, hard } = planCarriedWithin(input, sent);
  if (!sent || plan.work.total() <= window || plan.work.writtenTotal() <= window) return plan;
  if (!plan.work.units.some((u) => !u.removed && u.protection === 'pending_call')) return plan;
  // Still over the window right before a request, the carried state cut as far as it helps: the
  // calls still waiting for their results give their arguments (cut to previews). They stay, as
  // their results would otherwise come in with no call.
  const waiting = planWithin(input, cap, hard, true);
  return waiting.work.writtenTotal() < plan.work.writtenTotal() ? waiting : plan;
}

/** A plan and the carried state's cap it was made with (see {@link planWithin}). */
interface CappedPlan {
  plan: CompactionPlan;
  cap: number | null;
  hard: boolean;
}

/**
 * {@link planWithin}, the carried state cut where the plan is over the window right before a
 * request (`sent`).
 */
function planCarriedWithin(input: PlanInput, sent: boolean): CappedPlan {
  const plan = planWithin(input, null);
  const whole = { plan, cap: null, hard: false };
  // Still over the window after every step (its cuts as written, not their bounds), right before
  // a request, the carried state gives up what it must (its trail collapses directories, fewer
  // errors are shown): no request may go over the window. Any other compaction (after a reply
  // whose calls wait for their results, a manual one) keeps it whole: a precheck comes before the
  // next request, and compacts what is then over the window with those results in.
  const window = input.config.maxContextTokens;
  if (!sent || plan.work.total() <= window) return whole;
  const over = plan.work.writtenTotal() - window;
  if (over <= 0) return whole;
  const carriedTokens = carriedTotal(plan);
  // Where no cut of the carried state would do (a reply waiting for its results, larger than the
  // window), it stays whole; a cut is kept only where it fits the window.
  if (over > carriedTokens) return whole;
  // Within the cap, each item its least share first (the trail's paths, the errors' texts); where
  // that does not fit, the cap is kept to (hard: each item's text within its share less its
  // message's framing), lowered by what is still over, three times at most. It is lowered from
  // what the carried state took, which may be under the cap (the trail shrinks by whole tiers), and
  // a smaller carried state may leave more of the rest in (a task list that fits the header again).
  let cap = carriedTokens - over;
  const shares = planWithin(input, cap);
  if (shares.work.writtenTotal() <= window) return { plan: shares, cap, hard: false };
  // None fitting, the smallest: nearest the window.
  let best: CappedPlan =
    shares.work.writtenTotal() < plan.work.writtenTotal() ? { plan: shares, cap, hard: false } : whole;
  for (let attempt = 0; attempt < 3 && cap >= 0; attempt++) {
    const within = planWithin(input, cap, true);
    const still = within.work.writtenTotal() - window;
    if (still <= 0) return { plan: within, cap, hard: true };
    if (within.work.writtenTotal() < best.plan.work.writtenTotal()) best = { plan: within, cap, hard: true };
    cap = Math.min(cap, carriedTotal(within)) - still;
  }
  return best;
}

/** Tokens of a plan's carried items. */
function carriedTotal(plan: CompactionPlan): number {
  let tokens = 0;
  for (const item of plan.carried.items) if (isCarried(item)) tokens += item.tokens;
  return tokens;
}

/**
 * {@link planCompaction}, the carried state within `carriedCap` tokens (null: its own budgets);
 * `cutWaiting`: the last resort may cut the arguments of calls still waiting for their results.
 */
function planWithin(
  input: PlanInput,
  carriedCap: number | null,
  hard = false,
  cutWaiting = false,
): CompactionPlan {
  const { config } = input;
  const tokenizer = countingOnce(input.tokenizer);
  const tokensBefore = sumTokens(input.items);
  const target = targetTokens(config);
  const cap = (tokens: number): number => (carriedCap === null ? tokens : Math.min(tokens, carriedCap));
  const carried = buildCarriedState({
    items: input.items,
    // Its texts are new to this plan, each counted once by its own means.
    tokenizer: input.tokenizer,
    budgetTokens: cap(Math.floor(config.carriedStateRatio * target)),
    limitTokens: cap(carriedLimit(input.items, config, target)),
    idPrefix: input.compactionId,
    gitDiffStat: input.gitDiffStat,
    ...(hard ? { hard: true } : {}),
  });
  const items = carried.items;
  // Measure the header and summaries first: the summary's budget depends on them.
  const work = new WorkingContext(items, {
    window: config.maxContextTokens,
    summaryReserve: null,
    pairs: carried.pairs,
    // A reply whose calls wait takes at least its calls with their arguments cut (the last resort
    // cuts them rather than leave a result without its call).
    leastOf: (item) => planCut(item, config, tokenizer, MIN_PREVIEW_TOKENS, true)?.tokens ?? item.tokens,
  });
  const headerTokens = work.headerTokens;
  const conversation = work.conversationTokens() + work.summaryTokens;
  const underAlready = tokensBefore <= target;
  // Units no step may remove (pinned, the latest call and its results, the current message) stay
  // whatever the summary's size — the latest results at least as their seed-size previews: the
  // summary gets no more than what they leave.
  let fixedTokens = 0;
  for (const unit of work.units) {
    if (!unit.protected) continue;
    if (unit.protection !== 'fresh_results') fixedTokens += unit.tokens;
    else
      for (const item of unit.originals)
        fixedTokens += planCut(item, config, tokenizer)?.tokens ?? item.tokens;
  }
  const budget = Math.min(
    summaryBudgetFor(config, target - headerTokens, work.summaryTokens),
    Math.max(MIN_SUMMARY_TOKENS, target - headerTokens - fixedTokens),
  );
  // Already under the target (manual, marker, rounds, events): half the conversation goes, into a
  // summary no larger than half of what it stands for.
  const summaryBudget = underAlready ? Math.min(budget, Math.ceil(conversation / 4)) : budget;
  const goal = underAlready
    ? Math.min(target, headerTokens + summaryBudget + Math.floor(conversation / 2))
    : target;
  work.reserveSummary(summaryBudget);
  // The events trigger counts items: a compaction leaves as few of them, relative to its threshold,
  // as it leaves tokens relative to the window's trigger (else it would fire again at once).
  const itemGoal = Math.floor((config.eventsThreshold * config.targetRatio) / config.triggerRatio);
  work.limitItems(itemGoal);

  const taskType = detectTaskType(items);
  const chain = fullStrategyChain(taskType);
  const stats = emptyPruneStats();
  const steps: PlanStep[] = [];
  for (const step of stepsFor({
    items,
    config,
    tokenizer,
    trigger: input.trigger,
    chain,
    stats,
    startedOverTarget: !underAlready,
    cutWaiting,
  })) {
    if (work.reached(goal)) break;
    const before = work.total();
    step.run(work, goal);
    // The last resort is named only where it cut something.
    if (step.lastResort && work.total() === before) break;
    if (step.prune) stats.rulesApplied.push(step.name);
    steps.push({ name: step.name, tokensAfter: work.total() });
  }

  const minimum = headerTokens + Math.min(summaryBudget, MIN_SUMMARY_TOKENS);
  // Over the window, an automatic compaction does what it can: the request must not be sent as is.
  const impossible =
    isAutomatic(input.trigger) && minimum > target && tokensBefore <= config.maxContextTokens
      ? `header_exceeds_target: the header and carried state are ${headerTokens} tokens; with the smallest ` +
        `summary (${MIN_SUMMARY_TOKENS}) that is over the target of ${target} (${config.targetRatio} × ` +
        `${config.maxContextTokens}); shorten the system prompt, tools or pinned content, or use a larger window`
      : null;
  const toSummarize: ContextItem[] = [];
  for (const unit of work.units) {
    if (unit.removed) for (const item of unit.originals) toSummarize.push(item);
    else if (unit.kind === 'block') stats.toolBlocksKept++;
  }
  return {
    trigger: input.trigger,
    tokensBefore,
    targetTokens: target,
    goalTokens: goal,
    headerTokens,
    taskType,
    chain,
    carried,
    steps,
    strategy: steps.length > 0 ? (steps[steps.length - 1] as PlanStep).name : null,
    toSummarize,
    previousSummaries: work.removedAny ? work.summaries : [],
    summaryBudget,
    stats,
    overTarget: work.total() > goal,
    itemGoal,
    itemBound: work.itemBound,
    impossible,
    work,
    config,
    tokenizer,
  };
}

/**
 * The context after the prune steps alone, as the prune activity stages it: the carried state in,
 * no summary yet (the previous summaries stay).
 */
export function prunedItems(plan: CompactionPlan): ContextItem[] {
  return plan.work.contextItems(null, { keepSummaries: true, keep: (u) => u.removedBy !== 'prune' });
}

/**
 * Gives the kept units' cut items (those `which` takes) back as much of themselves as `room` allows,
 * newest first: whole when they fit, else a longer preview. Returns the room left.
 */
function growCuts(
  plan: CompactionPlan,
  room: number,
  which: (unit: WorkingUnit, cut: PlannedCut, item: ContextItem) => boolean = () => true,
): number {
  const { work } = plan;
  for (let u = work.units.length - 1; u >= 0 && room > 0; u--) {
    const unit = work.units[u] as WorkingUnit;
    if (unit.removed) continue;
    for (let i = unit.originals.length - 1; i >= 0 && room > 0; i--) {
      const cut = unit.cuts[i];
      const item = unit.originals[i] as ContextItem;
      if (!cut || !which(unit, cut, item)) continue;
      if (item.tokens - cut.tokens <= room) {
        room -= item.tokens - cut.tokens;
        work.uncut(unit, i);
        continue;
      }
      // The same field cut again, to a longer preview.
      const longer =
        cut.of === 'arguments'
          ? longestCut(item, plan.config, plan.tokenizer, cut.tokens + room)
          : planPreview(item, plan.config, plan.tokenizer, cut.tokens + room, 1);
      if (longer && longer.tokens > cut.tokens) {
        room -= longer.tokens - cut.tokens;
        work.cut(unit, i, longer);
      }
    }
  }
  return room;
}

/**
 * The compacted context: header (with the carried state) → the summary → the kept units, then
 * filled (pi's `keepRecentTokens` idea): when the summary came out shorter than its budget, the
 * newest removed units that fit go back in verbatim, newest first, while the context stays at or
 * under the goal — a tool block whose results do not fit whole comes back with them cut to a
 * preview. Without a summary (nothing removed), the previous summaries stay. Call it once per plan.
 */
export function finishCompaction(plan: CompactionPlan, summary: CompactionSummaryItem | null): ContextItem[] {
  const { work } = plan;
  const refill = new Set<WorkingUnit>();
  if (summary && work.removedAny) {
    // The arguments of calls still waiting for their results, and the results in beside them, are
    // cut only where the request would be over the window with the summary at its budget: a
    // shorter summary gives its room back to them first, up to the window. (Their reasoning, cut
    // to reach the goal, grows back only within it, below.)
    growCuts(
      plan,
      plan.config.maxContextTokens - (work.headerTokens + work.conversationTokens() + summary.tokens),
      (unit, cut, item) =>
        unit.protection === 'pending_call' && (cut.of === 'arguments' || item.type === 'TOOL_RESULT'),
    );
    let room = growCuts(
      plan,
      plan.goalTokens - (work.headerTokens + work.conversationTokens() + summary.tokens),
    );
    let items = work.itemCount();
    // A removed block's riders are not brought back: what they said of that moment is old by now.
    const removed = work.removedUnits().filter((u) => u.kind !== 'orphan' && !work.ridden(u)?.removed);
    for (let i = removed.length - 1; i >= 0; i--) {
      const unit = removed[i] as WorkingUnit;
      // A unit that does not fit whole: each item gets its smallest form and a share of the room
      // left over in proportion to what it has beyond that (many calls and results of one reply
      // are each cut alike); one that would not fit even at its smallest ends the refill.
      const smallest =
        unit.tokens > room
          ? unit.originals.map((item) => smallestCutTokens(item, plan.config, plan.tokenizer))
          : null;
      let share: number[] | null = null;
      if (smallest) {
        const spare = room - smallest.reduce((a, b) => a + b, 0);
        if (spare < 0) break;
        const beyond = unit.originals.map((item, k) => item.tokens - (smallest[k] as number));
        const total = beyond.reduce((a, b) => a + b, 0);
        share = smallest.map(
          (least, k) => least + (total > 0 ? Math.floor((spare * (beyond[k] as number)) / total) : 0),
        );
      }
      // Its items whole when they fit, else as previews as long as the room allows (a result's
      // text, a message's text, the reasoning of a message that calls tools; a result's cut planned
      // by an earlier step is planned again to that size).
      unit.originals.forEach((item, position) => {
        const fits = share
          ? (share[position] as number)
          : room - (unit.tokens - work.tokensAt(unit, position));
        const earlier = unit.cuts[position];
        if (item.type !== 'TOOL_RESULT' && earlier) {
          // A call whose arguments an earlier step cut keeps that cut, unless the block does not
          // fit: then every call's arguments are cut to what fits (50 tokens at least).
          if (item.type !== 'ASSISTANT_MESSAGE' || earlier.of !== 'arguments' || unit.tokens <= room) return;
          const all = longestCut(item, plan.config, plan.tokenizer, fits, true, MIN_PREVIEW_TOKENS);
          if (all && all.tokens < earlier.tokens) work.cut(unit, position, all);
          return;
        }
        if (item.tokens <= fits) {
          if (unit.cuts[position]) work.uncut(unit, position);
          return;
        }
        // A result's head with its recall handle serves at any length; a message's, from 50 tokens.
        const minimum = item.type === 'TOOL_RESULT' ? 1 : MIN_PREVIEW_TOKENS;
        // Calls that do not fit whole, each maybe under the threshold (many writes in one message):
        // their arguments cut to what fits (50 tokens at least), before the reasoning is.
        const cut =
          (item.type === 'ASSISTANT_MESSAGE'
            ? longestCut(item, plan.config, plan.tokenizer, fits, true, MIN_PREVIEW_TOKENS)
            : null) ?? planPreview(item, plan.config, plan.tokenizer, fits, minimum);
        if (cut) work.cut(unit, position, cut);
      });
      // The newest removed units, contiguous: a question comes back with its answer or not at all.
      if (unit.tokens > room || items + unit.originals.length > plan.itemGoal) break;
      refill.add(unit);
      room -= unit.tokens;
      items += unit.originals.length;
    }
  }
  return work.contextItems(summary, { keep: (u) => !u.removed || refill.has(u) });
}
