/**
 * The agent conversation workflow (DESIGN.md §3). One round per user message:
 *
 *   append user message → [precheck] → model → [check] → tools → append results → [precheck] → …
 *
 * until the model answers without tool calls. When a trigger fires (and no cooldown runs) it runs
 * the compaction child workflow and waits for it; messages that arrive meanwhile are queued in
 * order. State is ids, counters and cooldown state — bodies live in PostgreSQL.
 */
import {
  type ActivityOptions,
  type LocalActivityOptions,
  ApplicationFailure,
  ActivityFailure,
  ChildWorkflowFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  executeChild,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
  log,
} from '@temporalio/workflow';
import type { ConversationActivities, CallModelResult, Totals } from '../activities/types';
import {
  ConfigError,
  parseCompactionConfig,
  recallPageBudget,
  type CompactionConfig,
} from '../src/context/config';
import { RECALL_TOOL_NAME } from '../src/context/recall-tool';
import { checkConversationId, ConversationIdError } from '../src/context/conversation-id';
import { compaction } from './compaction';
import {
  approveCompactionUpdate,
  CLAIM,
  compactUpdate,
  endUpdate,
  eventsQuery,
  eventsPageQuery,
  compactionMetaSignal,
  compactionReviewSignal,
  type EventsPage,
  restoreUpdate,
  sendMessageUpdate,
  statusQuery,
  userMessageSignal,
  type AgentConversationInput,
  type CarriedState,
  type CompactionBrief,
  type CompactionResult,
  type ConversationEvent,
  type ConversationStatus,
  type PendingReview,
  type Phase,
  type RestoreResult,
  type RunningCompaction,
  type SendMessageResult,
  type TriggerKind,
  type UsageInfo,
  bodyText,
} from './definitions';
import { CONVERSATION_SEARCH_ATTRIBUTES } from './search-attributes';
import { bothWays } from './activity-options';
import {
  automaticCompactionBlocked,
  decideCompaction,
  recordForLoopGuard,
  type TriggerPoint,
} from '../src/context/compaction-decision';

/** Store writes: quick, retried until they succeed. */
const storeOptions: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200ms', maximumInterval: '10s', maximumAttempts: 20 },
};

/** The agent's model call. Context-length errors go to the overflow path instead of retries. */
const modelOptions: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  // The activity heartbeats during the call: a dead worker's call is retried after 20 s.
  heartbeatTimeout: '20 seconds',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [
      'LLM_BAD_REQUEST',
      'LLM_AUTH',
      'LLM_CONTEXT_LENGTH_EXCEEDED',
      'RECORDING_INVALID',
    ],
  },
};

/** Tools run at least once; a failing tool reports its error to the model instead of failing the round. */
const toolOptions: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1s', maximumAttempts: 3, nonRetryableErrorTypes: ['TOOL_UNKNOWN'] },
};

const store = proxyActivities<ConversationActivities>(storeOptions);
/** Quick store writes run as local activities (DESIGN.md §2: history stays small per round). */
const localStoreOptions: LocalActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200ms', maximumInterval: '10s', maximumAttempts: 20 },
};
const local = proxyLocalActivities<ConversationActivities>(localStoreOptions);
/**
 * Model and tool calls, as activities or (`agentCalls: 'local'`) as local activities: no
 * heartbeat, same timeouts and retries.
 */
const model = bothWays<ConversationActivities>(modelOptions);
const tools = bothWays<ConversationActivities>(toolOptions);

/** Characters of the reply carried back by `sendMessage` (the whole reply is in the store). */
const REPLY_PREVIEW_CHARS = 4000;
/** Events kept for the `events` Query (bounded state, STYLE.md §12). */
const MAX_EVENTS = 100;

interface QueuedMessage {
  id: string;
  text: string;
  /** Signals have no caller waiting for the reply. */
  awaited: boolean;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: ApplicationFailure };

function isContextLengthError(err: unknown): boolean {
  // A regular activity's failure wraps the application failure; check the whole chain.
  for (let cause: unknown = err; cause instanceof Error; cause = (cause as { cause?: unknown }).cause) {
    if (cause instanceof ApplicationFailure && cause.type === 'LLM_CONTEXT_LENGTH_EXCEEDED') return true;
  }
  return false;
}

/**
 * Runs a check of the start arguments. A bad one fails the workflow at once with a typed,
 * non-retryable failure: a plain error thrown here would fail the workflow task, retried forever.
 */
