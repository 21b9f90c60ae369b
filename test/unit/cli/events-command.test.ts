/** `durable-compaction events`: one line per event, starting with its cursor. */
import { describe, expect, it } from 'vitest';
import { eventLine } from '../../../src/cli/commands/events';

describe('eventLine', () => {
  it('starts with the cursor, then what the event says', () => {
    expect(
      eventLine({ type: 'compaction_meta', seq: 2, phase: 'summary_start', tokensBefore: 900 }, 14),
    ).toBe('14  · summary_start');
    expect(
      eventLine(
        {
          type: 'context_compacted',
          seq: 2,
          trigger: 'check',
          strategy: 'full(keep 1)',
          originalTokens: 28_758,
          newTokens: 7_400,
          savedRatio: 0.7427,
          summaryItemId: 's',
          summaryPreview: '',
        },
        15,
      ),
    ).toBe('15  ✓ compacted #2 (check, full(keep 1)): 28,758 → 7,400 tokens, saved 74%');
    expect(eventLine({ type: 'cooldown_ended' }, 16)).toBe('16  ▶ cooldown over');
  });
});
