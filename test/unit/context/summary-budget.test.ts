/**
 * The summary's budget (`summaryBudgetFor`): the configured size within its share of the room;
 * with previous summaries to merge, room for them and something new, bounded, so that summaries
 * that fill their budget do not grow it at every compaction.
 */
import { describe, expect, it } from 'vitest';
import { summaryBudgetFor } from '../../../src/context/compaction-plan';
import { parseCompactionConfig } from '../../../src/context/config';

const config = parseCompactionConfig({ maxContextTokens: 32_000 });

describe('summaryBudgetFor', () => {
  it.each([
    // room, previous summaries' tokens → budget
    [7000, 0, 1000], // summaryMaxTokens
    [2000, 0, 600], // 30 % of the room
    [500, 0, 200], // never under 200 …
    [150, 0, 150], // … but never over the room
    [7000, 1200, 1400], // the previous summary and 200 more
    [7000, 5000, 2000], // at most twice summaryMaxTokens
    [3000, 2500, 1500], // and half the room
  ])('room %d, previous %d → %d', (room, previous, budget) => {
    expect(summaryBudgetFor(config, room, previous)).toBe(budget);
  });

  it('summaries that fill their budget stop growing it', () => {
    let previous = 0;
    const budgets: number[] = [];
    for (let i = 0; i < 20; i++) {
      previous = summaryBudgetFor(config, 7000, previous);
      budgets.push(previous);
    }
    expect(budgets.slice(0, 3)).toEqual([1000, 1200, 1400]);
    expect(Math.max(...budgets)).toBe(2 * config.summaryMaxTokens);
  });
});
