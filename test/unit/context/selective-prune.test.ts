import { describe, expect, it } from 'vitest';
import { parseCompactionConfig, type CompactionConfig } from '../../../src/context/config';
import type { AssistantMessageItem, ContextItem, ToolResultItem } from '../../../src/context/items';
import { assignRounds } from '../../../src/context/segments';
import { truncationMarker } from '../../../src/context/item-cuts';
import { selectivePrune } from '../../../src/context/selective-prune';
import { handleOf } from '../../../src/context/recall-handle';
import type { Tokenizer } from '../../../src/context/tokenizer';
import { pairToolCalls, unansweredCalls } from '../../../src/context/tool-pairs';
import { sumTokens } from '../../../src/context/tool-blocks';
import { createTokenCounter } from '../../../src/tokens';
import { conversation, ids, itemsFactory, words } from '../../support/items-factory';

const o200k = createTokenCounter({ encoding: 'o200k_base' });
const DEFAULTS = parseCompactionConfig({});
/** A target no context reaches: every step runs, each to its minimum. */
const ALL_THE_WAY = 0;
/** Every prune step, in order, as `rulesApplied` names them with the default rules. */
const EVERY_STEP = [
  'truncate',
  'tool_blocks',
  'SKILL_METADATA:drop',
  'SKILL_PROMPT:drop',
  'TOOL_RESULT:truncate',
  'ASSISTANT_MESSAGE:truncate',
  'USER_MESSAGE:truncate',
];

const prune = (items: readonly ContextItem[], target = ALL_THE_WAY, config: CompactionConfig = DEFAULTS) =>
  selectivePrune(items, config, o200k, target);

/** The ids the prune removed, in order. */
const removedIds = (before: readonly ContextItem[], after: readonly ContextItem[]) =>
  ids(before).filter((id) => !ids(after).includes(id));

/** A header (system prompt, tools, original task) and `n` more rounds of user → assistant. */
function dialogue(n: number, f = itemsFactory(o200k)) {
  const head = [
    f.system('You are a coding agent.', { id: 'sys' }),
    f.tools([{ type: 'function', function: { name: 'bash', description: 'Run a command' } }], {
      id: 'tools',
    }),
    f.user('Fix the failing test in parser.ts', { id: 'task' }),
  ];
  const rounds = Array.from({ length: n }, (_, i) => [
    f.user(`request ${i + 2}`, { id: `u${i + 2}` }),
    f.assistant(`answer ${i + 2}`, { id: `a${i + 2}` }),
  ]);
  return { f, items: conversation(head, ...rounds) };
}

/** Tool result rules off: only the `tool_blocks` step removes blocks. */
const BLOCKS_ONLY = parseCompactionConfig({
  selectiveRules: { TOOL_RESULT: { strategy: 'none', priority: 2 } },
});

