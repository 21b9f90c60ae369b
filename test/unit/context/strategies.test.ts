import { describe, expect, it } from 'vitest';
import {
  finishCompaction,
  planCompaction,
  prunedItems,
  type CompactionPlan,
} from '../../../src/context/compaction-plan';
import { parseCompactionConfig, targetTokens, type CompactionConfig } from '../../../src/context/config';
import {
  messageText,
  type CompactionSummaryItem,
  type ContextItem,
  type UserMessage,
} from '../../../src/context/items';
import { dropOldestRounds, SUMMARY_MESSAGE_PREFIX } from '../../../src/context/post-compaction';
import {
  importanceScore,
  keyEventUnits,
  strategyGroups,
  strategyStep,
} from '../../../src/context/strategies';
import { planReasoning } from '../../../src/context/item-cuts';
import {
  detectTaskType,
  FALLBACK_CHAIN,
  fullStrategyChain,
  strategyChain,
  toolCategory,
  type StrategyName,
  type TaskType,
} from '../../../src/context/task-type';
import type { TriggerKind } from '../../../src/context/triggers';
import { pairToolCalls, unansweredCalls } from '../../../src/context/tool-pairs';
import { sumTokens } from '../../../src/context/tool-blocks';
import { WorkingContext } from '../../../src/context/working-context';
import { createTokenCounter } from '../../../src/tokens';
import { conversation, ids, itemsFactory, words, type ItemsFactory } from '../../support/items-factory';

const o200k = createTokenCounter({ encoding: 'o200k_base' });
const DEFAULTS = parseCompactionConfig({});
/** The prune steps of a compaction with the default rules, in order. */
const PRUNE_STEPS = [
  'truncate',
  'tool_blocks',
  'SKILL_METADATA:drop',
  'SKILL_PROMPT:drop',
  'TOOL_RESULT:truncate',
  'ASSISTANT_MESSAGE:truncate',
  'USER_MESSAGE:truncate',
];

const header = (f: ItemsFactory) => [
  f.system('You are an agent.', { id: 'sys' }),
  f.tools([{ type: 'function', function: { name: 'bash' } }], { id: 'tools' }),
  f.user('Original task: make the build pass', { id: 'task' }),
];

/** The conversation units of a context, as a compaction sees them before any step. */
function unitsOf(items: readonly ContextItem[]) {
  return new WorkingContext(items, { window: DEFAULTS.maxContextTokens, summaryReserve: null }).units;
}

/** A strategy's removal order on a fresh context, as id lists (oldest group first). */
function groups(
  strategy: StrategyName,
  items: readonly ContextItem[],
  config = DEFAULTS,
  keep?: number,
): string[][] {
  return strategyGroups(strategy, unitsOf(items), config, keep).map((g) =>
    g.flatMap((u) => ids(u.originals)),
  );
}

/** The conversation ids a strategy keeps at its minimum (in no group). */
function minimum(
  strategy: StrategyName,
  items: readonly ContextItem[],
  config = DEFAULTS,
  keep?: number,
): string[] {
  const units = unitsOf(items);
  const grouped = new Set(strategyGroups(strategy, units, config, keep).flat());
  return units.filter((u) => !grouped.has(u)).flatMap((u) => ids(u.originals));
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

  it.each<[TaskType, StrategyName[], StrategyName[]]>([
    [
      'code',
      ['sliding_window', 'key_events', 'incremental'],
      ['sliding_window', 'key_events', 'incremental', 'importance'],
    ],
    [
      'analysis',
      ['sliding_window', 'importance', 'incremental'],
      ['sliding_window', 'importance', 'incremental', 'key_events'],
    ],
    [
      'conversation',
      ['sliding_window', 'importance', 'incremental'],
      ['sliding_window', 'importance', 'incremental', 'key_events'],
    ],
    [
      'mixed',
      ['sliding_window', 'incremental', 'importance'],
      ['sliding_window', 'incremental', 'importance', 'key_events'],
    ],
    [
      'unknown',
      ['sliding_window', 'importance', 'incremental'],
      ['sliding_window', 'importance', 'incremental', 'key_events'],
    ],
  ])('%s → %j, then the fallback order → %j', (type, chain, full) => {
    expect(strategyChain(type)).toStrictEqual(chain);
    // The adaptive chain, then seed 001's fixed order for the strategies it does not have, each once.
    expect(fullStrategyChain(type)).toStrictEqual(full);
    expect(FALLBACK_CHAIN).toStrictEqual(['sliding_window', 'importance', 'key_events', 'incremental']);
  });
});

describe('strategyGroups sliding_window: the newest 4 user/tool and 5 assistant messages stay', () => {
  it('keeps 9 messages of a plain dialogue; the others go one by one, oldest first', () => {
    const f = itemsFactory();
    const rounds = Array.from({ length: 10 }, (_, i) => [
      f.user(`q${i}`, { id: `u${i}` }),
      f.assistant(`r${i}`, { id: `a${i}` }),
    ]);
    const items = conversation(header(f), ...rounds);
    expect(minimum('sliding_window', items)).toStrictEqual([
      'a5',
      'u6',
      'a6',
      'u7',
      'a7',
      'u8',
      'a8',
      'u9',
      'a9',
    ]);
    expect(groups('sliding_window', items)).toStrictEqual(
      ['u0', 'a0', 'u1', 'a1', 'u2', 'a2', 'u3', 'a3', 'u4', 'a4', 'u5'].map((id) => [id]),
    );
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
      ['x1', 'x2', 'x3', 'x4'].map((id, i) => f.result(id, 'ABCD'[i] ?? '', { id: `r${i + 1}` })),
      f.assistant('seen them', { id: 'a1' }),
      f.user('and now?', { id: 'u2' }),
      f.assistant('now this', { id: 'a2' }),
    );
    // From the end: a2, u2, a1 (1 user/tool, 2 assistant); the block would add 4 tool messages (5 > 4).
    expect(groups('sliding_window', items)).toStrictEqual([['u1'], ['big', 'r1', 'r2', 'r3', 'r4']]);
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
    expect(groups('sliding_window', items)).toStrictEqual([['q']]);
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
    expect(minimum('sliding_window', items, config)).toStrictEqual(['u3', 'a3']);
  });
});

describe('importance: units scoring ≥ 3.0 plus the newest 5 others stay', () => {
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
    ['a long answer with code', (f) => [f.assistant(`Here:\n\`\`\`ts\n${'x'.repeat(400)}\n\`\`\``)], 1],
    ['a short answer with code', (f) => [f.assistant('Here:\n```ts\nx\n```')], 0],
  ])('%s scores %d', (_, make, score) => {
    expect(importanceScore({ originals: make(itemsFactory()) })).toBe(score);
  });

  it('keeps the high scorers wherever they are, and the 5 newest others', () => {
    const f = itemsFactory();
    const items = conversation(
      header(f),
      f.user('add a --verbose flag', { id: 'u1' }),
      f.assistant('ok', { id: 'low1' }),
      f.assistant('We decided to log the error to stderr', { id: 'high1' }), // decision + error = 3
      ...['low2', 'low3', 'low4', 'low5', 'low6', 'low7'].map((id) => f.assistant('so', { id })),
    );
    expect(groups('importance', items)).toStrictEqual([['low1'], ['low2']]);
    expect(minimum('importance', items)).toStrictEqual([
      'u1',
      'high1',
      'low3',
      'low4',
      'low5',
      'low6',
      'low7',
    ]);
  });

  it('uses the configured threshold and count of others', () => {
    const f = itemsFactory();
    const items = conversation(
      header(f),
      f.user('q', { id: 'u1' }),
      ...Array.from({ length: 6 }, (_, i) => f.assistant(`x${i}`)),
    );
    const config = parseCompactionConfig({ importanceScoreThreshold: 3.5, strategyKeepRecentOthers: 0 });
    // The user message scores 3: under 3.5, it goes with the rest.
    expect(groups('importance', items, config).flat()).toHaveLength(7);
    expect(minimum('importance', items, config)).toStrictEqual([]);
  });
});

describe('key_events: completions, fixed errors, changing tool calls, open errors, plus the newest 5 others', () => {
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
    const keyIds = [...keyEventUnits(unitsOf(items))].flatMap((u) => ids(u.originals));
    expect(keyIds.sort()).toStrictEqual(['err', 'fixed', ...ids(edit)].sort());
    // Others: u1, the read block, n0..n5 → the 5 newest others are n1..n5.
    expect(groups('key_events', items)).toStrictEqual([['u1'], ids(read), ['n0']]);
  });

  it.each<[string, string[], string[]]>([
    ['an error nothing fixed stays (it is still open)', ['Error: cannot open config', 'let me look'], ['e0']],
    ['an error then a completion: both', ['Error: cannot open config', 'Done: config opens'], ['e0', 'e1']],
    ['only the last open error stays open', ['Error: one', 'Error: two'], ['e1']],
    ['nothing happening', ['hmm', 'let me look'], []],
  ])('%s', (_, texts, expected) => {
    const units = texts.map((text, i) => ({ originals: [itemsFactory().assistant(text, { id: `e${i}` })] }));
    expect([...keyEventUnits(units)].map((u) => u.originals[0]?.id).sort()).toStrictEqual(expected);
  });
});

