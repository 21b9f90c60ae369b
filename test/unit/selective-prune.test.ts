import { describe, expect, it } from 'vitest';
import { parseCompactionConfig, type CompactionConfig } from '../../src/context/config';
import type { AssistantMessageItem, ContextItem, ToolResultItem } from '../../src/context/items';
import { assignRounds } from '../../src/context/segments';
import { selectivePrune, truncationMarker } from '../../src/context/selective-prune';
import { pairToolCalls, unansweredCalls } from '../../src/context/tool-pairs';
import { sumTokens } from '../../src/context/tool-blocks';
import { createTokenCounter } from '../../src/tokens';
import { conversation, ids, itemsFactory, words } from '../support/items-factory';

const o200k = createTokenCounter({ encoding: 'o200k_base' });
const DEFAULTS = parseCompactionConfig({});
/** A target no context reaches: only the tool-block pass runs. */
const NO_TARGET = Number.POSITIVE_INFINITY;

const prune = (items: readonly ContextItem[], target = NO_TARGET, config: CompactionConfig = DEFAULTS) =>
  selectivePrune(items, config, o200k, target);

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

describe('tool blocks: arguments over toolCallThreshold (500 tokens) are cut', () => {
  it.each([
    [499, false],
    [500, false],
    [501, true],
    [2000, true],
  ])('arguments of %d tokens → cut: %s', (n, cut) => {
    const f = itemsFactory(o200k);
    const [call, result] = f.block('write_file', words(n), 'ok');
    expect(o200k.countText(call.message.tool_calls?.[0]?.function.arguments ?? '')).toBe(n);
    const items = conversation(f.user('task'), call, result);
    const out = prune(items);
    expect(out.stats.toolCallsTruncated).toBe(cut ? 1 : 0);
    if (!cut) {
      expect(out.items).toStrictEqual(items);
      expect(out.newItems).toStrictEqual([]);
      return;
    }
    const replaced = out.items[1] as AssistantMessageItem;
    expect(replaced.id).not.toBe(call.id);
    expect(replaced.sourceId).toBe(call.id);
    expect(replaced.message.tool_calls?.[0]?.function.arguments).toBe(
      `${words(200)}\n${truncationMarker(n)}`,
    );
    expect(
      replaced.message.tool_calls?.[0]?.function.arguments.endsWith(`[TRUNCATED original~${n} tokens]`),
    ).toBe(true);
    // The call keeps its id and name, so its result still answers it.
    expect(replaced.message.tool_calls?.[0]?.id).toBe(call.message.tool_calls?.[0]?.id);
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
    const items = conversation(f.user('task'), call, f.result('c1', 'ok'), f.result('c2', 'ok'));
    const out = prune(items);
    const calls = (out.items[1] as AssistantMessageItem).message.tool_calls ?? [];
    expect(calls.map((c) => o200k.countText(c.function.arguments))).toStrictEqual([
      100,
      o200k.countText(`${words(200)}\n${truncationMarker(900)}`),
    ]);
    expect(out.stats.toolCallsTruncated).toBe(1);
  });
});