describe('truncate: tool-call arguments over toolCallThreshold (500 tokens) are cut to 200 tokens', () => {
  // An answer after the block: the block is not the latest call, so its arguments may be cut.
  it.each([
    [499, false],
    [500, false],
    [501, true],
    [2000, true],
  ])('arguments of %d tokens → cut: %s', (n, cut) => {
    const f = itemsFactory(o200k);
    const [call, result] = f.block('write_file', words(n), 'ok');
    expect(o200k.countText(call.message.tool_calls?.[0]?.function.arguments ?? '')).toBe(n);
    const items = conversation(f.user('task'), call, result, f.assistant('done'));
    const out = prune(items);
    expect(out.stats.toolCallsTruncated).toBe(cut ? 1 : 0);
    expect(out.stats.rulesApplied).toStrictEqual(EVERY_STEP);
    if (!cut) {
      expect(out.items).toStrictEqual(items);
      expect(out.newItems).toStrictEqual([]);
      return;
    }
    const replaced = out.items[1] as AssistantMessageItem;
    expect(replaced.id).toBe(`${call.id}~cut200`);
    expect(replaced.sourceId).toBe(call.id);
    expect(replaced.message.tool_calls?.[0]?.function.arguments).toBe(
      `${words(200)}\n${truncationMarker(n, handleOf(call.id))}`,
    );
    expect(truncationMarker(n)).toBe(`[TRUNCATED original~${n} tokens]`);
    // The marker names the original's recall handle (issue 24).
    expect(truncationMarker(n, handleOf(call.id))).toBe(
      `[TRUNCATED original~${n} tokens; recall ${handleOf(call.id)}]`,
    );
    // The call keeps its id and name, so its result still answers it.
    expect(replaced.message.tool_calls?.[0]?.id).toBe(call.message.tool_calls?.[0]?.id);
    expect(replaced.message.tool_calls?.[0]?.function.name).toBe('write_file');
    expect(replaced.tokens).toBe(o200k.countItem(replaced));
    expect(replaced.tokens).toBeLessThan(call.tokens);
    expect(out.items[2]).toBe(items[2]);
    expect(out.newItems).toStrictEqual([replaced]);
    expect(out.tokensAfter).toBe(sumTokens(out.items));
    expect(out.tokensAfter).toBeLessThan(out.tokensBefore);
  });

  it('cuts only the oversized calls of a message with several', () => {
    const f = itemsFactory(o200k);
    const call = f.calls([
      { name: 'write_file', args: words(100), id: 'c1' },
      { name: 'write_file', args: words(900), id: 'c2' },
    ]);
    const items = conversation(
      f.user('task'),
      call,
      f.result('c1', 'ok'),
      f.result('c2', 'ok'),
      f.assistant('done'),
    );
    const out = prune(items);
    const calls = (out.items[1] as AssistantMessageItem).message.tool_calls ?? [];
    expect(calls.map((c) => c.function.arguments)).toStrictEqual([
      words(100),
      `${words(200)}\n${truncationMarker(900, handleOf(call.id))}`,
    ]);
    expect(out.stats.toolCallsTruncated).toBe(1);
  });

  // The seed's 200 tokens are a minimum: the cut that reaches the goal keeps as long a preview as
  // the goal leaves room for (the written form may differ from the plan by the cut's margin).
  it.each([100, 1000, 1700])(
    'arguments: a goal %d tokens under the whole keeps the longest preview that reaches it',
    (under) => {
      const f = itemsFactory(o200k);
      const [call, result] = f.block('write_file', words(2000), 'ok');
      const items = conversation(f.user('task'), call, result, f.assistant('done'));
      const goal = sumTokens(items) - under;
      const out = prune(items, goal);
      const preview = Number(/~cut(\d+)$/.exec(ids(out.items)[1] ?? '')?.[1]);
      expect(preview).toBeGreaterThanOrEqual(200);
      expect(out.stats.rulesApplied).toStrictEqual(['truncate']);
      expect(out.tokensAfter).toBeLessThanOrEqual(goal + 5);
      expect(out.tokensAfter).toBeGreaterThan(goal - 40);
    },
  );

  it('arguments of several calls over the threshold share the room', () => {
    const f = itemsFactory(o200k);
    const call = f.calls([
      { name: 'write_file', args: words(1000), id: 'c1' },
      { name: 'write_file', args: words(1000), id: 'c2' },
    ]);
    const items = conversation(
      f.user('task'),
      call,
      f.result('c1', 'ok'),
      f.result('c2', 'ok'),
      f.assistant('done'),
    );
    const goal = sumTokens(items) - 1000;
    const out = prune(items, goal);
    const calls = (out.items[1] as AssistantMessageItem).message.tool_calls ?? [];
    const previews = calls.map((c) => o200k.countText(c.function.arguments.split('\n[TRUNCATED')[0] ?? ''));
    expect(previews[0]).toBe(previews[1]);
    expect(previews[0]).toBeGreaterThan(400);
    expect(out.tokensAfter).toBeLessThanOrEqual(goal + 5);
  });
});

