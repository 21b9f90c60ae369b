/**
 * Where the workflow asks the pure trigger policy (src/context/triggers) whether to compact, at the
 * two points the seeds put the checks: before each model call (precheck on the estimate, rounds,
 * events) and after each response (check on the reported usage, the marker).
 */
import type { CompactionConfig } from '../src/context/config';
import { automaticBlockReason, evaluateTriggers, loopGuard } from '../src/context/triggers';
import type { TriggerKind } from './definitions';

export type TriggerPoint = 'before_model_call' | 'after_model_call';

export interface TriggerObservation {
  config: CompactionConfig;
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
  /** Set when an automatic trigger fired but must not run now (cooldown, loop guard). */
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

/** A reason to pause automatic compaction (it makes no progress), or null. */
export function loopGuardVerdict(
  recent: { round: number; savedRatio: number }[],
  round: number,
  config: CompactionConfig,
): string | null {
  return loopGuard(recent, round, config);
}
