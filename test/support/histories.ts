/**
 * Reading what ran, for tests and benchmarks alike (no vitest here, so `bench/` can use it):
 * a conversation's full history (every run and every compaction child), its encoded size, its
 * events by type and their summaries, activity attempts, polling, and filler text.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.IHistory;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;

/** A history with what ran in it: the parent run(s) and each compaction child. */
export interface FullHistory {
  /** Each run of the conversation, in order (more than one after continue-as-new). */
  runs: { runId: string; history: History }[];
  /** Each compaction child by workflow id (`<conversation>/compaction-<n>`). */
  children: { workflowId: string; runId: string; history: History }[];
}

/** Polls `read` until `predicate` holds; throws with the last value after `timeoutMs`. */
export async function waitFor<T>(
  read: () => Promise<T>,
  predicate: (value: T) => boolean,
  timeoutMs = 30_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    try {
      last = await read();
      if (predicate(last)) return last;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Fetches every run of the conversation (following continue-as-new) and every compaction child. */
export async function fetchFullHistory(
  client: Client,
  workflowId: string,
  firstRunId: string,
): Promise<FullHistory> {
  const runs: FullHistory['runs'] = [];
  const children: FullHistory['children'] = [];
  let runId: string | undefined = firstRunId;
  while (runId) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    runs.push({ runId, history });
    for (const event of history.events ?? []) {
      const started = event.childWorkflowExecutionStartedEventAttributes;
      const execution = started?.workflowExecution;
      if (execution?.workflowId && execution.runId) {
        const childHistory = await client.workflow
          .getHandle(execution.workflowId, execution.runId)
          .fetchHistory();
        children.push({ workflowId: execution.workflowId, runId: execution.runId, history: childHistory });
      }
    }
    runId =
      eventsOf(history, 'WORKFLOW_EXECUTION_CONTINUED_AS_NEW')[0]
        ?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return { runs, children };
}

/** The protobuf encoding of a history, as the server stores and sends it. */
export function encodeHistory(history: History): Uint8Array {
  return temporal.api.history.v1.History.encode(history).finish();
}

/** Every history of a full history (parent runs, then children). */
export function allHistories(full: FullHistory): History[] {
  return [...full.runs.map((r) => r.history), ...full.children.map((c) => c.history)];
}

/** The name of an event's type without the `EVENT_TYPE_` prefix, e.g. `TIMER_STARTED`. */
export function eventTypeName(event: HistoryEvent): string {
  const name = EventType[event.eventType ?? 0] ?? 'UNKNOWN';
  return name.replace(/^EVENT_TYPE_/, '');
}

/** The events of a given type (name without `EVENT_TYPE_`). */
export function eventsOf(history: History, type: string): HistoryEvent[] {
  return (history.events ?? []).filter((e) => eventTypeName(e) === type);
}

/** The decoded `summary` of an event's user metadata; the replay timeline's reader. */
export { eventSummary } from '../../src/replay/timeline';

/** Activity name of each scheduled activity, by its scheduled event id. */
function scheduledActivities(history: History): Map<string, string> {
  const byId = new Map<string, string>();
  for (const event of eventsOf(history, 'ACTIVITY_TASK_SCHEDULED')) {
    const name = event.activityTaskScheduledEventAttributes?.activityType?.name ?? '';
    byId.set(String(event.eventId), name);
  }
  return byId;
}

/** The names of the activities scheduled in a history, in order. */
export function activityNames(history: History): string[] {
  return [...scheduledActivities(history).values()];
}

/**
 * For each execution of the named activity: the attempt that ran last (`ActivityTaskStarted.attempt`)
 * and the failure of the attempt before it, if any. Temporal records only the last attempt.
 */
export function activityAttempts(
  history: History,
  activity: string,
): { attempt: number; lastFailure: string | null }[] {
  const names = scheduledActivities(history);
  return eventsOf(history, 'ACTIVITY_TASK_STARTED')
    .filter((e) => names.get(String(e.activityTaskStartedEventAttributes?.scheduledEventId)) === activity)
    .map((e) => {
      const attrs = e.activityTaskStartedEventAttributes;
      const failure = attrs?.lastFailure;
      const lastFailure = failure
        ? [failure.applicationFailureInfo?.type, failure.message].filter(Boolean).join(': ')
        : null;
      return { attempt: attrs?.attempt ?? 0, lastFailure };
    });
}

/** Text of `n` characters of distinct words (tokenizes to about n / 5 tokens). */
export function words(n: number, seed = 'word'): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; length < n; i++) {
    const w = `${seed}${i}`;
    parts.push(w);
    length += w.length + 1;
  }
  return parts.join(' ').slice(0, n);
}
