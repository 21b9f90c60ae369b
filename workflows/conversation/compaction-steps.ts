/**
 * The agent conversation's compaction steps (DESIGN.md §3): when to compact (the automatic
 * triggers at a point of the round), asking for approval (`requireConfirmation`), running the
 * compaction child and taking in its result (events, totals, the loop guard), the cooldown after
 * a failed summary, and restoring an earlier version.
 */
import { ApplicationFailure, condition, executeChild, patched, sleep, uuid4 } from '@temporalio/workflow';
import type { ConversationActivities } from '../../activities/types';
import {
  decideCompaction,
  recordForLoopGuard,
  type TriggerPoint,
} from '../../src/context/compaction-decision';
import type { ActivityCalls, LocalActivityCalls } from '../activity-options';
import { compaction } from '../compaction';
import { childEndedResult } from '../compaction-outcome';
import { asFinalFailure } from '../../src/failures';
import {
  CLAIM,
  type CompactionBrief,
  type CompactionResult,
  type RestoreResult,
  type TriggerKind,
} from '../definitions';
import { formatTokens, type ConversationState, type ManualRequest } from './state';

/** What to do about a trigger: compact, compact by dropping the oldest rounds, go on, or fail. */
type Action = 'compact' | 'drop_oldest' | 'continue' | 'fail';

/** A trigger that fired, and why. */
interface Decision {
  trigger: TriggerKind;
  detail: string;
}

export class CompactionSteps {
  /** Skip reasons already recorded this round: a trigger that keeps firing is recorded once a round. */
  private skipsRecorded = { round: -1, kinds: new Set<string>() };

  constructor(
    private readonly state: ConversationState,
    /** Store writes that must reach the store before the workflow goes on (restore). */
    private readonly store: ActivityCalls<ConversationActivities>,
    /** Quick store writes, as local activities (a skipped compaction's record). */
    private readonly local: LocalActivityCalls<ConversationActivities>,
  ) {}

  /** Evaluates the automatic triggers at one point of the round and compacts when one fires. */
  async maybeCompact(
    point: TriggerPoint,
    observed: { reportedTokens?: number | null; markerSeen?: boolean } = {},
  ): Promise<CompactionBrief[]> {
    const s = this.state;
    const decision = decideCompaction(point, {
      ...s.triggerState(),
      contextTokens: s.contextTokens,
      reportedTokens: observed.reportedTokens ?? null,
      itemCount: s.itemCount,
      markerSeen: observed.markerSeen ?? false,
    });
    if (!decision) return [];
    if (decision.skip) return this.recordSkip(decision.trigger, decision.skip);
    return this.decided(await this.confirm(decision.trigger), decision);
  }

  /** Records a trigger that could not compact (cooldown, pause, too few items), once a round per kind. */
  private async recordSkip(trigger: TriggerKind, reason: string): Promise<CompactionBrief[]> {
    const s = this.state;
    const kind = reason.split(':')[0] ?? reason;
    if (this.skipsRecorded.round !== s.rounds) this.skipsRecorded = { round: s.rounds, kinds: new Set() };
    if (this.skipsRecorded.kinds.has(kind)) return [];
    this.skipsRecorded.kinds.add(kind);
    const seq = ++s.compactionSeq;
    const compactionId = uuid4();
    await this.local.call.recordSkippedCompaction.executeWithOptions(
      { ...this.local.options, summary: `skip ${trigger}: ${reason}` },
      [{ conversationId: s.conversationId, compactionId, seq, trigger, reason }],
    );
    s.pushEvent({ type: 'compaction_skipped', seq, trigger, reason });
    s.lastCompaction = {
      seq,
      compactionId,
      trigger,
      status: 'skipped',
      round: s.rounds,
      strategy: null,
      tokensBefore: s.contextTokens,
      tokensAfter: s.contextTokens,
      savedRatio: 0,
      reason,
    };
    s.publish();
    return [s.lastCompaction];
  }

  /** Asks for approval when configured; returns what to do. */
  private async confirm(trigger: TriggerKind): Promise<Action> {
    const s = this.state;
    const config = s.config;
    if (!config.requireConfirmation || trigger === 'manual') return 'compact';
    const previousPhase = s.phase;
    s.phase = 'awaiting_approval';
    s.awaitingApproval = { trigger, tokens: s.contextTokens };
    s.approvalDecision = null;
    s.pushEvent({ type: 'awaiting_approval', trigger, tokens: s.contextTokens });
    s.publish();
    const answered = await condition(() => s.approvalDecision !== null, config.confirmationTimeoutMs, {
      summary: `awaiting approval of a ${trigger} compaction`,
    });
    const decision = answered
      ? s.approvalDecision
      : config.confirmationDefault === 'approve'
        ? 'approved'
        : 'rejected';
    s.awaitingApproval = null;
    s.phase = previousPhase;
    const action = decision === 'approved' ? 'compact' : config.onReject;
    s.pushEvent({ type: 'approval', decision: answered ? (decision ?? 'rejected') : 'timed_out', action });
    s.publish();
    return action;
  }

