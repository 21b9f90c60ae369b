/**
 * The compaction child workflow (DESIGN.md §4):
 *
 *   selectivePrune ──► summarize (strategy chain, retried) ──► commit
 *         │                     │ failure                      │ failure
 *         └──────────► discardStaged (compensation, non-cancellable) ──► rolled_back
 *
 * Activities exchange ids and counts; the staged context lives in PostgreSQL until commit flips the
 * conversation's active version. Any failure after a staged version exists runs the compensation,
 * so the conversation's context is then exactly what it was before.
 */
import {
  type ActivityOptions,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  getExternalWorkflowHandle,
  patched,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import { RetryState } from '@temporalio/common';
import type { CompactionActivities, PruneInput, PruneResult } from '../activities/types';
import { parseCompactionConfig, type CompactionConfig } from '../src/context/config';
import { bothWays } from './activity-options';
import {
  CLAIM,
  compactionMetaSignal,
  compactionReviewSignal,
  type CompactionInput,
  type CompactionResult,
  type ConversationEvent,
  type ReviewVerdict,
} from './definitions';
import { reviewProposal, SummaryReview } from './compaction-review';
import { trackProgress } from './compaction-progress';
import { summarizeInSteps, type SummaryTally } from './compaction-summary';
import { applicationFailureIn, innermostCause, NOT_RETRIED, SUMMARY_RETRY } from '../src/failures';

/** Pruning is deterministic and cheap: retry it freely. */
const pruneOptions: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  // Prune, commit and compensation heartbeat too: a dead worker's task moves on after 10 s.
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 5, nonRetryableErrorTypes: [...NOT_RETRIED.prune] },
};

/**
 * The summary call: 3 attempts (seed 003: two retries), covering unusable answers
 * (`content_none`, `empty_summary`, ...). Bad requests and auth errors are not retried; 429
 * honours Retry-After through the failure's `nextRetryDelay`.
 */
const summarizeOptions: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  // The activity heartbeats during the call: a dead worker's summary is retried after 20 s.
  heartbeatTimeout: '20 seconds',
  retry: {
    initialInterval: SUMMARY_RETRY.initialIntervalMs,
    backoffCoefficient: SUMMARY_RETRY.backoffCoefficient,
    maximumAttempts: SUMMARY_RETRY.attempts,
    nonRetryableErrorTypes: [...NOT_RETRIED.summaryCall],
  },
};

/** Commit is one transaction guarded by the base version: retry transient failures, not a changed base. */
const commitOptions: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '500ms',
    maximumAttempts: 10,
    nonRetryableErrorTypes: [...NOT_RETRIED.commit],
  },
};

/** Compensation must eventually succeed: unlimited attempts, bounded backoff. */
const compensationOptions: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '10 seconds',
  // No maximumAttempts: unlimited (the SDK refuses 0).
  retry: { initialInterval: '500ms', maximumInterval: '30s' },
};

/**
 * Prune and commit are short store transactions: they run as local activities. That is two
 * workflow tasks fewer per compaction (~20 ms each way on the dev server, bench figure 1) and one
 * history event per call instead of three. Compactions recorded before this ran them as
 * activities; `patched` keeps their histories replaying that way. The summary (long, heartbeating)
 * is an activity unless the conversation asks otherwise (`summaryCalls: 'local'`: the compaction is
 * then one workflow task, heartbeating while the summary call lasts). The compensation is always an
 * activity.
 */
const prune = bothWays<CompactionActivities>(pruneOptions);
const summary = bothWays<CompactionActivities>(summarizeOptions);
const commit = bothWays<CompactionActivities>(commitOptions);
const compensation = proxyActivities<CompactionActivities>(compensationOptions);

/** The failure's reason as recorded: the application failure's type, reason and message. */
function describeFailure(err: unknown): string {
  const application = applicationFailureIn(err);
  if (application) {
    const reason = (application.details?.[0] as { reason?: string } | undefined)?.reason;
    return [application.type ?? 'Error', reason, application.message].filter(Boolean).join(': ');
  }
  const root = innermostCause(err);
  return root instanceof Error ? root.message : String(root);
}

