/**
 * Messages of the compaction child workflow: its input and result, the review of its summary
 * (`reviewSummary`) and its progress. Like everything in definitions.ts they travel through
 * workflow history: ids, counts and short metadata; text is marked with {@link CLAIM}.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Claimed } from '../src/claim';
import type { TriggerKind } from '../src/context/triggers';
import type { FailureType } from '../src/failures';
import type { ConversationEvent } from './definitions';

/**
 * A compaction stopped after its summary, before commit, waiting for a person (config
 * `reviewSummary`, issue 23). Ids, counts and a preview: the whole summary is in the store.
 */
export interface PendingReview {
  /** The compaction child that waits: answer it with the `reviewCompaction` Update. */
  workflowId: string;
  conversationId: string;
  seq: number;
  trigger: TriggerKind;
  strategy: string | null;
  /** The proposed summary item (null when the compaction summarized nothing); its text is in the store. */
  summaryItemId: string | null;
  /** The first characters of the summary (without the line every summary item starts with). */
  summaryPreview: string;
  summaryTokens: number;
  /** The most tokens a summary may have here: an edited one is checked against it. */
  summaryBudget: number | null;
  /** The context's tokens now, after the prune alone, and after the compaction if it is committed. */
  tokensBefore: number;
  prunedTokens: number;
  tokensAfter: number;
  /** What the compaction takes out of the context. */
  removes: {
    toolBlocksDropped: number;
    toolCallsTruncated: number;
    toolResultsTruncated: number;
    /** Items the prune dropped, by item type. */
    itemsDropped: Record<string, number>;
    /** Items the summary replaces. */
    itemsSummarized: number;
  };
  /** When the configured default (`reviewDefault`) applies, in ms since the epoch. */
  deadline: number;
  onTimeout: 'approve' | 'reject';
  /** The summary is the reviewer's edit, staged already. */
  edited: boolean;
}

/** A reviewer's answer: approve (optionally with an edited summary) or reject. */
export interface ReviewAnswer extends Claimed {
  decision: 'approve' | 'reject';
  /** The summary to commit instead (approve only): not empty, within `summaryBudget`. */
  summary?: string;
}

/** How a reviewed compaction ended. */
export interface ReviewResult {
  decision: 'approved' | 'rejected';
  edited: boolean;
  /** The compaction's outcome: committed, or rolled back (a rejection, or a commit that failed). */
  status: 'committed' | 'rolled_back' | 'skipped';
  reason: string | null;
  tokensBefore: number;
  tokensAfter: number;
}

/** What a review decided, as the child reports it to its parent. */
export interface ReviewVerdict {
  decision: 'approved' | 'rejected';
  edited: boolean;
  /** No answer came in time: the configured default decided. */
  timedOut: boolean;
}

/** A compaction child while it runs, as the parent knows it. */
export interface RunningCompaction {
  workflowId: string;
  seq: number;
  trigger: TriggerKind;
}

/** Where a compaction child is (its `progress` Query, issue 23). */
export interface CompactionProgress {
  seq: number;
  trigger: TriggerKind;
  phase: 'prune' | 'summary' | 'review' | 'commit' | 'rollback' | 'done';
  /** The strategy chain's step the summary call runs from, e.g. `tool_blocks` or `full(keep 2)`. */
  step: string | null;
  /** The context's tokens before the compaction (known once the prune ran). */
  tokensBefore: number | null;
  /** Its tokens after the steps so far: after the prune, then after the summary, then committed. */
  tokensAfter: number | null;
  /** Its tokens after the prune alone. */
  prunedTokens: number | null;
  /** Summary calls that have ended (answered or failed after their retries). */
  summaryCalls: number;
  /** How it ended (phase `done`): committed, rolled back or skipped, with the reason. */
  outcome: { status: 'committed' | 'rolled_back' | 'skipped'; reason: string | null } | null;
  /** The summary waiting for review (phase `review`); absent in children without review. */
  review?: PendingReview | null;
}

export interface CompactionInput extends Claimed {
  conversationId: string;
  compactionId: string;
  seq: number;
  trigger: TriggerKind;
  round: number;
  focus: string | null;
  /** The conversation's compaction configuration as given at start (defaults fill the rest). */
  config: Record<string, unknown>;
  summaryModel: string;
  /**
   * The conversation's model, when it is not `summaryModel`: its encoding counts the context, so
   * the cut forms and the summary are counted with it like every other item. Absent: the same model
   * (and in children started before it was passed).
   */
  model?: string;
  /** `summarize` (prune, summary chain, commit) or `drop_oldest` (seed 004's alternative: no summary). */
  mode: 'summarize' | 'drop_oldest';
  /** Workspace of the conversation (for the git diff stat of the summary request). */
  workspace: string | null;
  /** Where the summary call runs (see `AgentConversationInput.summaryCalls`); absent: `task_queue`. */
  summaryCalls?: 'local' | 'task_queue';
}

export interface CompactionResult extends Claimed {
  compactionId: string;
  seq: number;
  status: 'committed' | 'rolled_back' | 'skipped';
  trigger: TriggerKind;
  strategy: string | null;
  taskType: string | null;
  tokensBefore: number;
  tokensAfter: number;
  savedRatio: number;
  itemsCompacted: number;
  summaryItemId: string | null;
  summaryPreview: string;
  attempts: number;
  /** Why it rolled back or was skipped. */
  reason: string | null;
  /** Which phase failed (`review`: the reviewer rejected it): summary failures start the cooldown. */
  failedPhase: 'prune' | 'summary' | 'review' | 'commit' | 'cancelled' | null;
  timings: { pruneMs: number; summaryMs: number; commitMs: number; totalMs: number };
  activeVersion: number;
  itemCount: number;
  events: ConversationEvent[];
  /** How the review decided (`reviewSummary`); absent when there was none. */
  review?: ReviewVerdict;
  /**
   * Committed with the extractive summary standing in for a summary call that failed (an
   * emergency compaction): the failure. The parent starts the cooldown as for a rolled-back one.
   */
  summaryFallback?: string;
}

// ---- Updates, Queries, Signals -------------------------------------------------------------

/** The failure type of an answer to a review that is no longer pending (decided, or timed out). */
export const NO_REVIEW_PENDING = 'NO_REVIEW_PENDING' satisfies FailureType;
/**
 * The compaction child's review (`reviewSummary`): approve, approve an edited summary, or reject.
 * Resolves when the compaction has ended; an edit that is empty or over the summary budget is
 * refused (`SUMMARY_EDIT_REFUSED`) and changes nothing.
 */
export const reviewCompactionUpdate = defineUpdate<ReviewResult, [ReviewAnswer]>('reviewCompaction');
/** The child tells its parent that its summary waits for review (`review`), or no longer (null). */
export const compactionReviewSignal =
  defineSignal<[{ seq: number; review: PendingReview | null } & Claimed]>('compactionReview');

/** The compaction child's progress (phase, step, tokens so far). */
export const compactionProgressQuery = defineQuery<CompactionProgress>('progress');