  /** Runs what was decided; a summary rejected in review then gets `onReject` too (seed 004). */
  async decided(action: Action, decision: Decision): Promise<CompactionBrief[]> {
    const s = this.state;
    switch (action) {
      case 'compact': {
        const brief = await this.run(decision.trigger, decision.detail);
        if (brief.review?.decision !== 'rejected') return [brief];
        return [brief, ...(await this.decided(s.config.onReject, decision))];
      }
      case 'drop_oldest':
        return [
          await this.run(decision.trigger, `${decision.detail}; rejected: dropping the oldest rounds`, {
            mode: 'drop_oldest',
          }),
        ];
      case 'continue':
        // A request over the window is never sent: declined or not, it would be refused as too
        // long, and the refusal compacts without asking. The emergency compaction runs first.
        // Runs recorded before this went on uncompacted: they replay as they ran.
        if (s.contextTokens > s.window && patched('declined-over-window-emergency'))
          return [
            await this.run(
              'overflow',
              `emergency: declined, but the request would be ${s.contextTokens} tokens, over the window of ${s.window}`,
            ),
          ];
        // Seed 004: the user declined; go on uncompacted until the next trigger.
        s.lastCompactionRound = s.rounds;
        return [];
      case 'fail':
        throw ApplicationFailure.create({
          type: 'COMPACTION_REJECTED',
          message: `the context needs compaction (${formatTokens(s.contextTokens)} of ${formatTokens(s.window)} tokens) and it was declined; compact manually or restart with onReject "continue"`,
          nonRetryable: true,
        });
    }
  }