/** Adds a failed summary call's attempts to the tally: all of them when retries ran out, else the one. */
function countSummaryAttempts(tally: SummaryTally, err: unknown): void {
  if (!(err instanceof ActivityFailure)) return;
  tally.attempts +=
    err.retryState === RetryState.MAXIMUM_ATTEMPTS_REACHED
      ? (summarizeOptions.retry?.maximumAttempts ?? 1)
      : 1;
}

/**
 * Whether the extractive summary stands in for a failed summary call: the compaction is an
 * emergency (`overflow`: over the window, or refused as too long) and the summary model failed —
 * an LLM failure, retried or not, or summaries it could not use (`SUMMARY_INVALID`); not a
 * cancellation, and not a failure of the store or the plan, which the extractive summary would meet too.
 */
function emergencyFallback(input: CompactionInput, err: unknown): boolean {
  if (input.trigger !== 'overflow' || !(err instanceof ActivityFailure) || isCancellation(err)) return false;
  const type = applicationFailureIn(err)?.type ?? '';
  return type.startsWith('LLM_') || type === 'SUMMARY_INVALID';
}

export async function compaction(input: CompactionInput): Promise<CompactionResult> {
  // The parent validated the same configuration; the defaults fill what it left out.
  const config = parseCompactionConfig(input.config);
  // With `emitCompactionMetaEvents`, each meta event reaches the parent as it happens (a signal),
  // not with the result (children recorded before this returned them at the end).
  const parent = workflowInfo().parent;
  const live = config.emitCompactionMetaEvents && parent !== undefined && patched('meta-events-live');
  // One at a time: signals sent together may arrive in any order.
  let sent: Promise<void> = Promise.resolve();
  const tell = (send: (to: ReturnType<typeof getExternalWorkflowHandle>) => Promise<void>): void => {
    if (!parent) return;
    const to = getExternalWorkflowHandle(parent.workflowId);
    sent = sent.then(() => send(to)).catch(() => undefined);
  };
  const emit = (event: ConversationEvent): void => {
    if (live) tell((to) => to.signal(compactionMetaSignal, event));
  };
  // The Update handler is there whatever the configuration (it refuses when nothing waits).
  const review = new SummaryReview({
    conversationId: input.conversationId,
    compactionId: input.compactionId,
    model: input.model ?? input.summaryModel,
    maxChars: config.maxInputChars,
    announce: (pending) =>
      // The proposal's preview is conversation text: by reference (see CLAIM).
      tell((to) =>
        to.signal(compactionReviewSignal, { ...(pending ? CLAIM : {}), seq: input.seq, review: pending }),
      ),
  });
  const result = await runCompaction(input, config, emit, review);
  if (result.review) {
    review.finish({
      decision: result.review.decision,
      edited: result.review.edited,
      status: result.status,
      reason: result.reason,
      tokensBefore: result.tokensBefore,
      tokensAfter: result.tokensAfter,
    });
  }
  // Every event is delivered before the parent reads the result; the reviewer gets the outcome.
  await sent;
  await condition(allHandlersFinished);
  return live ? { ...result, events: [] } : result;
}

