/**
 * Golden tests on the real recorded sessions (../shared/data/sessions, read in place): import,
 * count with the real tokenizer, prune and run every strategy of the detected chain with a small
 * window, and compare a compact table of the outcome with the recorded one.
 */
import { describe, expect, it } from 'vitest';
import { parseCompactionConfig, targetTokens } from '../../src/context/config';
import { exportSession, importSession } from '../../src/context/importers';
import type { ContextItem } from '../../src/context/items';
import { buildPostCompactionContext, SUMMARY_MESSAGE_PREFIX } from '../../src/context/post-compaction';
import { countRounds, headerIds } from '../../src/context/segments';
import { selectivePrune } from '../../src/context/selective-prune';
import { planStrategy } from '../../src/context/strategies';
import { detectTaskType, strategyChain, type StrategyName } from '../../src/context/task-type';
import { pairToolCalls, unansweredCalls } from '../../src/context/tool-pairs';
import { sumTokens } from '../../src/context/tool-blocks';
import { createTokenCounter } from '../../src/tokens';
import { itemsFactory } from '../support/items-factory';
import { parseSessionText, readSession, SHARED_SESSIONS, type SharedSession } from '../support/sessions';

const o200k = createTokenCounter({ encoding: 'o200k_base' });

const sessions = new Map<
  SharedSession,
  { text: string; items: ContextItem[]; session: ReturnType<typeof importSession> }
>();
function load(name: SharedSession) {
  let entry = sessions.get(name);
  if (!entry) {
    const text = readSession(name);
    const session = importSession(text, { tokenizer: o200k, fileName: name });
    entry = { text, items: session.items, session };
    sessions.set(name, entry);
  }
  return entry;
}

/** Unanswered calls and orphan results, by the id of the item they came from, to compare before and after. */
function brokenPairs(items: readonly ContextItem[]): string[] {
  const pairs = pairToolCalls(items);
  const byId = new Map(items.map((item) => [item.id, item]));
  const origin = (id: string): string => byId.get(id)?.sourceId ?? id;
  return [
    ...unansweredCalls(pairs).map((p) => `call:${origin(p.callItemId)}#${p.callIndex}`),
    ...pairs.orphanResults.map((id) => `result:${origin(id)}`),
  ].sort();
}

describe.each(SHARED_SESSIONS)('%s', (name) => {
  it('round-trips through import and export', () => {
    const { text, session } = load(name);
    expect(parseSessionText(name, exportSession(session))).toStrictEqual(parseSessionText(name, text));
  });

  it.each([16_000, 32_000])(
    'window %d: prune and every strategy of the chain keep the invariants',
    (window) => {
      const { items } = load(name);
      const config = parseCompactionConfig({ maxContextTokens: window });
      const header = headerIds(items);
      const pruned = selectivePrune(items, config, o200k, targetTokens(config));
      expect(pruned.tokensAfter).toBeLessThanOrEqual(pruned.tokensBefore);
      expect(brokenPairs(pruned.items)).toStrictEqual(brokenPairs(items));
      for (const id of header) expect(pruned.items.some((i) => i.id === id)).toBe(true);

      const chain: StrategyName[] = [...strategyChain(detectTaskType(pruned.items)), 'full'];
      for (const strategy of chain) {
        const plan = planStrategy(strategy, pruned.items, config);
        const summary = itemsFactory(o200k, `summary-${strategy}-`).summary(
          `${SUMMARY_MESSAGE_PREFIX}\nsummary`,
        );
        const out = buildPostCompactionContext(pruned.items, plan, summary);
        for (const id of header) expect(plan.keepIds.has(id), `${strategy} keeps ${id}`).toBe(true);
        expect(brokenPairs(out)).toStrictEqual(brokenPairs(pruned.items));
        if (plan.summarizeIds.size > 0) expect(sumTokens(out)).toBeLessThan(sumTokens(pruned.items));
      }
    },
  );
});

/** One line per session and window: what prune and each strategy did. */
function table(name: SharedSession, window: number): string {
  const { items } = load(name);
  const config = parseCompactionConfig({ maxContextTokens: window });
  const pruned = selectivePrune(items, config, o200k, targetTokens(config));
  const type = detectTaskType(pruned.items);
  const s = pruned.stats;
  const lines = [
    `${name} @${window}: ${items.length} items, ${countRounds(items)} rounds, ${sumTokens(items)} tokens, task ${detectTaskType(items)}`,
    `  prune → ${pruned.items.length} items, ${pruned.tokensAfter} tokens; blocks kept ${s.toolBlocksKept} dropped ${s.toolBlocksDropped}; ` +
      `cut calls ${s.toolCallsTruncated} results ${s.toolResultsTruncated}; dropped ${JSON.stringify(s.itemsDropped)}; rules ${s.rulesApplied.join(',')}`,
  ];
  for (const strategy of [...strategyChain(type), 'full'] as StrategyName[]) {
    const plan = planStrategy(strategy, pruned.items, config);
    const summary = itemsFactory(o200k, 'summary-').summary(`${SUMMARY_MESSAGE_PREFIX}\nsummary`);
    const out = buildPostCompactionContext(pruned.items, plan, summary);
    const kept = pruned.items.filter((i) => plan.keepIds.has(i.id));
    lines.push(
      `  ${strategy}: keep ${plan.keepIds.size} (${sumTokens(kept)} tokens), summarize ${plan.summarizeIds.size}, replace ${plan.replaceIds.size} → ${out.length} items, ${sumTokens(out)} tokens`,
    );
  }
  return lines.join('\n');
}

describe('golden outcome table', () => {
  it('matches the recorded table', () => {
    const text = SHARED_SESSIONS.flatMap((name) => [16_000, 32_000].map((w) => table(name, w))).join('\n');
    expect(text).toMatchSnapshot();
  });

  it('detects the kind of work of each session', () => {
    expect(SHARED_SESSIONS.map((name) => [name, detectTaskType(load(name).items)])).toMatchInlineSnapshot(`
      [
        [
          "pi-large-session.jsonl",
          "code",
        ],
        [
          "swe-agent-marshmallow-1867.traj",
          "code",
        ],
        [
          "swe-agent-function-calling-simple.traj",
          "code",
        ],
      ]
    `);
  });
});
