/**
 * The compaction timeline of a conversation's workflow history: each compaction child with its
 * trigger, strategy, attempts, outcome, tokens and reason; cooldown timers; skipped automatic
 * triggers. Read from the history alone (what `replay` prints to debug compaction), so it works on
 * a history file from a bug report (children whose inputs or results carry text
 * go by reference: {@link decodeTimelinePayloads} reads them when the store is at hand).
 */
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.IHistory;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Payloads = temporal.api.common.v1.IPayloads | null | undefined;

export type TimelineEntry =
  | {
      kind: 'compaction';
      workflowId: string;
      seq: number | null;
      trigger: string | null;
      round: number | null;
      /** committed / rolled_back / skipped from the child's result; failed, cancelled, timed_out, running otherwise. */
      status: string;
      strategy: string | null;
      attempts: number | null;
      tokensBefore: number | null;
      tokensAfter: number | null;
      reason: string | null;
    }
  | { kind: 'cooldown'; summary: string; fired: boolean }
  | { kind: 'skipped'; summary: string };

function firstPayload(payloads: Payloads): unknown {
  const payload = payloads?.payloads?.[0];
  if (!payload) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(
      payload as Parameters<typeof defaultPayloadConverter.fromPayload>[0],
    );
  } catch {
    return undefined;
  }
}

function summaryOf(event: HistoryEvent): string {
  return eventSummary(event) ?? '';
}

/** The decoded `summary` of an event's user metadata (timers, activities, children), or null. */
export function eventSummary(event: HistoryEvent): string | null {
  const data = event.userMetadata?.summary?.data;
  if (!data || data.length === 0) return null;
  const text = Buffer.from(data).toString('utf8');
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'string' ? parsed : text;
  } catch {
    return text;
  }
}

/** The activity type of a local activity's marker (`core_local_activity`), or null. */
export function localActivityType(event: HistoryEvent): string | null {
  const marker = event.markerRecordedEventAttributes;
  if (marker?.markerName !== 'core_local_activity') return null;
  const data = firstPayload(marker.details?.['data']) as { activity_type?: unknown } | undefined;
  return str(data?.activity_type);
}