describe('incremental: chunks of 20 rounds from the oldest, the last chunk stays', () => {
  /** A system prompt and `n` rounds; u1 is the task (header), a1 the first conversation unit. */
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
  const roundsOf = (items: readonly ContextItem[], idList: readonly string[]) => [
    ...new Set(items.filter((i) => idList.includes(i.id)).map((i) => i.round)),
  ];

  it.each([
    [20, [], 1],
    [21, [[1, 20]], 21],
    [40, [[1, 20]], 21],
    [
      45,
      [
        [1, 20],
        [21, 40],
      ],
      41,
    ],
    [
      60,
      [
        [1, 20],
        [21, 40],
      ],
      41,
    ],
  ])('%d rounds → chunks %j summarized, verbatim from round %d', (n, chunks, from) => {
    const items = rounds(n);
    const got = groups('incremental', items);
    expect(got.map((g) => roundsOf(items, g)).map((r) => [Math.min(...r), Math.max(...r)])).toStrictEqual(
      chunks,
    );
    expect(Math.min(...roundsOf(items, minimum('incremental', items)))).toBe(from);
  });

  it('uses the configured chunk size', () => {
    const items = rounds(10);
    const config = parseCompactionConfig({ incrementalChunkRounds: 3 });
    expect(groups('incremental', items, config).map((g) => roundsOf(items, g))).toStrictEqual([
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 9],
    ]);
    expect(minimum('incremental', items, config)).toStrictEqual(['u10', 'a10']);
  });
});

describe('full(k): the last k rounds stay', () => {
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
  ])('full(keep %d) keeps rounds %j', (k, keptRounds) => {
    const items = session();
    const kept = minimum('full', items, DEFAULTS, k);
    expect([...new Set(items.filter((i) => kept.includes(i.id)).map((i) => i.round))]).toStrictEqual(
      keptRounds,
    );
    // Every other unit is a group of its own, oldest first; blocks stay whole.
    expect(groups('full', items, DEFAULTS, k).flat()).toStrictEqual(
      ids(items.slice(3)).filter((id) => !kept.includes(id)),
    );
    // Without k, the config's keepRecentRounds.
    expect(minimum('full', items, parseCompactionConfig({ keepRecentRounds: k }))).toStrictEqual(kept);
  });
});

// ---- planCompaction ----

/** A system prompt, the task and 12 rounds of a 50-token question and a 200-token answer. */
function dialogue(f = itemsFactory(o200k), before: ContextItem[] = []) {
  return conversation(
    f.system('sys', { id: 'sys' }),
    f.user('task', { id: 'task' }),
    ...before,
    ...Array.from({ length: 12 }, (_, i) => [
      f.user(words(50), { id: `u${i + 2}` }),
      f.assistant(words(200), { id: `a${i + 2}` }),
    ]),
  );
}

/** Forty rounds each reading a file of a long path (a trail of 40 paths under 7 directories). */
function longPathReads(f: ItemsFactory): ContextItem[] {
  return Array.from({ length: 40 }, (_, r) => [
    f.user(`s${r}`),
    ...f.block(
      'read_file',
      { path: `/home/user/projects/root/packages/module-${r % 7}/src/nested/file_${r}.ts` },
      'ok',
    ),
  ]).flat();
}

function plan(
  items: readonly ContextItem[],
  config: CompactionConfig,
  trigger: TriggerKind = 'check',
): CompactionPlan {
  return planCompaction({ items, config, tokenizer: o200k, trigger, compactionId: 'c1' });
}

/** A summary item of `tokens` tokens (its text does not matter to the plan). */
function summaryOf(tokens: number): CompactionSummaryItem {
  return { ...itemsFactory(o200k).summary(`${SUMMARY_MESSAGE_PREFIX}\nsummary`, { id: 'new' }), tokens };
}

/** Six rounds of a question, a file read (a 1000-token result unless `short` says so) and a short answer. */
function toolSession(short: (round: number) => boolean = () => false) {
  const f = itemsFactory(o200k);
  return conversation(
    f.system('sys', { id: 'sys' }),
    f.user('task', { id: 'task' }),
    ...[2, 3, 4, 5, 6, 7].map((r) => [
      f.user(words(50), { id: `u${r}` }),
      f.calls([{ name: 'read_file', args: { path: `f${r}.ts` }, id: `call${r}` }], null, { id: `c${r}` }),
      f.result(`call${r}`, words(short(r) ? 20 : 1000, 'x'), { id: `r${r}` }),
      f.assistant(words(20), { id: `a${r}` }),
    ]),
  );
}

/** `u2, a2, …, u<to>, a<to>` */
const roundIds = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => [`u${from + i}`, `a${from + i}`]).flat();

describe('planCompaction: steps in order, stopping at the first that reaches the goal', () => {
  it('a context that truncation alone brings under the target runs only truncate and summarizes nothing', () => {
    const f = itemsFactory(o200k);
    const [call, result] = f.block('read_file', { path: 'a.ts' }, words(5000, 'x'));
    const items = conversation(
      f.system('sys', { id: 'sys' }),
      f.user('task', { id: 'task' }),
      call,
      result,
      f.assistant('done', { id: 'done' }),
    );
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 8000 }));
    expect(p.steps.map((s) => s.name)).toStrictEqual(['truncate']);
    expect(p).toMatchObject({
      strategy: 'truncate',
      toSummarize: [],
      previousSummaries: [],
      overTarget: false,
      impossible: null,
    });
    expect(p.stats.toolResultsTruncated).toBe(1);
    const out = finishCompaction(p, null);
    expect(out).toStrictEqual(prunedItems(p));
    // The carried state (the artifact trail of a.ts) is in the header, and counted in it.
    expect(ids(out)).toStrictEqual([
      'sys',
      'task',
      call.id,
      `${result.id}~cut3907`,
      'done',
      'c1:artifact-trail',
    ]);
    expect(p.headerTokens).toBe(
      sumTokens(out.filter((i) => ['sys', 'task', 'c1:artifact-trail'].includes(i.id))),
    );
    expect(sumTokens(out)).toBeLessThanOrEqual(4000);
  });

  // The dialogue (3080 tokens, no tools: a conversation task, so sliding window, importance,
  // incremental, key events, then full) at several windows (target: half of it).
  it.each<[number, string[], string[], string[]]>([
    [6000, ['sliding_window'], roundIds(2, 5), roundIds(6, 13)],
    [4000, ['sliding_window'], roundIds(2, 8), roundIds(9, 13)],
    // The window leaves u9..a13 but u9; importance (users and the 5 newest others) and incremental
    // (one chunk) keep all of it; key events take a9, which the window had kept.
    [3000, ['sliding_window', 'importance', 'incremental', 'key_events'], roundIds(2, 9), roundIds(10, 13)],
    [
      2000,
      ['sliding_window', 'importance', 'incremental', 'key_events', 'full(keep 2)'],
      roundIds(2, 11),
      roundIds(12, 13),
    ],
    [
      1000,
      ['sliding_window', 'importance', 'incremental', 'key_events', 'full(keep 2)', 'full(keep 1)'],
      roundIds(2, 12),
      roundIds(13, 13),
    ],
    // full(keep 0): the current user message u13 stays (protected), its answer goes.
    [
      600,
      [
        'sliding_window',
        'importance',
        'incremental',
        'key_events',
        'full(keep 2)',
        'full(keep 1)',
        'full(keep 0)',
      ],
      [...roundIds(2, 12), 'a13'],
      ['u13'],
    ],
  ])('window %d → strategies %j; summarized %j; kept %j', (window, strategies, summarized, kept) => {
    const items = dialogue();
    const config = parseCompactionConfig({ maxContextTokens: window });
    const p = plan(items, config);
    expect(p.taskType).toBe('conversation');
    expect(p.steps.map((s) => s.name)).toStrictEqual([...PRUNE_STEPS, ...strategies]);
    expect(p.strategy).toBe(strategies.at(-1));
    expect(ids(p.toSummarize)).toStrictEqual(summarized);
    // Each step stopped at the goal, and only the last reached it.
    const after = p.steps.map((s) => s.tokensAfter);
    expect(after.slice(0, -1).every((n) => n > p.goalTokens)).toBe(true);
    expect(after.at(-1)).toBeLessThanOrEqual(p.goalTokens);
    expect(p.goalTokens).toBe(targetTokens(config));
    const keptItems = p.work.units.filter((u) => !u.removed).flatMap((u) => u.originals);
    expect(ids(keptItems)).toStrictEqual(kept);
    // header + summary at its budget + kept = the last step's total ≤ target.
    expect(p.headerTokens + p.summaryBudget + sumTokens(keptItems)).toBe(after.at(-1));
    const out = finishCompaction(p, summaryOf(p.summaryBudget));
    expect(ids(out).slice(0, 3)).toStrictEqual(['sys', 'task', 'new']);
    expect(ids(out).slice(-kept.length)).toStrictEqual(kept);
    expect(sumTokens(out)).toBeLessThanOrEqual(targetTokens(config));
  });

  it.each([4000, 3000, 2000, 1500, 1000])(
    'window %d: header + carried state + summary budget + kept ≤ target',
    (window) => {
      const items = toolSession();
      const config = parseCompactionConfig({ maxContextTokens: window });
      const p = plan(items, config);
      const trail = p.carried.added.find((i) => i.type === 'ARTIFACT_TRAIL');
      expect(p.carried.trail.files.map((file) => file.path)).toStrictEqual(
        [2, 3, 4, 5, 6, 7].map((r) => `f${r}.ts`),
      );
      // The header counts the carried state.
      expect(p.headerTokens).toBe(8 + (trail?.tokens ?? NaN));
      const kept = p.work.units.filter((u) => !u.removed);
      const keptTokens = kept.reduce((n, u) => n + u.tokens, 0);
      const summary = p.toSummarize.length > 0 ? p.summaryBudget : 0;
      expect(p.steps.at(-1)?.tokensAfter).toBe(p.headerTokens + summary + keptTokens);
      expect(p.headerTokens + summary + keptTokens).toBeLessThanOrEqual(targetTokens(config));
      const out = finishCompaction(p, p.toSummarize.length > 0 ? summaryOf(p.summaryBudget) : null);
      expect(sumTokens(out)).toBeLessThanOrEqual(targetTokens(config));
      expect(out.at(-1)?.id).toBe('c1:artifact-trail');
    },
  );

  it('the rounds trigger goes straight to full(keep k), even over the target with oversized results', () => {
    const f = itemsFactory(o200k);
    const block = f.block('read_file', { path: 'a.ts' }, words(3000, 'x'));
    const items = conversation(
      f.system('sys', { id: 'sys' }),
      f.user('task', { id: 'task' }),
      block,
      f.assistant('ok', { id: 'ok' }),
      ...Array.from({ length: 4 }, (_, i) => [
        f.user(words(50), { id: `u${i + 2}` }),
        f.assistant(words(200), { id: `a${i + 2}` }),
      ]),
    );
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 4000 }), 'rounds');
    expect(p.steps.map((s) => s.name)).toStrictEqual(['full(keep 2)']);
    expect(p.stats).toMatchObject({ toolResultsTruncated: 0, rulesApplied: [] });
    // The oldest unit (the block) went first, and was enough: `ok`, of the same round, stays.
    expect(ids(p.toSummarize)).toStrictEqual(ids(block));
  });

  it.each<TriggerKind>(['manual', 'marker', 'rounds', 'events'])(
    'a context under the target, asked by %s: half the conversation goes',
    (trigger) => {
      const items = dialogue();
      const p = plan(items, DEFAULTS, trigger);
      const conversationTokens = sumTokens(items) - p.headerTokens;
      expect(p.tokensBefore).toBeLessThan(p.targetTokens);
      expect(p.goalTokens).toBe(p.headerTokens + p.summaryBudget + Math.floor(conversationTokens / 2));
      expect(p.summaryBudget).toBeLessThanOrEqual(Math.ceil(conversationTokens / 4));
      expect(p.steps.at(-1)?.name).toBe(trigger === 'rounds' ? 'full(keep 2)' : 'sliding_window');
      expect(ids(p.toSummarize)).toStrictEqual(roundIds(2, 7));
      const out = finishCompaction(p, summaryOf(p.summaryBudget));
      expect(sumTokens(out.slice(3))).toBeLessThanOrEqual(conversationTokens / 2);
      expect(sumTokens(out)).toBeLessThanOrEqual(p.goalTokens);
    },
  );

  it.each<[TriggerKind, boolean]>([
    ['precheck', true],
    ['check', true],
    ['rounds', true],
    ['events', true],
    ['marker', true],
    ['manual', false],
    ['overflow', false],
  ])('the header alone over the target, trigger %s → impossible: %s', (trigger, impossible) => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.system(words(2100)),
      f.user('task'),
      f.assistant('ok'),
      f.user('q'),
      f.assistant(words(500)),
    );
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 4000 }), trigger);
    expect(p.headerTokens).toBe(2107);
    expect(p.impossible).toBe(
      impossible
        ? 'header_exceeds_target: the header and carried state are 2107 tokens; with the smallest summary (200) ' +
            'that is over the target of 2000 (0.5 × 4000); shorten the system prompt, tools or pinned content, ' +
            'or use a larger window'
        : null,
    );
  });

  it('a header under the target leaves the plan possible', () => {
    const p = plan(dialogue(), parseCompactionConfig({ maxContextTokens: 600 }), 'precheck');
    expect(p.impossible).toBeNull();
  });
});

