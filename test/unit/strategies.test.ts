import { describe, expect, it } from 'vitest';
import { parseCompactionConfig } from '../../src/context/config';
import type { CompactionSummaryItem, ContextItem } from '../../src/context/items';
import {
  buildPostCompactionContext,
  dropOldestRounds,
  SUMMARY_MESSAGE_PREFIX,
} from '../../src/context/post-compaction';
import {
  importanceScore,
  keyEventUnits,
  planStrategy,
  type StrategyPlan,
} from '../../src/context/strategies';
import {
  detectTaskType,
  FALLBACK_CHAIN,
  fullStrategyChain,
  strategyChain,
  STRATEGIES,
  toolCategory,
  type TaskType,
} from '../../src/context/task-type';
import { pairToolCalls, unansweredCalls } from '../../src/context/tool-pairs';
import { groupUnits, sumTokens } from '../../src/context/tool-blocks';
import { conversation, ids, itemsFactory, type ItemsFactory } from '../support/items-factory';

const DEFAULTS = parseCompactionConfig({});

const header = (f: ItemsFactory) => [
  f.system('You are an agent.', { id: 'sys' }),
  f.tools([{ type: 'function', function: { name: 'bash' } }], { id: 'tools' }),
  f.user('Original task: make the build pass', { id: 'task' }),
];

/** The plan's three sets as sorted id lists (easier to read in failures). */
function sets(plan: StrategyPlan) {
  return {
    keep: [...plan.keepIds],
    summarize: [...plan.summarizeIds],
    replace: [...plan.replaceIds],
  };
}

/** Every item is in exactly one of the plan's sets; no tool block is split between them. */
function expectWellFormed(items: readonly ContextItem[], plan: StrategyPlan): void {
  for (const item of items) {
    const inSets = [plan.keepIds, plan.summarizeIds, plan.replaceIds].filter((s) => s.has(item.id)).length;
    expect(inSets, item.id).toBe(1);
  }
  for (const unit of groupUnits(items)) {
    const kept = unit.items.map((i) => plan.keepIds.has(i.id));
    expect(new Set(kept).size, `unit at ${unit.start}`).toBe(1);
  }
  const kept = items.filter((i) => plan.keepIds.has(i.id));
  expect(unansweredCalls(pairToolCalls(kept))).toStrictEqual([]);
}

describe('detectTaskType and the chains (seed 001)', () => {
  function withCalls(names: string[], f = itemsFactory()) {
    return conversation(
      header(f),
      names.flatMap((name) => f.block(name, { path: 'src/a.ts', command: 'ls' }, 'output')),
      f.assistant('done'),
    );
  }

  it.each<[string, () => ContextItem[], TaskType]>([
    [
      'edits and commands',
      () => withCalls(['read_file', 'str_replace_editor', 'bash', 'read_file', 'write_file']),
      'code',
    ],
    [
      'one edit in five calls (20%)',
      () => withCalls(['read_file', 'grep', 'search', 'read_file', 'bash']),
      'code',
    ],
    ['look-ups only', () => withCalls(['read_file', 'grep', 'web_search', 'list_dir']), 'analysis'],
    [
      'look-ups and other tools, half and half',
      () => withCalls(['read_file', 'send_email', 'grep', 'send_email']),
      'mixed',
    ],
    ['code and other tools', () => withCalls(['bash', 'send_email', 'bash', 'send_email', 'bash']), 'mixed'],
    ['unrecognized tools only', () => withCalls(['send_email', 'weather', 'translate']), 'unknown'],
    [
      'talk, no tools',
      () => {
        const f = itemsFactory();
        return conversation(header(f), f.assistant('hello'), f.user('how are you?'), f.assistant('fine'));
      },
      'conversation',
    ],
    ['nothing but a system prompt', () => conversation(itemsFactory().system('sys')), 'unknown'],
  ])('%s → %s', (_, make, expected) => {
    expect(detectTaskType(make())).toBe(expected);
  });

  it.each([
    ['write_file', 'code'],
    ['str_replace_editor', 'code'],
    ['bash', 'code'],
    ['git_commit', 'code'],
    ['read_file', 'analysis'],
    ['grep', 'analysis'],
    ['web_search', 'analysis'],
    ['send_email', 'other'],
  ] as const)('toolCategory(%s) = %s', (name, category) => {
    expect(toolCategory(name)).toBe(category);
  });

  it.each<[TaskType, string[]]>([
    ['code', ['sliding_window', 'key_events', 'incremental']],
    ['analysis', ['sliding_window', 'importance', 'incremental']],
    ['conversation', ['sliding_window', 'importance', 'incremental']],
    ['mixed', ['sliding_window', 'incremental', 'importance']],
    ['unknown', ['sliding_window', 'importance', 'incremental']],
  ])('%s → %j', (type, chain) => {
    expect(strategyChain(type)).toStrictEqual(chain);
    // The full chain adds the fallback order's other strategies, each once.
    const full = fullStrategyChain(type);
    expect(full.slice(0, 3)).toStrictEqual(chain);
    expect([...full].sort()).toStrictEqual([...FALLBACK_CHAIN].sort());
  });
});