function num(value: unknown): number | null {
  return typeof value === 'number' ? value : null;
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/**
 * Decodes in place the payloads the timeline reads — compaction children's inputs and results —
 * with `codecs` (they go by reference when they carry text, and may be encrypted). Payloads it
 * cannot decode stay as they are: the timeline then shows less, the replay is unaffected.
 */
export async function decodeTimelinePayloads(history: History, codecs: PayloadCodec[]): Promise<void> {
  const decode = async (payloads: Payloads): Promise<void> => {
    if (!payloads?.payloads?.length) return;
    let list = payloads.payloads as Payload[];
    try {
      for (const codec of [...codecs].reverse()) list = await codec.decode(list);
    } catch {
      return;
    }
    payloads.payloads = list as typeof payloads.payloads;
  };
  for (const event of history.events ?? []) {
    await decode(event.startChildWorkflowExecutionInitiatedEventAttributes?.input);
    await decode(event.childWorkflowExecutionCompletedEventAttributes?.result);
  }
}

/** The timeline of one run of the agent conversation, in history order. */
export function compactionTimeline(history: History): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  const children = new Map<string, Extract<TimelineEntry, { kind: 'compaction' }>>();
  const timers = new Map<string, Extract<TimelineEntry, { kind: 'cooldown' }>>();
  const activityNames = new Map<string, string>();
  for (const event of history.events ?? []) {
    const initiated = event.startChildWorkflowExecutionInitiatedEventAttributes;
    if (initiated?.workflowId) {
      const input = (firstPayload(initiated.input) ?? {}) as Record<string, unknown>;
      const entry = {
        kind: 'compaction' as const,
        workflowId: initiated.workflowId,
        seq: num(input.seq),
        trigger: str(input.trigger),
        round: num(input.round),
        status: 'running',
        strategy: null,
        attempts: null,
        tokensBefore: null,
        tokensAfter: null,
        reason: null,
      };
      children.set(initiated.workflowId, entry);
      entries.push(entry);
      continue;
    }
    const done = event.childWorkflowExecutionCompletedEventAttributes;
    if (done?.workflowExecution?.workflowId) {
      const entry = children.get(done.workflowExecution.workflowId);
      const result = (firstPayload(done.result) ?? {}) as Record<string, unknown>;
      if (entry) {
        entry.status = str(result.status) ?? 'completed';
        entry.strategy = str(result.strategy);
        entry.attempts = num(result.attempts);
        entry.tokensBefore = num(result.tokensBefore);
        entry.tokensAfter = num(result.tokensAfter);
        entry.reason = str(result.reason);
      }
      continue;
    }
    const ended =
      (event.childWorkflowExecutionFailedEventAttributes && 'failed') ||
      (event.childWorkflowExecutionCanceledEventAttributes && 'cancelled') ||
      (event.childWorkflowExecutionTimedOutEventAttributes && 'timed_out') ||
      (event.childWorkflowExecutionTerminatedEventAttributes && 'terminated');
    if (ended) {
      const attrs =
        event.childWorkflowExecutionFailedEventAttributes ??
        event.childWorkflowExecutionCanceledEventAttributes ??
        event.childWorkflowExecutionTimedOutEventAttributes ??
        event.childWorkflowExecutionTerminatedEventAttributes;
      const entry = children.get(attrs?.workflowExecution?.workflowId ?? '');
      if (entry) {
        entry.status = ended;
        entry.reason = event.childWorkflowExecutionFailedEventAttributes?.failure?.message ?? null;
      }
      continue;
    }
    const timer = event.timerStartedEventAttributes;
    if (timer?.timerId) {
      const summary = summaryOf(event);
      if (/cooldown/i.test(summary)) {
        const entry = { kind: 'cooldown' as const, summary, fired: false };
        timers.set(timer.timerId, entry);
        entries.push(entry);
      }
      continue;
    }
    const fired = event.timerFiredEventAttributes;
    if (fired?.timerId) {
      const entry = timers.get(fired.timerId);
      if (entry) entry.fired = true;
      continue;
    }
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name) {
      activityNames.set(String(event.eventId), scheduled.activityType.name);
      if (scheduled.activityType.name === 'recordSkippedCompaction') {
        entries.push({ kind: 'skipped', summary: summaryOf(event) });
      }
      continue;
    }
    // A local activity is one marker; skips are recorded by one.
    if (localActivityType(event) === 'recordSkippedCompaction') {
      entries.push({ kind: 'skipped', summary: summaryOf(event) });
    }
  }
  return entries;
}

/** One line per entry, for the terminal. */
export function formatTimeline(entries: readonly TimelineEntry[]): string[] {
  return entries.map((e) => {
    switch (e.kind) {
      case 'compaction': {
        const tokens =
          e.tokensBefore !== null && e.tokensAfter !== null
            ? `, ${e.tokensBefore.toLocaleString('en-US')} → ${e.tokensAfter.toLocaleString('en-US')} tokens`
            : '';
        const attempts = e.attempts !== null ? `, ${e.attempts} summary attempt(s)` : '';
        const reason = e.reason ? ` — ${e.reason}` : '';
        return `#${e.seq ?? '?'} ${e.trigger ?? '?'} (round ${e.round ?? '?'}): ${e.status}${e.strategy ? ` via ${e.strategy}` : ''}${tokens}${attempts}${reason}  [${e.workflowId}]`;
      }
      case 'cooldown':
        return `cooldown timer: ${e.summary}${e.fired ? ' (fired)' : ' (running)'}`;
      case 'skipped':
        return `skipped: ${e.summary}`;
    }
  });
}
