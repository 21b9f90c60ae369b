/**
 * When to compact (DESIGN.md §3 table): a pure function of what the workflow observed and the
 * configuration. The workflow asks at the two points the seeds put the checks — before each model
 * call (seed 003 precheck: the estimate, plus rounds and events) and after each response (seed 003
 * check: the reported usage, plus the marker) — and explicitly for manual and overflow.
 *
 * Pure module.
 */
import { triggerTokens, type CompactionConfig } from './config';

export type TriggerKind = 'precheck' | 'check' | 'rounds' | 'events' | 'marker' | 'manual' | 'overflow';

/** Automatic triggers are held back by the cooldown and the loop guard; manual and overflow are not. */
export function isAutomatic(trigger: TriggerKind): boolean {
  return trigger !== 'manual' && trigger !== 'overflow';
}

/** What the workflow knows at one evaluation point. */
export interface TriggerState {
  /** `precheck`: before a model call. `check`: after a response. */
  phase: 'precheck' | 'check';
  /** Estimated tokens of the next request (stored counts + overheads + tool definitions). */
  estimatedTokens: number;
  /** The last response's reported prompt + completion tokens, when the provider sent usage. */
  reportedTokens: number | null;
  /** Items in the active context. */
  itemCount: number;
  /** Real user rounds since the last compaction. */
  roundsSinceCompaction: number;
  /** The last response contained the marker. */
  markerSeen: boolean;
  /** A cooldown timer is running (after a summary failure). */
  cooldownActive: boolean;
  /** The loop guard paused automatic compaction. */
  paused: boolean;
  /** A `compact` Update is waiting. */
  manualRequested?: boolean;
  /** The model rejected the request as too long. */
  overflowed?: boolean;
}

export interface FiredTrigger {
  trigger: TriggerKind;
  /** Why, with the values compared (shown in events and the UI). */
  reason: string;
}

export interface TriggerEvaluation {
  /** Every trigger that fired, most urgent first (overflow, manual, then the automatic ones). */
  fired: FiredTrigger[];
  /**
   * True when something fired but nothing may run now: every fired trigger is automatic and a
   * cooldown is running, the loop guard paused compaction, or compaction is disabled.
   */
  skipped: boolean;
  /** Why it was skipped, when it was. */
  skipReason: string | null;
}

function pct(n: number, of: number): string {
  return `${((100 * n) / of).toFixed(1)}%`;
}

/**
 * Which triggers fire and why. Thresholds are inclusive (`tokens >= ratio × window` fires; 79.9%
 * does not). In the check phase the reported usage wins over the estimate (DESIGN.md §6).
 */
export function evaluateTriggers(state: TriggerState, config: CompactionConfig): TriggerEvaluation {
  const fired: FiredTrigger[] = [];
  const window = config.maxContextTokens;
  const threshold = triggerTokens(config);
  if (state.overflowed)
    fired.push({ trigger: 'overflow', reason: 'the model rejected the request as too long' });
  if (state.manualRequested) fired.push({ trigger: 'manual', reason: 'requested by the user' });

  if (state.phase === 'precheck') {
    // A request over the window is never sent: while automatic compaction is held back (loop
    // guard, cooldown, `enabled: false`), the emergency compaction runs first, as for overflow.
    const blocked = automaticBlockReason(state, config) !== null;
    if (state.estimatedTokens > window && blocked && !state.overflowed) {
      fired.unshift({
        trigger: 'overflow',
        reason: `emergency: the request would be ${state.estimatedTokens} tokens, over the window of ${window}`,
      });
    }
    if (state.estimatedTokens >= threshold) {
      fired.push({
        trigger: 'precheck',
        reason: `estimated ${state.estimatedTokens} tokens ≥ ${threshold} (${pct(state.estimatedTokens, window)} of ${window}, trigger ${config.triggerRatio})`,
      });
    }
    if (state.roundsSinceCompaction >= config.roundsThreshold) {
      fired.push({
        trigger: 'rounds',
        reason: `${state.roundsSinceCompaction} rounds since the last compaction ≥ ${config.roundsThreshold}`,
      });
    }
    if (state.itemCount >= config.eventsThreshold) {
      fired.push({
        trigger: 'events',
        reason: `${state.itemCount} items in the context ≥ ${config.eventsThreshold}`,
      });
    }
  } else {
    const tokens = state.reportedTokens ?? state.estimatedTokens;
    const source = state.reportedTokens === null ? 'estimated' : 'reported';
    if (tokens >= threshold) {
      fired.push({
        trigger: 'check',
        reason: `${source} usage ${tokens} tokens ≥ ${threshold} (${pct(tokens, window)} of ${window}, trigger ${config.triggerRatio})`,
      });
    }
    if (state.markerSeen) fired.push({ trigger: 'marker', reason: `the model wrote ${config.marker}` });
  }

  const runnable = fired.some((f) => !isAutomatic(f.trigger));
  const skipReason = fired.length > 0 && !runnable ? automaticBlockReason(state, config) : null;
  return { fired, skipped: skipReason !== null, skipReason };
}

/**
 * Why an automatic trigger may not run now (compaction disabled, paused by the loop guard, or
 * cooling down), or null when it may. Manual and overflow compactions ignore it.
 */
export function automaticBlockReason(
  state: Pick<TriggerState, 'paused' | 'cooldownActive'>,
  config: CompactionConfig,
): string | null {
  if (!config.enabled) return 'disabled: automatic compaction is off (enabled: false)';
  if (state.paused) return 'loop_guard: automatic compaction is paused';
  if (state.cooldownActive) return 'cooldown: automatic compaction is cooling down after a summary failure';
  return null;
}

/** One automatic compaction as the loop guard remembers it. */
export interface RecentCompaction {
  round: number;
  savedRatio: number;
}

/**
 * A reason to pause automatic compaction because it makes no progress, or null (DESIGN.md §3).
 * `recent` holds only compactions that made no progress (`compaction-decision.ts`): the last one
 * saved less than `loopGuardMinSavedRatio`, or `loopGuardMaxCompactions` of them ran within the
 * last `loopGuardWithinRounds` rounds.
 */
export function loopGuard(
  recent: readonly RecentCompaction[],
  round: number,
  config: CompactionConfig,
): string | null {
  const last = recent[recent.length - 1];
  if (last && last.savedRatio < config.loopGuardMinSavedRatio) {
    return (
      `the last automatic compaction saved ${(100 * last.savedRatio).toFixed(1)}%, under ` +
      `${(100 * config.loopGuardMinSavedRatio).toFixed(0)}% (loopGuardMinSavedRatio)`
    );
  }
  const since = round - config.loopGuardWithinRounds + 1;
  const within = recent.filter((r) => r.round >= since).length;
  if (within >= config.loopGuardMaxCompactions) {
    return (
      `${within} automatic compactions without progress within ${config.loopGuardWithinRounds} round(s) ` +
      `(loopGuardMaxCompactions ${config.loopGuardMaxCompactions})`
    );
  }
  return null;
}
