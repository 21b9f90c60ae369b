/**
 * What `durable-compaction review <id>` prints: the compaction that waits for review, the tokens
 * before and after, what it removes, the proposed summary, and how to answer.
 */
import type { PendingReview } from '../../workflows/definitions';
import { formatTokens as n } from './format';

/** A pending review with its summary's whole text (from the store), or its preview when the store is not at hand. */
export interface ReviewView extends PendingReview {
  /** The proposed summary, without the line every summary item starts with. */
  summary: string;
  /** `summary` is the preview only (DATABASE_URL not set). */
  summaryIsPreview: boolean;
}

/** `review` as lines; `now` decides the time left. */
export function formatReview(v: ReviewView, now: number = Date.now()): string[] {
  const saved =
    v.tokensBefore > 0 ? Math.round(((v.tokensBefore - v.tokensAfter) / v.tokensBefore) * 100) : 0;
  const left = Math.max(0, Math.ceil((v.deadline - now) / 60_000));
  const removes = [
    `${v.removes.itemsSummarized} items summarized`,
    `${v.removes.toolBlocksDropped} tool blocks dropped`,
    `${v.removes.toolCallsTruncated} tool calls and ${v.removes.toolResultsTruncated} tool results truncated`,
    ...Object.entries(v.removes.itemsDropped).map(([type, count]) => `${count} ${type} dropped`),
  ];
  return [
    `compaction #${v.seq} (${v.trigger}${v.strategy ? `, ${v.strategy}` : ''}) of ${v.conversationId} awaits review · ${v.onTimeout} by default in ${left} min`,
    `  tokens     ${n(v.tokensBefore)} → ${n(v.tokensAfter)} (saved ${saved}%; the prune alone: ${n(v.prunedTokens)})`,
    `  removes    ${removes.join(' · ')}`,
    `  summary    ${n(v.summaryTokens)} tokens${v.summaryBudget === null ? '' : ` (budget ${n(v.summaryBudget)})`}${v.summaryIsPreview ? ' · its first characters (set DATABASE_URL for the whole text)' : ''}`,
    '',
    v.summary === '' ? '(no summary: the compaction summarized nothing)' : v.summary,
    '',
    `approve: durable-compaction approve ${v.conversationId} [--summary-file F] · reject: durable-compaction reject ${v.conversationId}`,
  ];
}
