/**
 * The agent conversation workflow (DESIGN.md §3). One round per user message:
 *
 *   append user message → [precheck] → model → [check] → tools → append results → [precheck] → …
 *
 * until the model answers without tool calls. When a trigger fires (and no cooldown runs) it runs
 * the compaction child workflow and waits for it (conversation/compaction-steps.ts); messages that
 * arrive meanwhile are queued in order (conversation/handlers.ts). State is ids, counters and
 * cooldown state (conversation/state.ts) — bodies live in PostgreSQL.
 */
import {
  type ActivityOptions,
  type LocalActivityOptions,
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  proxyLocalActivities,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
  log,
  ApplicationFailure,
} from '@temporalio/workflow';
import type { ConversationActivities, CallModelResult } from '../activities/types';
import { parseCompactionConfig, recallPageBudget } from '../src/context/config';
import { RECALL_TOOL_NAME } from '../src/context/recall-tool';
import { checkConversationId } from '../src/context/conversation-id';
import { automaticCompactionBlocked } from '../src/context/compaction-decision';
import { applicationFailureIn, asFinalFailure, checkedInput, NOT_RETRIED } from '../src/failures';
import {
  CLAIM,
  type AgentConversationInput,
  type CompactionBrief,
  type SendMessageResult,
  type UsageInfo,
} from './definitions';
import { CONVERSATION_SEARCH_ATTRIBUTES } from './search-attributes';
import { bothWays } from './activity-options';
import { ConversationState, type QueuedMessage } from './conversation/state';
import { installHandlers } from './conversation/handlers';
import { CompactionSteps } from './conversation/compaction-steps';

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
    nonRetryableErrorTypes: [...NOT_RETRIED.modelCall],
  },
};

/** Tools run at least once; a failing tool reports its error to the model instead of failing the round. */
const toolOptions: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1s', maximumAttempts: 3, nonRetryableErrorTypes: [...NOT_RETRIED.toolCall] },
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

/** A model call's answer, the id of its item, and whether automatic compaction was blocked when it was asked. */
interface ModelTurn {
  itemId: string;
  res: CallModelResult;
  skipOnly: boolean;
}

/** One round: the user's message, then model calls and tool calls until the model is done. */
async function runRound(
  s: ConversationState,
  steps: CompactionSteps,
  message: QueuedMessage,
): Promise<SendMessageResult> {
  const { input, config, conversationId } = s;
  const localCalls = (input.agentCalls ?? 'local') === 'local';
  s.rounds += 1;
  const round = s.rounds;
  if (
    s.pausedReason !== null &&
    round - (s.pausedAtRound ?? round) > config.loopGuardPauseRounds &&
    // Runs recorded before pauses ended kept theirs: they replay as they ran.
    patched('loop-guard-pause-rounds')
  ) {
    // The pause is over: a context that keeps growing gets compacted again.
    s.pushEvent({ type: 'loop_guard_lifted', pausedRounds: round - 1 - (s.pausedAtRound ?? round) });
    s.liftPause();
  }
  const compactions: CompactionBrief[] = [];
  s.phase = 'model';
  const userMessage = { itemId: uuid4(), text: message.text };
  // Local calls append the user message in the round's first model call (its input stays out of
  // history); otherwise a local activity appends it: one marker event either way.
  let pendingUser: typeof userMessage | null = localCalls ? userMessage : null;
  if (!pendingUser) {
    s.applyTotals(
      await local.appendUserMessage({
        conversationId,
        itemId: userMessage.itemId,
        text: userMessage.text,
        round,
        model: input.model.model,
      }),
    );
  }
  let overflowRetried = false;

  /** One model call; null when the model refused the request as too long, the first time this round. */
  const callModel = async (step: number): Promise<ModelTurn | null> => {
    // While automatic compaction cannot run (cooldown, loop guard, disabled) a precheck can only
    // record a skip, unless the request would exceed the window (the emergency compaction runs
    // then, in the call's precheck): the model is called and the skip, if any, recorded after.
    const skipOnly = pendingUser !== null && automaticCompactionBlocked(s.triggerState());
    s.phase = 'model';
    // The id of the answer's item (the result does not echo it).
    const itemId = uuid4();
    const args: Parameters<ConversationActivities['callModel']> = [
      {
        conversationId,
        itemId,
        round,
        step,
        model: input.model,
        replyPreviewChars: REPLY_PREVIEW_CHARS,
        marker: config.marker,
        ...(pendingUser ? { userMessage: pendingUser, precheck: s.triggerState() } : {}),
      },
    ];
    const modelBy = localCalls ? model.local : model.activity;
    const summary = `model call · round ${round} step ${step + 1}`;
    try {
      const res = await modelBy.call.callModel.executeWithOptions({ ...modelBy.options, summary }, args);
      pendingUser = null;
      return { itemId, res, skipOnly };
    } catch (err) {
      if (overflowRetried || !applicationFailureIn(err, ['LLM_CONTEXT_LENGTH_EXCEEDED'])) throw err;
      overflowRetried = true;
      pendingUser = null; // appended before the model refused
      return null;
    }
  };

  /**
   * The model's answer at `step`. A precheck trigger that fires on the user message compacts before
   * the model is asked; a request the model refuses as too long gets an emergency compaction and
   * is asked once more (seed 000's last line of defence), once a round.
   */
  const answer = async (step: number): Promise<ModelTurn> => {
    if (!pendingUser) compactions.push(...(await steps.maybeCompact('before_model_call')));
    let turn = await callModel(step);
    if (turn?.res.kind === 'precheck') {
      // The user message is in; a precheck trigger fires on it: decide as before any model call.
      s.applyTotals(turn.res.totals);
      compactions.push(...(await steps.maybeCompact('before_model_call')));
      turn = await callModel(step);
    }
    if (turn === null) {
      const overflow = { trigger: 'overflow' as const, detail: 'the model rejected the request as too long' };
      compactions.push(...(await steps.decided('compact', overflow)));
      turn = await callModel(step);
    }
    // Only the call that carries the user message prechecks, and only one refusal is forgiven.
    if (turn === null || turn.res.kind === 'precheck') {
      throw ApplicationFailure.nonRetryable(
        `model call of round ${round} step ${step + 1} did not settle`,
        'INTERNAL',
      );
    }
    return turn;
  };

  let last: { itemId: string; result: CallModelResult } | null = null;
  let usage: UsageInfo | null = null;
  let compactionsBeforeReply = 0;
  const maxSteps = input.maxStepsPerRound ?? 25;
  for (let step = 0; step < maxSteps; step++) {
    const { itemId, res, skipOnly } = await answer(step);
    s.applyTotals(res.totals);
    if (skipOnly) compactions.push(...(await steps.maybeCompact('before_model_call')));
    if (res.kind === 'turn_end') break;
    last = { itemId, result: res };
    compactionsBeforeReply = compactions.length;
    if (res.usage) {
      usage = res.usage;
      s.lastReportedTokens = res.usage.totalTokens;
    }
    compactions.push(
      ...(await steps.maybeCompact('after_model_call', {
        reportedTokens: res.usage?.totalTokens ?? null,
        markerSeen: res.markerSeen,
      })),
    );
    // A live model's text-only answer ends the round; a recording ends it with `turn_end`, since
    // real sessions hold rounds with several text-only turns (pi-large-session, round 34).
    if (res.toolCalls.length === 0 && input.model.provider !== 'recorded') break;
    if (res.toolCalls.length === 0) continue;
    s.phase = 'tool';
    for (const call of res.toolCalls) {
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
      const summary = `tool ${call.name} · round ${round}`;
      const toolResult = await toolsBy.call.runTool.executeWithOptions({ ...toolsBy.options, summary }, args);
      s.applyTotals(toolResult.totals);
    }
  }
  return {
    ...CLAIM,
    round,
    replyItemId: last?.itemId ?? null,
    reply: last?.result.reply ?? '',
    ...(last?.result.replyTruncated ? { replyTruncated: true as const } : {}),
    usage,
    contextTokens: s.contextTokens,
    window: s.window,
    compactions,
    compactionsBeforeReply,
  };
}

