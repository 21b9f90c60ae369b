/**
 * The result a parent records for a compaction child that failed or was cancelled: the child
 * compensated before it ended (its non-cancellable rollback), so nothing changed and the context
 * is what it was. Used by the agent conversation and by `compactConversation`.
 */
import { ChildWorkflowFailure } from '@temporalio/workflow';
import { asFinalFailure } from '../src/failures';
import type { CompactionResult } from './compaction-definitions';
import type { TriggerKind } from '../src/context/triggers';

/** The context as the parent last knew it (left as it was). */
export interface KnownContext {
  contextTokens: number;
  activeVersion: number;
  itemCount: number;
}

/** A `rolled_back` result (`failedPhase: 'cancelled'`) with the child's failure as its reason. */
export function childEndedResult(
  context: KnownContext,
  compactionId: string,
  seq: number,
  trigger: TriggerKind,
  err: unknown,
): CompactionResult {
  const reason =
    err instanceof ChildWorkflowFailure ? asFinalFailure(err, 'COMPACTION_FAILED').message : String(err);
  return {
    compactionId,
    seq,
    status: 'rolled_back',
    trigger,
    strategy: null,
    taskType: null,
    tokensBefore: context.contextTokens,
    tokensAfter: context.contextTokens,
    savedRatio: 0,
    itemsCompacted: 0,
    summaryItemId: null,
    summaryPreview: '',
    attempts: 0,
    reason: `child workflow ended: ${reason}`,
    failedPhase: 'cancelled',
    timings: { pruneMs: 0, summaryMs: 0, commitMs: 0, totalMs: 0 },
    activeVersion: context.activeVersion,
    itemCount: context.itemCount,
    events: [],
  };
}