describe('truncate: tool results over toolResultThreshold (600 tokens) are cut', () => {
  it.each([
    [599, false],
    [600, false],
    [601, true],
    [5000, true],
  ])('a result of %d tokens → cut: %s', (n, cut) => {
    const f = itemsFactory(o200k);
    const [call, result] = f.block('read_file', { path: 'a.ts' }, words(n, 'x'));
    const items = conversation(f.user('task'), call, result, f.assistant('done'));
    const out = prune(items);
    expect(out.stats.toolResultsTruncated).toBe(cut ? 1 : 0);
    const after = out.items[2] as ToolResultItem;
    if (!cut) {
      expect(after).toBe(items[2]);
      return;
    }
    expect(after).toMatchObject({
      id: `${result.id}~cut200`,
      sourceId: result.id,
      type: 'TOOL_RESULT',
      round: 1,
      message: {
        role: 'tool',
        tool_call_id: result.message.tool_call_id,
        content: `${words(200, 'x')}\n[TRUNCATED original~${n} tokens; recall ${handleOf(result.id)}]`,
      },
    });
    expect(after.tokens).toBe(o200k.countItem(after));
    expect(out.items[1]).toBe(items[1]);
    expect(out.newItems).toStrictEqual([after]);
  });

  it('uses the configured thresholds and preview', () => {
    const config = parseCompactionConfig({ toolResultThreshold: 50, previewTokens: 10 });
    const f = itemsFactory(o200k);
    const [call, result] = f.block('read_file', { path: 'a.ts' }, words(51));
    const out = prune(conversation(f.user('task'), call, result, f.assistant('done')), ALL_THE_WAY, config);
    expect((out.items[2] as ToolResultItem).message.content).toBe(
      `${words(10)}\n[TRUNCATED original~51 tokens; recall ${handleOf(result.id)}]`,
    );
    expect(out.items[2]?.id).toBe(`${result.id}~cut10`);
  });

  // One 5000-token result; the context is `over` tokens over the target.
  it.each([
    [1, 4963],
    [100, 4864],
    [1000, 3966],
    [4500, 473],
    [4700, 273],
  ])('%d tokens over the target: the cut that reaches it keeps a %d-token preview', (over, preview) => {
    const f = itemsFactory(o200k);
    const [call, result] = f.block('read_file', { path: 'a.ts' }, words(5000, 'x'));
    const items = conversation(f.user('task'), call, result, f.assistant('done'));
    const target = sumTokens(items) - over;
    const out = prune(items, target);
    expect(out.items[2]).toMatchObject({
      id: `${result.id}~cut${preview}`,
      sourceId: result.id,
      message: { content: `${words(preview, 'x')}\n${truncationMarker(5000, handleOf(result.id))}` },
    });
    expect(out.stats.rulesApplied).toStrictEqual(['truncate']);
    expect(out.tokensAfter).toBeLessThanOrEqual(target);
    // Not much room left: the preview took it.
    expect(target - out.tokensAfter).toBeLessThan(20);
  });

  it('a goal no preview reaches: the 200-token minimum, and the later steps run', () => {
    const f = itemsFactory(o200k);
    const [call, result] = f.block('read_file', { path: 'a.ts' }, words(5000, 'x'));
    const items = conversation(f.user('task'), call, result, f.assistant('done'));
    const out = prune(items, sumTokens(items) - 4790);
    expect(ids(out.items)[2]).toBe(`${result.id}~cut200`);
    expect(out.stats.rulesApplied).toStrictEqual(EVERY_STEP);
  });

  // Three blocks with 2000-token results; the context is `over` tokens over the target.
  it.each([
    [1, ['~cut1969', '', '']],
    [1500, ['~cut473', '', '']],
    [1800, ['~cut200', '~cut1943', '']],
    [3600, ['~cut200', '~cut200', '~cut1916']],
    [5000, ['~cut200', '~cut200', '~cut518']],
  ])('%d tokens over: oldest first, only as many as it takes → %j', (over, suffixes) => {
    const f = itemsFactory(o200k);
    const task = f.user('task');
    const blocks = [0, 1, 2].map((i) => f.block('read_file', { path: `f${i}.ts` }, words(2000, 'x')));
    const items = conversation(task, ...blocks.flat(), f.assistant('done'));
    const out = prune(items, sumTokens(items) - over);
    expect(ids(out.items)).toStrictEqual([
      task.id,
      ...blocks.flatMap(([c, r], i) => [c.id, `${r.id}${suffixes[i] ?? ''}`]),
      ids(items).at(-1),
    ]);
    expect(out.stats.rulesApplied).toStrictEqual(['truncate']);
  });

  it('never reads more of a long text than its preview, and never a short one', () => {
    const f = itemsFactory(o200k);
    const longResult = words(5000, 'x');
    const [call, result] = f.block('write_file', { content: words(800, 'y') }, longResult);
    const longArguments = call.message.tool_calls?.[0]?.function.arguments ?? '';
    const [shortCall, shortResult] = f.block('read_file', { path: 'a.ts' }, 'ok');
    const items = conversation(f.user('task'), call, result, shortCall, shortResult, f.assistant('done'));
    const counted: string[] = [];
    const prefixed: [string, number][] = [];
    const recording: Tokenizer = {
      countText: (text) => (counted.push(text), o200k.countText(text)),
      truncate: (text, max) => (counted.push(text), o200k.truncate(text, max)),
      prefix: (text, max) => (prefixed.push([text, max]), o200k.prefix(text, max)),
    };
    const out = selectivePrune(items, DEFAULTS, recording, ALL_THE_WAY);
    expect(out.stats).toMatchObject({ toolCallsTruncated: 1, toolResultsTruncated: 1 });
    // Each long text is read once, up to its preview; nothing counts or truncates it whole.
    expect(prefixed).toStrictEqual([
      [longArguments, 200],
      [longResult, 200],
    ]);
    expect(counted.filter((text) => text.length > 1000)).toStrictEqual([]);
    expect(counted).not.toContain('ok');
    expect(counted).not.toContain(shortCall.message.tool_calls?.[0]?.function.arguments);
  });
});