describe('tool blocks: results over toolResultThreshold (600 tokens) are cut', () => {
  it.each([
    [599, false],
    [600, false],
    [601, true],
    [5000, true],
  ])('a result of %d tokens → cut: %s', (n, cut) => {
    const f = itemsFactory(o200k);
    const [call, result] = f.block('read_file', { path: 'a.ts' }, words(n, 'x'));
    const items = conversation(f.user('task'), call, result);
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
        content: `${words(200, 'x')}\n[TRUNCATED original~${n} tokens]`,
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
    const out = prune(conversation(f.user('task'), call, result), NO_TARGET, config);
    expect((out.items[2] as ToolResultItem).message.content).toBe(
      `${words(10)}\n[TRUNCATED original~51 tokens]`,
    );
    expect(out.items[2]?.id).toBe(`${result.id}~cut10`);
  });

  it('reads each long argument and result once, and never a short one', () => {
    const f = itemsFactory(o200k);
    const long = words(5000, 'x');
    const [call, result] = f.block('write_file', { content: words(800, 'y') }, long);
    const [shortCall, shortResult] = f.block('read_file', { path: 'a.ts' }, 'ok');
    const items = conversation(f.user('task'), call, result, shortCall, shortResult);
    const passes: string[] = [];
    const counting = {
      countText: (text: string) => (passes.push(text), o200k.countText(text)),
      truncate: (text: string, max: number) => (passes.push(text), o200k.truncate(text, max)),
    };
    const out = selectivePrune(items, DEFAULTS, counting, NO_TARGET);
    expect(out.stats).toMatchObject({ toolCallsTruncated: 1, toolResultsTruncated: 1 });
    const reads = (text: string) => passes.filter((p) => p === text).length;
    expect(reads(long)).toBe(1);
    expect(reads(call.message.tool_calls![0]!.function.arguments)).toBe(1);
    expect(reads('ok')).toBe(0);
    expect(reads(shortCall.message.tool_calls![0]!.function.arguments)).toBe(0);
  });
});

describe('tool blocks: the newest toolBlocksKeepRecent (5) stay, older ones go whole', () => {
  it.each([
    [4, 0],
    [5, 0],
    [6, 1],
    [9, 4],
  ])('%d blocks → %d dropped', (n, dropped) => {
    const f = itemsFactory(o200k);
    const blocks = Array.from({ length: n }, (_, i) => f.block('bash', { command: `ls ${i}` }, `out ${i}`));
    const items = conversation(f.user('task'), ...blocks.flat(), f.assistant('done'));
    const out = prune(items);
    const gone = ids(blocks.slice(0, dropped).flat());
    expect(ids(out.items)).toStrictEqual(ids(items).filter((id) => !gone.includes(id)));
    expect(out.stats).toMatchObject({
      toolBlocksKept: Math.min(n, 5),
      toolBlocksDropped: dropped,
      itemsDropped: dropped > 0 ? { ASSISTANT_MESSAGE: dropped, TOOL_RESULT: dropped } : {},
      rulesApplied: ['tool_blocks'],
    });
    expect(unansweredCalls(pairToolCalls(out.items))).toStrictEqual([]);
    expect(pairToolCalls(out.items).orphanResults).toStrictEqual([]);
  });

  it('a block with several results goes whole, and pinned blocks neither count nor go', () => {
    const f = itemsFactory(o200k);
    const pinned = f.block('bash', { command: 'cat NOTES' }, words(700), { pinned: true });
    const multi = f.calls([
      { name: 'read_file', args: { path: 'a' }, id: 'm1' },
      { name: 'read_file', args: { path: 'b' }, id: 'm2' },
    ]);
    const multiResults = [f.result('m1', 'A'), f.result('m2', 'B')];
    const later = Array.from({ length: 5 }, (_, i) => f.block('bash', { command: `ls ${i}` }, `out ${i}`));
    const items = conversation(f.user('task'), pinned, multi, multiResults, ...later);
    const out = prune(items);
    expect(ids(out.items)).toStrictEqual(ids([items[0] as ContextItem, ...pinned, ...later.flat()]));
    // The pinned block is not cut either, though its result is over 600 tokens.
    expect(out.items[2]).toBe(items[2]);
    expect(out.items[2]?.id).toBe(pinned[1].id);
    expect(out.stats.toolBlocksKept).toBe(6);
    expect(out.stats.toolBlocksDropped).toBe(1);
  });

  it('keeps no block with toolBlocksKeepRecent 0', () => {
    const f = itemsFactory(o200k);
    const items = conversation(f.user('task'), f.block('bash', { command: 'ls' }, 'out'), f.assistant('ok'));
    const out = prune(items, NO_TARGET, parseCompactionConfig({ toolBlocksKeepRecent: 0 }));
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
    const out = prune(items, 0, removeAll);
    expect(ids(items).filter((id) => !ids(out.items).includes(id))).toStrictEqual(removed);
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
    const out = prune(items, 0, parseCompactionConfig({ ...removeAllRaw(), protectedRounds }));
    expect(ids(items).filter((id) => !ids(out.items).includes(id))).toStrictEqual(removed);
  });

  it('with the default keepRecent 5, five more unprotected messages of each kind stay', () => {
    const { items } = dialogue(20); // rounds 1..21: rounds 10..21 protected, 2..9 not
    const out = prune(items, 0);
    // Unprotected: u2..u9 and a2..a9; the five newest of each stay.
    const gone = ['u2', 'a2', 'u3', 'a3', 'u4', 'a4'];
    expect(ids(out.items)).toStrictEqual(ids(items).filter((id) => !gone.includes(id)));
    expect(out.stats.itemsDropped).toStrictEqual({ USER_MESSAGE: 3, ASSISTANT_MESSAGE: 3 });
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
    const out = prune(items, 0, removeAll);
    // 12 real rounds: all protected; if meta messages started rounds, half would be pruned.
    expect(ids(out.items)).toStrictEqual(ids(items));
  });
});

