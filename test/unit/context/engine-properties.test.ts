/**
 * The invariants of DESIGN.md §5 as properties over generated conversations: header items
 * survive; tool pairs are never split; tokens never grow; the rules are idempotent; order is kept;
 * a pending tool call and the current user message are never summarized; every tool result
 * reaches the next request with its call; no request goes over the window. Checked for
 * selectivePrune, planCompaction + finishCompaction, dropOldestRounds, and whole replays with
 * compactions forced at random points (between a reply's tool calls and their results too).
 *
 * Items are counted with the factory's cheap fake tokenizer (one token per 4 characters) so that
 * hundreds of runs take well under a second each.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCompactionConfig, type CompactionConfig } from '../../../src/context/config';
import { finishCompaction, planCompaction } from '../../../src/context/compaction-plan';
import { planExtractiveSummary } from '../../../src/context/compaction-summary';
import type { CompactionSummaryItem, ContextItem } from '../../../src/context/items';
import { MIN_PREVIEW_TOKENS, planCut } from '../../../src/context/item-cuts';
import { dropOldestRounds } from '../../../src/context/post-compaction';
import { headerIds, headerRoles, isRoundStart } from '../../../src/context/segments';
import { selectivePrune } from '../../../src/context/selective-prune';
import { countItemTokens } from '../../../src/context/token-accounting';
import type { TriggerKind } from '../../../src/context/triggers';
import { replaySession } from '../../../src/eval/replay';
import { pairToolCalls, unansweredCalls } from '../../../src/context/tool-pairs';
import { sumTokens } from '../../../src/context/tool-blocks';
import { conversation, fakeTokenizer, itemsFactory } from '../../support/items-factory';

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
  // The input may hold a cut form already: a shorter cut of it names the original as its source.
  const formOf = new Map(input.flatMap((item) => (item.sourceId ? [[item.sourceId, item.id] as const] : [])));
  return (item) => {
    if (ids.has(item.id) || item.sourceId === undefined) return item.id;
    return ids.has(item.sourceId) ? item.sourceId : (formOf.get(item.sourceId) ?? item.sourceId);
  };
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

/** The latest assistant message's tool block, when it calls tools: the ids of its call and results. */
function latestBlock(items: readonly ContextItem[]): string[] {
  const pairs = pairToolCalls(items);
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as ContextItem;
    if (item.type !== 'ASSISTANT_MESSAGE') continue;
    const calls = pairs.byCall.get(item.id) ?? [];
    if (calls.length === 0) return [];
    return [item.id, ...calls.flatMap((p) => (p.resultItemId ? [p.resultItemId] : []))];
  }
  return [];
}

/**
 * The newest real user message, when the header and it fit the window (the header as the
 * compaction has it, with its new carried state, when given).
 */
function currentMessage(items: readonly ContextItem[], window: number, header?: number): ContextItem | null {
  const headerTokens = header ?? sumTokens(items.filter((_, i) => headerRoles(items)[i] !== undefined));
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as ContextItem;
    if (isRoundStart(item)) return headerTokens + item.tokens <= window ? item : null;
  }
  return null;
}

/** The compacted context keeps what may not be summarized: the latest tool block, the current message. */
function expectNothingPendingLost(
  before: readonly ContextItem[],
  after: readonly ContextItem[],
  window: number,
  headerTokens?: number,
): void {
  const origin = originIn(before);
  const kept = new Set(after.map(origin));
  const [call, ...results] = latestBlock(before);
  const at = before.findIndex((i) => i.id === call);
  const missing = before.some(
    (i) =>
      i.id === call && i.type === 'ASSISTANT_MESSAGE' && (i.message.tool_calls?.length ?? 0) > results.length,
  );
  // A call the user spoke after waits for nothing: with no result in, nothing of it must stay.
  const dropped = missing && results.length === 0 && before.slice(at + 1).some(isRoundStart);
  if (call !== undefined && !dropped) {
    // Kept (a call waiting for a result verbatim; with its results in, at least as previews).
    const waiting = missing && !before.slice(at + 1).some(isRoundStart);
    if (waiting) {
      // Verbatim; its arguments cut only where whole it would leave the context over the window.
      const form = after.find((i) => origin(i) === call);
      expect(form, 'the waiting tool call was dropped').toBeDefined();
      const whole = before[at] as ContextItem;
      if (form && form.id !== call) {
        expect(
          sumTokens(after) - form.tokens + whole.tokens,
          'the waiting tool call was cut',
        ).toBeGreaterThan(window);
        const callIds = (item: ContextItem) =>
          item.type === 'ASSISTANT_MESSAGE' ? (item.message.tool_calls ?? []).map((c) => c.id) : [];
        expect(callIds(form), 'the waiting tool call lost a call').toStrictEqual(callIds(whole));
      }
    } else expect(kept.has(call), 'the latest tool call was summarized').toBe(true);
    for (const id of results)
      expect(kept.has(id), `result ${id} of the latest call was summarized`).toBe(true);
  }
  const message = currentMessage(before, window, headerTokens);
  if (message)
    expect(
      after.some((i) => i.id === message.id),
      'the current user message was summarized',
    ).toBe(true);
}