describe('tool_blocks: whole blocks go, oldest first, until the target; the newest 5 always stay', () => {
  /** `n` equal blocks between the task and an answer; `bt` is one block's tokens. */
  function blocks(n: number) {
    const f = itemsFactory(o200k);
    const list = Array.from({ length: n }, (_, i) => f.block('bash', { command: `ls ${i}` }, `out ${i}`));
    const items = conversation(f.user('task'), ...list.flat(), f.assistant('done'));
    const bt = sumTokens(list[0] ?? []);
    expect(list.every((b) => sumTokens(b) === bt)).toBe(true);
    return { list, items, bt };
  }

  it.each<[number, string, number, (total: number, bt: number) => number]>([
    [9, 'the total', 0, (t) => t],
    [9, '1 token under the total', 1, (t) => t - 1],
    [9, 'one block under the total', 1, (t, bt) => t - bt],
    [9, 'one block and 1 token under the total', 2, (t, bt) => t - bt - 1],
    [9, 'three blocks under the total', 3, (t, bt) => t - 3 * bt],
    [9, '0', 4, () => 0],
    [6, '0', 1, () => 0],
    [5, '0', 0, () => 0],
    [4, '0', 0, () => 0],
  ])('%d blocks, target %s → %d dropped', (n, _, dropped, target) => {
    const { list, items, bt } = blocks(n);
    const out = prune(items, target(sumTokens(items), bt), BLOCKS_ONLY);
    expect(removedIds(items, out.items)).toStrictEqual(ids(list.slice(0, dropped).flat()));
    expect(out.stats).toMatchObject({
      toolBlocksKept: n - dropped,
      toolBlocksDropped: dropped,
      itemsDropped: dropped > 0 ? { ASSISTANT_MESSAGE: dropped, TOOL_RESULT: dropped } : {},
    });
    if (target(1, 1) === 1) expect(out.stats.rulesApplied).toStrictEqual([]);
    else if (dropped > 0 && dropped < n - 5)
      expect(out.stats.rulesApplied).toStrictEqual(['truncate', 'tool_blocks']);
    expect(unansweredCalls(pairToolCalls(out.items))).toStrictEqual([]);
    expect(pairToolCalls(out.items).orphanResults).toStrictEqual([]);
  });

  it('a block with several results goes whole; a pinned block stays, uncut, and counts among the newest', () => {
    const f = itemsFactory(o200k);
    const multi = f.calls([
      { name: 'read_file', args: { path: 'a' }, id: 'm1' },
      { name: 'read_file', args: { path: 'b' }, id: 'm2' },
    ]);
    const multiResults = [f.result('m1', 'A'), f.result('m2', 'B')];
    const older = f.block('bash', { command: 'ls old' }, 'old');
    const pinned = f.block('bash', { command: 'cat NOTES' }, words(700), { pinned: true });
    const later = Array.from({ length: 4 }, (_, i) => f.block('bash', { command: `ls ${i}` }, `out ${i}`));
    const items = conversation(
      f.user('task'),
      multi,
      multiResults,
      older,
      pinned,
      ...later.flat(),
      f.assistant('ok'),
    );
    const out = prune(items, ALL_THE_WAY, BLOCKS_ONLY);
    // Newest 5: the pinned block and the 4 later ones; the multi-result block and `older` go whole.
    expect(removedIds(items, out.items)).toStrictEqual(ids([multi, ...multiResults, ...older]));
    // The pinned block is not cut either, though its result is over 600 tokens.
    const pinnedResult = items.find((i) => i.id === pinned[1].id);
    expect(out.items.find((i) => i.id === pinned[1].id)).toBe(pinnedResult);
    expect(out.stats.toolBlocksKept).toBe(5);
    expect(out.stats.toolBlocksDropped).toBe(2);
  });

  it('keeps no block with toolBlocksKeepRecent 0', () => {
    const f = itemsFactory(o200k);
    const items = conversation(f.user('task'), f.block('bash', { command: 'ls' }, 'out'), f.assistant('ok'));
    const out = prune(items, ALL_THE_WAY, parseCompactionConfig({ toolBlocksKeepRecent: 0 }));
    expect(out.items.map((i) => i.type)).toStrictEqual(['USER_MESSAGE', 'ASSISTANT_MESSAGE']);
  });
});