describe('per-type rules, from the lowest priority up, until under the target', () => {
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
    ['already under: nothing', (t) => t, ['tool_blocks'], {}],
    [
      'one token over: the skill metadata goes (first by name among priority 1)',
      (t) => t - 1,
      ['tool_blocks', 'SKILL_METADATA:drop'],
      { SKILL_METADATA: 1 },
    ],
    [
      'more: both skills go',
      (t) => t - 400,
      ['tool_blocks', 'SKILL_METADATA:drop', 'SKILL_PROMPT:drop'],
      { SKILL_METADATA: 1, SKILL_PROMPT: 1 },
    ],
    [
      'skills are not enough: the oldest tool block goes',
      (t) => t - 1400,
      ['tool_blocks', 'SKILL_METADATA:drop', 'SKILL_PROMPT:drop', 'TOOL_RESULT:truncate'],
      { SKILL_METADATA: 1, SKILL_PROMPT: 1, ASSISTANT_MESSAGE: 1, TOOL_RESULT: 1 },
    ],
    [
      'down to nothing: every rule runs',
      () => 0,
      [
        'tool_blocks',
        'SKILL_METADATA:drop',
        'SKILL_PROMPT:drop',
        'TOOL_RESULT:truncate',
        'ASSISTANT_MESSAGE:truncate',
        'USER_MESSAGE:truncate',
      ],
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
    if (rulesApplied.length > 1 && target(total) > 0)
      expect(out.tokensAfter).toBeLessThanOrEqual(target(total));
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
    const out = prune(items, 0);
    expect(ids(out.items)).not.toContain('s1');
    expect(ids(out.items)).not.toContain('s2');
    expect(out.stats.itemsDropped).toStrictEqual({ SKILL_PROMPT: 2 });
  });

  it('TOOL_RESULT keeps the 3 newest blocks whole and drops orphan results', () => {
    const f = itemsFactory(o200k);
    const orphan = f.result('call_nowhere', 'stray output', { id: 'orphan' });
    const blocks = Array.from({ length: 5 }, (_, i) => f.block('bash', { command: `ls ${i}` }, `out ${i}`));
    const items = conversation(f.user('task'), orphan, ...blocks.flat());
    const out = prune(items, 0);
    expect(ids(out.items)).toStrictEqual(ids([items[0] as ContextItem, ...blocks.slice(2).flat()]));
    expect(out.stats.toolBlocksDropped).toBe(2);
    expect(out.stats.itemsDropped).toStrictEqual({ TOOL_RESULT: 3, ASSISTANT_MESSAGE: 2 });
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
    expect(out.stats.rulesApplied).toStrictEqual(['tool_blocks', 'MEMORY:drop']);
    expect(ids(out.items)).toContain('skill');
    expect(ids(out.items)).not.toContain('mem0');
    expect(ids(out.items)).toContain('mem1');
  });
});

