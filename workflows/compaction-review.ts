/**
 * The review of a compaction's summary (issue 23, config `reviewSummary`), inside the compaction
 * child: it stops after the summary, before commit, and waits — a condition with a timer, so a
 * worker that dies meanwhile changes nothing — for the `reviewCompaction` Update: approve, approve
 * with an edited summary (staged by an activity that checks it first; a refused edit changes
 * nothing and the review goes on waiting), or reject. After `reviewTimeoutMs` the configured
 * `reviewDefault` decides. The Update resolves when the compaction has ended.
 */
import {
  type ActivityOptions,
  ApplicationFailure,
  condition,
  proxyActivities,
  setHandler,
  uuid4,
} from '@temporalio/workflow';
import type { PruneResult, RevisedSummary, ReviewActivities, SummarizeResult } from '../activities/types';
import type { CompactionConfig } from '../src/context/config';
import { withoutSummaryPrefix } from '../src/context/summary-edit';
import { applicationFailureIn, asFinalFailure, NOT_RETRIED } from '../src/failures';
import {
  CLAIM,
  NO_REVIEW_PENDING,
  reviewCompactionUpdate,
  type CompactionInput,
  type PendingReview,
  type ReviewAnswer,
  type ReviewResult,
  type ReviewVerdict,
} from './definitions';

/** Characters of the summary the summarize activity returns as its preview (activities/compaction.ts). */
const SUMMARY_PREVIEW_CHARS = 300;

/** Staging an edit is one short store transaction; a refused edit is not retried. */
const reviseOptions: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '500ms',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [...NOT_RETRIED.reviewEdit],
  },
};
const review = proxyActivities<ReviewActivities>(reviseOptions);

/** What the reviewer's edit is checked and staged against. */
export interface ReviewContext {
  conversationId: string;
  compactionId: string;
  /** The model whose encoding counts the summary: the conversation's. */
  model: string;
  /** The longest edit accepted, in characters (`maxInputChars`, like a user message). */
  maxChars: number;
  /** Tells the parent what waits for review (null: nothing any more). */
  announce: (review: PendingReview | null) => void;
}

/** How the review ended, and the reviewer's summary when they edited it. */
export interface ReviewOutcome {
  verdict: ReviewVerdict;
  revised: RevisedSummary | null;
}

/** What waits for review: the summary, the tokens before and after, what the compaction removes. */
export function reviewProposal(from: {
  workflowId: string;
  input: CompactionInput;
  strategy: string | null;
  pruned: PruneResult;
  chosen: SummarizeResult;
  config: CompactionConfig;
  /** Workflow time, ms since the epoch. */
  now: number;
}): PendingReview {
  const { input, pruned, chosen, config } = from;
  return {
    workflowId: from.workflowId,
    conversationId: input.conversationId,
    seq: input.seq,
    trigger: input.trigger,
    strategy: from.strategy,
    summaryItemId: chosen.summaryItemId,
    summaryPreview:
      withoutSummaryPrefix(chosen.summaryPreview) +
      (chosen.summaryPreview.length >= SUMMARY_PREVIEW_CHARS ? '…' : ''),
    summaryTokens: chosen.summaryTokens,
    summaryBudget: chosen.summaryBudget ?? null,
    tokensBefore: pruned.tokensBefore,
    prunedTokens: pruned.tokensAfter,
    tokensAfter: chosen.tokensAfter,
    removes: {
      toolBlocksDropped: pruned.stats.toolBlocksDropped,
      toolCallsTruncated: pruned.stats.toolCallsTruncated,
      toolResultsTruncated: pruned.stats.toolResultsTruncated,
      itemsDropped: pruned.stats.itemsDropped,
      itemsSummarized: chosen.itemsCompacted,
    },
    deadline: from.now + config.reviewTimeoutMs,
    onTimeout: config.reviewDefault,
    edited: false,
  };
}

/** A pending review in the Web UI: what would be committed, what it removes, how to answer. */
export function reviewDetails(r: PendingReview): string[] {
  const n = (x: number): string => x.toLocaleString('en-US');
  const cut = [
    `${r.removes.itemsSummarized} items summarized`,
    `${r.removes.toolBlocksDropped} tool blocks dropped`,
    `${r.removes.toolCallsTruncated} tool calls and ${r.removes.toolResultsTruncated} tool results truncated`,
    ...Object.entries(r.removes.itemsDropped).map(([type, count]) => `${count} ${type} dropped`),
  ];
  return [
    `**Awaiting review** until ${new Date(r.deadline).toISOString()} (then: ${r.onTimeout}): \`durable-compaction review|approve|reject ${r.conversationId}\` (approve takes \`--summary-file F\`)`,
    `Proposed summary (${n(r.summaryTokens)} tokens${r.summaryBudget === null ? '' : ` of ${n(r.summaryBudget)}`}): ${r.summaryPreview}`,
    `Removes: ${cut.join(' · ')}`,
  ];
}