describe('the newest protectedRounds (12) rounds of user/assistant messages are never pruned', () => {
  // Rules that would remove every unprotected user and assistant message.
  const removeAll = parseCompactionConfig(removeAllRaw());

  // `dialogue(n)` has n + 1 rounds: the original task's round (task, no answer) and n more.
  it.each([
    [11, []],
    [12, []],
    [13, ['u2', 'a2']], // 14 rounds: the task's round and round 2 are unprotected; the task is header
    [14, ['u2', 'a2', 'u3', 'a3']],
  ])('%d rounds after the task → removed %j', (n, removed) => {
    const { items } = dialogue(n);
    const out = prune(items, ALL_THE_WAY, removeAll);
    expect(removedIds(items, out.items)).toStrictEqual(removed);
    expect(ids(out.items).slice(0, 3)).toStrictEqual(['sys', 'tools', 'task']);
  });

  it.each([
    [11, ['a1', 'u2', 'a2']],
    [12, ['a1']],
    [13, []],
  ])('13 rounds, protectedRounds %d → removed %j', (protectedRounds, removed) => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.user('the task', { id: 'task' }),
      f.assistant('on it', { id: 'a1' }),
      ...Array.from({ length: 12 }, (_, i) => [
        f.user(`q${i + 2}`, { id: `u${i + 2}` }),
        f.assistant(`r${i + 2}`, { id: `a${i + 2}` }),
      ]),
    );
    expect(Math.max(...items.map((i) => i.round))).toBe(13);
    const out = prune(items, ALL_THE_WAY, parseCompactionConfig({ ...removeAllRaw(), protectedRounds }));
    expect(removedIds(items, out.items)).toStrictEqual(removed);
  });

  // The rule's keepRecent (5) and the protected rounds are two minimums of what stays, not a sum.
  it.each<[number, string[]]>([
    [12, ['u2', 'a2', 'u3', 'a3', 'u4', 'a4', 'u5', 'a5', 'u6', 'a6', 'u7', 'a7', 'u8', 'a8', 'u9', 'a9']],
    [
      2,
      [
        'u2',
        'a2',
        'u3',
        'a3',
        'u4',
        'a4',
        'u5',
        'a5',
        'u6',
        'a6',
        'u7',
        'a7',
        'u8',
        'a8',
        'u9',
        'a9',
        'u10',
        'a10',
        'u11',
        'a11',
        'u12',
        'a12',
        'u13',
        'a13',
        'u14',
        'a14',
        'u15',
        'a15',
        'u16',
        'a16',
      ],
    ],
  ])(
    'with the default keepRecent 5 and protectedRounds %d, the larger minimum stays → removed %j',
    (protectedRounds, removed) => {
      const { items } = dialogue(20); // rounds 1..21; the task is header
      const out = prune(items, ALL_THE_WAY, parseCompactionConfig({ protectedRounds }));
      expect(removedIds(items, out.items)).toStrictEqual(removed);
      expect(out.stats.itemsDropped).toStrictEqual({
        USER_MESSAGE: removed.length / 2,
        ASSISTANT_MESSAGE: removed.length / 2,
      });
    },
  );

  it('stops at the target: the oldest unprotected messages go first, only as many as it takes', () => {
    const { items } = dialogue(20);
    const byId = new Map(items.map((i) => [i.id, i.tokens]));
    // The assistant rule runs first (same priority, by name): a2 and a3 are needed, then a2 alone.
    const twoAnswers = sumTokens(items) - (byId.get('a2') ?? 0) - 1;
    expect(removedIds(items, prune(items, twoAnswers).items)).toStrictEqual(['a2', 'a3']);
    const oneAnswer = sumTokens(items) - (byId.get('a2') ?? 0);
    expect(removedIds(items, prune(items, oneAnswer).items)).toStrictEqual(['a2']);
  });

  it('meta user messages never start a round, so they never shift the protection', () => {
    const f = itemsFactory(o200k);
    const rounds = Array.from({ length: 12 }, (_, i) => [
      f.user(`q${i}`, { id: `u${i}` }),
      f.meta(`<system-reminder> ${i}`, { id: `m${i}` }),
      f.assistant(`r${i}`, { id: `a${i}` }),
      f.meta(`<hook output> ${i}`, { id: `n${i}` }),
    ]);
    const items = conversation(f.system('sys'), ...rounds);
    expect(items.map((i) => i.round)).toStrictEqual([
      0,
      ...rounds.flatMap((_, i) => [i + 1, i + 1, i + 1, i + 1]),
    ]);
    const out = prune(items, ALL_THE_WAY, removeAll);
    // 12 real rounds: all protected; if meta messages started rounds, half would be pruned.
    expect(ids(out.items)).toStrictEqual(ids(items));
  });
});