describe('planCompaction: what the agent sent with a result goes with its block', () => {
  // One round of 12 reads, each result followed by the agent's note of the moment (Cline's
  // environment details), and a note after the user's message that follows no block.
  function session() {
    const f = itemsFactory(o200k);
    return conversation(
      f.system('sys', { id: 'sys' }),
      f.user('task', { id: 'task' }),
      f.meta('<environment_details>\n# Current Mode\nACT MODE</environment_details>', { id: 'start' }),
      Array.from({ length: 12 }, (_, i) => [
        f.calls([{ name: 'read_file', args: { path: `src/f${i}.ts` }, id: `call${i}` }], null, {
          id: `c${i}`,
        }),
        f.result(`call${i}`, words(300, `line${i}`), { id: `r${i}` }),
        f.meta(
          `<environment_details>\n# Current Time\n${i} PM ${words(80, `env${i}`)}</environment_details>`,
          {
            id: `env${i}`,
          },
        ),
      ]),
    );
  }

  it('a block removed takes its riders; the blocks kept keep theirs; a note after no block is not one', () => {
    const items = session();
    const config = parseCompactionConfig({ maxContextTokens: 9000 });
    const p = plan(items, config);
    expect(p.steps.map((s) => s.name)).toContain('tool_blocks');
    const removed = new Set(ids(p.toSummarize));
    const blocks = Array.from({ length: 12 }, (_, i) => i);
    // Some blocks went and some stayed; each block's rider shares its fate.
    expect(blocks.filter((i) => removed.has(`c${i}`)).length).toBeGreaterThan(0);
    expect(blocks.filter((i) => !removed.has(`c${i}`)).length).toBeGreaterThan(0);
    for (const i of blocks) expect([i, removed.has(`env${i}`)]).toStrictEqual([i, removed.has(`c${i}`)]);
    expect(removed.has('start')).toBe(false);
    // The prune's stats count them with their blocks.
    expect(p.steps.map((s) => s.name)).not.toContain('sliding_window');
    expect(p.stats.itemsDropped.USER_MESSAGE).toBe(blocks.filter((i) => removed.has(`env${i}`)).length);
    // Whatever room the summary leaves, the refill brings back no rider without its block, and no
    // rider at all: what it said of its moment is old by now.
    let refilled = 0;
    for (let tokens = p.summaryBudget; tokens >= 0; tokens -= 3) {
      const out = ids(finishCompaction(plan(items, config), summaryOf(tokens)));
      refilled = Math.max(
        refilled,
        blocks.filter((i) => removed.has(`c${i}`) && out.includes(`c${i}`)).length,
      );
      expect(blocks.filter((i) => removed.has(`env${i}`) && out.includes(`env${i}`))).toStrictEqual([]);
    }
    expect(refilled).toBeGreaterThan(0);
  });
});

describe('sliding_window: a block’s riders are part of its results’ message', () => {
  it('kept with the block and not counted apart: the window holds as many blocks as without them', () => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.user('task', { id: 'task' }),
      Array.from({ length: 6 }, (_, i) => [
        f.calls([{ name: 'bash', args: { command: `make t${i}` }, id: `call${i}` }], null, { id: `c${i}` }),
        f.result(`call${i}`, `ok ${i}`, { id: `r${i}` }),
        f.meta(`<environment_details>t${i}</environment_details>`, { id: `env${i}` }),
      ]),
      f.assistant('done', { id: 'done' }),
      f.user('go on', { id: 'go' }),
    );
    const work = new WorkingContext(items, { window: DEFAULTS.maxContextTokens, summaryReserve: 100 });
    strategyStep('sliding_window', parseCompactionConfig({ slidingWindowUserToolMessages: 4 }))(work, 0);
    const kept = work.units.filter((u) => !u.removed).flatMap((u) => ids(u.originals));
    // 4 user/tool messages: the user's, then three blocks' results, each with its rider.
    expect(kept).toStrictEqual(['c3', 'r3', 'env3', 'c4', 'r4', 'env4', 'c5', 'r5', 'env5', 'done', 'go']);
  });
});