describe('never touched: header and pinned items', () => {
  it('survive with the same objects even when every rule runs', () => {
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
    ];
    const items = conversation(
      header,
      pinnedUser,
      pinnedBlock,
      ...blocks.flat(),
      Array.from({ length: 20 }, (_, i) => [f.user(`q${i}`), f.assistant(`a${i}`)]).flat(),
      notes,
    );
    const out = prune(items, 0, parseCompactionConfig({ protectedRounds: 0 }));
    const kept = new Map(out.items.map((i) => [i.id, i]));
    const before = new Map(items.map((i) => [i.id, i]));
    for (const item of [...header.filter((i) => i.id !== 'skill'), pinnedUser, ...pinnedBlock, ...notes]) {
      expect(kept.get(item.id)).toBe(before.get(item.id));
    }
    expect(kept.has('skill')).toBe(false);
  });

  it('cut items are new items; the input is not modified', () => {
    const f = itemsFactory(o200k);
    const [call, result] = f.block('write_file', words(800), words(900));
    const items = conversation(f.user('task'), call, result);
    const frozen = structuredClone(items);
    const out = prune(items);
    expect(items).toStrictEqual(frozen);
    expect(out.newItems.map((i) => [i.id, i.sourceId])).toStrictEqual([
      [`${call.id}~cut200`, call.id],
      [`${result.id}~cut200`, result.id],
    ]);
    expect(out.items.slice(1)).toStrictEqual(out.newItems);
    // The pair still holds: the cut call is answered by the cut result.
    expect(unansweredCalls(pairToolCalls(out.items))).toStrictEqual([]);
  });

  it('a cut item later dropped by a rule is not reported as new', () => {
    const f = itemsFactory(o200k);
    const blocks = Array.from({ length: 5 }, (_, i) => f.block('bash', { command: `ls ${i}` }, words(700)));
    const items = conversation(f.user('task'), ...blocks.flat());
    const out = prune(items, 0);
    // TOOL_RESULT keeps 3 blocks: the two oldest (cut in the tool-block pass) went whole.
    expect(out.newItems.map((i) => i.sourceId)).toStrictEqual(blocks.slice(2).map(([, r]) => r.id));
    expect(ids(out.items)).toStrictEqual([
      items[0]?.id,
      ...blocks.slice(2).flatMap(([c, r]) => [c.id, `${r.id}~cut200`]),
    ]);
  });

  it('never cuts a cut form again, even when its preview and marker are over the threshold', () => {
    const config = parseCompactionConfig({
      previewTokens: 10,
      toolCallThreshold: 11,
      toolResultThreshold: 11,
    });
    const f = itemsFactory(o200k);
    const [call, result] = f.block('bash', words(5000), words(3000, 'y'));
    const once = prune(conversation(f.user('task'), call, result), NO_TARGET, config);
    expect((once.items[2] as ToolResultItem).message.content).toBe(
      `${words(10, 'y')}\n[TRUNCATED original~3000 tokens]`,
    );
    expect(o200k.countText((once.items[2] as ToolResultItem).message.content)).toBeGreaterThan(11);
    const twice = prune(once.items, NO_TARGET, config);
    expect(twice.items).toStrictEqual(once.items);
    expect(twice.stats).toMatchObject({ toolCallsTruncated: 0, toolResultsTruncated: 0 });
  });

  it('running it again on its output changes nothing', () => {
    const { items } = dialogue(30);
    const f = itemsFactory(o200k, 'x');
    const more = assignRounds([
      ...items,
      ...Array.from({ length: 8 }, (_, i) => f.block('bash', { command: `ls ${i}` }, words(650))).flat(),
    ]);
    const once = prune(more, 100);
    const twice = prune(once.items, 100);
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