describe('per-type rules, from the lowest priority up, each stopping at the target', () => {
  /**
   * header (system, task) → skills → 4 tool blocks → 8 rounds of dialogue. Nothing protected by
   * rounds here (protectedRounds 0) so each rule's effect shows.
   */
  function scenario() {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.system('system prompt', { id: 'sys' }),
      f.skill(words(1000), 'SKILL_PROMPT', { id: 'skill' }),
      f.skill(words(300), 'SKILL_METADATA', { id: 'skillmeta' }),
      f.user('the task', { id: 'task' }),
      f.block('bash', { command: 'ls' }, words(400), {}),
      f.block('bash', { command: 'ls -la' }, words(400), {}),
      f.block('read_file', { path: 'a' }, words(400), {}),
      f.block('read_file', { path: 'b' }, words(400), {}),
      ...Array.from({ length: 8 }, (_, i) => [
        f.user(words(50), { id: `u${i}` }),
        f.assistant(words(50), { id: `a${i}` }),
      ]),
    );
    return { f, items };
  }
  const config = parseCompactionConfig({ protectedRounds: 0 });

  it.each<[string, (total: number) => number, string[], Record<string, number>]>([
    ['already under: no step runs', (t) => t, [], {}],
    [
      'one token over: the skill metadata goes (first by name among priority 1)',
      (t) => t - 1,
      ['truncate', 'tool_blocks', 'SKILL_METADATA:drop'],
      { SKILL_METADATA: 1 },
    ],
    [
      'more: both skills go',
      (t) => t - 400,
      ['truncate', 'tool_blocks', 'SKILL_METADATA:drop', 'SKILL_PROMPT:drop'],
      { SKILL_METADATA: 1, SKILL_PROMPT: 1 },
    ],
    [
      'skills are not enough: the oldest tool block goes',
      (t) => t - 1400,
      ['truncate', 'tool_blocks', 'SKILL_METADATA:drop', 'SKILL_PROMPT:drop', 'TOOL_RESULT:truncate'],
      { SKILL_METADATA: 1, SKILL_PROMPT: 1, ASSISTANT_MESSAGE: 1, TOOL_RESULT: 1 },
    ],
    [
      'down to nothing: every rule runs to its minimum',
      () => 0,
      EVERY_STEP,
      // 1 block (3 of 4 stay); a0..a2 (5 of 8 stay); u0..u2 (5 of 8 stay; the task is header).
      { SKILL_METADATA: 1, SKILL_PROMPT: 1, ASSISTANT_MESSAGE: 4, TOOL_RESULT: 1, USER_MESSAGE: 3 },
    ],
  ])('%s', (_, target, rulesApplied, itemsDropped) => {
    const { items } = scenario();
    const total = sumTokens(items);
    const out = prune(items, target(total), config);
    expect(out.stats.rulesApplied).toStrictEqual(rulesApplied);
    expect(out.stats.itemsDropped).toStrictEqual(itemsDropped);
    expect(out.tokensBefore).toBe(total);
    expect(out.tokensAfter).toBe(sumTokens(out.items));
    if (target(total) > 0) expect(out.tokensAfter).toBeLessThanOrEqual(target(total));
  });

  it('DROP removes every SKILL_PROMPT, wherever it is', () => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.system('sys'),
      f.user('task'),
      f.skill('skill one', 'SKILL_PROMPT', { id: 's1' }),
      f.assistant('ok'),
      f.user('more'),
      f.skill('skill two', 'SKILL_PROMPT', { id: 's2' }),
    );
    const out = prune(items);
    expect(removedIds(items, out.items)).toStrictEqual(['s1', 's2']);
    expect(out.stats.itemsDropped).toStrictEqual({ SKILL_PROMPT: 2 });
  });

  it('TOOL_RESULT keeps the 3 newest blocks whole and drops orphan results first', () => {
    const f = itemsFactory(o200k);
    const orphan = f.result('call_nowhere', 'stray output', { id: 'orphan' });
    const blocks = Array.from({ length: 5 }, (_, i) => f.block('bash', { command: `ls ${i}` }, `out ${i}`));
    const items = conversation(f.user('task'), orphan, ...blocks.flat());
    const out = prune(items);
    expect(ids(out.items)).toStrictEqual(ids([items[0] as ContextItem, ...blocks.slice(2).flat()]));
    expect(out.stats.toolBlocksDropped).toBe(2);
    expect(out.stats.itemsDropped).toStrictEqual({ TOOL_RESULT: 3, ASSISTANT_MESSAGE: 2 });
    // One token over: the orphan alone is enough.
    const oneOver = prune(items, sumTokens(items) - 1);
    expect(removedIds(items, oneOver.items)).toStrictEqual(['orphan']);
  });

  it('a configured rule with a lower priority runs first', () => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.user('task'),
      f.skill(words(100), 'SKILL_PROMPT', { id: 'skill' }),
      f.note('MEMORY', 'old memory', { id: 'mem0' }),
      ...Array.from({ length: 10 }, (_, i) => f.note('MEMORY', `memory ${i + 1}`, { id: `mem${i + 1}` })),
      f.assistant(words(100)),
    );
    const config = parseCompactionConfig({ selectiveRules: { MEMORY: { strategy: 'drop', priority: 0 } } });
    const out = prune(items, sumTokens(items) - 1, config);
    // The memory rule ran first and was enough; the skill stayed. The last 10 memories are header.
    expect(out.stats.rulesApplied).toStrictEqual(['truncate', 'tool_blocks', 'MEMORY:drop']);
    expect(removedIds(items, out.items)).toStrictEqual(['mem0']);
  });
});