describe('sliding_window: the last 4 user/tool and 5 assistant messages', () => {
  it('keeps 9 messages of a plain dialogue', () => {
    const f = itemsFactory();
    const rounds = Array.from({ length: 10 }, (_, i) => [
      f.user(`q${i}`, { id: `u${i}` }),
      f.assistant(`r${i}`, { id: `a${i}` }),
    ]);
    const items = conversation(header(f), ...rounds);
    const plan = planStrategy('sliding_window', items, DEFAULTS);
    expectWellFormed(items, plan);
    expect(sets(plan)).toStrictEqual({
      keep: ['sys', 'tools', 'task', 'a5', 'u6', 'a6', 'u7', 'a7', 'u8', 'a8', 'u9', 'a9'],
      summarize: ['u0', 'a0', 'u1', 'a1', 'u2', 'a2', 'u3', 'a3', 'u4', 'a4', 'u5'],
      replace: [],
    });
  });

  it('counts a block’s results as tool messages and never takes half a block', () => {
    const f = itemsFactory();
    const big = f.calls(
      ['a', 'b', 'c', 'd'].map((path, i) => ({ name: 'read_file', args: { path }, id: `x${i + 1}` })),
      null,
      { id: 'big' },
    );
    const items = conversation(
      header(f),
      f.user('look at three files', { id: 'u1' }),
      big,
      f.result('x1', 'A', { id: 'r1' }),
      f.result('x2', 'B', { id: 'r2' }),
      f.result('x3', 'C', { id: 'r3' }),
      f.result('x4', 'D', { id: 'r4' }),
      f.assistant('seen them', { id: 'a1' }),
      f.user('and now?', { id: 'u2' }),
      f.assistant('now this', { id: 'a2' }),
    );
    const plan = planStrategy('sliding_window', items, DEFAULTS);
    expectWellFormed(items, plan);
    // From the end: a2, u2, a1 (1 user/tool, 2 assistant); the block would add 4 tool messages (5 > 4).
    expect(sets(plan).summarize).toStrictEqual(['u1', 'big', 'r1', 'r2', 'r3', 'r4']);
  });

  it('always keeps the newest unit, even one larger than the window', () => {
    const f = itemsFactory();
    const calls = Array.from({ length: 6 }, (_, i) => ({
      name: 'read_file',
      args: { path: `${i}` },
      id: `k${i}`,
    }));
    const items = conversation(
      header(f),
      f.user('q', { id: 'q' }),
      f.calls(calls, null, { id: 'many' }),
      calls.map((c) => f.result(c.id, 'x', { id: `r${c.id}` })),
    );
    const plan = planStrategy('sliding_window', items, DEFAULTS);
    expectWellFormed(items, plan);
    expect(sets(plan).summarize).toStrictEqual(['q']);
  });

  it('uses the configured sizes', () => {
    const f = itemsFactory();
    const items = conversation(
      header(f),
      Array.from({ length: 4 }, (_, i) => [
        f.user(`q${i}`, { id: `u${i}` }),
        f.assistant(`r${i}`, { id: `a${i}` }),
      ]),
    );
    const config = parseCompactionConfig({
      slidingWindowUserToolMessages: 1,
      slidingWindowAssistantMessages: 1,
    });
    expect(sets(planStrategy('sliding_window', items, config)).summarize).toStrictEqual([
      'u0',
      'a0',
      'u1',
      'a1',
      'u2',
      'a2',
    ]);
  });
});

