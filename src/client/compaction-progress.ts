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
  type ConversationStatus,
  type RunningCompaction,
} from '../../workflows/definitions';

/** The summary call in flight, from the server's record of the pending activity. */
export interface SummaryAttempt {
  /** The attempt running now (or next), from 1. */
  attempt: number;
  /** How many its retry policy allows (0: unlimited). */
  maximumAttempts: number;
  /** The previous attempt's failure, first line. */
  lastFailure: string | null;
  /** When the next attempt starts (ms since the epoch), while it waits for its backoff. */
  nextAttemptAt: number | null;
}

export interface CompactionProgressView extends CompactionProgress {
  /** The compaction child's workflow id. */
  workflowId: string;
  /** The summary call in flight as an activity, or null (none, or a local activity). */
  summaryAttempt: SummaryAttempt | null;
}

/** The status, with where the running compaction is (its child's progress) while one runs. */
export type WatchedStatus = ConversationStatus & {
  /** Where the running compaction is; null when it ended meanwhile, absent when none runs. */
  compactionProgress?: CompactionProgressView | null;
};

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
