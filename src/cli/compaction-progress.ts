/**
 * Where a running compaction is, as a client sees it: the child's `progress` Query (phase, step,
 * tokens so far) and, for the summary call in flight, the server's record of that activity
 * (attempt n of m, the last attempt's failure, when the next one starts). A workflow does not see
 * an activity's retries — the server runs them — so that part comes from the server, not from the
 * child's own state. A summary that runs as a local activity has no such record.
 */
import type { WorkflowClient } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import {
  compactionProgressQuery,
  type CompactionProgress,
  type RunningCompaction,
} from '../../workflows/definitions';

/** The summary call in flight, from the server's record of the pending activity. */
export interface SummaryAttempt {
  attempt: number;
  maximumAttempts: number;
  /** The previous attempt's failure, first line. */
  lastFailure: string | null;
  /** When the next attempt starts (ms since the epoch), while it waits for its backoff. */
  nextAttemptAt: number | null;
}

export interface CompactionProgressView extends CompactionProgress {
  workflowId: string;
  summaryAttempt: SummaryAttempt | null;
}

const SUMMARY_ACTIVITIES = new Set(['summarize', 'dropOldestRounds']);

/** Queries the running child and the server; null when it has ended meanwhile. */
export async function compactionProgress(
  workflows: WorkflowClient,
  running: RunningCompaction,
): Promise<CompactionProgressView | null> {
  const handle = workflows.getHandle(running.workflowId);
  try {
    const [progress, description] = await Promise.all([
      handle.query(compactionProgressQuery),
      handle.describe(),
    ]);
    const pending = description.raw.pendingActivities?.find((a) =>
      SUMMARY_ACTIVITIES.has(a.activityType?.name ?? ''),
    );
    return {
      ...progress,
      workflowId: running.workflowId,
      summaryAttempt: pending
        ? {
            attempt: pending.attempt ?? 1,
            maximumAttempts: pending.maximumAttempts ?? 0,
            lastFailure: pending.lastFailure?.message?.split('\n')[0] ?? null,
            nextAttemptAt: optionalTsToMs(pending.nextAttemptScheduleTime) ?? null,
          }
        : null,
    };
  } catch {
    // It ended between the parent's status and this query: nothing to show.
    return null;
  }
}

function n(tokens: number): string {
  return Math.round(tokens).toLocaleString('en-US');
}

/**
 * One line: `compaction #3 (check): prune 28,758 → 14,900 · summary attempt 2/3 (429 …, retrying
 * in 2 s)`. `now` decides the wait shown.
 */
export function formatCompactionProgress(p: CompactionProgressView, now: number = Date.now()): string {
  const steps: string[] = [];
  if (p.phase === 'prune') steps.push('prune…');
  else if (p.tokensBefore !== null)
    steps.push(`prune ${n(p.tokensBefore)} → ${n(p.prunedTokens ?? p.tokensAfter ?? p.tokensBefore)}`);
  if (p.phase === 'summary') {
    const a = p.summaryAttempt;
    let summary = `summary${p.step ? ` (${p.step})` : ''}`;
    if (a && a.attempt > 1) {
      const wait =
        a.nextAttemptAt !== null && a.nextAttemptAt > now
          ? `, retrying in ${Math.ceil((a.nextAttemptAt - now) / 1000)} s`
          : '';
      summary += ` attempt ${a.attempt}/${a.maximumAttempts || '∞'}${a.lastFailure ? ` (${a.lastFailure}${wait})` : wait ? ` (${wait.slice(2)})` : ''}`;
    } else summary += '…';
    steps.push(summary);
  }
  if (p.phase === 'commit') steps.push(`committing ${n(p.tokensAfter ?? 0)}…`);
  if (p.phase === 'rollback') steps.push('rolling back…');
  if (p.phase === 'done' && p.outcome) {
    const after = p.tokensAfter ?? 0;
    const before = p.tokensBefore ?? after;
    steps.push(
      p.outcome.status === 'committed'
        ? `committed → ${n(after)} (saved ${before > 0 ? Math.round(((before - after) / before) * 100) : 0} %)`
        : `${p.outcome.status.replace('_', ' ')}${p.outcome.reason ? `: ${p.outcome.reason}` : ''}`,
    );
  }
  return `compaction #${p.seq} (${p.trigger}): ${steps.join(' · ')}`;
}
