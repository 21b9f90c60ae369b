/**
 * The conversation's side of "compact now?" (DESIGN.md §3), shared by the workflow, the model
 * activity's precheck and `eval`: which trigger fires at each point of the loop, whether it may
 * run, and how the loop guard judges a compaction that ran.
 *
 * Pure module.
 */
import { targetTokens, type CompactionConfig } from './config';
import {
  automaticBlockReason,
  evaluateTriggers,
  loopGuard,
  type RecentCompaction,
  type TriggerKind,
} from './triggers';

/** Before each model call (precheck: estimate, rounds, events) or after each response (check, marker). */
export type TriggerPoint = 'before_model_call' | 'after_model_call';

export interface TriggerObservation {
  config: CompactionConfig;
  /** The active context's tokens (the next request's estimate). */
  contextTokens: number;
  reportedTokens: number | null;
  itemCount: number;
  roundsSinceCompaction: number;
  markerSeen: boolean;
  cooldownActive: boolean;
  pausedReason: string | null;
}

export interface CompactionDecision {
  trigger: TriggerKind;
  /** Why it fired, with the values compared (shown in the UI and the events). */
  detail: string;
  /** Set when an automatic trigger fired but must not run now (cooldown, loop guard, disabled). */
  skip: string | null;
}

/** The trigger that fires at this point, if any. */
export function decideCompaction(point: TriggerPoint, o: TriggerObservation): CompactionDecision | null {
  const result = evaluateTriggers(
    {
      phase: point === 'before_model_call' ? 'precheck' : 'check',
      estimatedTokens: o.contextTokens,
      reportedTokens: o.reportedTokens,
      itemCount: o.itemCount,
      roundsSinceCompaction: o.roundsSinceCompaction,
      markerSeen: o.markerSeen,
      cooldownActive: o.cooldownActive,
      paused: o.pausedReason !== null,
    },
    o.config,
  );
  const fired = result.fired[0];
  if (!fired) return null;
  const skip = result.skipReason && o.pausedReason ? `loop_guard: ${o.pausedReason}` : result.skipReason;
  return { trigger: fired.trigger, detail: fired.reason, skip };
}

/** True when a firing automatic trigger would be skipped (cooldown, loop guard, disabled). */
export function automaticCompactionBlocked(
  o: Pick<TriggerObservation, 'config' | 'cooldownActive' | 'pausedReason'>,
): boolean {
  return (
    automaticBlockReason({ paused: o.pausedReason !== null, cooldownActive: o.cooldownActive }, o.config) !==
    null
  );
}

/** What the loop guard needs of a compaction that ran. */
export interface CompactionOutcome {
  status: 'committed' | 'rolled_back' | 'skipped';
  tokensAfter: number;
  savedRatio: number;
}

/**
 * Whether a compaction made progress: it committed, saved at least `loopGuardMinSavedRatio` of its
 * tokens and ended at or under the target. Only compactions without progress count toward the
 * loop guard: a healthy compaction never pauses automatic compaction (DESIGN.md §3).
 */
export function madeProgress(outcome: CompactionOutcome, config: CompactionConfig): boolean {
  return (
    outcome.status === 'committed' &&
    outcome.savedRatio >= config.loopGuardMinSavedRatio &&
    outcome.tokensAfter <= targetTokens(config)
  );
}

/**
 * The loop guard's record after an automatic compaction: compactions without progress are
 * remembered (the last 20), healthy ones are not. Returns the new record and the reason to pause,
 * if any (`loopGuard`).
 */
export function recordForLoopGuard(
  recent: readonly RecentCompaction[],
  outcome: CompactionOutcome,
  round: number,
  config: CompactionConfig,
): { recent: RecentCompaction[]; pause: string | null } {
  if (madeProgress(outcome, config)) return { recent: [...recent], pause: null };
  const next = [...recent, { round, savedRatio: outcome.savedRatio }].slice(-20);
  return { recent: next, pause: loopGuard(next, round, config) };
}
