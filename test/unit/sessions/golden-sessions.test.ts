/**
 * Golden tests on the real recorded sessions (../shared/data/sessions, read in place): import,
 * count with the real tokenizer, plan a compaction at small windows, check its invariants, and
 * compare a compact table of the outcome with the recorded one.
 */
import { describe, expect, it } from 'vitest';
import { parseCompactionConfig, targetTokens } from '../../../src/context/config';
import { exportSession, importSession } from '../../../src/importers';
import type { ContextItem } from '../../../src/context/items';
import { finishCompaction, planCompaction } from '../../../src/context/compaction-plan';
import { planExtractiveSummary, planSummaryItem } from '../../../src/context/compaction-summary';
import { countRounds, headerIds } from '../../../src/context/segments';
import { detectTaskType } from '../../../src/context/task-type';
import { pairToolCalls, unansweredCalls } from '../../../src/context/tool-pairs';
import { sumTokens } from '../../../src/context/tool-blocks';
import { createTokenCounter } from '../../../src/tokens';
import { contextText, touchedPaths } from '../../../src/eval/metrics';
import { itemsFactory } from '../../support/items-factory';
import {
  needsSharedSessions,
  parseSessionText,
  readSession,
  SHARED_SESSIONS,
  type SharedSession,
} from '../../support/sessions';

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

describe.each(SHARED_SESSIONS)('%s', needsSharedSessions, (name) => {
  it('round-trips through import and export', () => {
    const { text, session } = load(name);
    expect(parseSessionText(name, exportSession(session))).toStrictEqual(parseSessionText(name, text));
  });

  it.each([8_000, 16_000, 32_000])(
    'window %d: the compaction plan keeps the header, the pairs and every touched path, under the target',
    (window) => {
      const { items } = load(name);
      const config = parseCompactionConfig({ maxContextTokens: window, summarizer: 'extractive' });
      const header = headerIds(items);
      const plan = planCompaction({
        items,
        config,
        tokenizer: o200k,
        trigger: 'manual',
        compactionId: 'golden',
      });
      const summary =
        plan.toSummarize.length > 0
          ? planSummaryItem(plan, planExtractiveSummary(plan, o200k), {
              compactionId: 'golden',
              summarizer: 'extractive',
              tokenizer: o200k,
            })
          : null;
      const out = finishCompaction(plan, summary);
      for (const id of header)
        expect(
          out.some((i) => i.id === id),
          `header ${id}`,
        ).toBe(true);
      expect(brokenPairs(out)).toStrictEqual(brokenPairs(items));
      if (plan.toSummarize.length > 0) expect(sumTokens(out)).toBeLessThan(sumTokens(items));
      if (sumTokens(items) > targetTokens(config)) {
        expect(sumTokens(out)).toBeLessThanOrEqual(targetTokens(config));
      }
      const text = contextText(out);
      for (const path of touchedPaths(items)) expect(text.includes(path), path).toBe(true);
    },
  );
});

/** One line per session and window: the steps of the plan and what it left. */
function table(name: SharedSession, window: number): string {
  const { items } = load(name);
  const config = parseCompactionConfig({ maxContextTokens: window });
  const plan = planCompaction({
    items,
    config,
    tokenizer: o200k,
    trigger: 'precheck',
    compactionId: 'golden',
  });
  const summary =
    plan.toSummarize.length > 0
      ? { ...itemsFactory(o200k, 'summary-').summary('summary'), tokens: plan.summaryBudget }
      : null;
  const out = finishCompaction(plan, summary);
  const s = plan.stats;
  return [
    `${name} @${window}: ${items.length} items, ${countRounds(items)} rounds, ${sumTokens(items)} tokens, ` +
      `task ${plan.taskType}, target ${plan.targetTokens}`,
    `  steps ${plan.steps.map((step) => `${step.name} → ${step.tokensAfter}`).join(', ') || '(none)'}`,
    `  blocks kept ${s.toolBlocksKept} dropped ${s.toolBlocksDropped}; cut calls ${s.toolCallsTruncated} ` +
      `results ${s.toolResultsTruncated}; summarize ${plan.toSummarize.length} items, budget ${plan.summaryBudget}; ` +
      `carried ${plan.carried.added.map((i) => `${i.type}:${i.tokens}`).join(' ')}`,
    `  → ${out.length} items, ${sumTokens(out)} tokens (summary at its budget)`,
  ].join('\n');
}

describe('golden outcome table', needsSharedSessions, () => {
  it('matches the recorded table', () => {
    const text = SHARED_SESSIONS.flatMap((name) => [8_000, 16_000, 32_000].map((w) => table(name, w))).join(
      '\n',
    );
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
