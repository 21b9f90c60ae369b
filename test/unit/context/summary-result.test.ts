import { describe, expect, it } from 'vitest';
import { checkSummary, type SummaryCandidate, type SummaryCheck } from '../../../src/context/summary-result';

const ok = (summary: string): SummaryCheck => ({ type: 'ok', summary });
const bad = (reason: string) => expect.objectContaining({ type: 'invalid', reason });

describe('checkSummary (seed 003 failure reasons)', () => {
  it.each<[string, SummaryCandidate, unknown]>([
    ['content null', { content: null, finishReason: 'stop' }, bad('content_none')],
    ['content missing', { content: undefined }, bad('content_none')],
    ['empty content', { content: '', finishReason: 'stop' }, bad('empty_summary')],
    ['whitespace content', { content: ' \n\t ', finishReason: 'stop' }, bad('empty_summary')],
    ['length, content null', { content: null, finishReason: 'length' }, bad('max_tokens_no_content')],
    ['length, empty content', { content: '', finishReason: 'length' }, bad('max_tokens_no_content')],
    [
      'length wins over reasoning',
      { content: null, finishReason: 'length', reasoning: 'hm' },
      bad('max_tokens_no_content'),
    ],
    [
      'reasoning only, content null',
      { content: null, finishReason: 'stop', reasoning: 'thinking' },
      bad('thinking_only_no_content'),
    ],
    [
      'reasoning only, empty content',
      { content: '', reasoning: 'thinking' },
      bad('thinking_only_no_content'),
    ],
    ['blank reasoning is no reasoning', { content: null, reasoning: '  ' }, bad('content_none')],
    [
      'inline <think> only',
      { content: '<think>let me see</think>\n', finishReason: 'stop' },
      bad('thinking_only_no_content'),
    ],
    ['no tags', { content: 'Here is the summary: things happened.' }, bad('missing_summary_tags')],
    [
      'unclosed tag cut at length',
      { content: '<summary>The task is', finishReason: 'length' },
      bad('missing_summary_tags'),
    ],
    ['empty tags', { content: '<summary>  </summary>' }, bad('empty_summary')],
    ['tagged', { content: '<summary>\nTask: X\n</summary>' }, ok('Task: X')],
    ['tagged after analysis', { content: '<analysis>a</analysis>\n<summary>S</summary>' }, ok('S')],
    [
      'last block wins',
      { content: '<summary>draft</summary> revised: <summary>final</summary>' },
      ok('final'),
    ],
    ['tags any case', { content: '<SUMMARY>x</Summary>' }, ok('x')],
    ['inline <think> then summary', { content: '<think>plan</think><summary>done</summary>' }, ok('done')],
    ['reasoning beside a summary', { content: '<summary>y</summary>', reasoning: 'r' }, ok('y')],
    ['length but complete', { content: '<summary>z</summary>', finishReason: 'length' }, ok('z')],
  ])('%s', (_name, candidate, expected) => {
    expect(checkSummary(candidate)).toEqual(expected);
  });

  it('takes an untagged answer whole when tags are not required', () => {
    expect(checkSummary({ content: '  plain summary  ' }, { requireTags: false })).toEqual(
      ok('plain summary'),
    );
    expect(checkSummary({ content: '<summary>t</summary>' }, { requireTags: false })).toEqual(ok('t'));
    expect(checkSummary({ content: '' }, { requireTags: false })).toEqual(bad('empty_summary'));
  });

  it('explains every failure in one line', () => {
    const check = checkSummary({ content: null, finishReason: 'length' });
    expect(check.type === 'invalid' && check.detail).toMatch(/token limit/);
  });
});