describe('importance: units scoring ≥ 3.0 plus the last 5 others', () => {
  it.each<[string, (f: ItemsFactory) => ContextItem[], number]>([
    ['a real user message', (f) => [f.user('please add a flag')], 3],
    ['a meta user message', (f) => [f.meta('<reminder>')], 0],
    ['a plain answer', (f) => [f.assistant('Sure.')], 0],
    ['an error', (f) => [f.assistant('The build failed with an exception')], 1.5],
    ['a decision', (f) => [f.assistant('We decided to keep the old API')], 1.5],
    ['a completion', (f) => [f.assistant('All tests pass now, done.')], 2],
    ['an edit', (f) => f.block('write_file', { path: 'a.ts' }, 'ok'), 1.5],
    ['a read', (f) => f.block('read_file', { path: 'a.ts' }, 'contents'), 0],
    [
      'an error, then fixed and decided',
      (f) => [f.assistant('The error is fixed; we must keep this plan')],
      5,
    ],
  ])('%s scores %d', (_, make, score) => {
    const items = make(itemsFactory());
    const unit = groupUnits(items)[0];
    expect(unit && importanceScore(unit)).toBe(score);
  });

  it('keeps the high scorers wherever they are, and the 5 newest others', () => {
    const f = itemsFactory();
    const items = conversation(
      header(f),
      f.user('add a --verbose flag', { id: 'u1' }),
      f.assistant('ok', { id: 'low1' }),
      f.assistant('We decided to log the error to stderr', { id: 'high1' }), // decision + error = 3
      f.assistant('looking', { id: 'low2' }),
      f.assistant('hmm', { id: 'low3' }),
      f.assistant('right', { id: 'low4' }),
      f.assistant('so', { id: 'low5' }),
      f.assistant('then', { id: 'low6' }),
      f.assistant('next', { id: 'low7' }),
    );
    const plan = planStrategy('importance', items, DEFAULTS);
    expectWellFormed(items, plan);
    expect(sets(plan).summarize).toStrictEqual(['low1', 'low2']);
    expect(sets(plan).keep).toContain('u1');
    expect(sets(plan).keep).toContain('high1');
  });

  it('uses the configured threshold', () => {
    const f = itemsFactory();
    const items = conversation(
      header(f),
      f.user('q', { id: 'u1' }),
      ...Array.from({ length: 6 }, (_, i) => f.assistant(`x${i}`)),
    );
    const config = parseCompactionConfig({ importanceScoreThreshold: 3.5, strategyKeepRecentOthers: 0 });
    // The user message scores 3: under 3.5, it is summarized with the rest.
    expect(sets(planStrategy('importance', items, config)).summarize).toHaveLength(7);
  });
});

describe('key_events: completions, fixed errors, changing tool calls, plus the last 5 others', () => {
  it('keeps the events and the 5 newest others', () => {
    const f = itemsFactory();
    const edit = f.block('write_file', { path: 'src/a.ts' }, 'written');
    const read = f.block('read_file', { path: 'src/b.ts' }, 'contents');
    const items = conversation(
      header(f),
      f.user('fix the crash', { id: 'u1' }),
      f.assistant('The parser throws an exception on empty input', { id: 'err' }),
      read,
      edit,
      f.assistant('Fixed: the parser handles empty input', { id: 'fixed' }),
      ...Array.from({ length: 6 }, (_, i) => f.assistant(`note ${i}`, { id: `n${i}` })),
    );
    const units = groupUnits(items);
    const keyIds = [...keyEventUnits(units)].flatMap((u) => ids(u.items));
    expect(keyIds.sort()).toStrictEqual(['err', 'fixed', ...ids(edit)].sort());
    const plan = planStrategy('key_events', items, DEFAULTS);
    expectWellFormed(items, plan);
    // Others: u1, read block, n0..n5 → the 5 newest others are n1..n5.
    expect(sets(plan).summarize).toStrictEqual(['u1', ...ids(read), 'n0']);
  });

  it('an error nothing fixed stays a key event (it is still open)', () => {
    const f = itemsFactory();
    const units = groupUnits([f.assistant('Error: cannot open config'), f.assistant('let me look')]);
    expect([...keyEventUnits(units)].map((u) => u.items[0]?.id)).toStrictEqual([units[0]?.items[0]?.id]);
  });
});