  /** Runs the compaction child and takes in its result. */
  async run(
    trigger: TriggerKind,
    detail: string,
    opts: { focus?: string | null; mode?: 'summarize' | 'drop_oldest' } = {},
  ): Promise<CompactionBrief> {
    const s = this.state;
    const input = s.input;
    const previousPhase = s.phase;
    s.phase = 'compacting';
    const seq = ++s.compactionSeq;
    const compactionId = uuid4();
    const summaryModel = input.model.summaryModel ?? input.model.model;
    s.pushEvent({ type: 'pre_compact', seq, trigger, round: s.rounds, tokens: s.contextTokens, detail });
    s.publish();
    let result: CompactionResult;
    const childId = `${s.conversationId}/compaction-${seq}`;
    s.runningCompaction = { workflowId: childId, seq, trigger };
    try {
      result = await executeChild(compaction, {
        workflowId: childId,
        staticSummary: `${trigger} compaction #${seq}: ${formatTokens(s.contextTokens)} tokens (${s.percentOfWindow()}% of ${formatTokens(s.window)})`,
        staticDetails: detail,
        args: [
          {
            // A focus is the user's text: by reference (see CLAIM).
            ...(opts.focus ? CLAIM : {}),
            conversationId: s.conversationId,
            compactionId,
            seq,
            trigger,
            round: s.rounds,
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
      result = childEndedResult(s, compactionId, seq, trigger, err);
    } finally {
      s.runningCompaction = null;
      s.review = null;
    }
    const brief = this.takeIn(result, { seq, compactionId, trigger });
    s.phase = previousPhase;
    s.publish();
    return brief;
  }

  /** Takes in a child's result: its events, the new totals, the cooldown and the loop guard. */
  private takeIn(
    result: CompactionResult,
    { seq, compactionId, trigger }: { seq: number; compactionId: string; trigger: TriggerKind },
  ): CompactionBrief {
    const s = this.state;
    for (const e of result.events) s.pushEvent(e);
    if (result.review) {
      const { decision, edited, timedOut } = result.review;
      const action = decision === 'approved' ? 'commit' : trigger === 'manual' ? 'none' : s.config.onReject;
      s.pushEvent({ type: 'review', seq, decision: timedOut ? 'timed_out' : decision, edited, action });
    }
    if (result.status === 'committed') {
      s.contextTokens = result.tokensAfter;
      s.itemCount = result.itemCount;
      s.activeVersion = result.activeVersion;
      s.lastCompactionRound = s.rounds;
      s.lastReportedTokens = null;
      s.pushEvent({
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
      // The extractive summary stood in for a failed summary call: the summarizer still failed.
      if (result.summaryFallback !== undefined) {
        s.pushEvent({ type: 'summary_fallback', seq, reason: result.summaryFallback });
        this.startCooldown();
      }
    } else if (result.status === 'rolled_back') {
      s.pushEvent({ type: 'compaction_rolled_back', seq, trigger, reason: result.reason ?? 'unknown' });
      if (result.failedPhase === 'summary') this.startCooldown();
    } else {
      s.pushEvent({ type: 'compaction_skipped', seq, trigger, reason: result.reason ?? 'unknown' });
    }
    const brief: CompactionBrief = {
      seq,
      compactionId,
      trigger,
      status: result.status,
      round: s.rounds,
      strategy: result.strategy,
      tokensBefore: result.tokensBefore,
      tokensAfter: result.tokensAfter,
      savedRatio: result.savedRatio,
      reason: result.reason,
      ...(result.review ? { review: result.review } : {}),
      ...(result.summaryFallback !== undefined ? { summaryFallback: result.summaryFallback } : {}),
    };
    s.lastCompaction = brief;
    const cooledDown = result.status === 'rolled_back' && result.failedPhase === 'summary';
    // A person's rejection is not a compaction that made no progress.
    const rejected = result.review?.decision === 'rejected';
    if (trigger !== 'manual' && trigger !== 'overflow' && !cooledDown && !rejected) {
      // The loop guard counts compactions that made no progress; a summary failure is the
      // cooldown's business, and a healthy compaction never pauses automatic compaction.
      const guard = recordForLoopGuard(s.recentAutomatic, result, s.rounds, s.config);
      s.recentAutomatic = guard.recent;
      if (guard.pause) {
        s.pausedReason = guard.pause;
        s.pausedAtRound = s.rounds;
        s.pushEvent({ type: 'loop_guard', reason: guard.pause });
      }
    } else if (result.status === 'committed') {
      // A successful manual or overflow compaction lifts the loop guard's pause.
      s.liftPause();
    }
    return brief;
  }

  private startCooldown(): void {
    const s = this.state;
    const ms = s.config.cooldownMs;
    const until = Date.now() + ms;
    s.cooldownUntil = until;
    s.pushEvent({ type: 'cooldown_started', until, ms });
    // A durable timer, visible in the UI; automatic triggers are skipped until it fires.
    void sleep(ms, { summary: `compaction cooldown ${ms / 1000}s after summary failure` }).then(() => {
      if (s.cooldownUntil === until) {
        s.pushEvent({ type: 'cooldown_ended' });
        s.publish();
      }
    });
  }

  /** A cooldown carried from the previous run goes on with a timer of what is left of it. */
  resumeCooldown(): void {
    const s = this.state;
    if (s.cooldownUntil === null || !s.cooldownActive()) return;
    const ms = s.cooldownUntil - Date.now();
    void sleep(ms, { summary: `compaction cooldown (continued) ${Math.ceil(ms / 1000)}s` }).then(() => {
      s.pushEvent({ type: 'cooldown_ended' });
    });
  }

  /** Runs a manual compaction or a restore, settling the outcome its Update waits for. */
  async runRequested(request: ManualRequest): Promise<void> {
    const s = this.state;
    if (request.restore !== undefined) {
      try {
        s.outcomes.set(request.id, { ok: true, value: await this.restore(request.restore) });
      } catch (err) {
        s.outcomes.set(request.id, { ok: false, error: asFinalFailure(err, 'RESTORE_FAILED') });
      }
      return;
    }
    s.phase = 'compacting';
    try {
      // The focus is the user's text: it travels by reference in the child's input, never in the
      // event or the child's details, which history keeps as they are.
      const detail = request.focus ? `manual, with a focus (${request.focus.length} characters)` : 'manual';
      const brief = await this.run('manual', detail, { focus: request.focus });
      s.outcomes.set(request.id, { ok: true, value: brief });
    } catch (err) {
      s.outcomes.set(request.id, { ok: false, error: asFinalFailure(err, 'COMPACTION_FAILED') });
    }
    s.phase = 'idle';
    s.publish();
  }

  /** Makes an earlier version the active context again. */
  async restore(version: number): Promise<RestoreResult> {
    const s = this.state;
    const totals = await this.store.call.restoreVersion.executeWithOptions(
      { ...this.store.options, summary: `restore v${version}` },
      [{ conversationId: s.conversationId, version, idemKey: uuid4() }],
    );
    s.applyTotals(totals);
    s.pushEvent({ type: 'restored', version, activeVersion: totals.version, tokens: totals.tokens });
    s.publish();
    return { version, activeVersion: totals.version, tokens: totals.tokens };
  }
}