describe('selectivePrune invariants (DESIGN.md §5)', () => {
  it('keeps header and pinned items, never splits a pair, never grows, keeps order, is idempotent', () => {
    fc.assert(
      fc.property(conversations, configs, targetShare, (items, config, share) => {
        const target = Math.floor(share * sumTokens(items));
        const once = selectivePrune(items, config, fakeTokenizer, target);
        expectProtectedKept(items, once.items);
        expectPairsKept(items, once.items);
        expectNothingPendingLost(items, once.items, config.maxContextTokens);
        expect(once.tokensBefore).toBe(sumTokens(items));
        expect(once.tokensAfter).toBe(sumTokens(once.items));
        expect(once.tokensAfter).toBeLessThanOrEqual(once.tokensBefore);
        expectSubsequence(items, once.items);
        for (const item of once.newItems) {
          expect(items.map((i) => i.id)).toContain(item.sourceId);
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

const triggers = fc.constantFrom<TriggerKind>('precheck', 'check', 'manual', 'overflow', 'rounds', 'marker');

describe('planCompaction + finishCompaction invariants (DESIGN.md §5)', () => {
  it('keeps the header, pinned items, pairs, the latest call and the current message; fits the goal; keeps order', () => {
    fc.assert(
      fc.property(
        conversations,
        configs,
        fc.integer({ min: 300, max: 20_000 }),
        triggers,
        fc.double({ min: 0, max: 1, noNaN: true }),
        (items, raw, window, trigger, summaryShare) => {
          const config = { ...raw, maxContextTokens: window };
          const plan = planCompaction({
            items,
            config,
            tokenizer: fakeTokenizer,
            trigger,
            compactionId: 'p',
          });
          const summary =
            plan.toSummarize.length > 0 ? summaryOf(Math.floor(summaryShare * plan.summaryBudget)) : null;
          const out = finishCompaction(plan, summary);
          const rest = out.filter((i) => i !== summary);
          // Header items survive, except the carried state and task list a newer one replaces, and a
          // task or pin too large for the window with the rest of the header (compacted like a message).
          const header = headerRoles(items);
          const outIds = new Set(out.map((i) => i.id));
          const planHeader = new Set(plan.work.header.map((i) => i.id));
          items.forEach((item, i) => {
            const role = header[i];
            if (role === undefined || ['artifacts', 'errors', 'git', 'task_list', 'memory'].includes(role))
              return;
            if ((role === 'task' || role === 'pinned') && !planHeader.has(item.id)) {
              expect(plan.headerTokens + item.tokens).toBeGreaterThan(window);
              return;
            }
            expect(outIds.has(item.id), `header ${role} ${item.id}`).toBe(true);
          });
          // Pinned items survive, except a pinned message the header cannot hold within the window
          // (compacted like a message).
          for (const item of items) {
            if (!item.pinned) continue;
            if (header[items.indexOf(item)] === 'pinned' && !planHeader.has(item.id)) {
              expect(plan.headerTokens + item.tokens).toBeGreaterThan(window);
              continue;
            }
            expect(outIds.has(item.id), `pinned ${item.id}`).toBe(true);
          }
          expectPairsKept(items, rest);
          expectNothingPendingLost(items, out, window, plan.headerTokens);
          // What is summarized is what left the context (the refill may bring some of it back).
          const summarized = new Set(plan.toSummarize.map((i) => i.id));
          const origin = originIn(items);
          for (const item of items) {
            if (
              !outIds.has(item.id) &&
              !rest.some((r) => origin(r) === item.id) &&
              item.type !== 'COMPACTION_SUMMARY'
            ) {
              const carried = ['ARTIFACT_TRAIL', 'OPEN_ERRORS', 'GIT_DIFF_STAT'].includes(item.type);
              const replaced =
                header[items.indexOf(item)] !== undefined ||
                item.type === 'TASK_LIST' ||
                item.type === 'MEMORY';
              if (!carried && !replaced)
                expect(summarized.has(item.id), `${item.id} left without a summary`).toBe(true);
            }
          }
          // At or under the goal unless the plan says it could not get there.
          if (!plan.overTarget) expect(sumTokens(out)).toBeLessThanOrEqual(plan.goalTokens + 5 * out.length);
          // Nothing moves: the kept items in their order, the summary before the kept conversation.
          const made = new Set(plan.carried.added.map((i) => i.id));
          expectSubsequence(
            items,
            rest.filter((i) => !made.has(i.id)),
          );
          if (summary) {
            const header = headerIds(out);
            const at = out.indexOf(summary);
            expect(
              out
                .slice(at)
                .filter((i) => i !== summary)
                .every((i) => header.has(i.id) || !made.has(i.id)),
            ).toBe(true);
            expect(
              out.slice(0, at).every((i) => header.has(i.id)),
              'a conversation item before the summary',
            ).toBe(true);
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('dropOldestRounds invariants', () => {
  it('keeps header, pinned items, the pairs and the latest call, never grows, keeps order', () => {
    fc.assert(
      fc.property(conversations, targetShare, (items, share) => {
        const out = dropOldestRounds(items, Math.floor(share * sumTokens(items)));
        expectProtectedKept(items, out);
        expectPairsKept(items, out);
        expectNothingPendingLost(items, out, Infinity);
        expect(sumTokens(out)).toBeLessThanOrEqual(sumTokens(items));
        expectSubsequence(items, out);
        const newest = Math.max(0, ...items.map((i) => i.round));
        for (const item of items.filter((i) => i.round === newest && newest > 0)) expect(out).toContain(item);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

// ---- whole replays: what the model is sent ----

/** Sessions a model could have produced: user, then tool rounds with small arguments, then an answer. */
type SessionEvent =
  | { kind: 'user'; tokens: number; pinned: boolean }
  | { kind: 'answer'; tokens: number }
  | { kind: 'tools'; results: number[]; argTokens: number; tool: number };
const sessionEvent: fc.Arbitrary<SessionEvent> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('user' as const), tokens, pinned: flag(0.05) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('answer' as const), tokens }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('tools' as const),
      results: fc.array(tokens, { minLength: 1, maxLength: 3 }),
      argTokens: fc.integer({ min: 1, max: 60 }),
      tool: fc.integer({ min: 0, max: TOOLS.length - 1 }),
    }),
  },
);

function session(events: readonly SessionEvent[]): ContextItem[] {
  const f = itemsFactory(fakeTokenizer, 's');
  const items: ContextItem[] = [f.system(text(40, 0)), f.user(text(30, 1))];
  events.forEach((e, i) => {
    if (e.kind === 'user') items.push(f.user(text(e.tokens, i), { pinned: e.pinned }));
    else if (e.kind === 'answer') items.push(f.assistant(text(e.tokens, i)));
    else {
      const specs = e.results.map((_, j) => ({
        name: TOOLS[e.tool] ?? 'bash',
        id: `call_${i}_${j}`,
        args: JSON.stringify({ path: `src/f${i}.ts`, note: text(e.argTokens, j) }),
      }));
      items.push(f.calls(specs, text(5, i)));
      e.results.forEach((r, j) => items.push(f.result(`call_${i}_${j}`, text(r, i))));
    }
  });
  return conversation(items);
}

describe('replays with compactions forced anywhere (DESIGN.md §5: what every request holds)', () => {
  it('every tool result reaches the next request with its call; no request goes over the window', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(sessionEvent, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 4_000, max: 12_000 }),
        fc.array(fc.tuple(fc.nat({ max: 400 }), triggers), { maxLength: 12 }),
        async (events, window, forced) => {
          const items = session(events);
          const config = parseCompactionConfig({ maxContextTokens: window, summarizer: 'extractive' });
          const at = new Map(forced);
          const result = await replaySession({
            items,
            config,
            tokenizer: fakeTokenizer,
            summarize: async (plan) => ({
              text: planExtractiveSummary(plan, fakeTokenizer),
              summarizer: 'extractive',
            }),
            force: (index) => at.get(index) ?? null,
          });
          for (const [n, request] of result.requests.entries()) {
            expect(request.orphaned, `request ${n}: a tool result without its call`).toBe(0);
            expect(request.tokens, `request ${n} over the window of ${window}`).toBeLessThanOrEqual(window);
          }
          for (const c of result.compactions) {
            if (c.status === 'committed')
              expectNothingPendingLost(c.before, c.after, window, c.plan?.headerTokens);
          }
          // The summary item holds its budget.
          for (const c of result.compactions) {
            const summary = c.after.find((i) => i.type === 'COMPACTION_SUMMARY' && !c.before.includes(i));
            if (summary && c.plan) expect(summary.tokens).toBeLessThanOrEqual(c.plan.summaryBudget + 20);
          }
        },
      ),
      { numRuns: 120 },
    );
  });
});

describe('a reply whose parallel calls, written a message each, still wait (DESIGN.md §5)', () => {
  it('right before a request every call of it stays, cut only where whole the request would be over the window; the request fits when the least of it does', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ args: fc.integer({ min: 1, max: 1200 }), text: fc.integer({ min: 0, max: 200 }) }),
          {
            minLength: 1,
            maxLength: 6,
          },
        ),
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 1500, max: 8000 }),
        fc.constantFrom<TriggerKind>('precheck', 'overflow'),
        (replies, current, window, trigger) => {
          const f = itemsFactory(fakeTokenizer);
          const calls = replies.map(({ args, text }, k) => ({
            ...f.calls(
              [{ name: 'write_file', args: { path: `src/w${k}.ts`, content: 'x '.repeat(args) } }],
              text > 0 ? 'y '.repeat(text) : null,
              { id: `w${k}` },
            ),
            round: 3,
          }));
          const items = conversation(
            f.system('sys', { id: 'sys' }),
            f.user('task', { id: 'task' }),
            f.user('a '.repeat(current), { id: 'now' }),
            ...calls,
          );
          const config = parseCompactionConfig({ maxContextTokens: window });
          const plan = planCompaction({
            items,
            config,
            tokenizer: fakeTokenizer,
            trigger,
            compactionId: 'c',
          });
          const out = finishCompaction(
            plan,
            plan.toSummarize.length > 0 ? summaryOf(plan.summaryBudget) : null,
          );
          const origin = originIn(items);
          const callIds = (item: ContextItem) =>
            item.type === 'ASSISTANT_MESSAGE' ? (item.message.tool_calls ?? []).map((c) => c.id) : [];
          // Each call kept keeps every call of its message; the newest is always kept.
          for (const call of calls) {
            const form = out.find((i) => origin(i) === call.id);
            if (form) expect(callIds(form)).toStrictEqual(callIds(call));
          }
          const newest = calls.at(-1) as ContextItem;
          expect(out.some((i) => origin(i) === newest.id)).toBe(true);
          // Every call stays where, at their least (arguments cut), they fit half the window.
          const least = calls.reduce(
            (n, call) =>
              n + (planCut(call, config, fakeTokenizer, MIN_PREVIEW_TOKENS, true)?.tokens ?? call.tokens),
            0,
          );
          if (least <= window / 2)
            for (const call of calls)
              expect(
                out.some((i) => origin(i) === call.id),
                call.id,
              ).toBe(true);
          // A cut only where the whole forms would leave the request over the window.
          const whole = out.reduce((n, i) => {
            const source = items.find((x) => x.id === origin(i));
            return n + (source && source.id.startsWith('w') ? source.tokens : i.tokens);
          }, 0);
          if (out.some((i) => /^w\d+~/.test(i.id))) expect(whole).toBeGreaterThan(window);
          // The calls waiting that stayed, at their least, fit beside the header and the current
          // message: the request fits the window.
          expect(sumTokens(out)).toBeLessThanOrEqual(window);
        },
      ),
    );
  });
});
