/** The CLI's progress line for a running compaction (issue 23), phase by phase. */
import { describe, expect, it } from 'vitest';
import type { CompactionProgressView } from '../../../src/client/compaction-progress';
import { formatCompactionProgress } from '../../../src/cli/format';

const base: CompactionProgressView = {
  workflowId: 'c/compaction-3',
  seq: 3,
  trigger: 'check',
  phase: 'prune',
  step: null,
  tokensBefore: null,
  tokensAfter: null,
  prunedTokens: null,
  summaryCalls: 0,
  outcome: null,
  summaryAttempt: null,
};
const pruned = { tokensBefore: 28_758, tokensAfter: 14_900, prunedTokens: 14_900 };

describe('formatCompactionProgress', () => {
  it.each<[string, Partial<CompactionProgressView>, string]>([
    ['prune running', {}, 'compaction #3 (check): prune…'],
    [
      'first summary attempt',
      {
        ...pruned,
        phase: 'summary',
        step: 'tool_blocks',
        summaryAttempt: { attempt: 1, maximumAttempts: 3, lastFailure: null, nextAttemptAt: null },
      },
      'compaction #3 (check): prune 28,758 → 14,900 · summary (tool_blocks)…',
    ],
    [
      'second attempt, waiting',
      {
        ...pruned,
        phase: 'summary',
        step: 'full(keep 2)',
        summaryAttempt: {
          attempt: 2,
          maximumAttempts: 3,
          lastFailure: 'LLM rate limited (HTTP 429)',
          nextAttemptAt: 1_001_500,
        },
      },
      'compaction #3 (check): prune 28,758 → 14,900 · summary (full(keep 2)) attempt 2/3 (LLM rate limited (HTTP 429), retrying in 2 s)',
    ],
    [
      'second attempt, running',
      {
        ...pruned,
        phase: 'summary',
        step: 'full(keep 2)',
        summaryAttempt: { attempt: 2, maximumAttempts: 3, lastFailure: 'HTTP 500', nextAttemptAt: null },
      },
      'compaction #3 (check): prune 28,758 → 14,900 · summary (full(keep 2)) attempt 2/3 (HTTP 500)',
    ],
    [
      'commit',
      { ...pruned, phase: 'commit', tokensAfter: 7_400 },
      'compaction #3 (check): prune 28,758 → 14,900 · committing 7,400…',
    ],
    [
      'committed',
      { ...pruned, phase: 'done', tokensAfter: 7_400, outcome: { status: 'committed', reason: null } },
      'compaction #3 (check): prune 28,758 → 14,900 · committed → 7,400 (saved 74 %)',
    ],
    [
      'rolled back',
      {
        ...pruned,
        phase: 'done',
        tokensAfter: 28_758,
        outcome: { status: 'rolled_back', reason: 'LLM_SERVER_ERROR: HTTP 500' },
      },
      'compaction #3 (check): prune 28,758 → 14,900 · rolled back: LLM_SERVER_ERROR: HTTP 500',
    ],
  ])('%s', (_name, change, line) => {
    expect(formatCompactionProgress({ ...base, ...change }, 1_000_000)).toBe(line);
  });
});
