/**
 * `eval` (src/eval): the shared sessions replayed at four windows keep every invariant — this is
 * the CI gate of DESIGN.md §5 — and the judging itself catches each kind of breakage when a
 * compaction is built wrong on purpose.
 */
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { finishCompaction } from '../../src/context/compaction-plan';
import { planExtractiveSummary } from '../../src/context/compaction-summary';
import { parseCompactionConfig, targetTokens } from '../../src/context/config';
import type { ContextItem } from '../../src/context/items';
import { evaluate, parseWindows } from '../../src/cli/commands/eval';
import { UsageError } from '../../src/cli/client';
import { judgeCompaction, touchedPaths } from '../../src/eval/metrics';
import { markdownTable, textTable } from '../../src/eval/report';
import { replaySession } from '../../src/eval/replay';
import { createTokenCounter } from '../../src/tokens';
import { conversation, itemsFactory, words } from '../support/items-factory';
import { SESSIONS_DIR } from '../support/sessions';

const o200k = createTokenCounter({ encoding: 'o200k_base' });
/** Every session file of the shared directory (not only the ones named elsewhere). */
const files = readdirSync(SESSIONS_DIR)
  .filter((name) => /\.(jsonl|traj|json)$/.test(name))
  .map((name) => resolve(SESSIONS_DIR, name));

describe('eval on the shared sessions (the CI gate)', () => {
  it('keeps every invariant at 8k, 16k, 32k and 64k', async () => {
    const rows = await evaluate({
      files,
      windows: [8000, 16000, 32000, 64000],
      summarizer: 'extractive',
      model: 'gpt-4o',
      peers: true,
    });
    expect(rows).toHaveLength(files.length * 4);
    expect(rows.flatMap((r) => r.violations.map((v) => `${r.session} @ ${r.window}: ${v}`))).toEqual([]);
    // Not vacuous: the large session compacts at every window, and what it checks is there.
    for (const row of rows.filter((r) => r.session === 'pi-large-session.jsonl')) {
      expect(row.compactions, `${row.window}`).toBeGreaterThan(0);
      expect(row.pathsChecked).toBeGreaterThan(0);
      expect(row.pathsMissing).toBe(0);
      expect(row.fillChecked).toBeGreaterThan(0);
      expect(row.filled).toBe(row.fillChecked);
      expect(row.after.median).toBeGreaterThan(0.35);
      expect(row.after.max).toBeLessThanOrEqual(0.5);
    }
    expect(textTable(rows)).toContain('pi-large-session.jsonl');
    expect(markdownTable(rows).split('\n')).toHaveLength(rows.length + 2);
  });
});

/** A session of tool rounds touching files, big enough to compact at a 3,000-token window. */
function session(): ContextItem[] {
  const f = itemsFactory(o200k);
  const items: ContextItem[] = [f.system('You are a coding agent.'), f.user('Fix the tax rounding.')];
  for (let i = 0; i < 12; i++) {
    items.push(...f.block('read_file', { path: `src/m${i}.ts` }, words(300, `code${i}`)));
    items.push(f.assistant(`Module ${i} rounds per line.`));
    items.push(f.user(`Now look at module ${i + 1}.`));
  }
  return conversation(items);
}

describe('the judging catches what a wrong compaction does', () => {
  const config = parseCompactionConfig({ maxContextTokens: 3000, summarizer: 'extractive' });
  const summarize = async (plan: Parameters<typeof planExtractiveSummary>[0]) => ({
    text: planExtractiveSummary(plan, o200k),
    summarizer: 'extractive' as const,
  });

  it('a right compaction passes', async () => {
    const items = session();
    const replay = await replaySession({ items, config, tokenizer: o200k, summarize });
    expect(replay.compactions.length).toBeGreaterThan(0);
    const judged = replay.compactions.map((c) => judgeCompaction(c, items, targetTokens(config)));
    expect(judged.flatMap((j) => [...j.pathsMissing, ...j.headerLost, ...j.probesMissing])).toEqual([]);
    expect(judged.some((j) => j.overTarget || j.underFilled)).toBe(false);
    expect(replay.requests.every((r) => r.orphaned === 0 && r.tokens <= 3000)).toBe(true);
  });

  it('a compaction that drops the carried state and the latest tool block: paths missing, header lost, results orphaned', async () => {
    const items = session();
    const replay = await replaySession({
      items,
      config,
      tokenizer: o200k,
      summarize,
      // Builds the context, then throws away the carried state, the task and the last tool block.
      finish: (plan, summary) => {
        const out = finishCompaction(plan, summary);
        const lastCall = [...out]
          .reverse()
          .find((i) => i.type === 'ASSISTANT_MESSAGE' && i.message.tool_calls);
        return out.filter(
          (i) =>
            i.type !== 'ARTIFACT_TRAIL' && i !== lastCall && !(i.type === 'USER_MESSAGE' && i.round === 1),
        );
      },
    });
    const judged = replay.compactions.map((c) => judgeCompaction(c, items, targetTokens(config)));
    expect(judged.some((j) => j.pathsMissing.length > 0)).toBe(true);
    expect(judged.some((j) => j.headerLost.length > 0)).toBe(true);
    expect(replay.requests.some((r) => r.orphaned > 0)).toBe(true);
  });

  it('a compaction that keeps too much or too little: over the target, under-filled', async () => {
    const items = session();
    const over = await replaySession({
      items,
      config,
      tokenizer: o200k,
      summarize,
      finish: (plan, summary) => [...finishCompaction(plan, summary), ...plan.toSummarize.slice(-2)],
    });
    const judgedOver = over.compactions.map((c) => judgeCompaction(c, items, targetTokens(config)));
    expect(judgedOver.some((j) => j.overTarget)).toBe(true);
    const under = await replaySession({
      items,
      config,
      tokenizer: o200k,
      summarize,
      finish: (plan, summary) => finishCompaction(plan, summary).filter((i) => i.type !== 'TOOL_RESULT'),
    });
    const judgedUnder = under.compactions.map((c) => judgeCompaction(c, items, targetTokens(config)));
    expect(judgedUnder.some((j) => j.underFilled === true)).toBe(true);
  });

  it('reads touched paths off the raw tool calls', () => {
    expect(touchedPaths(session())).toEqual(Array.from({ length: 12 }, (_, i) => `src/m${i}.ts`));
  });
});

describe('the eval command’s input', () => {
  it.each([
    ['8000,16000', [8000, 16000]],
    [' 4096 ', [4096]],
  ])('--window %j → %j', (value, windows) => {
    expect(parseWindows(value)).toEqual(windows);
  });

  it.each(['8k', '100', '8000,', '-1', '1.5'])('--window %j is refused with a clear message', (value) => {
    expect(() => parseWindows(value)).toThrow(UsageError);
    expect(() => parseWindows(value)).toThrow(/--window takes whole numbers of tokens ≥ 256/);
  });

  it('names a file that cannot be read, and one that holds no session', async () => {
    const base = { windows: [8000], summarizer: 'extractive' as const, model: 'gpt-4o', peers: false };
    await expect(evaluate({ ...base, files: ['/nonexistent/session.jsonl'] })).rejects.toThrow(
      /cannot read \/nonexistent\/session\.jsonl/,
    );
    await expect(evaluate({ ...base, files: [] })).rejects.toThrow(/name at least one session file/);
  });
});
