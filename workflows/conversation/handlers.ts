/**
 * The agent conversation's Queries, Signals and Updates. Handlers only read the state or queue a
 * request: the main loop runs every round, compaction and restore one at a time, and an Update
 * that waits for its result waits through {@link awaitOutcome}.
 */
import { ApplicationFailure, condition, log, patched, setHandler, uuid4 } from '@temporalio/workflow';
import {
  approveCompactionUpdate,
  bodyText,
  compactionMetaSignal,
  compactionReviewSignal,
  compactUpdate,
  endUpdate,
  eventsPageQuery,
  eventsQuery,
  restoreUpdate,
  sendMessageUpdate,
  statusQuery,
  userMessageSignal,
  type CompactionBrief,
  type EventsPage,
  type RestoreResult,
  type SendMessageResult,
} from '../definitions';
import type { ConversationState, ManualRequest } from './state';

/** The longest focus a manual compaction accepts, in characters. */
const MAX_FOCUS_CHARS = 4000;

/**
 * Queues a request for the main loop under a new id and waits until the loop settles it: its
 * value, or its failure thrown.
 */
async function awaitOutcome<T>(
  state: ConversationState,
  queue: (id: string) => void,
  what: string,
): Promise<T> {
  const id = uuid4();
  queue(id);
  await condition(() => state.outcomes.has(id));
  const outcome = state.outcomes.get(id);
  state.outcomes.delete(id);
  if (!outcome) throw ApplicationFailure.nonRetryable(`lost the outcome of the ${what}`, 'INTERNAL');
  if (!outcome.ok) throw outcome.error;
  return outcome.value as T;
}

function refuseWhenEnded(state: ConversationState): void {
  if (state.ended) throw new Error('the conversation has ended');
}

/** Is this text a message the conversation takes? Throws why not. */
function checkMessage(state: ConversationState, text: string | null): void {
  if (text === null || text.trim().length === 0) throw new Error('message is empty: send some text');
  const limit = state.config.maxInputChars;
  if (text.length > limit) {
    throw new Error(`message is too long: ${text.length} characters, the limit is ${limit} (maxInputChars)`);
  }
}

/**
 * Installs every handler. `restoreNow` runs a restore at once: histories recorded before restores
 * took their turn in the main loop replay that way.
 */
export function installHandlers(
  state: ConversationState,
  restoreNow: (version: number) => Promise<RestoreResult>,
): void {
  const manual = (request: Omit<ManualRequest, 'id'>) => (id: string) =>
    state.manualRequests.push({ id, ...request });

  setHandler(statusQuery, () => state.status());
  setHandler(eventsQuery, (opts) => state.events.slice(Math.max(0, opts?.since ?? 0)));
  setHandler(eventsPageQuery, (opts): EventsPage => {
    const base = state.eventsTotal - state.events.length;
    const from = Math.max(base, Math.min(state.eventsTotal, Math.floor(opts?.since ?? 0)));
    return { from, events: state.events.slice(from - base), next: state.eventsTotal };
  });
  // A running compaction's meta events, as they happen (the child sends them when asked to).
  setHandler(compactionMetaSignal, (event) => {
    if (event.type === 'compaction_meta') state.pushEvent(event);
  });
  // The running compaction's summary waits for review, or no longer.
  setHandler(compactionReviewSignal, ({ seq, review: pending }) => {
    if (state.runningCompaction?.seq !== seq) return;
    if (pending && !state.review) {
      const { trigger, tokensBefore, tokensAfter } = pending;
      state.pushEvent({ type: 'awaiting_review', seq, trigger, tokensBefore, tokensAfter });
    }
    state.review = pending;
    state.phase = pending ? 'awaiting_review' : 'compacting';
    state.publish();
  });

  setHandler(
    sendMessageUpdate,
    (body): Promise<SendMessageResult> =>
      awaitOutcome(
        state,
        (id) => state.inbox.push({ id, text: bodyText(body) ?? '', awaited: true }),
        'round',
      ),
    {
      validator: (body): void => {
        refuseWhenEnded(state);
        checkMessage(state, bodyText(body));
      },
    },
  );

  setHandler(userMessageSignal, (body) => {
    const text = bodyText(body);
    try {
      refuseWhenEnded(state);
      checkMessage(state, text);
    } catch {
      log.warn('ignored an invalid userMessage signal', { length: text?.length ?? -1 });
      return;
    }
    state.inbox.push({ id: uuid4(), text: text as string, awaited: false });
  });

  setHandler(
    compactUpdate,
    (opts): Promise<CompactionBrief> =>
      awaitOutcome(state, manual({ focus: opts?.focus?.trim() || null }), 'compaction'),
    {
      validator: (opts): void => {
        refuseWhenEnded(state);
        if (opts?.focus !== undefined && typeof opts.focus !== 'string')
          throw new Error('focus must be text');
        if (opts?.focus && opts.focus.length > MAX_FOCUS_CHARS)
          throw new Error(`focus is too long (over ${MAX_FOCUS_CHARS} characters)`);
      },
    },
  );

  setHandler(
    approveCompactionUpdate,
    (opts) => {
      state.approvalDecision = opts.approve ? 'approved' : 'rejected';
      return { decision: state.approvalDecision };
    },
    {
      validator: (opts): void => {
        if (!state.awaitingApproval) throw new Error('no compaction is awaiting approval');
        if (typeof opts?.approve !== 'boolean') throw new Error('approve must be true or false');
      },
    },
  );

  setHandler(
    restoreUpdate,
    async ({ version }) => {
      if (!patched('restore-in-turn')) {
        // Before: ran as soon as the conversation was idle or ending, even during a compaction.
        await condition(() => state.phase === 'idle' || state.ended);
        return restoreNow(version);
      }
      return awaitOutcome<RestoreResult>(state, manual({ focus: null, restore: version }), 'restore');
    },
    {
      validator: ({ version }): void => {
        if (!Number.isInteger(version) || version < 1) throw new Error('version must be a positive integer');
        refuseWhenEnded(state);
      },
    },
  );

  setHandler(endUpdate, async () => {
    state.ended = true;
    await condition(() => state.phase === 'ended');
    return { rounds: state.rounds };
  });
}
