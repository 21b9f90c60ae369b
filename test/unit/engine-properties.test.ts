/**
 * The invariants of DESIGN.md §5 as properties over generated conversations: header items
 * survive; tool pairs are never split; tokens never grow; the rules are idempotent; order is kept.
 * Checked for selectivePrune, every strategy + buildPostCompactionContext, and dropOldestRounds.
 *
 * Items are counted with the factory's cheap fake tokenizer (one token per 4 characters) so that
 * hundreds of runs take well under a second each.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCompactionConfig, type CompactionConfig } from '../../src/context/config';
import type { CompactionSummaryItem, ContextItem } from '../../src/context/items';
import { buildPostCompactionContext, dropOldestRounds } from '../../src/context/post-compaction';
import { headerIds } from '../../src/context/segments';
import { selectivePrune } from '../../src/context/selective-prune';
import { planStrategy } from '../../src/context/strategies';
import { STRATEGIES } from '../../src/context/task-type';
import { countItemTokens } from '../../src/context/token-accounting';
import { pairToolCalls, unansweredCalls } from '../../src/context/tool-pairs';
import { sumTokens } from '../../src/context/tool-blocks';
import { conversation, fakeTokenizer, itemsFactory } from '../support/items-factory';

const NUM_RUNS = 200;

// ---- generated conversations ----

type Event =
  | { kind: 'user'; tokens: number; meta: boolean; pinned: boolean }
  | { kind: 'assistant'; tokens: number; pinned: boolean }
  | {
      kind: 'block';
      calls: { tool: number; argTokens: number; resultTokens: number; answered: boolean; reuseId: boolean }[];
      pinnedCall: boolean;
      pinnedResult: boolean;
    }
  | { kind: 'orphan'; tokens: number }
  | { kind: 'skill'; tokens: number; metadata: boolean }
  | { kind: 'note'; type: 'MEMORY' | 'TASK_LIST' | 'ARTIFACT_TRAIL'; tokens: number }
  | { kind: 'summary'; tokens: number };

const TOOLS = ['bash', 'read_file', 'write_file', 'grep', 'send_email'];
// Small messages and large ones (over the default cut thresholds), not fast-check's bias to small numbers.
const tokens = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 60 }) },
  { weight: 1, arbitrary: fc.integer({ min: 400, max: 1500 }) },
);
/** True with probability `p` (weights, not a biased number generator: fast-check favours 0). */
const flag = (p: number) =>
  fc.oneof(
    { weight: Math.round(100 * p), arbitrary: fc.constant(true) },
    { weight: Math.round(100 * (1 - p)), arbitrary: fc.constant(false) },
  );

const event: fc.Arbitrary<Event> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('user' as const), tokens, meta: flag(0.2), pinned: flag(0.1) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('assistant' as const), tokens, pinned: flag(0.05) }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('block' as const),
      calls: fc.array(
        fc.record({
          tool: fc.integer({ min: 0, max: TOOLS.length - 1 }),
          argTokens: tokens,
          resultTokens: tokens,
          answered: flag(0.9),
          reuseId: flag(0.15),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      pinnedCall: flag(0.05),
      pinnedResult: flag(0.05),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('orphan' as const), tokens }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('skill' as const), tokens, metadata: fc.boolean() }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('note' as const),
      type: fc.constantFrom('MEMORY' as const, 'TASK_LIST' as const, 'ARTIFACT_TRAIL' as const),
      tokens,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('summary' as const), tokens }) },
);

/** Text of about `n` fake tokens. */
const text = (n: number, seed: number): string => `w${seed} `.padEnd(Math.max(4, 4 * n), 'abcd');

function materialize(events: readonly Event[], withHeader: boolean): ContextItem[] {
  const f = itemsFactory(fakeTokenizer);
  const items: ContextItem[] = [];
  if (withHeader) {
    items.push(f.system(text(50, 0)));
    items.push(f.tools([{ type: 'function', function: { name: 'bash', description: 'run' } }]));
  }
  let callNo = 0;
  events.forEach((e, i) => {
    switch (e.kind) {
      case 'user':
        items.push(f.user(text(e.tokens, i), { isMeta: e.meta, pinned: e.pinned }));
        break;
      case 'assistant':
        items.push(f.assistant(text(e.tokens, i), { pinned: e.pinned }));
        break;
      case 'block': {
        const specs = e.calls.map((c) => ({
          name: TOOLS[c.tool] ?? 'bash',
          // Some ids repeat across turns, as in the SWE-agent demonstrations.
          id: c.reuseId ? 'call_reused' : `call_${++callNo}`,
          args: JSON.stringify({ path: `src/f${i}.ts`, command: text(c.argTokens, i) }),
        }));
        items.push(f.calls(specs, null, { pinned: e.pinnedCall }));
        e.calls.forEach((c, j) => {
          if (c.answered)
            items.push(f.result(specs[j]?.id ?? '', text(c.resultTokens, i), { pinned: e.pinnedResult }));
        });
        break;
      }
      case 'orphan':
        items.push(f.result(`call_missing_${i}`, text(e.tokens, i)));
        break;
      case 'skill':
        items.push(f.skill(text(e.tokens, i), e.metadata ? 'SKILL_METADATA' : 'SKILL_PROMPT'));
        break;
      case 'note':
        items.push(f.note(e.type, text(e.tokens, i)));
        break;
      case 'summary':
        items.push(f.summary(text(e.tokens, i)));
        break;
    }
  });
  return conversation(items);
}