export async function agentConversation(input: AgentConversationInput): Promise<{ rounds: number }> {
  const conversationId = checkedInput(() => checkConversationId(input.conversationId));
  const config = checkedInput(() => parseCompactionConfig(input.config ?? {}));
  const s = new ConversationState(input, conversationId, config);
  const steps = new CompactionSteps(
    s,
    { call: store, options: storeOptions },
    { call: local, options: localStoreOptions },
  );
  installHandlers(s, (version) => steps.restore(version));
  steps.resumeCooldown();

  if (input.searchAttributes !== false) {
    upsertSearchAttributes([{ key: CONVERSATION_SEARCH_ATTRIBUTES.conversationId, value: conversationId }]);
  }
  if (!input.carried) {
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
          maxContextTokens: s.window,
        },
      ],
    );
    s.applyTotals(totals);
    // An imported conversation's rounds are in the store already: number the new ones after them.
    s.rounds = Math.max(s.rounds, totals.rounds ?? 0);
  }
  s.phase = 'idle';
  s.publish();

  for (;;) {
    await condition(() => s.ended || s.busy);
    const manual = s.manualRequests.shift();
    if (manual) {
      await steps.runRequested(manual);
      continue;
    }
    const message = s.inbox.shift();
    if (message) {
      try {
        const value = await runRound(s, steps, message);
        if (message.awaited) s.outcomes.set(message.id, { ok: true, value });
      } catch (err) {
        log.warn('round failed', { round: s.rounds, error: String(err) });
        if (message.awaited)
          s.outcomes.set(message.id, { ok: false, error: asFinalFailure(err, 'ROUND_FAILED') });
      }
      s.phase = 'idle';
      s.publish();
    }
    if (s.ended && !s.busy) break;
    if (workflowInfo().continueAsNewSuggested && !s.busy && !s.ended) {
      // A quiet point: let handlers finish (their callers get their answers), then start afresh.
      await condition(allHandlersFinished);
      if (s.busy) continue;
      await continueAsNew<typeof agentConversation>({
        ...input,
        systemPrompt: undefined,
        carried: s.carried(),
      });
    }
  }

  s.phase = 'ended';
  await store.endConversation.executeWithOptions({ ...storeOptions, summary: 'end conversation' }, [
    { conversationId },
  ]);
  s.publish();
  await condition(allHandlersFinished);
  return { rounds: s.rounds };
}