function checkedInput<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof ConfigError) throw ApplicationFailure.nonRetryable(err.message, 'CONFIG_INVALID');
    if (err instanceof ConversationIdError) {
      throw ApplicationFailure.nonRetryable(err.message, 'INVALID_CONVERSATION_ID');
    }
    throw err;
  }
}

function asApplicationFailure(err: unknown, fallbackType: string): ApplicationFailure {
  let cause: unknown = err;
  while ((cause instanceof ActivityFailure || cause instanceof ChildWorkflowFailure) && cause.cause) {
    cause = cause.cause;
  }
  if (cause instanceof ApplicationFailure) {
    return ApplicationFailure.create({
      type: cause.type ?? fallbackType,
      message: cause.message,
      nonRetryable: true,
    });
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return ApplicationFailure.create({ type: fallbackType, message, nonRetryable: true });
}

function formatTokens(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export async function agentConversation(input: AgentConversationInput): Promise<{ rounds: number }> {
  const conversationId = checkedInput(() => checkConversationId(input.conversationId));
  const config: CompactionConfig = checkedInput(() => parseCompactionConfig(input.config ?? {}));
  const window = config.maxContextTokens;
  const carried = input.carried;
  const localCalls = (input.agentCalls ?? 'local') === 'local';

  // ---- state (ids, counters, cooldown; O(1) per round) ----
  let phase: Phase = 'starting';
  let rounds = carried?.rounds ?? 0;
  let compactionSeq = carried?.compactionSeq ?? 0;
  let lastCompactionRound = carried?.lastCompactionRound ?? 0;
  let cooldownUntil: number | null = carried?.cooldownUntil ?? null;
  let contextTokens = carried?.contextTokens ?? 0;
  let itemCount = carried?.itemCount ?? 0;
  let activeVersion = carried?.activeVersion ?? 0;
  let lastReportedTokens: number | null = carried?.lastReportedTokens ?? null;
  let recentAutomatic = carried?.recentAutomatic ?? [];
  let pausedReason: string | null = carried?.pausedReason ?? null;
  // A pause carried from a run that did not record its round counts from this run's start.
  let pausedAtRound: number | null =
    carried?.pausedAtRound ?? (carried?.pausedReason ? carried.rounds : null);
  let events: ConversationEvent[] = carried?.recentEvents ?? [];
  /** Events pushed since the conversation began: `events` holds the last ones, up to this. */
  let eventsTotal = carried?.eventsTotal ?? events.length;
  let lastCompaction: CompactionBrief | null = null;
  let ended = false;
  let awaitingApproval: { trigger: TriggerKind; tokens: number } | null = null;
  let approvalDecision: 'approved' | 'rejected' | null = null;
  /** The running compaction's summary while it waits for review (`reviewSummary`; its child says). */
  let review: PendingReview | null = null;
  const runs = (carried?.runs ?? 0) + 1;

  const inbox: QueuedMessage[] = [];
  /** The compaction child running now (the `status` Query names it; its `progress` Query says where it is). */
  let runningCompaction: RunningCompaction | null = null;
  /**
   * Manual compactions and restores, in the order asked: the main loop runs them one at a time,
   * never during a compaction or a round, and before it ends (`end` waits for them).
   */
  const manualRequests: { id: string; focus: string | null; restore?: number }[] = [];
  const outcomes = new Map<string, Outcome<SendMessageResult | CompactionBrief | RestoreResult>>();

  /** Waits for the main loop to settle request `id`; its value, or its failure thrown. */
  const outcomeOf = async <T>(id: string, what: string): Promise<T> => {
    await condition(() => outcomes.has(id));
    const outcome = outcomes.get(id);
    outcomes.delete(id);
    if (!outcome) throw ApplicationFailure.nonRetryable(`lost the outcome of the ${what}`, 'INTERNAL');
    if (!outcome.ok) throw outcome.error;
    return outcome.value as T;
  };

  const pushEvent = (event: ConversationEvent): void => {
    if (event.type === 'compaction_meta' && !config.emitCompactionMetaEvents) return;
    events.push(event);
    eventsTotal += 1;
    if (events.length > MAX_EVENTS) events = events.slice(-MAX_EVENTS);
  };

  const cooldownActive = (): boolean => cooldownUntil !== null && Date.now() < cooldownUntil;

  /** Automatic compaction runs again, and the loop guard starts counting afresh. */
  const liftPause = (): void => {
    pausedReason = null;
    pausedAtRound = null;
    recentAutomatic = [];
  };

  const status = (): ConversationStatus => ({
    conversationId,
    phase,
    rounds,
    contextTokens,
    window,
    ratio: window > 0 ? contextTokens / window : 0,
    itemCount,
    activeVersion,
    compactions: compactionSeq,
    lastCompaction,
    cooldownUntil,
    cooldownActive: cooldownActive(),
    pausedReason,
    queued: inbox.length,
    awaitingApproval,
    ended,
    runs,
    maxInputChars: config.maxInputChars,
    compaction: runningCompaction,
    review,
  });

  const publish = (): void => {
    const pct = window > 0 ? Math.round((contextTokens / window) * 100) : 0;
    const lines = [
      `**${conversationId}** · ${phase}`,
      `Context: ${formatTokens(contextTokens)} / ${formatTokens(window)} tokens (${pct}%) · ${itemCount} items · v${activeVersion}`,
      `Rounds: ${rounds} · Compactions: ${compactionSeq}` +
        (lastCompaction ? ` · last: ${lastCompaction.status} (${lastCompaction.trigger})` : ''),
    ];
    if (cooldownActive()) lines.push(`Cooldown until ${new Date(cooldownUntil ?? 0).toISOString()}`);
    if (pausedReason) lines.push(`Automatic compaction paused: ${pausedReason}`);
    if (awaitingApproval) lines.push(`Awaiting approval of a ${awaitingApproval.trigger} compaction`);
    if (review) lines.push(`Compaction #${review.seq} awaits review: ${review.workflowId}`);
    setCurrentDetails(lines.join('\n\n'));
    if (input.searchAttributes !== false) {
      upsertSearchAttributes([
        { key: CONVERSATION_SEARCH_ATTRIBUTES.contextTokens, value: contextTokens },
        { key: CONVERSATION_SEARCH_ATTRIBUTES.compactionCount, value: compactionSeq },
        ...(lastCompaction
          ? [{ key: CONVERSATION_SEARCH_ATTRIBUTES.lastCompactionStatus, value: lastCompaction.status }]
          : []),
      ]);
    }
  };

  const applyTotals = (totals: Totals): void => {
    contextTokens = totals.tokens;
    itemCount = totals.itemCount;
    activeVersion = totals.version;
  };

  // ---- handlers ----
  setHandler(statusQuery, status);
  setHandler(eventsQuery, (opts) => events.slice(Math.max(0, opts?.since ?? 0)));
  setHandler(eventsPageQuery, (opts): EventsPage => {
    const base = eventsTotal - events.length;
    const from = Math.max(base, Math.min(eventsTotal, Math.floor(opts?.since ?? 0)));
    return { from, events: events.slice(from - base), next: eventsTotal };
  });
  // A running compaction's meta events, as they happen (the child sends them when asked to).
  setHandler(compactionMetaSignal, (event) => {
    if (event.type === 'compaction_meta') pushEvent(event);
  });
  // The running compaction's summary waits for review, or no longer.
  setHandler(compactionReviewSignal, ({ seq, review: pending }) => {
    if (runningCompaction?.seq !== seq) return;
    if (pending && !review) {
      const { trigger, tokensBefore, tokensAfter } = pending;
      pushEvent({ type: 'awaiting_review', seq, trigger, tokensBefore, tokensAfter });
    }
    review = pending;
    phase = pending ? 'awaiting_review' : 'compacting';
    publish();
  });

  setHandler(
    sendMessageUpdate,
    async (body): Promise<SendMessageResult> => {
      const id = uuid4();
      inbox.push({ id, text: bodyText(body) ?? '', awaited: true });
      return outcomeOf<SendMessageResult>(id, 'round');
    },
    {
      validator: (body): void => {
        if (ended) throw new Error('the conversation has ended');
        const text = bodyText(body);
        if (text === null || text.trim().length === 0) throw new Error('message is empty: send some text');
        if (text.length > config.maxInputChars) {
          throw new Error(
            `message is too long: ${text.length} characters, the limit is ${config.maxInputChars} (maxInputChars)`,
          );
        }
      },
    },
  );

  setHandler(userMessageSignal, (body) => {
    const text = bodyText(body);
    if (ended || text === null || text.trim().length === 0 || text.length > config.maxInputChars) {
      log.warn('ignored an invalid userMessage signal', { length: text?.length ?? -1 });
      return;
    }
    inbox.push({ id: uuid4(), text, awaited: false });
  });

  setHandler(
    compactUpdate,
    async (opts): Promise<CompactionBrief> => {
      const id = uuid4();
      manualRequests.push({ id, focus: opts?.focus?.trim() || null });
      return outcomeOf<CompactionBrief>(id, 'compaction');
    },
    {
      validator: (opts): void => {
        if (ended) throw new Error('the conversation has ended');
        if (opts?.focus !== undefined && typeof opts.focus !== 'string')
          throw new Error('focus must be text');
        if (opts?.focus && opts.focus.length > 4000)
          throw new Error('focus is too long (over 4000 characters)');
      },
    },
  );

  setHandler(
    approveCompactionUpdate,
    (opts) => {
      approvalDecision = opts.approve ? 'approved' : 'rejected';
      return { decision: approvalDecision };
    },
    {
      validator: (opts): void => {
        if (!awaitingApproval) throw new Error('no compaction is awaiting approval');
        if (typeof opts?.approve !== 'boolean') throw new Error('approve must be true or false');
      },
    },
  );

  const restore = async (version: number): Promise<RestoreResult> => {
    const totals = await store.restoreVersion.executeWithOptions(
      { ...storeOptions, summary: `restore v${version}` },
      [{ conversationId, version, idemKey: uuid4() }],
    );
    applyTotals(totals);
    pushEvent({ type: 'restored', version, activeVersion: totals.version, tokens: totals.tokens });
    publish();
    return { version, activeVersion: totals.version, tokens: totals.tokens };
  };

  setHandler(
    restoreUpdate,
    async ({ version }) => {
      if (!patched('restore-in-turn')) {
        // Before: ran as soon as the conversation was idle or ending, even during a compaction.
        await condition(() => phase === 'idle' || ended);
        return restore(version);
      }
      const id = uuid4();
      manualRequests.push({ id, focus: null, restore: version });
      return outcomeOf<RestoreResult>(id, 'restore');
    },
    {
      validator: ({ version }): void => {
        if (!Number.isInteger(version) || version < 1) throw new Error('version must be a positive integer');
        if (ended) throw new Error('the conversation has ended');
      },
    },
  );

  setHandler(endUpdate, async () => {
    ended = true;
    await condition(() => phase === 'ended');
    return { rounds };
  });

  // ---- compaction ----
  const runCompaction = async (
    trigger: TriggerKind,
    detail: string,
    opts: { focus?: string | null; mode?: 'summarize' | 'drop_oldest' } = {},
  ): Promise<CompactionBrief> => {
    const previousPhase = phase;
    phase = 'compacting';
    const seq = ++compactionSeq;
    const compactionId = uuid4();
    const pct = window > 0 ? Math.round((contextTokens / window) * 100) : 0;
    const summaryModel = input.model.summaryModel ?? input.model.model;
    pushEvent({ type: 'pre_compact', seq, trigger, round: rounds, tokens: contextTokens, detail });
    publish();
    let result: CompactionResult;
    const childId = `${conversationId}/compaction-${seq}`;
    runningCompaction = { workflowId: childId, seq, trigger };
    try {
      result = await executeChild(compaction, {
        workflowId: childId,
        staticSummary: `${trigger} compaction #${seq}: ${formatTokens(contextTokens)} tokens (${pct}% of ${formatTokens(window)})`,
        staticDetails: detail,
        args: [
          {
            // A focus is the user's text: by reference (see CLAIM).
            ...(opts.focus ? CLAIM : {}),
            conversationId,
            compactionId,
            seq,
            trigger,
            round: rounds,
            focus: opts.focus ?? null,
            // The configuration as given (the child fills the defaults): a fraction of the bytes.
            config: input.config ?? {},
            summaryModel,
            ...(summaryModel !== input.model.model ? { model: input.model.model } : {}),
            mode: opts.mode ?? 'summarize',
            workspace: input.workspace ?? null,
            ...(input.summaryCalls ? { summaryCalls: input.summaryCalls } : {}),
          },
        ],
      });
    } catch (err) {
      // A cancelled or failed child compensated already; the context is what it was.
      const reason =
        err instanceof ChildWorkflowFailure
          ? asApplicationFailure(err, 'COMPACTION_FAILED').message
          : String(err);
      result = {
        compactionId,
        seq,
        status: 'rolled_back',
        trigger,
        strategy: null,
        taskType: null,
        tokensBefore: contextTokens,
        tokensAfter: contextTokens,
        savedRatio: 0,
        itemsCompacted: 0,
        summaryItemId: null,
        summaryPreview: '',
        attempts: 0,
        reason: `child workflow ended: ${reason}`,
        failedPhase: 'cancelled',
        timings: { pruneMs: 0, summaryMs: 0, commitMs: 0, totalMs: 0 },
        activeVersion,
        itemCount,
        events: [],
      };
    } finally {
      runningCompaction = null;
      review = null;
    }
    for (const e of result.events) pushEvent(e);
    if (result.review) {
      const { decision, edited, timedOut } = result.review;
      const action = decision === 'approved' ? 'commit' : trigger === 'manual' ? 'none' : config.onReject;
      pushEvent({ type: 'review', seq, decision: timedOut ? 'timed_out' : decision, edited, action });
    }
    if (result.status === 'committed') {
      contextTokens = result.tokensAfter;
      itemCount = result.itemCount;
      activeVersion = result.activeVersion;
      lastCompactionRound = rounds;
      lastReportedTokens = null;
      pushEvent({
        type: 'context_compacted',
        seq,
        trigger,
        strategy: result.strategy,
        originalTokens: result.tokensBefore,
        newTokens: result.tokensAfter,
        savedRatio: result.savedRatio,
        summaryItemId: result.summaryItemId,
        summaryPreview: result.summaryPreview,
      });
    } else if (result.status === 'rolled_back') {
      pushEvent({ type: 'compaction_rolled_back', seq, trigger, reason: result.reason ?? 'unknown' });
      if (result.failedPhase === 'summary') startCooldown();
    } else {
      pushEvent({ type: 'compaction_skipped', seq, trigger, reason: result.reason ?? 'unknown' });
    }
    const brief: CompactionBrief = {
      seq,
      compactionId,
      trigger,
      status: result.status,
      round: rounds,
      strategy: result.strategy,
      tokensBefore: result.tokensBefore,
      tokensAfter: result.tokensAfter,
      savedRatio: result.savedRatio,
      reason: result.reason,
      ...(result.review ? { review: result.review } : {}),
    };
    lastCompaction = brief;
    const cooledDown = result.status === 'rolled_back' && result.failedPhase === 'summary';
    // A person's rejection is not a compaction that made no progress.
    const rejected = result.review?.decision === 'rejected';
    if (trigger !== 'manual' && trigger !== 'overflow' && !cooledDown && !rejected) {
      // The loop guard counts compactions that made no progress; a summary failure is the
      // cooldown's business, and a healthy compaction never pauses automatic compaction.
      const guard = recordForLoopGuard(recentAutomatic, result, rounds, config);
      recentAutomatic = guard.recent;
      if (guard.pause) {
        pausedReason = guard.pause;
        pausedAtRound = rounds;
        pushEvent({ type: 'loop_guard', reason: guard.pause });
      }
    } else if (result.status === 'committed') {
      // A successful manual or overflow compaction lifts the loop guard's pause.
      liftPause();
    }
    phase = previousPhase;
    publish();
    return brief;
  };

  const startCooldown = (): void => {
    const ms = config.cooldownMs;
    const until = Date.now() + ms;
    cooldownUntil = until;
    pushEvent({ type: 'cooldown_started', until, ms });
    // A durable timer, visible in the UI; automatic triggers are skipped until it fires.
    void sleep(ms, { summary: `compaction cooldown ${ms / 1000}s after summary failure` }).then(() => {
      if (cooldownUntil === until) {
        pushEvent({ type: 'cooldown_ended' });
        publish();
      }
    });
  };
  if (cooldownUntil !== null && cooldownActive()) {
    const ms = cooldownUntil - Date.now();
    void sleep(ms, { summary: `compaction cooldown (continued) ${Math.ceil(ms / 1000)}s` }).then(() => {
      pushEvent({ type: 'cooldown_ended' });
    });
  }

  /** Asks for approval when configured; returns what to do. */
  const confirm = async (trigger: TriggerKind): Promise<'compact' | 'drop_oldest' | 'continue' | 'fail'> => {
    if (!config.requireConfirmation || trigger === 'manual') return 'compact';
    const previousPhase = phase;
    phase = 'awaiting_approval';
    awaitingApproval = { trigger, tokens: contextTokens };
    approvalDecision = null;
    pushEvent({ type: 'awaiting_approval', trigger, tokens: contextTokens });
    publish();
    const answered = await condition(() => approvalDecision !== null, config.confirmationTimeoutMs, {
      summary: `awaiting approval of a ${trigger} compaction`,
    });
    const decision = answered
      ? approvalDecision
      : config.confirmationDefault === 'approve'
        ? 'approved'
        : 'rejected';
    awaitingApproval = null;
    phase = previousPhase;
    const action = decision === 'approved' ? 'compact' : config.onReject;
    pushEvent({ type: 'approval', decision: answered ? (decision ?? 'rejected') : 'timed_out', action });
    publish();
    return action;
  };

  /** Skip reasons already recorded this round: a trigger that keeps firing is recorded once a round. */
  let skipsRecorded = { round: -1, kinds: new Set<string>() };

  /** The conversation's side of a trigger decision (the context's side comes from its totals). */
  const triggerState = () => ({
    config,
    roundsSinceCompaction: rounds - lastCompactionRound,
    cooldownActive: cooldownActive(),
    pausedReason,
  });

  /** Evaluates the automatic triggers at one point of the loop and compacts when one fires. */
  const maybeCompact = async (
    point: TriggerPoint,
    observed: { reportedTokens?: number | null; markerSeen?: boolean } = {},
  ): Promise<CompactionBrief[]> => {
    const decision = decideCompaction(point, {
      ...triggerState(),
      contextTokens,
      reportedTokens: observed.reportedTokens ?? null,
      itemCount,
      markerSeen: observed.markerSeen ?? false,
    });
    if (!decision) return [];
    if (decision.skip) {
      const kind = decision.skip.split(':')[0] ?? decision.skip;
      if (skipsRecorded.round !== rounds) skipsRecorded = { round: rounds, kinds: new Set() };
      if (skipsRecorded.kinds.has(kind)) return [];
      skipsRecorded.kinds.add(kind);
      const seq = ++compactionSeq;
      const compactionId = uuid4();
      await local.recordSkippedCompaction.executeWithOptions(
        { ...localStoreOptions, summary: `skip ${decision.trigger}: ${decision.skip}` },
        [{ conversationId, compactionId, seq, trigger: decision.trigger, reason: decision.skip }],
      );
      pushEvent({ type: 'compaction_skipped', seq, trigger: decision.trigger, reason: decision.skip });
      lastCompaction = {
        seq,
        compactionId,
        trigger: decision.trigger,
        status: 'skipped',
        round: rounds,
        strategy: null,
        tokensBefore: contextTokens,
        tokensAfter: contextTokens,
        savedRatio: 0,
        reason: decision.skip,
      };
      publish();
      return [lastCompaction];
    }
    return decided(await confirm(decision.trigger), decision);
  };

  /** Runs what was decided; a summary rejected in review then gets `onReject` too (seed 004). */
  const decided = async (
    action: Awaited<ReturnType<typeof confirm>>,
    decision: { trigger: TriggerKind; detail: string },
  ): Promise<CompactionBrief[]> => {
    switch (action) {
      case 'compact': {
        const brief = await runCompaction(decision.trigger, decision.detail);
        if (brief.review?.decision !== 'rejected') return [brief];
        return [brief, ...(await decided(config.onReject, decision))];
      }
      case 'drop_oldest':
        return [
          await runCompaction(decision.trigger, `${decision.detail}; rejected: dropping the oldest rounds`, {
            mode: 'drop_oldest',
          }),
        ];
      case 'continue':
        // Seed 004: the user declined; go on uncompacted until the next trigger.
        lastCompactionRound = rounds;
        return [];
      case 'fail':
        throw ApplicationFailure.create({
          type: 'COMPACTION_REJECTED',
          message: `the context needs compaction (${formatTokens(contextTokens)} of ${formatTokens(window)} tokens) and it was declined; compact manually or restart with onReject "continue"`,
          nonRetryable: true,
        });
    }
  };

  // ---- one round ----
  const runRound = async (message: QueuedMessage): Promise<SendMessageResult> => {
    rounds += 1;
    const round = rounds;
    if (
      pausedReason !== null &&
      round - (pausedAtRound ?? round) > config.loopGuardPauseRounds &&
      // Runs recorded before pauses ended kept theirs: they replay as they ran.
      patched('loop-guard-pause-rounds')
    ) {
      // The pause is over: a context that keeps growing gets compacted again.
      pushEvent({ type: 'loop_guard_lifted', pausedRounds: round - 1 - (pausedAtRound ?? round) });
      liftPause();
    }
    const compactions: CompactionBrief[] = [];
    phase = 'model';
    const userMessage = { itemId: uuid4(), text: message.text };
    // Local calls append the user message in the round's first model call (its input stays out of
    // history); otherwise a local activity appends it: one marker event either way.
    let pendingUser: typeof userMessage | null = localCalls ? userMessage : null;
    if (!pendingUser) {
      applyTotals(
        await local.appendUserMessage({
          conversationId,
          itemId: userMessage.itemId,
          text: userMessage.text,
          round,
          model: input.model.model,
        }),
      );
    }
    let last: { itemId: string; result: CallModelResult } | null = null;
    let usage: UsageInfo | null = null;
    let overflowRetried = false;
    let prechecked = false;
    let compactionsBeforeReply = 0;
    const maxSteps = input.maxStepsPerRound ?? 25;
    for (let step = 0; step < maxSteps; step++) {
      if (!pendingUser && !prechecked) compactions.push(...(await maybeCompact('before_model_call')));
      prechecked = false;
      // While automatic compaction cannot run (cooldown, loop guard, disabled) a precheck can only
      // record a skip, unless the request would exceed the window (the emergency compaction runs
      // then, in the call's precheck): the model is called and the skip, if any, recorded after.
      const skipOnly = pendingUser !== null && automaticCompactionBlocked(triggerState());
      phase = 'model';
      let res: CallModelResult;
      // The id of the answer's item (the result does not echo it).
      const itemId = uuid4();
      try {
        const summary = `model call · round ${round} step ${step + 1}`;
        const args: Parameters<ConversationActivities['callModel']> = [
          {
            conversationId,
            itemId,
            round,
            step,
            model: input.model,
            replyPreviewChars: REPLY_PREVIEW_CHARS,
            marker: config.marker,
            ...(pendingUser
              ? {
                  userMessage: pendingUser,
                  precheck: triggerState(),
                }
              : {}),
          },
        ];
        const modelBy = localCalls ? model.local : model.activity;
        res = await modelBy.call.callModel.executeWithOptions({ ...modelBy.options, summary }, args);
      } catch (err) {
        if (isContextLengthError(err) && !overflowRetried) {
          // Emergency compaction, then one retry of the call (seed 000's last line of defence).
          overflowRetried = true;
          pendingUser = null; // appended before the model refused
          compactions.push(
            ...(await decided('compact', {
              trigger: 'overflow',
              detail: 'the model rejected the request as too long',
            })),
          );
          prechecked = true;
          step -= 1;
          continue;
        }
        throw err;
      }
      pendingUser = null;
      if (res.kind === 'precheck') {
        // The user message is in; a precheck trigger fires on it: decide as before any model call.
        applyTotals(res.totals);
        compactions.push(...(await maybeCompact('before_model_call')));
        prechecked = true;
        step -= 1;
        continue;
      }
      applyTotals(res.totals);
      if (skipOnly) compactions.push(...(await maybeCompact('before_model_call')));
      if (res.kind === 'turn_end') break;
      last = { itemId, result: res };
      compactionsBeforeReply = compactions.length;
      if (res.usage) {
        usage = res.usage;
        lastReportedTokens = res.usage.totalTokens;
      }
      compactions.push(
        ...(await maybeCompact('after_model_call', {
          reportedTokens: res.usage?.totalTokens ?? null,
          markerSeen: res.markerSeen,
        })),
      );
      // A live model's text-only answer ends the round; a recording ends it with `turn_end`, since
      // real sessions hold rounds with several text-only turns (pi-large-session, round 34).
      if (res.toolCalls.length === 0 && input.model.provider !== 'recorded') break;
      if (res.toolCalls.length === 0) continue;
      phase = 'tool';
      for (const call of res.toolCalls) {
        const summary = `tool ${call.name} · round ${round}`;
        const args: Parameters<ConversationActivities['runTool']> = [
          {
            conversationId,
            round,
            callItemId: itemId,
            toolCallId: call.id,
            name: call.name,
            resultItemId: uuid4(),
            workspace: input.workspace ?? null,
            model: input.model,
            // The built-in recall tool reads the archive with the conversation's settings (issue 24).
            ...(call.name === RECALL_TOOL_NAME && config.recall
              ? { recall: { pageTokens: recallPageBudget(config), searchLimit: config.recallSearchLimit } }
              : {}),
          },
        ];
        const toolsBy = localCalls ? tools.local : tools.activity;
        const toolResult = await toolsBy.call.runTool.executeWithOptions(
          { ...toolsBy.options, summary },
          args,
        );
        applyTotals(toolResult.totals);
      }
    }
    return {
      ...CLAIM,
      round,
      replyItemId: last?.itemId ?? null,
      reply: last?.result.reply ?? '',
      ...(last?.result.replyTruncated ? { replyTruncated: true as const } : {}),
      usage,
      contextTokens,
      window,
      compactions,
      compactionsBeforeReply,
    };
  };

  // ---- main loop ----
  if (input.searchAttributes !== false) {
    upsertSearchAttributes([{ key: CONVERSATION_SEARCH_ATTRIBUTES.conversationId, value: conversationId }]);
  }
  if (!carried) {
    const totals = await store.initConversation.executeWithOptions(
      { ...storeOptions, summary: 'create conversation' },
      [
        {
          // The system prompt is text: by reference (see CLAIM).
          ...CLAIM,
          conversationId,
          systemPrompt: input.systemPrompt ?? '',
          tools: input.tools ?? [],
          model: input.model.model,
          maxContextTokens: window,
        },
      ],
    );
    applyTotals(totals);
    // An imported conversation's rounds are in the store already: number the new ones after them.
    rounds = Math.max(rounds, totals.rounds ?? 0);
  }
  phase = 'idle';
  publish();

  for (;;) {
    await condition(() => ended || inbox.length > 0 || manualRequests.length > 0);
    const manual = manualRequests.shift();
    if (manual?.restore !== undefined) {
      try {
        outcomes.set(manual.id, { ok: true, value: await restore(manual.restore) });
      } catch (err) {
        outcomes.set(manual.id, { ok: false, error: asApplicationFailure(err, 'RESTORE_FAILED') });
      }
      continue;
    }
    if (manual) {
      phase = 'compacting';
      try {
        const brief = await runCompaction(
          'manual',
          // The focus is the user's text: it travels by reference in the child's input, never in
          // the event or the child's details, which history keeps as they are.
          manual.focus ? `manual, with a focus (${manual.focus.length} characters)` : 'manual',
          {
            focus: manual.focus,
          },
        );
        outcomes.set(manual.id, { ok: true, value: brief });
      } catch (err) {
        outcomes.set(manual.id, { ok: false, error: asApplicationFailure(err, 'COMPACTION_FAILED') });
      }
      phase = 'idle';
      publish();
      continue;
    }
    const message = inbox.shift();
    if (message) {
      try {
        const value = await runRound(message);
        if (message.awaited) outcomes.set(message.id, { ok: true, value });
      } catch (err) {
        log.warn('round failed', { round: rounds, error: String(err) });
        if (message.awaited)
          outcomes.set(message.id, { ok: false, error: asApplicationFailure(err, 'ROUND_FAILED') });
      }
      phase = 'idle';
      publish();
    }
    if (ended && inbox.length === 0 && manualRequests.length === 0) break;
    if (
      workflowInfo().continueAsNewSuggested &&
      inbox.length === 0 &&
      manualRequests.length === 0 &&
      !ended
    ) {
      // A quiet point: let handlers finish (their callers get their answers), then start afresh.
      await condition(allHandlersFinished);
      if (inbox.length > 0 || manualRequests.length > 0) continue;
      const next: CarriedState = {
        ...CLAIM,
        rounds,
        compactionSeq,
        lastCompactionRound,
        cooldownUntil: cooldownActive() ? cooldownUntil : null,
        contextTokens,
        itemCount,
        activeVersion,
        lastReportedTokens,
        recentAutomatic,
        pausedReason,
        pausedAtRound,
        recentEvents: events.slice(-20),
        eventsTotal,
        runs,
      };
      await continueAsNew<typeof agentConversation>({ ...input, systemPrompt: undefined, carried: next });
    }
  }

  phase = 'ended';
  await store.endConversation.executeWithOptions({ ...storeOptions, summary: 'end conversation' }, [
    { conversationId },
  ]);
  publish();
  await condition(allHandlersFinished);
  return { rounds };
}
