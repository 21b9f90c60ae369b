/**
 * `planOfferingRecall`: a compaction offers the recall tool once it commits, its definition paid
 * for in the header, unless the compacted context — filled back toward the goal — would then be
 * no smaller than the context was (the compaction would be skipped as no progress).
 */
import { describe, expect, it } from 'vitest';
import { finishCompaction } from '../../../src/context/compaction-plan';
import { planSummaryItem } from '../../../src/context/compaction-summary';
import { parseCompactionConfig } from '../../../src/context/config';
import type { ContextItem } from '../../../src/context/items';
import { planOfferingRecall } from '../../../src/context/recall-tool';
import { sumTokens } from '../../../src/context/tool-blocks';
import { createTokenCounter } from '../../../src/tokens';
import { conversation, itemsFactory, words } from '../../support/items-factory';

const o200k = createTokenCounter({ encoding: 'o200k_base' });

function compact(items: ContextItem[], window: number, trigger: 'manual' | 'check') {
  const input = {
    items,
    config: parseCompactionConfig({ maxContextTokens: window }),
    tokenizer: o200k,
    trigger,
    compactionId: 'c1',
  };
  const plan = planOfferingRecall(input, 'conv-1');
  const summary = planSummaryItem(plan, 'the round, summarized', {
    compactionId: 'c1',
    summarizer: 'llm',
    tokenizer: o200k,
  });
  return { plan, out: finishCompaction(plan, summary) };
}

const offersRecall = (items: readonly ContextItem[]) =>
  items.some((i) => i.type === 'TOOL_DEFINITIONS' && i.tools.some((t) => t.function.name === 'recall'));

describe('planOfferingRecall', () => {
  it('a manual compaction of a small conversation: no recall tool, and the context gets smaller', () => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.system('You are helpful.'),
      f.user(words(60, 'one')),
      f.assistant(words(250, 'only')),
    );
    const { out } = compact(items, 8000, 'manual');
    expect(offersRecall(out)).toBe(false);
    expect(sumTokens(out)).toBeLessThan(sumTokens(items));
  });

  it('a compaction from over the target offers it', () => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.system('You are helpful.'),
      Array.from({ length: 20 }, (_, i) => [f.user(words(100, `q${i}`)), f.assistant(words(300, `a${i}`))]),
    );
    const { out } = compact(items, 8000, 'check');
    expect(offersRecall(out)).toBe(true);
    expect(sumTokens(out)).toBeLessThanOrEqual(4000);
  });
});
