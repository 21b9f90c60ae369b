/**
 * Progress while an Update is in flight: polls the `status` Query and reports each change of
 * phase (model, tools, compacting, awaiting approval), so a long round is not a silent wait.
 * `ConversationClient.send`, `compact` and `watchStatus` run on it.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { statusQuery } from '../../workflows/definitions';
import { compactionProgress, type WatchedStatus } from './compaction-progress';

/** What makes a new progress line: the phase, and where a running compaction is (not the clock). */
function progressKey(status: WatchedStatus): string {
  const p = status.compactionProgress;
  const a = p?.summaryAttempt;
  return [
    status.phase,
    status.awaitingApproval?.trigger ?? '',
    p ? `${p.seq}|${p.phase}|${p.step}|${p.tokensAfter}|${a?.attempt ?? ''}|${a?.lastFailure ?? ''}` : '',
  ].join('|');
}

/** How often the status is polled while waiting. */
export const PROGRESS_POLL_MS = 500;

/** A running watch of a conversation's status (`ConversationClient.watchStatus`). */
export interface PhaseWatcher {
  /** Stops polling; resolves once the last poll has settled. */
  stop(): Promise<void>;
}

/**
 * Calls `onChange` with the status each time its phase (or what awaits approval) differs from the
 * last one seen. A failed poll is skipped: progress is a courtesy, never a reason to fail.
 */
export function watchPhases(
  handle: WorkflowHandle,
  onChange: (status: WatchedStatus) => void,
  intervalMs = PROGRESS_POLL_MS,
): PhaseWatcher {
  let stopped = false;
  let last: string | null = null;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  const poll = async (): Promise<void> => {
    try {
      const status: WatchedStatus = await handle.query(statusQuery);
      if (status.phase === 'compacting' && status.compaction)
        status.compactionProgress = await compactionProgress(handle.client, status.compaction);
      const key = progressKey(status);
      if (!stopped && key !== last) {
        last = key;
        onChange(status);
      }
    } catch {
      // the workflow may be between tasks, or the query timed out: try again next tick
    }
  };
  const tick = (): void => {
    if (stopped) return;
    inFlight = poll().finally(() => {
      if (!stopped) timer = setTimeout(tick, intervalMs);
    });
  };
  timer = setTimeout(tick, intervalMs);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await inFlight;
    },
  };
}

/** Runs `work` while watching the phases of `handle`; the watcher stops when `work` settles. */
export async function withProgress<T>(
  handle: WorkflowHandle,
  onChange: ((status: WatchedStatus) => void) | undefined,
  work: () => Promise<T>,
): Promise<T> {
  if (!onChange) return work();
  const watcher = watchPhases(handle, onChange);
  try {
    return await work();
  } finally {
    await watcher.stop();
  }
}