describe('planCompaction: previous summaries, pinned and protected units', () => {
  it('previous summaries are replaced when something is summarized', () => {
    const f = itemsFactory(o200k);
    const old = f.summary(`${SUMMARY_MESSAGE_PREFIX}\nearlier work`, { id: 'old' });
    const items = dialogue(f, [old]);
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 4000 }));
    expect(ids(p.previousSummaries)).toStrictEqual(['old']);
    expect(p.toSummarize.length).toBeGreaterThan(0);
    const out = finishCompaction(p, summaryOf(p.summaryBudget));
    expect(ids(out)).not.toContain('old');
    expect(ids(out).slice(0, 3)).toStrictEqual(['sys', 'task', 'new']);
  });

  it('previous summaries stay when nothing is summarized', () => {
    const f = itemsFactory(o200k);
    const old = f.summary(`${SUMMARY_MESSAGE_PREFIX}\nearlier work`, { id: 'old' });
    const [call, result] = f.block('read_file', { path: 'a.ts' }, words(5000, 'x'));
    const items = conversation(
      f.system('sys', { id: 'sys' }),
      f.user('task', { id: 'task' }),
      old,
      call,
      result,
      f.assistant('done', { id: 'done' }),
    );
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 8000 }));
    expect(p.strategy).toBe('truncate');
    expect(p.previousSummaries).toStrictEqual([]);
    expect(ids(finishCompaction(p, null))).toStrictEqual([
      'sys',
      'task',
      'old',
      call.id,
      `${result.id}~cut3890`,
      'done',
      'c1:artifact-trail',
    ]);
  });

  it('pinned items and the current user message stay through full(keep 0)', () => {
    const f = itemsFactory(o200k);
    const pin = f.user('<Pin>never touch prod</Pin>', { id: 'pin', pinned: true });
    const deploy = f.block('bash', { command: 'deploy' }, 'ok', { pinned: true });
    const items = dialogue(f, [pin, ...deploy]);
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 600 }));
    expect(p.strategy).toBe('full(keep 0)');
    expect(p.overTarget).toBe(true);
    const out = finishCompaction(p, summaryOf(p.summaryBudget));
    expect(ids(out)).toStrictEqual(['sys', 'task', 'pin', 'new', ...ids(deploy), 'u13', 'c1:artifact-trail']);
  });

  it('the latest results, cut to the seed’s preview at least, leave the summary its room: the target is met', () => {
    // A 4k window, and the latest call brought six results of ~1,500 tokens each: cut to 200-token
    // previews they still take ~1,450 of the 2,000-token target, more than the summary's usual share
    // of the room would leave them.
    const f = itemsFactory(o200k);
    const reads = [0, 1, 2, 3, 4, 5];
    const call = f.calls(
      reads.map((i) => ({ name: 'read_file', args: { path: `f${i}.ts` }, id: `c${i}` })),
      null,
      { id: 'reads' },
    );
    const items = conversation(
      dialogue(f),
      f.user('read them', { id: 'u14' }),
      call,
      reads.map((i) => f.result(`c${i}`, words(1500, `line${i}`), { id: `r${i}` })),
    );
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 4000 }));
    const out = finishCompaction(p, summaryOf(p.summaryBudget));
    expect(sumTokens(out)).toBeLessThanOrEqual(p.targetTokens);
    expect(ids(out)).toContain('reads');
    expect(unansweredCalls(pairToolCalls(out))).toStrictEqual([]);
  });

  it('a call waiting for its result is never summarized', () => {
    const f = itemsFactory(o200k);
    const pending = f.calls([{ name: 'bash', args: { command: 'npm test' } }], null, { id: 'pending' });
    const items = [...dialogue(f), { ...pending, round: 13 }];
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 600 }));
    expect(ids(p.toSummarize)).not.toContain('pending');
    const out = finishCompaction(p, summaryOf(p.summaryBudget));
    expect(ids(out).filter((id) => id === 'pending' || id === 'u13')).toStrictEqual(['u13', 'pending']);
    expect(unansweredCalls(pairToolCalls(out)).map((c) => c.callItemId)).toStrictEqual(['pending']);
  });

  it('a call the user spoke after waits for nothing: it may be summarized (the request gives it a missing result)', () => {
    // Cline's interrupted tool: the call, then the user's next message instead of its result.
    const f = itemsFactory(o200k);
    const dropped = f.calls([{ name: 'ask_followup_question', args: { question: words(300, 'q') } }], null, {
      id: 'dropped',
    });
    const items = [
      ...dialogue(f),
      { ...dropped, round: 13 },
      { ...f.user(`resume ${words(40, 'r')}`, { id: 'resume' }), round: 14 },
    ];
    const work = new WorkingContext(items, { window: 600, summaryReserve: null });
    const unitOf = (id: string) => work.units.find((u) => u.originals.some((i) => i.id === id));
    expect(unitOf('dropped')?.protected).toBe(false);
    expect(unitOf('resume')?.protection).toBe('current_message');
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 600 }));
    expect(ids(p.toSummarize)).toContain('dropped');
    // Without the user's message after it, the same call is waiting and stays.
    const waiting = new WorkingContext(items.slice(0, -1), { window: 600, summaryReserve: null });
    expect(waiting.units.find((u) => u.originals.some((i) => i.id === 'dropped'))?.protection).toBe(
      'pending_call',
    );
  });
});

describe('one reply whose parallel calls are written a message each, their results after the last', () => {
  // Converted lists (a Claude Code or Codex session as OpenAI messages) split one reply this way.
  function split(f = itemsFactory(o200k), results: number) {
    const replies = [1, 2, 3].map((n) =>
      f.calls([{ name: 'read_file', args: { path: `src/f${n}.ts` } }], null, { id: `call${n}` }),
    );
    const outputs = replies
      .slice(0, results)
      .map((reply, n) =>
        f.result(reply.message.tool_calls?.[0]?.id ?? '', words(60, `out${n}`), { id: `result${n + 1}` }),
      );
    return [...dialogue(f), ...[...replies, ...outputs].map((item) => ({ ...item, round: 13 }))];
  }
  const unitOf = (work: WorkingContext, id: string) =>
    work.units.find((u) => u.originals.some((i) => i.id === id));

  it.each([
    ['every call waiting', 0, 'pending_call'],
    ['every result in, after the last call', 3, 'fresh_results'],
  ] as const)('%s: every block of the reply is kept, not only the last', (_, results, protection) => {
    const items = split(itemsFactory(o200k), results);
    const work = new WorkingContext(items, { window: 2000, summaryReserve: null });
    expect([1, 2, 3].map((n) => unitOf(work, `call${n}`)?.protection)).toStrictEqual([
      protection,
      protection,
      protection,
    ]);
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 2000 }));
    expect(ids(p.toSummarize).filter((id) => /^(call|result)/.test(id))).toStrictEqual([]);
  });

  it('calls that never get results are no one reply: the blocks kept for it stay within what the window leaves beside the header', () => {
    const f = itemsFactory(o200k);
    const calls = Array.from({ length: 120 }, (_, n) => ({
      ...f.calls([{ name: 'write_file', args: { path: `src/g${n}.ts`, content: words(40, 'w') } }], null, {
        id: `g${n}`,
      }),
      round: 13,
    }));
    const work = new WorkingContext([...dialogue(f), ...calls], { window: 4000, summaryReserve: null });
    const kept = work.units.filter((u) => u.protection === 'pending_call');
    expect(kept.length).toBeGreaterThan(1);
    expect(kept.length).toBeLessThan(120);
    expect(kept.reduce((n, u) => n + u.tokens, 0)).toBeLessThanOrEqual(4000 - work.headerTokens);
  });

  it('calls still waiting that take more than half the window, beside a small header: every one is kept', () => {
    const f = itemsFactory(o200k);
    const calls = [1, 2, 3].map((n) => ({
      ...f.calls(
        [{ name: 'write_file', args: { path: `src/w${n}.ts`, content: words(350, `w${n}`) } }],
        null,
        {
          id: `call${n}`,
        },
      ),
      round: 13,
    }));
    const items = [...dialogue(f), ...calls];
    const work = new WorkingContext(items, { window: 4000, summaryReserve: null });
    const waiting = [1, 2, 3].map((n) => unitOf(work, `call${n}`));
    expect(waiting.reduce((n, u) => n + (u?.tokens ?? 0), 0)).toBeGreaterThan(2000);
    expect(waiting.map((u) => u?.protection)).toStrictEqual(['pending_call', 'pending_call', 'pending_call']);
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 4000 }));
    expect(ids(p.toSummarize).filter((id) => id.startsWith('call'))).toStrictEqual([]);
  });

  it('calls still waiting leave room for the current message and a summary: the compaction ends within the window, every call kept', () => {
    const f = itemsFactory(o200k);
    const current = { ...f.user(words(300, 'now'), { id: 'current' }), round: 13 };
    const session = (argumentWords: number) => {
      const calls = [0, 1, 2, 3].map((k) => ({
        ...f.calls(
          [{ name: 'write_file', args: { path: `src/w${k}.ts`, content: words(argumentWords, `w${k}`) } }],
          null,
          { id: `call${k}` },
        ),
        round: 13,
      }));
      return { calls, items: [...dialogue(f), current, ...calls] };
    };
    const config = parseCompactionConfig({ maxContextTokens: 4000 });
    const callIds = (items: readonly ContextItem[]) =>
      items.flatMap((i) =>
        i.type === 'ASSISTANT_MESSAGE' ? (i.message.tool_calls ?? []).map((c) => c.id) : [],
      );
    // Right before a request, whether the calls fit whole or not: every call stays; where they do
    // not fit, the oldest's arguments are cut first.
    for (const [argumentWords, cutFirst] of [
      [420, null],
      [900, 'call0'],
    ] as const) {
      const { calls, items } = session(argumentWords);
      const p = plan(items, config, 'precheck');
      const out = finishCompaction(p, summaryOf(p.summaryBudget));
      expect(sumTokens(out)).toBeLessThanOrEqual(4000);
      expect(ids(out)).toContain('current');
      expect(callIds(out)).toStrictEqual(callIds(calls));
      const cut = ids(out).filter((id) => /^call\d~cut\d+$/.test(id));
      expect(cut[0]?.split('~')[0] ?? null).toBe(cutFirst);
    }
    // After the reply, no request before their results: every call stays whole.
    const after = plan(session(900).items, config, 'check');
    expect(ids(after.toSummarize).filter((id) => id.startsWith('call'))).toStrictEqual([]);
    expect(
      after.work.units.filter((u) => u.originals[0]?.id.startsWith('call')).map((u) => u.cuts.length),
    ).toStrictEqual([0, 0, 0, 0]);
  });

  it('a result in after a later reply, for a call made before it: the model has not seen it; it stays with its call', () => {
    // A(c1) A(c2) T(c2) A(c3) T(c1) T(c3): c1's result came late, after c2's was answered.
    const f = itemsFactory(o200k);
    const calls = [1, 2, 3].map((n) => ({
      ...f.calls([{ name: 'read_file', args: { path: `src/r${n}.ts` } }], null, { id: `call${n}` }),
      round: 13,
    }));
    const result = (n: number, size: number) => ({
      ...f.result(calls[n - 1]?.message.tool_calls?.[0]?.id ?? '', words(size, `out${n}`), {
        id: `result${n}`,
      }),
      round: 13,
    });
    const [call1, call2, call3] = calls as [ContextItem, ContextItem, ContextItem];
    const items = [...dialogue(f), call1, call2, result(2, 40), call3, result(1, 5000), result(3, 40)];
    const config = parseCompactionConfig({ maxContextTokens: 4000 });
    const work = new WorkingContext(items, { window: 4000, summaryReserve: null });
    expect(unitOf(work, 'call1')?.protection).toBe('fresh_results');
    for (const trigger of ['check', 'precheck', 'overflow'] as const) {
      const p = plan(items, config, trigger);
      expect(ids(p.toSummarize)).not.toContain('result1');
      const out = finishCompaction(p, summaryOf(p.summaryBudget));
      expect(sumTokens(out)).toBeLessThanOrEqual(4000);
      expect(unansweredCalls(pairToolCalls(out))).toStrictEqual([]);
      expect(out.some((i) => i.id === 'result1' || i.sourceId === 'result1')).toBe(true);
    }
  });

  it("the reply's text written after its calls, before their results: the calls still wait and are kept", () => {
    const f = itemsFactory(o200k);
    const text = { ...f.assistant(`Implementing it now ${words(20, 't')}`, { id: 'text' }), round: 13 };
    const items = [...split(f, 0), text];
    const work = new WorkingContext(items, { window: 2000, summaryReserve: null });
    expect([1, 2, 3].map((n) => unitOf(work, `call${n}`)?.protection)).toStrictEqual([
      'pending_call',
      'pending_call',
      'pending_call',
    ]);
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 2000 }));
    expect(ids(p.toSummarize).filter((id) => id.startsWith('call'))).toStrictEqual([]);
    // Their results in after the text: the model has not seen them; they stay with their calls.
    const replies = split(f, 3);
    const late = [...replies.slice(0, -3), text, ...replies.slice(-3)];
    const fresh = new WorkingContext(late, { window: 2000, summaryReserve: null });
    expect([1, 2, 3].map((n) => unitOf(fresh, `call${n}`)?.protection)).toStrictEqual([
      'fresh_results',
      'fresh_results',
      'fresh_results',
    ]);
    // The user spoke between a block whose second call never got its result and the text: the
    // text answers the user; the block waits for nothing.
    const both = f.calls(
      [
        { name: 'read_file', args: { path: 'src/x.ts' } },
        { name: 'read_file', args: { path: 'src/y.ts' } },
      ],
      null,
      { id: 'both' },
    );
    const spoke = [
      ...dialogue(f),
      { ...both, round: 13 },
      { ...f.result(both.message.tool_calls?.[0]?.id ?? '', words(200, 'x')), round: 13 },
      { ...f.user(`go on ${words(10, 'u')}`), round: 14 },
      { ...text, round: 14 },
    ];
    const answeredUser = new WorkingContext(spoke, { window: 2000, summaryReserve: null });
    expect(unitOf(answeredUser, 'both')?.protected).toBe(false);
    // Results in before the text: the model saw them when it wrote it; nothing waits.
    const answered = [...split(f, 3), text];
    const seen = new WorkingContext(answered, { window: 2000, summaryReserve: null });
    expect([1, 2, 3].map((n) => unitOf(seen, `call${n}`)?.protected)).toStrictEqual([false, false, false]);
  });

  it("results in are kept with every block of the reply whatever their size, as one block's would be", () => {
    const f = itemsFactory(o200k);
    const replies = [1, 2].map((n) =>
      f.calls([{ name: 'read_file', args: { path: `src/big${n}.ts` } }], null, { id: `big${n}` }),
    );
    const outputs = replies.map((reply, n) =>
      f.result(reply.message.tool_calls?.[0]?.id ?? '', words(1500, `big${n}`), { id: `bigout${n + 1}` }),
    );
    const items = [...dialogue(f), ...[...replies, ...outputs].map((item) => ({ ...item, round: 13 }))];
    const work = new WorkingContext(items, { window: 4000, summaryReserve: null });
    expect([1, 2].map((n) => unitOf(work, `big${n}`)?.protection)).toStrictEqual([
      'fresh_results',
      'fresh_results',
    ]);
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 4000 }));
    expect(ids(p.toSummarize).filter((id) => id.startsWith('big'))).toStrictEqual([]);
  });

  it('a block whose result came before the next call is an earlier reply: not kept for it', () => {
    const f = itemsFactory(o200k);
    const earlier = f.block('read_file', { path: 'src/e.ts' }, words(200, 'e'));
    const items = [...split(f, 3), ...earlier.map((item) => ({ ...item, round: 13 }))];
    const work = new WorkingContext(items, { window: 2000, summaryReserve: null });
    expect(unitOf(work, earlier[0].id)?.protection).toBe('fresh_results');
    expect(unitOf(work, 'call3')?.protected).toBe(false);
  });
});