describe('incremental: chunks of 20 rounds, the last chunk verbatim', () => {
  function rounds(n: number) {
    const f = itemsFactory();
    return conversation(
      f.system('sys', { id: 'sys' }),
      Array.from({ length: n }, (_, i) => [
        f.user(`q${i + 1}`, { id: `u${i + 1}` }),
        f.assistant(`r${i + 1}`, { id: `a${i + 1}` }),
      ]),
    );
  }

  it.each([
    [20, 1], // one chunk: nothing to summarize (u1 is the task)
    [21, 21],
    [40, 21],
    [45, 41],
    [60, 41],
  ])('%d rounds → verbatim from round %d', (n, from) => {
    const items = rounds(n);
    const plan = planStrategy('incremental', items, DEFAULTS);
    expectWellFormed(items, plan);
    const firstKept = items.find((i) => i.id !== 'sys' && i.id !== 'u1' && plan.keepIds.has(i.id));
    expect(firstKept?.round).toBe(from);
    expect(plan.summarizeIds.size).toBe(from === 1 ? 0 : (from - 1) * 2 - 1);
  });

  it('uses the configured chunk size', () => {
    const items = rounds(10);
    const plan = planStrategy('incremental', items, parseCompactionConfig({ incrementalChunkRounds: 3 }));
    expect(items.filter((i) => plan.keepIds.has(i.id)).map((i) => i.round)).toStrictEqual([0, 1, 10, 10]);
  });
});

describe('full: only the header and the last keepRecentRounds rounds stay', () => {
  function session() {
    const f = itemsFactory();
    return conversation(
      header(f),
      f.assistant('starting', { id: 'a1' }),
      ...[2, 3, 4].map((r) => [
        f.user(`q${r}`, { id: `u${r}` }),
        ...f.block('bash', { command: `make ${r}` }, `out ${r}`),
        f.assistant(`r${r}`, { id: `a${r}` }),
      ]),
    );
  }

  it.each([
    [2, [3, 4]],
    [1, [4]],
    [0, []],
    [10, [1, 2, 3, 4]],
  ])('keepRecentRounds %d keeps rounds %j', (keepRecentRounds, keptRounds) => {
    const items = session();
    const config = parseCompactionConfig({ keepRecentRounds });
    const plan = planStrategy('full', items, config);
    expectWellFormed(items, plan);
    const conversationKept = items.filter(
      (i) => plan.keepIds.has(i.id) && !['sys', 'tools', 'task'].includes(i.id),
    );
    expect([...new Set(conversationKept.map((i) => i.round))]).toStrictEqual(keptRounds);
    // The option overrides the config.
    expect(sets(planStrategy('full', items, DEFAULTS, { keepRecentRounds }))).toStrictEqual(sets(plan));
  });

  it('refuses an unknown strategy', () => {
    expect(() => planStrategy('zip', session(), DEFAULTS)).toThrow('unknown summary strategy "zip"');
  });
});

describe('previous summaries are merged, pinned items kept', () => {
  function withSummary() {
    const f = itemsFactory();
    return conversation(
      header(f),
      f.summary(`${SUMMARY_MESSAGE_PREFIX}\nearlier work`, { id: 'old' }),
      f.user('<Pin>never touch prod</Pin>', { id: 'pin', pinned: true }),
      f.block('bash', { command: 'deploy' }, 'ok', { pinned: true }),
      Array.from({ length: 8 }, (_, i) => [
        f.user(`q${i}`, { id: `u${i}` }),
        f.assistant(`r${i}`, { id: `a${i}` }),
      ]),
    );
  }

  it.each(STRATEGIES)('%s: replaces the summary only when it summarizes something', (strategy) => {
    const items = withSummary();
    const plan = planStrategy(strategy, items, DEFAULTS, { keepRecentRounds: 2 });
    expectWellFormed(items, plan);
    for (const id of ['sys', 'tools', 'task', 'pin']) expect(plan.keepIds.has(id), id).toBe(true);
    for (const item of items.filter((i) => i.pinned)) expect(plan.keepIds.has(item.id)).toBe(true);
    if (plan.summarizeIds.size > 0) expect(sets(plan).replace).toStrictEqual(['old']);
    else expect(plan.keepIds.has('old')).toBe(true);
  });

  it('nothing to summarize: the summary stays, nothing is replaced', () => {
    const f = itemsFactory();
    const items = conversation(header(f), f.summary('s', { id: 'old' }), f.assistant('hi', { id: 'a' }));
    const plan = planStrategy('sliding_window', items, DEFAULTS);
    expect([...plan.keepIds].sort()).toStrictEqual(['a', 'old', 'sys', 'task', 'tools']);
    expect(sets(plan)).toMatchObject({ summarize: [], replace: [] });
  });
});