async function runCompaction(
  input: CompactionInput,
  config: CompactionConfig,
  emit: (event: ConversationEvent) => void,
  review: SummaryReview,
): Promise<CompactionResult> {
  const { progress, report } = trackProgress(input);

  const started = Date.now();
  const events: ConversationEvent[] = [];
  const meta = (event: ConversationEvent): void => {
    events.push(event);
    emit(event);
  };
  const timings = { pruneMs: 0, summaryMs: 0, commitMs: 0, totalMs: 0 };
  let pruned: PruneResult | undefined;
  const tally: SummaryTally = { attempts: 0, strategy: null, chosen: undefined };
  let failedPhase: CompactionResult['failedPhase'] = 'prune';
  let reviewed: ReviewVerdict | undefined;
  /** The summary failure the extractive summary stood in for (an emergency compaction). */
  let fallbackFrom: string | undefined;

  const result = (
    status: CompactionResult['status'],
    reason: string | null,
    totals: { version: number; tokens: number; itemCount: number } | null,
  ): CompactionResult => {
    const tokensBefore = pruned?.tokensBefore ?? 0;
    const tokensAfter = status === 'committed' ? (totals?.tokens ?? tokensBefore) : tokensBefore;
    timings.totalMs = Date.now() - started;
    report({ phase: 'done', tokensAfter, outcome: { status, reason } });
    const chosen = tally.chosen;
    const summaryPreview = status === 'committed' ? (chosen?.summaryPreview ?? '') : '';
    return {
      // The summary's preview is conversation text: by reference (see CLAIM).
      ...(summaryPreview !== '' ? CLAIM : {}),
      compactionId: input.compactionId,
      seq: input.seq,
      status,
      trigger: input.trigger,
      strategy: tally.strategy,
      taskType: pruned?.taskType ?? null,
      tokensBefore,
      tokensAfter,
      savedRatio:
        tokensBefore > 0 ? Math.round(((tokensBefore - tokensAfter) / tokensBefore) * 1e4) / 1e4 : 0,
      itemsCompacted: status === 'committed' ? (chosen?.itemsCompacted ?? 0) : 0,
      summaryItemId: status === 'committed' ? (chosen?.summaryItemId ?? null) : null,
      summaryPreview,
      attempts: tally.attempts,
      reason,
      failedPhase: status === 'rolled_back' ? failedPhase : null,
      timings,
      activeVersion: totals?.version ?? pruned?.baseVersion ?? 0,
      itemCount: totals?.itemCount ?? 0,
      // The activities stored every event with the compaction; the parent streams them only when asked.
      events: config.emitCompactionMetaEvents ? events : [],
      ...(reviewed ? { review: reviewed } : {}),
      ...(fallbackFrom !== undefined && status === 'committed' ? { summaryFallback: fallbackFrom } : {}),
    };
  };

  const rollBack = async (
    reason: string,
    outcome: 'rolled_back' | 'skipped' = 'rolled_back',
  ): Promise<void> => {
    report({ phase: 'rollback' });
    // Compensation runs even when the compaction was cancelled, and cannot itself be cancelled.
    await CancellationScope.nonCancellable(async () => {
      await compensation.discardStaged.executeWithOptions(
        { ...compensationOptions, summary: `compensation: discard staged (${failedPhase})` },
        [{ compactionId: input.compactionId, reason, outcome }],
      );
    });
    meta({ type: 'compaction_meta', seq: input.seq, phase: 'rollback', reason });
  };

  try {
    let t = Date.now();
    meta({ type: 'compaction_meta', seq: input.seq, phase: 'selective_start' });
    const pruneInput: PruneInput = {
      // A focus is the user's text: by reference (see CLAIM).
      ...(input.focus ? CLAIM : {}),
      conversationId: input.conversationId,
      compactionId: input.compactionId,
      seq: input.seq,
      trigger: input.trigger,
      focus: input.focus,
      config: input.config,
      model: input.model ?? input.summaryModel,
      workspace: input.workspace,
    };
    const storeStepsLocal = patched('compaction-local-prune-commit');
    const pruneBy = storeStepsLocal ? prune.local : prune.activity;
    pruned = await pruneBy.call.selectivePrune.executeWithOptions(
      { ...pruneBy.options, summary: `selective prune (${input.trigger})` },
      [pruneInput],
    );
    timings.pruneMs = Date.now() - t;
    report({
      tokensBefore: pruned.tokensBefore,
      tokensAfter: pruned.tokensAfter,
      prunedTokens: pruned.tokensAfter,
    });
    meta({
      type: 'compaction_meta',
      seq: input.seq,
      phase: 'selective_done',
      tokensBefore: pruned.tokensBefore,
      tokensAfter: pruned.tokensAfter,
      toolBlocksKept: pruned.stats.toolBlocksKept,
      toolBlocksDropped: pruned.stats.toolBlocksDropped,
      toolCallsTruncated: pruned.stats.toolCallsTruncated,
      toolResultsTruncated: pruned.stats.toolResultsTruncated,
    });
    if (pruned.impossible) {
      await rollBack(pruned.impossible, 'skipped');
      return result('skipped', pruned.impossible, null);
    }

    failedPhase = 'summary';
    report({
      phase: 'summary',
      step: input.mode === 'drop_oldest' ? 'drop_oldest' : (pruned.chain[0] ?? null),
    });
    // Recorded in the input, so a history replays the way it ran (absent before the option).
    const summaryBy = input.summaryCalls === 'local' ? summary.local : summary.activity;
    t = Date.now();
    meta({
      type: 'compaction_meta',
      seq: input.seq,
      phase: 'summary_start',
      tokensBefore: pruned.tokensAfter,
    });
    if (input.mode === 'drop_oldest') {
      tally.strategy = 'drop_oldest';
      tally.chosen = await summaryBy.call.dropOldestRounds.executeWithOptions(
        { ...summaryBy.options, summary: 'drop oldest rounds (no summary)' },
        [
          {
            conversationId: input.conversationId,
            compactionId: input.compactionId,
            prunedVersion: pruned.stagedVersion,
            config: input.config,
          },
        ],
      );
    } else {
      const phase = {
        input,
        pruned,
        keepRecentRounds: config.keepRecentRounds,
        calls: summaryBy,
        progress,
        report,
        storeStepsLocal,
      };
      try {
        await summarizeInSteps(phase, tally);
      } catch (err) {
        // An emergency compaction (the request is over the window, or the model refused it as too
        // long) that rolled back would leave the round nothing to send: when its summary call
        // failed every attempt, the extractive summary (no model call) stands in. The parent
        // still starts the cooldown, as for any summary failure.
        if (!emergencyFallback(input, err) || !patched('overflow-extractive-fallback')) throw err;
        countSummaryAttempts(tally, err);
        fallbackFrom = describeFailure(err);
        await summarizeInSteps({ ...phase, fallbackFrom }, tally);
      }
    }
    timings.summaryMs = Date.now() - t;
    let chosen = tally.chosen;
    if (!chosen) throw ApplicationFailure.nonRetryable('no summary strategy ran', 'NO_STRATEGY');
    meta({
      type: 'compaction_meta',
      seq: input.seq,
      phase: 'summary_done',
      tokensBefore: pruned.tokensBefore,
      tokensAfter: chosen.tokensAfter,
    });
    if (chosen.tokensAfter >= pruned.tokensBefore) {
      failedPhase = null;
      await rollBack('no_progress: the compacted context is not smaller', 'skipped');
      return result('skipped', 'no_progress: the compacted context is not smaller', null);
    }

    if (config.reviewSummary && input.mode === 'summarize') {
      // Stopped before commit until a person (or the timeout's default) decides.
      failedPhase = 'review';
      const proposal = reviewProposal({
        workflowId: workflowInfo().workflowId,
        input,
        strategy: tally.strategy,
        pruned,
        chosen,
        config,
        now: Date.now(),
      });
      report({ phase: 'review', tokensAfter: chosen.tokensAfter, review: proposal });
      const outcome = await review.wait(
        proposal,
        chosen.stagedVersion,
        config.reviewTimeoutMs,
        config.reviewDefault,
      );
      reviewed = outcome.verdict;
      if (outcome.revised) chosen = tally.chosen = { ...chosen, ...outcome.revised };
      report({ review: null, tokensAfter: chosen.tokensAfter });
      if (reviewed.decision === 'rejected') {
        const reason = reviewed.timedOut
          ? 'review timed out: rejected (reviewDefault)'
          : 'rejected in review';
        await rollBack(reason);
        return result('rolled_back', reason, null);
      }
    }

    failedPhase = 'commit';
    report({ phase: 'commit', tokensAfter: chosen.tokensAfter });
    t = Date.now();
    const commitBy = storeStepsLocal ? commit.local : commit.activity;
    const totals = await commitBy.call.commitCompaction.executeWithOptions(
      { ...commitBy.options, summary: `commit v${chosen.stagedVersion}` },
      [{ compactionId: input.compactionId, stagedVersion: chosen.stagedVersion }],
    );
    timings.commitMs = Date.now() - t;
    meta({
      type: 'compaction_meta',
      seq: input.seq,
      phase: 'commit',
      tokensBefore: pruned.tokensBefore,
      tokensAfter: totals.tokens,
    });
    return result('committed', null, totals);
  } catch (err) {
    if (failedPhase === 'summary') countSummaryAttempts(tally, err);
    const reason = isCancellation(err) ? 'cancelled' : describeFailure(err);
    if (isCancellation(err)) failedPhase = 'cancelled';
    await rollBack(reason);
    if (isCancellation(err)) throw err;
    return result('rolled_back', reason, null);
  }
}