describe('finishCompaction: header → summary → kept, refilled toward the goal', () => {
  // Window 2000: full(keep 2) keeps rounds 12 and 13 (512 tokens); goal 1000, summary budget 297.
  it.each([297, 200, 30, 1])(
    'a summary of %d tokens: removed units come back in order, under the goal, between the summary and the kept rounds',
    (summaryTokens) => {
      const items = dialogue();
      const p = plan(items, parseCompactionConfig({ maxContextTokens: 2000 }));
      expect(p).toMatchObject({ strategy: 'full(keep 2)', goalTokens: 1000, summaryBudget: 297 });
      const out = finishCompaction(p, summaryOf(summaryTokens));
      expect(ids(out).slice(0, 3)).toStrictEqual(['sys', 'task', 'new']);
      expect(ids(out).slice(-4)).toStrictEqual(roundIds(12, 13));
      // Each comes back whole, or (the oldest of them) as a preview of its text.
      const refilled = out.slice(3, -4).map((i) => i.sourceId ?? i.id);
      expect(refilled.every((id) => ids(p.toSummarize).includes(id))).toBe(true);
      expect(refilled).toStrictEqual(ids(items).filter((id) => refilled.includes(id)));
      expect(out.slice(4, -4).every((i) => i.sourceId === undefined)).toBe(true);
      expect(sumTokens(out)).toBeLessThanOrEqual(p.goalTokens);
      // Filled toward the goal: what is left is less than the shortest preview worth giving back.
      expect(p.goalTokens - sumTokens(out)).toBeLessThan(50 + 30);
    },
  );

  // The newest removed units, newest first, until one does not fit whole: that one comes back as a
  // preview of its text when the room holds one, and nothing older comes back (no question without
  // the answer that followed it).
  it.each<[number, string[]]>([
    [297, ['a11~cut153']],
    [200, ['u11', 'a11']],
    [30, ['a10~cut164', 'u11', 'a11']],
    [1, ['a10', 'u11', 'a11']],
  ])(
    'a summary of %d tokens → the newest removed units in a row come back: %j',
    (summaryTokens, refilled) => {
      const p = plan(dialogue(), parseCompactionConfig({ maxContextTokens: 2000 }));
      const out = finishCompaction(p, summaryOf(summaryTokens));
      expect(ids(out)).toStrictEqual(['sys', 'task', 'new', ...refilled, ...roundIds(12, 13)]);
    },
  );

  it('a kept cut result grows back toward the goal, newest first, before anything removed comes back', () => {
    const p = plan(toolSession(), parseCompactionConfig({ maxContextTokens: 2000 }));
    expect(ids(p.toSummarize)).toStrictEqual([
      ...['u2', 'c2', 'r2', 'a2', 'u3', 'c3', 'r3', 'a3', 'u4', 'c4', 'r4', 'a4', 'u5', 'c5', 'r5', 'a5'],
      'u6',
    ]);
    const out = finishCompaction(p, summaryOf(20));
    // Round 7's result, cut to 200 tokens by the truncate step, takes the room the summary left.
    expect(ids(out)).toStrictEqual([
      'sys',
      'task',
      'new',
      'c6',
      'r6~cut200',
      'a6',
      'u7',
      'c7',
      'r7~cut465',
      'a7',
      'c1:artifact-trail',
    ]);
    expect(sumTokens(out)).toBeLessThanOrEqual(p.goalTokens);
    expect(sumTokens(out)).toBeGreaterThan(p.goalTokens - 20);
  });

  it('a removed tool block that does not fit whole comes back with its results as previews', () => {
    // Rounds 6 and 7 read short files: nothing kept is cut, the room goes to round 5's block.
    const p = plan(
      toolSession((r) => r >= 6),
      parseCompactionConfig({ maxContextTokens: 1200 }),
    );
    expect(ids(p.toSummarize)).toStrictEqual([
      ...['u2', 'c2', 'r2', 'a2', 'u3', 'c3', 'r3', 'a3', 'u4', 'c4', 'r4', 'a4', 'u5'],
      ...['c5', 'r5'],
    ]);
    const out = finishCompaction(p, summaryOf(20));
    // Its result was cut to 200 tokens by the truncate step before the block was removed: it comes
    // back cut again, to the preview the room allows.
    expect(ids(out).slice(0, 6)).toStrictEqual(['sys', 'task', 'new', 'c5', 'r5~cut158', 'a5']);
    expect(out[4]).toMatchObject({ sourceId: 'r5', message: { tool_call_id: 'call5' } });
    expect(unansweredCalls(pairToolCalls(out))).toStrictEqual([]);
    expect(sumTokens(out)).toBeLessThanOrEqual(p.goalTokens);
    expect(sumTokens(out)).toBeGreaterThan(p.goalTokens - 20);
  });

  it('a removed message too large for the room comes back as a preview of its text', () => {
    // A SWE-agent demonstration: a meta message of ~7,000 tokens before the task, at an 8k window.
    const f = itemsFactory(o200k);
    const items = conversation(
      f.system(words(800, 'rules'), { id: 'sys' }),
      f.meta(`Here is a demonstration: ${words(7000, 'demo')}`, { id: 'demo' }),
      f.user('Fix the missing colon.', { id: 'task' }),
      ...f.block('open', { path: 'tests/missing_colon.py' }, words(100, 'line')),
      f.assistant('Fixed.', { id: 'done' }),
    );
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 8000 }));
    expect(ids(p.toSummarize)).toContain('demo');
    const out = finishCompaction(p, summaryOf(100));
    const demo = out.find((i) => i.sourceId === 'demo');
    expect(demo?.id).toMatch(/^demo~cut\d+$/);
    expect(messageText((demo as ContextItem & { message: UserMessage }).message)).toMatch(
      /^Here is a demonstration: demo[\s\S]*\n\[TRUNCATED original~\d+ tokens; recall #[0-9a-f]+\]$/,
    );
    expect(sumTokens(out)).toBeLessThanOrEqual(p.goalTokens);
    expect(sumTokens(out)).toBeGreaterThan(0.9 * p.goalTokens);
  });

  it('a removed block whose reasoning is too large for the room comes back with its reasoning as a preview, its call whole', () => {
    const f = itemsFactory(o200k);
    const [call, result] = f.block('edit', { path: 'a.py', text: 'x = 1' }, 'ok', {
      text: words(3000, 'thought'),
    });
    const items = conversation(
      f.system(words(800, 'rules'), { id: 'sys' }),
      f.user('Fix a.py.', { id: 'task' }),
      call,
      result,
      f.user('And b.py.', { id: 'next' }),
      ...f.block('open', { path: 'b.py' }, words(100, 'line')),
    );
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 6000 }));
    expect(ids(p.toSummarize)).toContain(call.id);
    const out = finishCompaction(p, summaryOf(100));
    const reasoning = out.find((i) => i.sourceId === call.id);
    expect(reasoning?.id).toMatch(new RegExp(`^${call.id}~text\\d+$`));
    expect(reasoning).toMatchObject({ message: { tool_calls: call.message.tool_calls } });
    expect(out.map((i) => i.id)).toContain(result.id);
    expect(unansweredCalls(pairToolCalls(out))).toStrictEqual([]);
    expect(sumTokens(out)).toBeLessThanOrEqual(p.goalTokens);
  });

  it('the last resort cuts the latest reply’s reasoning, and the room the summary leaves grows that same cut back', () => {
    const f = itemsFactory(o200k);
    const [call, result] = f.block('edit', { path: 'a.py', text: words(100, 'code') }, 'ok', {
      text: words(3000, 'thought'),
    });
    const items = conversation(
      f.system('sys', { id: 'sys' }),
      f.user('Fix a.py.', { id: 'task' }),
      f.assistant(words(300, 'earlier'), { id: 'earlier' }),
      f.user('Go on.', { id: 'now' }),
      call,
      result,
    );
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 4000 }));
    expect(p.strategy).toBe('reasoning');
    expect(ids(p.toSummarize)).toStrictEqual(['earlier']);
    const planned = p.work.units.find((u) => u.originals[0]?.id === call.id)?.cuts[0];
    expect(planned?.id).toMatch(new RegExp(`^${call.id}~text\\d+$`));
    const out = finishCompaction(p, summaryOf(20));
    const reply = out.find((i) => i.sourceId === call.id);
    const preview = (id: string | undefined) => Number(/~text(\d+)$/.exec(id ?? '')?.[1]);
    expect(preview(reply?.id)).toBeGreaterThan(preview(planned?.id));
    expect(reply).toMatchObject({ message: { tool_calls: call.message.tool_calls } });
    expect(sumTokens(out)).toBeLessThanOrEqual(p.goalTokens);
  });

  it('the carried state grows to keep paths whole only in the room the rest of the header leaves', () => {
    // 90 files in 30 directories under a long root, at 8k: their paths alone, written from their
    // directories, are more than a 0.2 share of the carried state.
    const f = itemsFactory(o200k);
    const reads = Array.from({ length: 90 }, (_, r) => [
      f.user(`s${r}`),
      ...f.block(
        'read_file',
        { path: `/home/user/projects/some-long-root/packages/module-${r % 30}/src/file_${r}.ts` },
        'ok',
      ),
    ]);
    const trailOf = (p: CompactionPlan) =>
      p.carried.items.find((i) => i.type === 'ARTIFACT_TRAIL')?.tokens ?? 0;
    for (const [system, grows] of [
      [1000, true],
      [2500, false],
    ] as const) {
      const items = conversation(
        f.system(words(system, 'rules'), { id: 'sys' }),
        f.user('task', { id: 'task' }),
        reads,
      );
      const grown = plan(items, parseCompactionConfig({ maxContextTokens: 8000 }));
      const share = plan(items, parseCompactionConfig({ maxContextTokens: 8000, carriedStateMaxRatio: 0.2 }));
      expect(trailOf(grown) > trailOf(share), `system prompt ${system}`).toBe(grows);
      expect(grown.impossible).toBeNull();
      expect(grown.overTarget).toBe(false);
    }
  });

  it('the last resort never cuts pinned content', () => {
    const f = itemsFactory(o200k);
    const [pinnedCall, pinnedResult] = f.block('edit', { path: 'keep.py', text: 'x' }, 'ok', {
      text: words(1500, 'pinnedthought'),
      pinned: true,
    });
    const [call, result] = f.block('edit', { path: 'a.py', text: words(100, 'code') }, 'ok', {
      text: words(2500, 'thought'),
    });
    const items = conversation(
      f.system('sys', { id: 'sys' }),
      f.user('Fix a.py.', { id: 'task' }),
      pinnedCall,
      pinnedResult,
      f.assistant(words(300, 'earlier'), { id: 'earlier' }),
      f.user('Go on.', { id: 'now' }),
      call,
      result,
    );
    const p = plan(items, parseCompactionConfig({ maxContextTokens: 8000 }));
    expect(p.strategy).toBe('reasoning');
    const out = finishCompaction(p, summaryOf(20));
    expect(out.find((i) => i.id === pinnedCall.id)).toMatchObject({ message: pinnedCall.message });
    expect(out.some((i) => i.sourceId === pinnedCall.id)).toBe(false);
    expect(out.find((i) => i.sourceId === call.id)?.id).toMatch(/~text\d+$/);
  });

  /** A reply that writes `n` files, each call's arguments under the seed's threshold (500 tokens). */
  const writes = (f: ItemsFactory, n: number, id: string) =>
    f.calls(
      Array.from({ length: n }, (_, k) => ({
        name: 'write_to_file',
        args: { path: `src/m${k}.py`, content: words(200, `code${k}`) },
      })),
      null,
      { id },
    );

  it('a removed reply of many calls, each under the threshold, comes back with all their arguments cut', () => {
    const f = itemsFactory(o200k);
    const call = writes(f, 8, 'writes');
    const items = conversation(
      f.system('sys', { id: 'sys' }),
      f.user('Write the modules.', { id: 'task' }),
      call,
      ...(call.message.tool_calls ?? []).map((c) => f.result(c.id, 'saved')),
      f.user(`Now read the log. ${words(1500, 'context')}`, { id: 'now' }),
      ...f.block('read_file', { path: 'log.txt' }, words(50, 'log')),
    );
    const config = parseCompactionConfig({ maxContextTokens: 8000 });
    expect(call.tokens).toBeGreaterThan(targetTokens(config) - 2000);
    const p = plan(items, config);
    expect(ids(p.toSummarize)).toContain('writes');
    const out = finishCompaction(p, summaryOf(100));
    const back = out.find((i) => i.sourceId === 'writes');
    expect(back?.id).toMatch(/^writes~cutall\d+$/);
    // Every call is there, each cut to a preview with its path, and answered.
    const calls = back?.type === 'ASSISTANT_MESSAGE' ? (back.message.tool_calls ?? []) : [];
    expect(calls.map((c) => c.id)).toStrictEqual(call.message.tool_calls?.map((c) => c.id));
    for (const [k, c] of calls.entries()) {
      expect(c.function.arguments).toContain(`src/m${k}.py`);
      expect(c.function.arguments).toMatch(/\[TRUNCATED original~\d+ tokens; recall #[0-9a-f]+\]$/);
    }
    expect(unansweredCalls(pairToolCalls(out))).toStrictEqual([]);
    expect(sumTokens(out)).toBeLessThanOrEqual(p.goalTokens);
  });

  it('a removed reply whose larger call the prune cut comes back with every call cut, shorter than the seed’s preview where only that fits', () => {
    const f = itemsFactory(o200k);
    const call = f.calls(
      [
        { name: 'write_to_file', args: { path: 'src/big.py', content: words(700, 'big') } },
        ...Array.from({ length: 9 }, (_, k) => ({
          name: 'write_to_file',
          args: { path: `src/m${k}.py`, content: words(200, `code${k}`) },
        })),
      ],
      null,
      { id: 'writes' },
    );
    const items = conversation(
      f.system('sys', { id: 'sys' }),
      f.user('Write the modules.', { id: 'task' }),
      call,
      ...(call.message.tool_calls ?? []).map((c) => f.result(c.id, 'saved')),
      f.user(`Now read the log. ${words(2000, 'context')}`, { id: 'now' }),
      ...f.block('read_file', { path: 'log.txt' }, words(50, 'log')),
    );
    const config = parseCompactionConfig({ maxContextTokens: 8000 });
    const p = plan(items, config);
    // The prune cut the call over the threshold alone; the reply was removed all the same.
    expect(p.work.units.find((u) => u.originals[0]?.id === 'writes')?.cuts[0]?.id).toMatch(/^writes~cut200$/);
    expect(ids(p.toSummarize)).toContain('writes');
    const out = finishCompaction(p, summaryOf(100));
    const back = out.find((i) => i.sourceId === 'writes');
    const preview = Number(/^writes~cutall(\d+)$/.exec(back?.id ?? '')?.[1]);
    expect(preview).toBeGreaterThanOrEqual(50);
    expect(preview).toBeLessThan(config.previewTokens);
    const calls = back?.type === 'ASSISTANT_MESSAGE' ? (back.message.tool_calls ?? []) : [];
    expect(
      calls.every((c) => /\[TRUNCATED original~\d+ tokens; recall #[0-9a-f]+\]$/.test(c.function.arguments)),
    ).toBe(true);
    expect(unansweredCalls(pairToolCalls(out))).toStrictEqual([]);
    expect(sumTokens(out)).toBeLessThanOrEqual(p.goalTokens);
  });

  it('the last resort cuts the arguments of the latest calls, each under the threshold, once their results are in; never while they wait', () => {
    const f = itemsFactory(o200k);
    const call = writes(f, 10, 'writes');
    const results = (call.message.tool_calls ?? []).map((c) => f.result(c.id, 'saved'));
    const head = [f.system('sys', { id: 'sys' }), f.user('Write the modules.', { id: 'task' })];
    const config = parseCompactionConfig({ maxContextTokens: 4000 });
    expect(call.tokens).toBeGreaterThan(config.maxContextTokens);
    const answered = plan(conversation(...head, call, ...results), config);
    expect(answered.strategy).toBe('reasoning');
    expect(answered.work.units.find((u) => u.originals[0]?.id === 'writes')?.cuts[0]?.id).toMatch(
      /^writes~cutall\d+$/,
    );
    const out = finishCompaction(answered, summaryOf(20));
    expect(sumTokens(out)).toBeLessThanOrEqual(config.maxContextTokens);
    expect(unansweredCalls(pairToolCalls(out))).toStrictEqual([]);
    // Waiting for their results, the calls stay whole.
    const waiting = plan(conversation(...head, call), config, 'check');
    expect(waiting.work.units.find((u) => u.originals[0]?.id === 'writes')?.cuts[0]).toBeUndefined();
  });

  it('the last resort goes under the seed’s preview only where the seed’s would leave the request over the window', () => {
    const f = itemsFactory(o200k);
    const call = writes(f, 20, 'writes');
    const results = (call.message.tool_calls ?? []).map((c) => f.result(c.id, 'saved'));
    const config = parseCompactionConfig({ maxContextTokens: 4000 });
    const p = plan(
      conversation(f.system('sys', { id: 'sys' }), f.user('Write them.', { id: 'task' }), call, ...results),
      config,
    );
    const id = p.work.units.find((u) => u.originals[0]?.id === 'writes')?.cuts[0]?.id ?? '';
    const preview = Number(/^writes~cutall(\d+)$/.exec(id)?.[1]);
    expect(preview).toBeLessThan(config.previewTokens);
    expect(preview).toBeGreaterThanOrEqual(50);
    const out = finishCompaction(p, summaryOf(20));
    expect(sumTokens(out)).toBeLessThanOrEqual(config.maxContextTokens);
    expect(unansweredCalls(pairToolCalls(out))).toStrictEqual([]);
  });

  it('still over the window, the last resort cuts the answered calls’ results too, each under the threshold; never a waiting call’s', () => {
    const f = itemsFactory(o200k);
    const call = f.calls(
      Array.from({ length: 3 }, (_, k) => ({ name: 'read_file', args: { path: `src/m${k}.py` } })),
      null,
      { id: 'reads' },
    );
    // Each result under the seed's 600-token threshold, all three over what the window leaves.
    const results = (call.message.tool_calls ?? []).map((c, k) => f.result(c.id, words(280, `line${k}`)));
    const config = parseCompactionConfig({ maxContextTokens: 2000 });
    const head = [f.system('sys', { id: 'sys' }), f.user(`Read them. ${words(700, 'task')}`, { id: 'task' })];
    const items = conversation(...head, call, ...results);
    expect(results.every((r) => r.tokens < config.toolResultThreshold)).toBe(true);
    expect(sumTokens(items)).toBeGreaterThan(config.maxContextTokens);
    const p = plan(items, config);
    const unit = p.work.units.find((u) => u.originals[0]?.id === 'reads');
    expect(unit?.cuts.slice(1).filter(Boolean).length).toBeGreaterThan(0);
    const out = finishCompaction(p, summaryOf(20));
    expect(sumTokens(out)).toBeLessThanOrEqual(config.maxContextTokens);
    expect(unansweredCalls(pairToolCalls(out))).toStrictEqual([]);
    // Two calls still waiting: the result in stays whole.
    const waiting = plan(conversation(...head, call, results[0] as ContextItem), config, 'check');
    const part = waiting.work.units.find((u) => u.originals[0]?.id === 'reads');
    expect(part?.protection).toBe('pending_call');
    expect(part?.cuts.filter(Boolean)).toHaveLength(0);
  });

  it('still over the window, the last resort cuts a reply’s text shorter than the seed’s preview, one cut before too; its calls whole', () => {
    const f = itemsFactory(o200k);
    const [call] = f.block('read_file', { path: 'a.py' }, 'ok', { text: words(800, 'thought') });
    const reply = call as Extract<ContextItem, { type: 'ASSISTANT_MESSAGE' }>;
    const head = [f.system('sys', { id: 'sys' }), f.user(`Fix a.py. ${words(700, 'task')}`, { id: 'task' })];
    // The current message fits the window with the header; with the reply at the seed's preview too, it does not.
    const now = f.user(`Now this. ${words(1150, 'now')}`, { id: 'now' });
    const config = parseCompactionConfig({ maxContextTokens: 2000 });
    const seedCut = planReasoning(reply, o200k, config.previewTokens);
    const before = seedCut?.write() as ContextItem;
    expect(before.id).toBe(`${call.id}~text${config.previewTokens}`);
    for (const [name, form] of [
      ['whole', call],
      ['cut before', before],
    ] as const) {
      // Waiting for its result (the check trigger on the reply).
      const items = conversation(...head, now, form);
      expect(sumTokens(items), name).toBeGreaterThan(config.maxContextTokens);
      const p = plan(items, config);
      expect(p.toSummarize, name).toStrictEqual([]);
      const out = finishCompaction(p, null);
      expect(sumTokens(out), name).toBeLessThanOrEqual(config.maxContextTokens);
      const kept = out.find((i) => i.sourceId === call.id || i.id === call.id);
      const preview = Number(/~text(\d+)$/.exec(kept?.id ?? '')?.[1]);
      expect(preview, name).toBeGreaterThanOrEqual(50);
      expect(preview, name).toBeLessThan(config.previewTokens);
      expect(kept, name).toMatchObject({ message: { tool_calls: call.message.tool_calls } });
      expect(kept?.type === 'ASSISTANT_MESSAGE' ? messageText(kept.message) : '').toMatch(
        /\[TRUNCATED original~\d+ tokens; recall #[0-9a-f]+\]$/,
      );
      expect(ids(out)).toContain('now');
    }
  });

  it('still over the window after every step before a request, the carried state gives up what the window needs; where that cannot do, or no request follows, it stays whole', () => {
    const f = itemsFactory(o200k);
    const reads = longPathReads(f);
    const config = parseCompactionConfig({ maxContextTokens: 4000 });
    const trailOf = (p: CompactionPlan) =>
      p.carried.items.find((i) => i.type === 'ARTIFACT_TRAIL')?.tokens ?? 0;
    // A reply waiting for its result: its call is never cut. The system prompt and it leave the
    // carried state less than its budget.
    const session = (argumentWords: number) =>
      conversation(
        f.system(words(2800, 'rules'), { id: 'sys' }),
        f.user('task', { id: 'task' }),
        reads,
        f.user('Now write it.', { id: 'now' }),
        f.calls(
          [{ name: 'write_file', args: { path: 'src/new.ts', content: words(argumentWords, 'code') } }],
          null,
          {
            id: 'write',
          },
        ),
      );
    const roomy = plan(session(200), config, 'precheck');
    const tight = plan(session(850), config, 'precheck');
    expect(tight.work.writtenTotal()).toBeLessThanOrEqual(config.maxContextTokens);
    expect(trailOf(tight)).toBeLessThan(trailOf(roomy));
    expect(ids(finishCompaction(tight, summaryOf(tight.summaryBudget)))).toContain('write');
    // Over the window by more than the carried state holds: cutting it would not do; it stays,
    // and the waiting call's arguments are cut (the call stays, for its result to come back to).
    const hopeless = plan(session(1600), config, 'precheck');
    expect(hopeless.work.writtenTotal()).toBeLessThanOrEqual(config.maxContextTokens);
    expect(trailOf(hopeless)).toBe(trailOf(roomy));
    const write = hopeless.work.units.find((u) => u.originals[0]?.id === 'write');
    expect(write?.removed).toBe(false);
    expect(write?.cuts[0]?.id).toMatch(/^write~cut\d+$/);
    // After the reply, its call waiting for its result: the precheck before the next request
    // compacts again with the result in; this one keeps the carried state whole.
    for (const trigger of ['check', 'manual'] as const) {
      const after = plan(session(850), config, trigger);
      expect(after.work.writtenTotal()).toBeGreaterThan(config.maxContextTokens);
      expect(trailOf(after)).toBe(trailOf(roomy));
    }
    expect(plan(session(850), config, 'overflow').work.writtenTotal()).toBeLessThanOrEqual(
      config.maxContextTokens,
    );
  });

  it("a waiting call's arguments cut for the window with the summary at its budget grow back when the summary is written shorter, up to the window", () => {
    const f = itemsFactory(o200k);
    const config = parseCompactionConfig({ maxContextTokens: 4000 });
    const session = () =>
      conversation(
        f.system('You write code.', { id: 'sys' }),
        f.user('Port the parser.', { id: 'task' }),
        ...Array.from({ length: 4 }, (_, i) =>
          f.block('read_file', { path: `src/p${i}.ts` }, words(300, 'code')),
        ),
        f.user('Now write it.', { id: 'now' }),
        f.calls([{ name: 'write_file', args: { path: 'src/new.ts', content: words(3900, 'code') } }], null, {
          id: 'write',
        }),
      );
    const finished = (share: number) => {
      const p = plan(session(), config, 'precheck');
      const out = finishCompaction(p, summaryOf(Math.floor(share * p.summaryBudget)));
      return { out, call: out.find((i) => (i.sourceId ?? i.id) === 'write') as ContextItem };
    };
    const asPlanned = finished(1);
    const shorter = finished(0);
    expect(asPlanned.call.id).toMatch(/^write~cut\d+$/);
    expect(shorter.call.tokens).toBeGreaterThan(asPlanned.call.tokens);
    expect(sumTokens(shorter.out)).toBeLessThanOrEqual(config.maxContextTokens);
    // A waiting reply's reasoning, cut to reach the goal after the reply, grows back only within
    // the goal: the window's room is the arguments'.
    const thinking = conversation(
      ...session().slice(0, -1),
      f.calls([{ name: 'bash', args: { command: 'ls' } }], words(3000, 'think'), { id: 'think' }),
    );
    const p = plan(thinking, config, 'check');
    const out = finishCompaction(p, summaryOf(0));
    expect(out.find((i) => i.sourceId === 'think')).toBeDefined();
    expect(sumTokens(out)).toBeLessThanOrEqual(p.goalTokens + 60);
  });

  it('before a request, a carried state cut under its cap is cut again from what it took, until the request fits the window', () => {
    // The trail shrinks by whole tiers: cut to a cap, it may come out under it while the rest stays
    // over the window. Lowering the cap by what is still over would then cut nothing more.
    const f = itemsFactory(o200k);
    const config = parseCompactionConfig({ maxContextTokens: 4000 });
    const reads = longPathReads(f);
    const tasks = Array.from({ length: 8 }, (_, i) => `[ ] step ${i} ${words(6, 'do')}`).join('\n');
    for (let rules = 3502; rules <= 3700; rules += 7) {
      const items = conversation(
        f.system(words(rules, 'rules'), { id: 'sys' }),
        f.user('task', { id: 'task' }),
        reads,
        f.note('TASK_LIST', `[Task list]\n${tasks}`, { id: 'tasks' }),
        f.user('Now go on.', { id: 'now' }),
      );
      const p = plan(items, config, 'precheck');
      expect(p.carried.items.some((i) => i.type === 'ARTIFACT_TRAIL')).toBe(true);
      expect({ rules, fits: p.work.writtenTotal() <= config.maxContextTokens }).toEqual({
        rules,
        fits: true,
      });
    }
  });

  it('a pin the header cannot hold within the window, even without the task, is compacted like any message, oldest first', () => {
    const f = itemsFactory(o200k);
    const config = parseCompactionConfig({ maxContextTokens: 4000 });
    const items = conversation(
      f.system('sys', { id: 'sys' }),
      f.user(`Build it. ${words(300, 'task')}`, { id: 'task' }),
      f.user(`<Pin>${words(2600, 'old')}</Pin>`, { id: 'big-pin', pinned: true }),
      f.user(`<Pin>${words(1600, 'new')}</Pin>`, { id: 'new-pin', pinned: true }),
      ...f.block('read_file', { path: 'a.py' }, words(300, 'code')),
      f.user('Go on.', { id: 'now' }),
    );
    const p = plan(items, config, 'precheck');
    expect(ids(p.work.header)).toContain('new-pin');
    expect(ids(p.work.header)).not.toContain('big-pin');
    expect(ids(p.toSummarize)).toContain('big-pin');
    const out = finishCompaction(p, summaryOf(p.summaryBudget));
    expect(sumTokens(out)).toBeLessThanOrEqual(config.maxContextTokens);
    expect(ids(out)).toContain('new-pin');
    // Within the window with the rest of the header, a pin stays, whatever the target.
    const fits = plan(
      items.filter((i) => i.id !== 'big-pin'),
      config,
      'precheck',
    );
    expect(ids(fits.work.header)).toContain('new-pin');
    expect(ids(fits.work.header)).toContain('task');
  });

  it('where the header cannot hold the task and every pin, the pins that fit stay before the task', () => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.system(words(400, 'rules'), { id: 'sys' }),
      f.user(`Build it. ${words(300, 'task')}`, { id: 'task' }),
      f.user(`<Pin>${words(350, 'a')}</Pin>`, { id: 'pin-a', pinned: true }),
      f.user(`<Pin>${words(650, 'b')}</Pin>`, { id: 'pin-b', pinned: true }),
      f.user('Go on.', { id: 'now' }),
    );
    // System and pin A fit a 1,000-token window; with the task too, or with pin B, they do not.
    const work = new WorkingContext(items, { window: 1000, summaryReserve: null });
    expect(ids(work.header)).toStrictEqual(['sys', 'pin-a']);
    const byId = (id: string) => work.units.find((u) => u.originals[0]?.id === id);
    expect(byId('pin-b')?.protected).toBe(false);
    expect(byId('task')?.protected).toBe(false);
  });

  it('a reply of many calls too large to come back whole comes back with every call and result cut, filling the goal', () => {
    const f = itemsFactory(o200k);
    const edits = Array.from({ length: 12 }, (_, i) => ({
      id: `e${i}`,
      name: 'edit',
      args: { path: `src/m${i}.ts`, old: words(40, 'old'), new: words(40, 'new') },
    }));
    const items = conversation(
      f.system('You edit code.', { id: 'sys' }),
      f.user('Rename the helpers everywhere.', { id: 'task' }),
      f.calls(edits, null, { id: 'edits' }),
      edits.map((e) => f.result(e.id, `Edited ${e.args.path}.\n${words(200, 'diff')}`, { id: `r-${e.id}` })),
      f.assistant('All twelve edited.', { id: 'done' }),
      f.user('Now run the tests.', { id: 'now' }),
    );
    const config = parseCompactionConfig({ maxContextTokens: 4000 });
    const p = plan(items, config, 'precheck');
    expect(ids(p.toSummarize)).toContain('edits');
    const out = finishCompaction(p, summaryOf(30));
    // The calls and every result are back, each cut; the context is filled toward the goal.
    const results = out.filter((i) => (i.sourceId ?? i.id).startsWith('r-e'));
    expect(results).toHaveLength(12);
    // Cut alike: the room is shared, not given to the first ones.
    const sizes = results.map((r) => r.tokens);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThan(20);
    expect(Math.min(...sizes)).toBeGreaterThan(40);
    expect(out.some((i) => (i.sourceId ?? i.id) === 'edits')).toBe(true);
    expect(sumTokens(out)).toBeLessThanOrEqual(p.goalTokens);
    expect(sumTokens(out)).toBeGreaterThanOrEqual(0.7 * p.goalTokens);
  });

  it('without a summary, nothing removed comes back and no summary is placed', () => {
    const items = dialogue();
    const p = plan(items, DEFAULTS, 'check');
    expect(ids(finishCompaction(p, null))).toStrictEqual(
      ids(items).filter((id) => !ids(p.toSummarize).includes(id)),
    );
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

  it('never drops a pinned tool block (pinned, it stays in the conversation with its pair)', () => {
    const f = itemsFactory();
    const pinned = f.block('bash', { command: 'cat NOTES' }, 'notes', { pinned: true });
    const items = conversation(
      header(f),
      f.user('q2', { id: 'u2' }),
      pinned,
      f.assistant('a2', { id: 'a2' }),
      f.user('q3', { id: 'u3' }),
      f.assistant('a3', { id: 'a3' }),
    );
    expect(ids(dropOldestRounds(items, 0, 1000))).toStrictEqual([
      'sys',
      'tools',
      'task',
      ...ids(pinned),
      'u3',
      'a3',
    ]);
  });
});

describe('planCompaction: the events trigger counts items, so a compaction leaves few enough', () => {
  // Many tiny rounds: 4 items and ~20 tokens each; the events threshold, not the tokens, fills up.
  const f = itemsFactory(createTokenCounter({ encoding: 'o200k_base' }));
  const tiny = (n: number) =>
    conversation(
      f.system('You are terse.'),
      Array.from({ length: n }, (_, i) => [
        f.user(`q${i}`),
        ...f.block('read_file', { path: `f${i}.ts` }, `x${i}`),
        f.assistant(`a${i}`),
      ]),
    );

  it('an events compaction ends at eventsThreshold × targetRatio / triggerRatio items (437 by default)', () => {
    const items = tiny(200);
    expect(items.length).toBeGreaterThanOrEqual(700);
    // Just over the target in tokens: the tokens alone would take a few rounds out.
    const config = parseCompactionConfig({ maxContextTokens: Math.floor(sumTokens(items) * 1.8) });
    const plan = planCompaction({
      items,
      config,
      tokenizer: f.tokenizer,
      trigger: 'events',
      compactionId: 'e',
    });
    expect(plan.itemGoal).toBe(437);
    expect(plan.itemBound).toBe(true);
    const summary = { ...f.summary('summary'), tokens: 100 } as CompactionSummaryItem;
    const out = finishCompaction(plan, summary);
    expect(out.length).toBeLessThanOrEqual(437);
  });

  it('a token compaction of the same context leaves it under the events threshold too', () => {
    const items = tiny(200);
    const config = parseCompactionConfig({ maxContextTokens: 5_000 });
    const plan = planCompaction({
      items,
      config,
      tokenizer: f.tokenizer,
      trigger: 'precheck',
      compactionId: 'p',
    });
    const out = finishCompaction(plan, { ...f.summary('summary'), tokens: 100 } as CompactionSummaryItem);
    expect(out.length).toBeLessThan(config.eventsThreshold);
    expect(sumTokens(out)).toBeLessThanOrEqual(targetTokens(config));
  });
});