describe('never touched: the header, pinned items, the latest tool block', () => {
  it('header and pinned items survive as the same objects even when every rule runs', () => {
    const f = itemsFactory(o200k);
    const header = [
      f.system('sys', { id: 'sys' }),
      f.tools([{ type: 'function', function: { name: 'bash' } }], { id: 'tools' }),
      f.skill('subagent strategy', 'SKILL_PROMPT', { id: 'skill' }),
      f.user('the task', { id: 'task' }),
    ];
    const pinnedUser = f.user('<Pin>always use tabs</Pin>', { id: 'pin', pinned: true });
    const pinnedBlock = f.block('bash', { command: 'cat README' }, words(1000), { pinned: true });
    const blocks = Array.from({ length: 7 }, (_, i) => f.block('bash', { command: `ls ${i}` }, words(700)));
    const notes = [
      f.note('TASK_LIST', '- [ ] fix', { id: 'tasks' }),
      f.note('ARTIFACT_TRAIL', 'a.ts', { id: 'trail' }),
      f.note('OPEN_ERRORS', 'npm test fails', { id: 'errors' }),
      f.note('GIT_DIFF_STAT', ' a.ts | 2 +-', { id: 'stat' }),
    ];
    const items = conversation(
      header,
      pinnedUser,
      pinnedBlock,
      ...blocks.flat(),
      Array.from({ length: 20 }, (_, i) => [f.user(`q${i}`), f.assistant(`a${i}`)]).flat(),
      notes,
    );
    const out = prune(items, ALL_THE_WAY, parseCompactionConfig({ protectedRounds: 0 }));
    const kept = new Map(out.items.map((i) => [i.id, i]));
    const before = new Map(items.map((i) => [i.id, i]));
    for (const item of [...header.filter((i) => i.id !== 'skill'), pinnedUser, ...pinnedBlock, ...notes]) {
      expect(kept.get(item.id)).toBe(before.get(item.id));
    }
    expect(kept.has('skill')).toBe(false);
  });

  it('a call waiting for its result stays whole, however small the target', () => {
    const f = itemsFactory(o200k);
    const older = Array.from({ length: 3 }, (_, i) => f.block('bash', { command: `ls ${i}` }, `out ${i}`));
    const pending = f.calls([{ name: 'write_file', args: words(2000) }]);
    const items = conversation(f.user('task'), ...older.flat(), pending);
    const dropEverything = parseCompactionConfig({
      toolBlocksKeepRecent: 0,
      selectiveRules: { TOOL_RESULT: { strategy: 'truncate', keepRecent: 0, priority: 2 } },
    });
    const out = prune(items, ALL_THE_WAY, dropEverything);
    expect(removedIds(items, out.items)).toStrictEqual(ids(older.flat()));
    // Not even its arguments are cut: the model wrote them and waits for the answer.
    expect(out.items.at(-1)).toBe(items.at(-1));
  });

  it('the latest call with its fresh results stays; cut, last, only when nothing else is left', () => {
    const f = itemsFactory(o200k);
    const [call, result] = f.block('write_file', words(2000), words(5000, 'x'));
    const items = conversation(f.user('task'), f.block('bash', { command: 'ls' }, 'out'), call, result);
    const dropEverything = parseCompactionConfig({
      toolBlocksKeepRecent: 0,
      selectiveRules: { TOOL_RESULT: { strategy: 'truncate', keepRecent: 0, priority: 2 } },
    });
    const out = prune(items, ALL_THE_WAY, dropEverything);
    expect(ids(out.items)).toStrictEqual([ids(items)[0], `${call.id}~cut200`, `${result.id}~cut200`]);
    expect(out.stats).toMatchObject({ toolCallsTruncated: 1, toolResultsTruncated: 1, toolBlocksDropped: 1 });
    // While something older can be cut, it stays as it is.
    const older = f.block('bash', { command: 'cat log' }, words(3000, 'y'));
    const withOlder = conversation(f.user('task'), older, call, result);
    const roomy = prune(withOlder, sumTokens(withOlder) - 1000, dropEverything);
    expect(ids(roomy.items)).toStrictEqual([
      ids(withOlder)[0],
      older[0].id,
      `${older[1].id}~cut1970`,
      call.id,
      result.id,
    ]);
  });
});