/** One compaction's review: its Update handler, and the wait the compaction runs. */
export class SummaryReview {
  private pending: { review: PendingReview; stagedVersion: number } | null = null;
  private decision: ReviewVerdict['decision'] | null = null;
  private revised: RevisedSummary | null = null;
  /** An answer's edit is being staged: the wait lets it finish before the timeout's default. */
  private applying = false;
  private ended: ReviewResult | null = null;

  constructor(private readonly ctx: ReviewContext) {
    setHandler(reviewCompactionUpdate, (answer) => this.answer(answer), {
      validator: (answer) => this.check(answer),
    });
  }

  /** Waits for the reviewer or the timeout; the proposal is staged as `stagedVersion`. */
  async wait(
    proposal: PendingReview,
    stagedVersion: number,
    timeoutMs: number,
    byDefault: 'approve' | 'reject',
  ): Promise<ReviewOutcome> {
    this.pending = { review: proposal, stagedVersion };
    this.ctx.announce(proposal);
    const answered = await condition(() => this.decision !== null, timeoutMs, {
      summary: `awaiting review of compaction #${proposal.seq} (then: ${byDefault})`,
    });
    // An edit being staged when the time ran out is the reviewer's answer.
    if (!answered) await condition(() => !this.applying);
    const timedOut = this.decision === null;
    const decision = this.decision ?? (byDefault === 'approve' ? 'approved' : 'rejected');
    this.pending = null;
    this.ctx.announce(null);
    return { verdict: { decision, edited: this.revised !== null, timedOut }, revised: this.revised };
  }

  /** The compaction has ended: the reviewer's Update returns this. */
  finish(result: ReviewResult): void {
    this.ended = result;
  }

  /** Refuses, before anything is recorded, an answer that cannot apply. */
  private check(answer: ReviewAnswer): void {
    const pending = this.pending?.review;
    // Typed: a client that saw the review pending a moment ago tells its user it has gone.
    if (!pending)
      throw ApplicationFailure.nonRetryable('no summary awaits review in this compaction', NO_REVIEW_PENDING);
    if (this.applying || this.decision !== null)
      throw ApplicationFailure.nonRetryable('the review has been answered already', NO_REVIEW_PENDING);
    if (answer?.decision !== 'approve' && answer?.decision !== 'reject')
      throw new Error('decision must be approve or reject');
    if (answer.summary === undefined) return;
    if (answer.decision !== 'approve') throw new Error('an edited summary goes with approve, not reject');
    if (typeof answer.summary !== 'string' || answer.summary.trim() === '')
      throw new Error('the edited summary is empty; nothing changed');
    if (pending.summaryItemId === null || pending.summaryBudget === null)
      throw new Error('this compaction wrote no summary to edit; nothing changed');
    if (answer.summary.length > this.ctx.maxChars)
      throw new Error(
        `the edited summary is ${answer.summary.length} characters, over the limit of ${this.ctx.maxChars} (maxInputChars); nothing changed`,
      );
  }

  private async answer(answer: ReviewAnswer): Promise<ReviewResult> {
    this.applying = true;
    try {
      if (answer.summary !== undefined) this.revised = await this.stage(answer.summary);
      this.decision = answer.decision === 'approve' ? 'approved' : 'rejected';
    } finally {
      this.applying = false;
    }
    await condition(() => this.ended !== null);
    return this.ended as ReviewResult;
  }

  /** Stages the edit in place of the proposal; a refusal reaches the reviewer with its reason. */
  private async stage(text: string): Promise<RevisedSummary> {
    const { review: pending, stagedVersion } = this.pending as NonNullable<typeof this.pending>;
    try {
      return await review.reviseSummary.executeWithOptions(
        { ...reviseOptions, summary: 'review: stage the edited summary' },
        [
          {
            // The reviewer's summary is text: by reference (see CLAIM).
            ...CLAIM,
            conversationId: this.ctx.conversationId,
            compactionId: this.ctx.compactionId,
            stagedVersion,
            summaryItemId: pending.summaryItemId as string,
            summaryBudget: pending.summaryBudget as number,
            tokensBefore: pending.tokensBefore,
            text,
            editId: uuid4(),
            model: this.ctx.model,
          },
        ],
      );
    } catch (err) {
      // The reviewer is told why (a refused edit, a finished compaction); a cancellation goes on.
      if (applicationFailureIn(err)) throw asFinalFailure(err, 'SUMMARY_EDIT_FAILED');
      throw err;
    }
  }
}