describe('buildPostCompactionContext: header → summary → kept items', () => {
  function summaryItem(id = 'new'): CompactionSummaryItem {
    return itemsFactory().summary(`${SUMMARY_MESSAGE_PREFIX}\nall of it`, { id });
  }

  it('places the summary after the header and drops what was summarized or replaced', () => {
    const f = itemsFactory();
    const items = conversation(
      f.system('sys', { id: 'sys' }),
      f.user('task', { id: 'task' }),
      f.summary('old summary', { id: 'old' }),
      f.assistant('a', { id: 'a1' }),
      f.user('q', { id: 'u2' }),
      f.note('MEMORY', 'remember', { id: 'mem' }),
      f.assistant('b', { id: 'a2' }),
    );
    const plan = planStrategy('full', items, DEFAULTS, { keepRecentRounds: 1 });
    const out = buildPostCompactionContext(items, plan, summaryItem());
    expect(ids(out)).toStrictEqual(['sys', 'task', 'mem', 'new', 'u2', 'a2']);
    expect(sumTokens(out)).toBeLessThanOrEqual(sumTokens(items) + summaryItem().tokens);
  });

  it.each(STRATEGIES)('%s: the result keeps every pair and the header first', (strategy) => {
    const f = itemsFactory();
    const items = conversation(
      header(f),
      Array.from({ length: 30 }, (_, i) => [
        f.user(`q${i}`),
        ...f.block(i % 2 ? 'bash' : 'read_file', { path: `f${i}` }, i % 3 ? 'ok' : 'Error: failed'),
        f.assistant(i % 4 ? `r${i}` : 'done, fixed'),
      ]),
    );
    const plan = planStrategy(strategy, items, DEFAULTS);
    expect(plan.summarizeIds.size).toBeGreaterThan(0);
    const out = buildPostCompactionContext(items, plan, summaryItem());
    expect(ids(out).slice(0, 4)).toStrictEqual(['sys', 'tools', 'task', 'new']);
    expect(unansweredCalls(pairToolCalls(out))).toStrictEqual([]);
    expect(pairToolCalls(out).orphanResults).toStrictEqual([]);
    const kept = ids(items).filter((id) => plan.keepIds.has(id));
    expect(ids(out).filter((id) => id !== 'new')).toStrictEqual(kept);
  });
});

describe('dropOldestRounds (seed 004, a declined compaction)', () => {
  function session() {
    const f = itemsFactory();
    return conversation(
      header(f),
      f.assistant('on it', { id: 'a1' }),
      f.user('<Pin>keep me</Pin>', { id: 'pin', pinned: true }),
      ...[2, 3, 4, 5].map((r) => [
        f.user(`question ${r} `.repeat(10), { id: `u${r}` }),
        ...f.block('bash', { command: `make ${r}` }, `output ${r} `.repeat(20)),
        f.assistant(`answer ${r}`, { id: `a${r}` }),
      ]),
    );
  }

  it('drops whole rounds, oldest first, until under the target', () => {
    const items = session();
    // Rounds: 1 task + a1; 2 the pinned message (a real user message); 3 u2 …; 6 u5 ….
    expect(items.map((i) => i.round)).toStrictEqual([
      0,
      0,
      1,
      1,
      2,
      ...[3, 4, 5, 6].flatMap((r) => [r, r, r, r]),
    ]);
    const round = (r: number) => items.filter((i) => i.round === r && !['task', 'pin'].includes(i.id));
    const total = sumTokens(items);
    const out = dropOldestRounds(items, total - sumTokens(round(1)) - 1);
    // Round 1 (but the task) was not enough; round 2 is only pinned; round 3 went too.
    expect(ids(out)).toStrictEqual(ids(items).filter((id) => !ids([...round(1), ...round(3)]).includes(id)));
    expect(unansweredCalls(pairToolCalls(out))).toStrictEqual([]);
  });

  it('already under the target: nothing dropped', () => {
    const items = session();
    expect(dropOldestRounds(items, sumTokens(items))).toStrictEqual(items);
  });

  it('never drops the header, pinned items or the newest round', () => {
    const items = session();
    const out = dropOldestRounds(items, 0);
    expect(ids(out)).toStrictEqual([
      'sys',
      'tools',
      'task',
      'pin',
      ...ids(items.filter((i) => i.round === 6)),
    ]);
  });
});