describe('cut forms: new items, derived ids, cut again only to a shorter preview', () => {
  it('cut items are new items; the input is not modified', () => {
    const f = itemsFactory(o200k);
    const [call, result] = f.block('write_file', words(800), words(900));
    const items = conversation(f.user('task'), call, result, f.assistant('done'));
    const frozen = structuredClone(items);
    const out = prune(items);
    expect(items).toStrictEqual(frozen);
    expect(out.newItems.map((i) => [i.id, i.sourceId])).toStrictEqual([
      [`${call.id}~cut200`, call.id],
      [`${result.id}~cut200`, result.id],
    ]);
    expect(out.items.slice(1, 3)).toStrictEqual(out.newItems);
    // The pair still holds: the cut call is answered by the cut result.
    expect(unansweredCalls(pairToolCalls(out.items))).toStrictEqual([]);
  });

  it('a cut item later dropped by a rule is not reported as new', () => {
    const f = itemsFactory(o200k);
    const blocks = Array.from({ length: 5 }, (_, i) => f.block('bash', { command: `ls ${i}` }, words(700)));
    const items = conversation(f.user('task'), ...blocks.flat());
    const out = prune(items);
    // TOOL_RESULT keeps 3 blocks: the two oldest (cut first) went whole.
    expect(out.newItems.map((i) => i.sourceId)).toStrictEqual(blocks.slice(2).map(([, r]) => r.id));
    expect(ids(out.items)).toStrictEqual([
      items[0]?.id,
      ...blocks.slice(2).flatMap(([c, r]) => [c.id, `${r.id}~cut200`]),
    ]);
  });

  it('a cut form is cut again to a shorter preview of the original; the marker keeps its size', () => {
    const f = itemsFactory(o200k);
    const [call, result] = f.block('read_file', { path: 'a.ts' }, words(5000, 'x'));
    const items = conversation(f.user('task'), call, result, f.assistant('done'));
    const total = sumTokens(items);
    const once = prune(items, total - 1000);
    expect(ids(once.items)[2]).toBe(`${result.id}~cut3966`);

    const twice = prune(once.items, total - 4500);
    expect(twice.items[2]).toMatchObject({
      id: `${result.id}~cut473`,
      sourceId: result.id,
      message: { content: `${words(473, 'x')}\n${truncationMarker(5000, handleOf(result.id))}` },
    });
    expect(twice.newItems).toStrictEqual([twice.items[2]]);

    // Down to the minimum; then nothing shortens it further, and nothing lengthens it.
    const third = prune(twice.items, ALL_THE_WAY);
    expect(ids(third.items)[2]).toBe(`${result.id}~cut200`);
    for (const target of [ALL_THE_WAY, total - 1]) {
      const again = prune(third.items, target);
      expect(again.items).toStrictEqual(third.items);
      expect(again.stats.toolResultsTruncated).toBe(0);
    }
  });

  it('never cuts a cut form again to its own preview, even when preview and marker are over the threshold', () => {
    const config = parseCompactionConfig({
      previewTokens: 10,
      toolCallThreshold: 11,
      toolResultThreshold: 11,
    });
    const f = itemsFactory(o200k);
    const [call, result] = f.block('bash', words(5000), words(3000, 'y'));
    const once = prune(conversation(f.user('task'), call, result, f.assistant('done')), ALL_THE_WAY, config);
    expect((once.items[2] as ToolResultItem).message.content).toBe(
      `${words(10, 'y')}\n[TRUNCATED original~3000 tokens; recall ${handleOf(result.id)}]`,
    );
    expect(o200k.countText((once.items[2] as ToolResultItem).message.content)).toBeGreaterThan(11);
    const twice = prune(once.items, ALL_THE_WAY, config);
    expect(twice.items).toStrictEqual(once.items);
    expect(twice.stats).toMatchObject({ toolCallsTruncated: 0, toolResultsTruncated: 0 });
  });

  it.each([
    ['every step to its minimum', () => ALL_THE_WAY],
    ['a target reached by the tool blocks', (total: number) => total - 2000],
    ['a target reached by truncation', (total: number) => total - 300],
  ])('pruning its own output again changes nothing: %s', (_, target) => {
    const { items } = dialogue(30);
    const f = itemsFactory(o200k, 'x');
    const more = assignRounds([
      ...items,
      ...Array.from({ length: 8 }, (_, i) => f.block('bash', { command: `ls ${i}` }, words(650))).flat(),
      f.assistant('done'),
    ]);
    const goal = target(sumTokens(more));
    const once = prune(more, goal);
    expect(once.tokensAfter).toBeLessThan(once.tokensBefore);
    const twice = prune(once.items, goal);
    expect(twice.items).toStrictEqual(once.items);
    expect(twice.newItems).toStrictEqual([]);
  });
});

function removeAllRaw() {
  return {
    selectiveRules: {
      USER_MESSAGE: { strategy: 'truncate' as const, keepRecent: 0, priority: 3 },
      ASSISTANT_MESSAGE: { strategy: 'truncate' as const, keepRecent: 0, priority: 3 },
    },
  };
}
