import { describe, expect, it } from 'vitest';
import { buildSummaryItem, SUMMARY_MESSAGE_PREFIX } from '../../../src/context/post-compaction';
import { editedSummaryItem, summaryText } from '../../../src/context/summary-edit';
import { fakeTokenizer } from '../../support/items-factory';

const proposal = buildSummaryItem({
  text: 'The user asked for X; Y was done.',
  id: 'c1:summary:full',
  summarizer: 'llm',
  budgetTokens: 200,
  summarized: [],
  tokenizer: fakeTokenizer,
});
const withRound = { ...proposal, round: 7 };

/** The tokens of a summary item whose text is `text` (prefix line and framing included). */
const itemTokens = (text: string): number =>
  buildSummaryItem({
    text,
    id: 'x',
    summarizer: 'llm',
    budgetTokens: 1e9,
    summarized: [],
    tokenizer: fakeTokenizer,
  }).tokens;

const edit = (text: string, budgetTokens = 200) =>
  editedSummaryItem({
    proposal: withRound,
    text,
    id: 'c1:summary:edit:e1',
    budgetTokens,
    tokenizer: fakeTokenizer,
  });

describe('a reviewer’s edited summary', () => {
  it('shows the summary without its prefix line, and takes it back the same way', () => {
    expect(summaryText(proposal)).toBe('The user asked for X; Y was done.');
    const pasted = edit(`${SUMMARY_MESSAGE_PREFIX}\nThe user asked for Z.`);
    expect(pasted.ok && pasted.item.message.content).toBe(`${SUMMARY_MESSAGE_PREFIX}\nThe user asked for Z.`);
  });

  it('becomes a new item with the proposal’s round and label, counted as a summary is', () => {
    const r = edit('  The user asked for Z.\n');
    expect(r).toEqual({
      ok: true,
      item: expect.objectContaining({
        id: 'c1:summary:edit:e1',
        type: 'COMPACTION_SUMMARY',
        summarizer: 'llm',
        round: 7,
        tokens: itemTokens('The user asked for Z.'),
      }),
    });
  });

  it.each([
    ['empty', ''],
    ['blank', ' \n\t '],
    ['the prefix line alone', SUMMARY_MESSAGE_PREFIX],
  ])('is refused when %s', (_, text) => {
    expect(edit(text)).toEqual({ ok: false, reason: 'the edited summary is empty' });
  });

  it('is refused one token over the budget, never cut; at the budget it is taken', () => {
    const text = 'word '.repeat(60).trim();
    const tokens = itemTokens(text);
    expect(edit(text, tokens)).toMatchObject({ ok: true, item: { tokens } });
    const over = edit(text, tokens - 1);
    expect(over).toEqual({
      ok: false,
      reason: `the edited summary is ${tokens} tokens, over the summary budget of ${tokens - 1} (summaryMaxTokens, summaryRoomRatio)`,
    });
  });
});