const conversations = fc
  .tuple(fc.array(event, { maxLength: 80, size: 'large' }), fc.boolean())
  .map(([events, withHeader]) => materialize(events, withHeader));

/** Defaults, or a scaled-down configuration where every threshold is within reach. */
const configs: fc.Arbitrary<CompactionConfig> = fc.oneof(
  fc.constant(parseCompactionConfig({})),
  fc
    .record({
      toolBlocksKeepRecent: fc.integer({ min: 0, max: 6 }),
      previewTokens: fc.integer({ min: 1, max: 300 }),
      // Small margins too: a preview plus its marker can then be over the threshold itself.
      callMargin: fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 400 })),
      resultMargin: fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 400 })),
      protectedRounds: fc.integer({ min: 0, max: 13 }),
      toolKeep: fc.integer({ min: 0, max: 4 }),
      dialogueKeep: fc.integer({ min: 0, max: 6 }),
      keepRecentRounds: fc.integer({ min: 0, max: 3 }),
      slidingWindowUserToolMessages: fc.integer({ min: 0, max: 5 }),
      slidingWindowAssistantMessages: fc.integer({ min: 0, max: 6 }),
      incrementalChunkRounds: fc.integer({ min: 1, max: 6 }),
      strategyKeepRecentOthers: fc.integer({ min: 0, max: 6 }),
    })
    .map((r) =>
      parseCompactionConfig({
        toolBlocksKeepRecent: r.toolBlocksKeepRecent,
        previewTokens: r.previewTokens,
        toolCallThreshold: r.previewTokens + r.callMargin,
        toolResultThreshold: r.previewTokens + r.resultMargin,
        protectedRounds: r.protectedRounds,
        keepRecentRounds: r.keepRecentRounds,
        slidingWindowUserToolMessages: r.slidingWindowUserToolMessages,
        slidingWindowAssistantMessages: r.slidingWindowAssistantMessages,
        incrementalChunkRounds: r.incrementalChunkRounds,
        strategyKeepRecentOthers: r.strategyKeepRecentOthers,
        selectiveRules: {
          TOOL_RESULT: { strategy: 'truncate', keepRecent: r.toolKeep, priority: 2 },
          USER_MESSAGE: { strategy: 'truncate', keepRecent: r.dialogueKeep, priority: 3 },
          ASSISTANT_MESSAGE: { strategy: 'truncate', keepRecent: r.dialogueKeep, priority: 3 },
          MEMORY: { strategy: 'drop', priority: 0 },
        },
      }),
    ),
);

/** Where the target sits: a share of the context's tokens (0: prune everything that may go). */
const targetShare = fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1.2, noNaN: true }));

// ---- invariants ----

/** An output item's identity in the input: itself, or for a cut form made from it, its source. */
function originIn(input: readonly ContextItem[]): (item: ContextItem) => string {
  const ids = new Set(input.map((item) => item.id));
  return (item) => (ids.has(item.id) ? item.id : (item.sourceId ?? item.id));
}

/** Header and pinned items of the input are in the output, unchanged (the same objects). */
function expectProtectedKept(input: readonly ContextItem[], output: readonly ContextItem[]): void {
  const header = headerIds(input);
  const out = new Map(output.map((item) => [item.id, item]));
  for (const item of input) {
    if (header.has(item.id) || item.pinned) expect(out.get(item.id), `${item.id} (${item.type})`).toBe(item);
  }
}

/** No call loses its result and no result its call, beyond what the input already lacked. */
function expectPairsKept(input: readonly ContextItem[], output: readonly ContextItem[]): void {
  const before = pairToolCalls(input);
  const after = pairToolCalls(output);
  const byId = new Map(output.map((item) => [item.id, item]));
  const origin = originIn(input);
  const unanswered = new Set(unansweredCalls(before).map((p) => `${p.callItemId}#${p.callIndex}`));
  for (const pair of unansweredCalls(after)) {
    const call = byId.get(pair.callItemId);
    expect(
      unanswered.has(`${call ? origin(call) : pair.callItemId}#${pair.callIndex}`),
      'a call lost its result',
    ).toBe(true);
  }
  const orphans = new Set(before.orphanResults);
  for (const id of after.orphanResults) {
    const result = byId.get(id);
    expect(orphans.has(result ? origin(result) : id), 'a result lost its call').toBe(true);
  }
}

