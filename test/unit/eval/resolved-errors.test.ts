/**
 * The open-errors item of the carried state goes when its errors are resolved: a later compaction
 * builds no new one. `eval` counted the old one as a lost header item (seen on nine real SWE-agent
 * trajectories, 11 times at 4k-16k: a failed edit redone later). It is a loss only while an
 * error is still open, which the carried-state probes check by its text. Made-up session.
 */
import { describe, expect, it } from 'vitest';
import { planExtractiveSummary } from '../../../src/context/compaction-summary';
import { parseCompactionConfig, targetTokens } from '../../../src/context/config';
import type { ContextItem } from '../../../src/context/items';
import { judgeCompaction } from '../../../src/eval/metrics';
import { replaySession } from '../../../src/eval/replay';
import { createTokenCounter } from '../../../src/tokens';
import { conversation, itemsFactory, words } from '../../support/items-factory';

const o200k = createTokenCounter({ encoding: 'o200k_base' });
const config = parseCompactionConfig({ maxContextTokens: 3000, summarizer: 'extractive' });
const summarize = async (plan: Parameters<typeof planExtractiveSummary>[0]) => ({
  text: planExtractiveSummary(plan, o200k),
  summarizer: 'extractive' as const,
});

/** Reads, a failed edit, more reads, the same edit done, more reads: compactions before and after. */
function session(failedEditStaysOpen: boolean): ContextItem[] {
  const f = itemsFactory(o200k);
  const items: ContextItem[] = [f.system('You are a coding agent.'), f.user('Fix the tax rounding.')];
  const read = (i: number) => f.block('read_file', { path: `src/m${i}.ts` }, words(300, `code${i}`));
  for (let i = 0; i < 4; i++) items.push(...read(i));
  items.push(...f.block('edit_file', { path: 'src/tax.ts' }, 'Error: old text not found in src/tax.ts'));
  for (let i = 4; i < 8; i++) items.push(...read(i));
  if (!failedEditStaysOpen) items.push(...f.block('edit_file', { path: 'src/tax.ts' }, 'Edited src/tax.ts.'));
  for (let i = 8; i < 16; i++) items.push(...read(i));
  items.push(f.assistant('Done.'));
  return conversation(items);
}

async function judged(failedEditStaysOpen: boolean) {
  const items = session(failedEditStaysOpen);
  const replay = await replaySession({ items, config, tokenizer: o200k, summarize });
  return replay.compactions.map((c) => ({
    judgement: judgeCompaction(c, items, targetTokens(config)),
    errorsBefore: c.before.some((i) => i.type === 'OPEN_ERRORS'),
    errorsAfter: c.after.some((i) => i.type === 'OPEN_ERRORS'),
  }));
}

describe('the open-errors item after its errors are resolved', () => {
  it('goes without counting as a lost header item', async () => {
    const all = await judged(false);
    // Not vacuous: a compaction carried the error, and a later one dropped the item.
    expect(all.some((c) => c.errorsAfter)).toBe(true);
    expect(all.some((c) => c.errorsBefore && !c.errorsAfter)).toBe(true);
    expect(all.flatMap((c) => [...c.judgement.headerLost, ...c.judgement.probesMissing])).toEqual([]);
  });

  it('stays while the error is open', async () => {
    const all = await judged(true);
    expect(all.some((c) => c.errorsAfter)).toBe(true);
    expect(all.every((c) => !c.errorsBefore || c.errorsAfter)).toBe(true);
    expect(all.flatMap((c) => [...c.judgement.headerLost, ...c.judgement.probesMissing])).toEqual([]);
  });
});
