import { describe, expect, it } from 'vitest';
import { formatPhase } from '../../../src/cli/format';
import { formatReview, type ReviewView } from '../../../src/cli/review-view';
import type { PendingReview } from '../../../workflows/definitions';

const NOW = Date.UTC(2025, 0, 1, 12, 0, 0);

const pending: PendingReview = {
  workflowId: 'conv-1/compaction-3',
  conversationId: 'conv-1',
  seq: 3,
  trigger: 'check',
  strategy: 'sliding_window',
  summaryItemId: 'c3:summary:sliding_window',
  summaryPreview: 'The user asked for…',
  summaryTokens: 812,
  summaryBudget: 1000,
  tokensBefore: 28_758,
  prunedTokens: 14_900,
  tokensAfter: 7_400,
  removes: {
    toolBlocksDropped: 2,
    toolCallsTruncated: 1,
    toolResultsTruncated: 3,
    itemsDropped: { SKILL_PROMPT: 1 },
    itemsSummarized: 40,
  },
  deadline: NOW + 30 * 60_000,
  onTimeout: 'reject',
  edited: false,
};

describe('review <id>', () => {
  it('says what is proposed, what it removes, the summary, and how to answer', () => {
    const view: ReviewView = {
      ...pending,
      summary: 'The user asked for X.\nY is done.',
      summaryIsPreview: false,
    };
    expect(formatReview(view, NOW)).toEqual([
      'compaction #3 (check, sliding_window) of conv-1 awaits review · reject by default in 30 min',
      '  tokens     28,758 → 7,400 (saved 74%; the prune alone: 14,900)',
      '  removes    40 items summarized · 2 tool blocks dropped · 1 tool calls and 3 tool results truncated · 1 SKILL_PROMPT dropped',
      '  summary    812 tokens (budget 1,000)',
      '',
      'The user asked for X.\nY is done.',
      '',
      'approve: durable-compaction approve conv-1 [--summary-file F] · reject: durable-compaction reject conv-1',
    ]);
  });

  it('says when it shows the preview only', () => {
    const lines = formatReview({ ...pending, summary: pending.summaryPreview, summaryIsPreview: true }, NOW);
    expect(lines[3]).toBe(
      '  summary    812 tokens (budget 1,000) · its first characters (set DATABASE_URL for the whole text)',
    );
  });

  it('the progress line of a conversation awaiting review', () => {
    expect(formatPhase({ phase: 'awaiting_review', awaitingApproval: null, review: pending })).toBe(
      'compaction #3 (check) awaits review: 28,758 → 7,400 tokens; review, approve or reject it',
    );
  });
});