/** `sub` (by origin) appears in `items` in the same relative order. */
function expectSubsequence(items: readonly ContextItem[], sub: readonly ContextItem[]): void {
  const position = new Map(items.map((item, i) => [item.id, i]));
  const origin = originIn(items);
  const positions = sub.map((item) => position.get(origin(item)));
  expect(
    positions.every((p) => p !== undefined),
    'an item that was not in the input',
  ).toBe(true);
  const numbers = positions as number[];
  expect(
    numbers.every((p, i) => i === 0 || (numbers[i - 1] as number) < p),
    'order changed',
  ).toBe(true);
}

function summaryOf(tokens: number): CompactionSummaryItem {
  return { ...itemsFactory(fakeTokenizer, 'summary-').summary('summary'), tokens };
}

describe('selectivePrune invariants (DESIGN.md §5)', () => {
  it('keeps header and pinned items, never splits a pair, never grows, keeps order, is idempotent', () => {
    fc.assert(
      fc.property(conversations, configs, targetShare, (items, config, share) => {
        const target = Math.floor(share * sumTokens(items));
        const once = selectivePrune(items, config, fakeTokenizer, target);
        expectProtectedKept(items, once.items);
        expectPairsKept(items, once.items);
        expect(once.tokensBefore).toBe(sumTokens(items));
        expect(once.tokensAfter).toBe(sumTokens(once.items));
        expect(once.tokensAfter).toBeLessThanOrEqual(once.tokensBefore);
        expectSubsequence(items, once.items);
        for (const item of once.newItems) {
          expect(item.sourceId).toBeDefined();
          expect(item.tokens).toBe(countItemTokens(item, fakeTokenizer));
          expect(item.tokens).toBeLessThan(items.find((i) => i.id === item.sourceId)?.tokens ?? NaN);
          expect(once.items).toContain(item);
        }
        // The rules applied to their own output change nothing.
        const twice = selectivePrune(once.items, config, fakeTokenizer, target);
        expect(twice.items).toStrictEqual(once.items);
        expect(twice.newItems).toStrictEqual([]);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('strategy + buildPostCompactionContext invariants (DESIGN.md §5)', () => {
  it.each(STRATEGIES)('%s', (strategy) => {
    fc.assert(
      fc.property(conversations, configs, targetShare, fc.boolean(), (raw, config, share, pruneFirst) => {
        const items = pruneFirst
          ? selectivePrune(raw, config, fakeTokenizer, Math.floor(share * sumTokens(raw))).items
          : raw;
        const plan = planStrategy(strategy, items, config);
        // Every item in exactly one set.
        for (const item of items) {
          const n = [plan.keepIds, plan.summarizeIds, plan.replaceIds].filter((s) => s.has(item.id)).length;
          expect(n, item.id).toBe(1);
        }
        const summarized = items.filter((i) => plan.summarizeIds.has(i.id) || plan.replaceIds.has(i.id));
        if (plan.summarizeIds.size === 0) expect(plan.replaceIds.size).toBe(0);
        const summary = summaryOf(Math.min(10, sumTokens(summarized)));
        const out = buildPostCompactionContext(items, plan, summary);
        const rest = out.filter((i) => i !== summary);

        expectProtectedKept(items, rest);
        expectPairsKept(items, rest);
        expect(sumTokens(out)).toBe(sumTokens(items) - sumTokens(summarized) + summary.tokens);
        expect(sumTokens(out)).toBeLessThanOrEqual(sumTokens(items));
        // Header first (in its order), then the summary, then the rest in its order.
        const header = headerIds(items);
        const head = out.slice(0, out.indexOf(summary));
        expect(head.every((i) => header.has(i.id))).toBe(true);
        expect(out.slice(out.indexOf(summary) + 1).some((i) => header.has(i.id))).toBe(false);
        expectSubsequence(items, head);
        expectSubsequence(items, out.slice(out.indexOf(summary) + 1));
        expect(new Set(rest.map((i) => i.id))).toStrictEqual(plan.keepIds);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('dropOldestRounds invariants', () => {
  it('keeps header, pinned items and the pairs, never grows, keeps order', () => {
    fc.assert(
      fc.property(conversations, targetShare, (items, share) => {
        const out = dropOldestRounds(items, Math.floor(share * sumTokens(items)));
        expectProtectedKept(items, out);
        expectPairsKept(items, out);
        expect(sumTokens(out)).toBeLessThanOrEqual(sumTokens(items));
        expectSubsequence(items, out);
        const newest = Math.max(0, ...items.map((i) => i.round));
        for (const item of items.filter((i) => i.round === newest && newest > 0)) expect(out).toContain(item);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
