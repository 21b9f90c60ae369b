import { describe, expect, it } from 'vitest';
import { handleOf } from '../../../src/context/recall-handle';
import {
  formatTaskList,
  hasPin,
  noteOfToolCall,
  type CallNote,
  type Task,
} from '../../../src/context/agent-notes';
import {
  ARTIFACT_TRAIL_HEADING,
  renderArtifactTrail,
  renderTrailCounted,
  trailFromText,
} from '../../../src/context/artifact-trail';
import {
  buildCarriedState,
  GIT_DIFF_STAT_HEADING,
  isCarried,
  type CarriedStateInput,
} from '../../../src/context/carried-state';
import type {
  ChatMessage,
  ContextItem,
  NoteItem,
  OpenError,
  ToolResultItem,
} from '../../../src/context/items';
import {
  collectOpenErrors,
  OPEN_ERRORS_HEADING,
  OPEN_ERRORS_LIMIT,
  openErrorsFromText,
  renderOpenErrors,
  renderOpenErrorsWithin,
} from '../../../src/context/open-errors';
import { toolResultError } from '../../../src/context/tool-facts';
import { headerRoles } from '../../../src/context/segments';
import { lower } from '../../../src/context/lower';
import { asWritten } from '../../../src/context/written-items';
import { pathInText } from '../../../src/eval/metrics';
import { MESSAGE_OVERHEAD_TOKENS } from '../../../src/context/token-accounting';
import { createTokenCounter } from '../../../src/tokens';
import { conversation, ids, itemsFactory, words, type ItemsFactory } from '../../support/items-factory';

const o200k = createTokenCounter({ encoding: 'o200k_base' });

function carried(items: readonly ContextItem[], over: Partial<CarriedStateInput> = {}) {
  return buildCarriedState({ items, tokenizer: o200k, budgetTokens: 2000, idPrefix: 'c1', ...over });
}

const textOf = (item: ContextItem | undefined): string =>
  item && item.type !== 'TOOL_DEFINITIONS' ? String(item.message.content) : '';

/**
 * The context after a compaction of `items`, written out as text and read back (a session file,
 * chat messages): its first item, the carried items as the user messages they were written as, the
 * items kept (those `keep` takes), then the items of `after`.
 */
function compactedAndReadBack(
  f: ItemsFactory,
  items: readonly ContextItem[],
  keep: (item: ContextItem) => boolean,
  after: ContextItem[][],
): ContextItem[] {
  const first = carried(items);
  const kept = first.items.filter((i) => !isCarried(i) && keep(i));
  return conversation(
    kept.slice(0, 1),
    first.items.filter((i) => isCarried(i)).map((i) => asWritten(f.user(textOf(i)))),
    kept.slice(1),
    ...after,
  );
}

/** The recall handle of the result of the (first) call to `tool` among the items. */
function resultHandle(items: readonly ContextItem[], tool: string): string {
  const at = items.findIndex(
    (i) => i.type === 'ASSISTANT_MESSAGE' && i.message.tool_calls?.[0]?.function.name === tool,
  );
  return handleOf(items[at + 1]?.id ?? '');
}

/** A coding session: an edit, a failing test run, a read. */
function session(f: ItemsFactory = itemsFactory(o200k)) {
  return conversation(
    f.system('sys', { id: 'sys' }),
    f.user('Make the CLI accept --json', { id: 'task' }),
    f.block('str_replace_editor', { path: 'src/cli.ts', command: 'str_replace' }, 'edited'),
    f.block('bash', { command: 'npm test' }, 'npm ERR! Test failed'),
    f.block('read_file', { path: 'README.md' }, 'docs'),
    f.assistant('The test fails.', { id: 'last' }),
  );
}

describe('buildCarriedState: the artifact trail, the open errors and the git diff stat', () => {
  it('adds the three items at the end, ids from the prefix, with their data', () => {
    const items = session();
    const state = carried(items, {
      gitDiffStat: 'src/cli.ts | 4 ++--\n1 file changed, 2 insertions(+), 2 deletions(-)\n',
    });
    expect(ids(state.items)).toStrictEqual([
      ...ids(items),
      'c1:artifact-trail',
      'c1:open-errors',
      'c1:git-diff-stat',
    ]);
    expect(state.added).toStrictEqual(state.items.slice(-3));
    const [trail, errors, stat] = state.added as NoteItem[];
    expect(trail).toMatchObject({
      type: 'ARTIFACT_TRAIL',
      round: 1,
      isMeta: true,
      message: {
        role: 'user',
        content:
          `${ARTIFACT_TRAIL_HEADING}\n- README.md (read; round 1, ${resultHandle(items, 'read_file')})\n` +
          `- src/cli.ts (edited; round 1, ${resultHandle(items, 'str_replace_editor')})\n` +
          'Commands run, latest first: `npm test` (round 1)',
      },
      carried: {
        kind: 'artifact_trail',
        files: [
          {
            path: 'src/cli.ts',
            ops: ['edit'],
            lastRound: 1,
            handle: resultHandle(items, 'str_replace_editor'),
          },
          { path: 'README.md', ops: ['read'], lastRound: 1, handle: resultHandle(items, 'read_file') },
        ],
        commands: [{ command: 'npm test', round: 1 }],
      },
    });
    const error: OpenError = {
      tool: 'bash',
      target: 'npm test',
      round: 1,
      text: 'npm ERR! Test failed',
      call: 'npm test',
    };
    expect(errors).toMatchObject({
      type: 'OPEN_ERRORS',
      message: { content: `${OPEN_ERRORS_HEADING}\n- round 1, bash npm test: npm ERR! Test failed` },
      carried: { kind: 'open_errors', errors: [error] },
    });
    expect(stat).toMatchObject({
      type: 'GIT_DIFF_STAT',
      message: {
        content: `${GIT_DIFF_STAT_HEADING}\nsrc/cli.ts | 4 ++--\n1 file changed, 2 insertions(+), 2 deletions(-)`,
      },
    });
    for (const item of state.added) expect(item.tokens).toBe(o200k.countItem(item));
    expect(state.openErrors).toStrictEqual([error]);
    expect(state.trail).toStrictEqual({
      files: trail?.carried?.kind === 'artifact_trail' ? trail.carried.files : [],
      commands: [{ command: 'npm test', round: 1 }],
    });
    // They are header: the latest of each kind.
    const roles = headerRoles(state.items);
    expect(roles.slice(-3)).toStrictEqual(['artifacts', 'errors', 'git']);
  });

  it('the same input gives the same items; the input is not changed', () => {
    const items = session();
    const frozen = structuredClone(items);
    expect(carried(items)).toStrictEqual(carried(items));
    expect(items).toStrictEqual(frozen);
  });

  it('nothing to carry: no item', () => {
    const f = itemsFactory(o200k);
    const items = conversation(f.system('sys'), f.user('hello'), f.assistant('hi'));
    const state = carried(items, { gitDiffStat: null });
    expect(state.items).toStrictEqual(items);
    expect(state.added).toStrictEqual([]);
  });

  it('replaces the previous carried items and merges their data', () => {
    const f = itemsFactory(o200k);
    const start = session(f);
    const first = carried(start, { gitDiffStat: 'src/cli.ts | 4 ++--' });
    // The next compaction: the old blocks were summarized; the test now passes, a new file is written.
    const later = conversation(
      first.items.filter((i) => i.type !== 'ASSISTANT_MESSAGE' && i.type !== 'TOOL_RESULT'),
      f.user('now the docs'),
      f.block('bash', { command: 'npm test' }, 'all 12 tests passed'),
      f.block('write_file', { path: 'docs/json.md', content: '# --json' }, 'written'),
    );
    const next = carried(later, { idPrefix: 'c2' });
    expect(ids(next.items).filter((id) => id.startsWith('c1:'))).toStrictEqual(['c1:git-diff-stat']);
    expect(next.trail).toStrictEqual({
      files: [
        {
          path: 'src/cli.ts',
          ops: ['edit'],
          lastRound: 1,
          handle: resultHandle(start, 'str_replace_editor'),
        },
        { path: 'README.md', ops: ['read'], lastRound: 1, handle: resultHandle(start, 'read_file') },
        { path: 'docs/json.md', ops: ['write'], lastRound: 2, handle: resultHandle(later, 'write_file') },
      ],
      commands: [
        { command: 'npm test', round: 1 },
        { command: 'npm test', round: 2 },
      ],
    });
    // The error carried from before is resolved by the passing run: no open-errors item.
    expect(next.openErrors).toStrictEqual([]);
    expect(next.items.map((i) => i.type).filter((t) => t === 'OPEN_ERRORS')).toStrictEqual([]);
    // The git diff stat is kept as it was (no new one given), and is not new.
    expect(next.items.at(-1)).toBe(first.items.at(-1));
    expect(ids(next.added)).toStrictEqual(['c2:artifact-trail']);
  });

  it('the calls a compaction kept are in its trail and errors already: read again, a command would be listed twice', () => {
    const f = itemsFactory(o200k);
    const start = conversation(
      f.user('fix the build'),
      f.block('bash', { command: 'npm test' }, 'Error: 2 tests failed'),
      f.block('read_file', { path: 'src/a.ts' }, 'export const a = 1;'),
      f.block('bash', { command: 'npm test' }, 'Error: 2 tests failed'),
    );
    // The first compaction kept every item; the carried items come after them, the new items after.
    const first = carried(start);
    const later = conversation(
      first.items,
      f.user('go on'),
      f.block('bash', { command: 'ls src' }, 'a.ts'),
      f.block('bash', { command: 'npm test' }, 'Error: 1 test failed'),
    );
    const commands = (trail: { commands: readonly { command: string; round: number }[] }) =>
      trail.commands.map((c) => `${c.command} (${c.round})`);
    const runs = ['npm test (1)', 'npm test (1)', 'ls src (2)', 'npm test (2)'];
    const next = carried(later, { idPrefix: 'c2' });
    expect(commands(next.trail)).toStrictEqual(runs);
    expect(next.trail.files.map((file) => file.path)).toStrictEqual(['src/a.ts']);
    expect(next.openErrors.map((e) => `${e.target}: ${e.text} (${e.round})`)).toStrictEqual([
      'npm test: Error: 1 test failed (2)',
    ]);
    // The same context written out as text and read back (chat messages, a session file): the
    // trail's data is its text, in the header, and the runs it shows are matched once each.
    const readBack = [
      ...later.filter((i) => isCarried(i)).map((i) => asWritten(f.user(textOf(i)))),
      ...later.filter((i) => !isCarried(i)),
    ];
    expect(readBack.filter((i) => isCarried(i))).toHaveLength(2);
    expect(commands(carried(readBack, { idPrefix: 'c3' }).trail)).toStrictEqual(runs);
  });

  it('read back from its text, the trail lists the latest runs only: the kept older ones stay out, in order', () => {
    const f = itemsFactory(o200k);
    const blocks = Array.from({ length: 15 }, (_, k) =>
      f.block('bash', { command: `make step${k + 1}` }, 'ok'),
    );
    const readBack = compactedAndReadBack(f, conversation(f.user('build it'), ...blocks), () => true, [
      f.block('bash', { command: 'make new' }, 'ok'),
    ]);
    const next = carried(readBack, { idPrefix: 'c2' });
    expect(next.trail.commands.map((c) => c.command)).toStrictEqual([
      ...Array.from({ length: 10 }, (_, k) => `make step${k + 6}`),
      'make new',
    ]);
  });

  it("read back from its text, a round's runs line up from the end of its listing: a repeated command is neither lost nor listed twice", () => {
    const f = itemsFactory(o200k);
    const run = (command: string) => f.block('bash', { command }, 'ok');
    const commands = (items: readonly ContextItem[]) =>
      carried(items, { idPrefix: 'c2' }).trail.commands.map((c) => c.command);
    // 15 runs of one round, the 5th and the 15th the same: the listing shows the 10 newest.
    const names = Array.from({ length: 15 }, (_, k) =>
      k === 4 || k === 14 ? 'npm test' : `make step${k + 1}`,
    );
    const all = conversation(f.user('build it'), ...names.map(run));
    expect(commands(compactedAndReadBack(f, all, () => true, [run('make new')]))).toStrictEqual([
      ...names.slice(5),
      'make new',
    ]);
    // The listed runs summarized away, the new ones of the same round sharing a command with them.
    const gone = conversation(f.user('go'), run('make a'), run('git status'));
    const summarized = new Set(gone.slice(1).map((i) => i.id));
    const next = compactedAndReadBack(f, gone, (i) => !summarized.has(i.id), [
      run('make b'),
      run('git status'),
      run('make c'),
    ]);
    expect(commands(next)).toStrictEqual(['make a', 'git status', 'make b', 'git status', 'make c']);
  });

  it.each<[string, string | null | undefined, string[]]>([
    ['a new stat refreshes it', ' a.ts | 1 +', ['c2:git-diff-stat']],
    ['null removes it (not a git repository)', null, []],
    ['a blank stat removes it', '  \n', []],
    ['undefined keeps the one the context has', undefined, ['c1:git-diff-stat']],
  ])('git diff stat: %s', (_, gitDiffStat, expected) => {
    const first = carried(session(), { gitDiffStat: 'src/cli.ts | 4 ++--' });
    const next = carried(first.items, { idPrefix: 'c2', gitDiffStat });
    expect(ids(next.items.filter((i) => i.type === 'GIT_DIFF_STAT'))).toStrictEqual(expected);
  });

  describe('budgets: open errors and the stat a quarter each at most, the trail the rest', () => {
    /** `n` failed builds that print only their exit status; every third reports another. */
    function failing(n: number, f = itemsFactory(o200k)) {
      return conversation(
        f.user('build everything'),
        Array.from({ length: n }, (_, i) =>
          f.block('bash', { command: `make target${i}` }, `Command exited with code ${i % 3 === 0 ? 1 : 2}`),
        ),
      );
    }
    const code = (i: number) => `Command exited with code ${i % 3 === 0 ? 1 : 2}`;
    const errorLine = (i: number) => `- round 1, bash make target${i}: ${code(i)}`;
    // The data keeps the newest OPEN_ERRORS_LIMIT (8): targets 2 to 9.
    const lines = {
      each: [9, 8, 7, 6, 5, 4, 3, 2].map(errorLine),
      grouped: [
        '- Command exited with code 1 (bash, 3×, latest round 1): make target9; make target6; make target3',
        '- Command exited with code 2 (bash, 5×, latest round 1): make target8; make target7; make target5; make target4; make target2',
      ],
      counted: [
        '- Command exited with code 1 (bash, 3×, latest round 1)',
        '- Command exited with code 2 (bash, 5×, latest round 1)',
      ],
      newest: ['- Command exited with code 1 (bash, 3×, latest round 1)'],
    };

    it.each([
      [1000, 'each'],
      [400, 'grouped'],
      [240, 'counted'],
      // Under the smallest budget (40), the newest error's text still shows.
      [100, 'newest'],
    ] as const)('budget %d: the open errors as %s', (budgetTokens, tier) => {
      const state = carried(failing(10), { budgetTokens });
      const item = state.items.find((i) => i.type === 'OPEN_ERRORS');
      expect(textOf(item)).toBe([OPEN_ERRORS_HEADING, ...lines[tier]].join('\n'));
      expect(o200k.countText(textOf(item))).toBeLessThanOrEqual(Math.max(40, Math.floor(budgetTokens / 4)));
      expect(state.openErrors.map((e) => e.target)).toStrictEqual(
        Array.from({ length: OPEN_ERRORS_LIMIT }, (_, i) => `make target${i + 2}`),
      );
    });

    it('every distinct error text stays in the text down to a budget of 240', () => {
      for (const budgetTokens of [240, 300, 500, 1000]) {
        const text = textOf(
          carried(failing(10), { budgetTokens }).items.find((i) => i.type === 'OPEN_ERRORS'),
        );
        expect(text).toContain(code(1));
        expect(text).toContain(code(2));
      }
    });

    const stat = `${Array.from({ length: 40 }, (_, i) => ` src/file${i}.ts | ${i + 1} +`).join('\n')}\n 40 files changed, 820 insertions(+)`;
    it.each([
      [1000, 22],
      [400, 8],
      [200, 3],
      [100, 1],
    ])(
      'budget %d: the stat keeps its first %d lines, then …, then its summary line whole',
      (budgetTokens, lines) => {
        const state = carried(session(), { budgetTokens, gitDiffStat: stat });
        const text = textOf(state.items.find((i) => i.type === 'GIT_DIFF_STAT'));
        const body = stat.trim().split('\n');
        expect(text).toBe(
          [GIT_DIFF_STAT_HEADING, ...body.slice(0, lines), '…', ' 40 files changed, 820 insertions(+)'].join(
            '\n',
          ),
        );
        expect(o200k.countText(text)).toBeLessThanOrEqual(Math.max(40, Math.floor(budgetTokens / 4)));
      },
    );

    it('the trail takes what the errors and the stat leave, and keeps every path in it', () => {
      const f = itemsFactory(o200k);
      const items = conversation(
        failing(10, f),
        Array.from({ length: 30 }, (_, i) =>
          f.block('read_file', { path: `src/dir${i % 3}/file${i}.ts` }, 'x'),
        ),
      );
      const state = carried(items, { budgetTokens: 1000, gitDiffStat: stat });
      const [trail, errors, git] = state.added;
      const trailText = textOf(trail);
      expect(o200k.countText(trailText)).toBeLessThanOrEqual(
        1000 - (errors?.tokens ?? 0) - (git?.tokens ?? 0),
      );
      for (let i = 0; i < 30; i++) expect(trailText).toContain(`src/dir${i % 3}/file${i}.ts`);
      // The data keeps every file whatever the text holds.
      expect(state.trail.files).toHaveLength(30);
    });

    // Files under a long absolute root and elsewhere: 40 of them (~800 tokens written whole) are
    // over a 400-token share.
    function manyLongPaths(count = 40, f = itemsFactory(o200k)) {
      return conversation(
        f.user('refactor everything'),
        Array.from({ length: count }, (_, i) =>
          f.block(
            'read_file',
            {
              path:
                i % 10 === 9
                  ? `/tmp/scratch/note${i}.md`
                  : `/Users/someone/workspaces/project/packages/pkg${i % 4}/src/module${i}.ts`,
            },
            'x',
          ),
        ),
      );
    }

    it.each([
      // The share alone: the paths under the long root written from it, the root named once.
      [40, 400, 400, true],
      // Too many for the share: the oldest directories collapse into counts.
      [120, 400, 400, false],
      // Room to grow: every path in the text, no file in detail, within the limit.
      [120, 400, 1600, true],
    ])(
      'a trail of %d long paths, budget %d, limit %d → every path in the text: %s',
      (count, budgetTokens, limitTokens, all) => {
        const state = carried(manyLongPaths(count), { budgetTokens, limitTokens });
        const trail = state.added.find((i) => i.type === 'ARTIFACT_TRAIL');
        const text = textOf(trail);
        const found = state.trail.files.filter((file) => pathInText(file.path, text)).length;
        expect(found === count).toBe(all);
        // Each package's files written from their directory, named once.
        for (const pkg of [0, 1, 2, 3])
          expect(
            text.split(`(under /Users/someone/workspaces/project/packages/pkg${pkg}/src/)`),
          ).toHaveLength(all ? 2 : text.includes(`pkg${pkg}/src/ (`) ? 1 : 2);
        expect(text.includes(' files)')).toBe(!all);
        // A path outside the root is written whole.
        if (all) expect(text).toContain(' /tmp/scratch/note9.md');
        expect(trail?.tokens).toBeLessThanOrEqual(Math.max(budgetTokens, all ? limitTokens : 0));
        // Its count is exact: the entries written from the root are counted as written.
        expect(o200k.countText(text) + MESSAGE_OVERHEAD_TOKENS).toBe(trail?.tokens);
      },
    );

    it('under a hard cap (a request would go over the window), no item gets its least share: the texts are cut, the data stays whole', () => {
      const f = itemsFactory(o200k);
      const items = conversation(
        f.user('build everything'),
        Array.from({ length: 30 }, (_, i) =>
          f.block(
            i % 3 === 0 ? 'bash' : 'read_file',
            i % 3 === 0 ? { command: `make target${i}` } : { path: `/srv/app/module-${i}/src/index.ts` },
            i % 3 === 0 ? `Error: target${i} failed: ${words(12, `cause${i}`)}` : 'ok',
          ),
        ),
      );
      const soft = carried(items, { budgetTokens: 40 });
      const hard = carried(items, { budgetTokens: 40, hard: true });
      const tokens = (state: typeof soft) =>
        state.added.filter((i) => isCarried(i)).reduce((n, i) => n + i.tokens, 0);
      // The least shares (the trail's 60, the errors' 40) put the soft state well over its budget.
      expect(tokens(soft)).toBeGreaterThan(100);
      // The cap holds for the items, their messages' framing counted.
      for (const budgetTokens of [40, 41, 43, 57, 90])
        expect(tokens(carried(items, { budgetTokens, hard: true }))).toBeLessThanOrEqual(budgetTokens);
      for (const item of hard.added.filter((i) => isCarried(i)))
        expect(item.tokens).toBe(
          textOf(item) === '' ? 0 : o200k.countText(textOf(item)) + MESSAGE_OVERHEAD_TOKENS,
        );
      // Every path and error is still in the data, for a later compaction with room.
      expect(hard.trail.files).toHaveLength(20);
      expect(hard.openErrors).toStrictEqual(soft.openErrors);
      const data = hard.added.find((i) => i.type === 'ARTIFACT_TRAIL');
      expect(
        data?.type === 'ARTIFACT_TRAIL' && data.carried?.kind === 'artifact_trail' && data.carried.files,
      ).toHaveLength(20);

      // A cap too small for a text: the item keeps its data, counts nothing and is not sent (an
      // empty user message says nothing, and some providers refuse it).
      const none = carried(items, { budgetTokens: 8, hard: true });
      const empty = none.added.filter((i) => isCarried(i) && textOf(i) === '');
      expect(empty.map((i) => i.type).sort()).toStrictEqual(['ARTIFACT_TRAIL', 'OPEN_ERRORS']);
      for (const item of empty) expect(item.tokens).toBe(0);
      const errors = empty.find((i) => i.type === 'OPEN_ERRORS');
      expect(
        errors?.type === 'OPEN_ERRORS' && errors.carried?.kind === 'open_errors' && errors.carried.errors,
      ).toHaveLength(10);
      const sent = lower(none.items).messages;
      expect(sent.filter((m) => m.content === '')).toStrictEqual([]);
      expect(sent).toHaveLength(lower(none.items.filter((i) => !empty.includes(i))).messages.length);
      expect(sent.length).toBeGreaterThan(30);
    });

    it('open errors grow into the limit to keep every text, to a quarter of it', () => {
      const f = itemsFactory(o200k);
      const items = conversation(
        f.user('build everything'),
        Array.from({ length: 8 }, (_, i) =>
          f.block(
            'bash',
            { command: `make target${i}` },
            `Error: target${i} failed: ${words(12, `cause${i}`)}`,
          ),
        ),
      );
      const shareOnly = textOf(
        carried(items, { budgetTokens: 400 }).added.find((i) => i.type === 'OPEN_ERRORS'),
      );
      const grown = textOf(
        carried(items, { budgetTokens: 400, limitTokens: 1600 }).added.find((i) => i.type === 'OPEN_ERRORS'),
      );
      const shown = (text: string) =>
        Array.from({ length: 8 }, (_, i) => text.includes(`target${i} failed`)).filter(Boolean).length;
      expect(shown(shareOnly)).toBeLessThan(8);
      expect(shown(grown)).toBe(8);
      expect(o200k.countText(grown)).toBeLessThanOrEqual(400);
    });

    it("past a quarter, to half of the limit, only where the trail's paths written bare still fit beside them", () => {
      const f = itemsFactory(o200k);
      const errors = Array.from({ length: 8 }, (_, i) =>
        f.block(
          'bash',
          { command: `make target${i}` },
          `Error: target${i} failed: ${words(16, `cause${i}`)}`,
        ),
      );
      const reads = (n: number) =>
        Array.from({ length: n }, (_, i) =>
          f.block('read_file', { path: `src/module${i}/file${i}.ts` }, 'x'),
        );
      const shown = (state: ReturnType<typeof carried>) => {
        const text = textOf(state.added.find((i) => i.type === 'OPEN_ERRORS'));
        return Array.from({ length: 8 }, (_, i) => text.includes(`target${i} failed`)).filter(Boolean).length;
      };
      const pathsKept = (state: ReturnType<typeof carried>, n: number) => {
        const trail = textOf(state.added.find((i) => i.type === 'ARTIFACT_TRAIL'));
        return Array.from({ length: n }, (_, i) => trail.includes(`src/module${i}/file${i}.ts`)).every(
          Boolean,
        );
      };
      // A few files: the errors take what the paths leave, every error shown.
      const few = carried(conversation(f.user('build'), ...reads(3), ...errors), {
        budgetTokens: 300,
        limitTokens: 900,
      });
      expect(shown(few)).toBe(8);
      expect(pathsKept(few, 3)).toBe(true);
      // Many files: their bare paths need the room, the errors keep a quarter and every path stays.
      const many = carried(conversation(f.user('build'), ...reads(70), ...errors), {
        budgetTokens: 300,
        limitTokens: 900,
      });
      expect(shown(many)).toBeLessThan(8);
      expect(pathsKept(many, 70)).toBe(true);
      for (const state of [few, many])
        expect(state.added.reduce((n, i) => n + i.tokens, 0)).toBeLessThanOrEqual(900);
      // A long header leaves no room to grow into: the errors take up to half of the budget itself.
      const tight = carried(conversation(f.user('build'), ...reads(3), ...errors), {
        budgetTokens: 900,
        limitTokens: 300,
      });
      expect(shown(tight)).toBe(8);
      expect(pathsKept(tight, 3)).toBe(true);
      expect(tight.added.reduce((n, i) => n + i.tokens, 0)).toBeLessThanOrEqual(900);
    });
  });
});

describe('buildCarriedState: notes read off another agent’s tool calls', () => {
  function withCalls(f = itemsFactory(o200k)) {
    const todo = f.calls(
      [
        {
          name: 'TodoWrite',
          args: {
            todos: [
              { content: 'parse the flag', status: 'completed' },
              { content: 'print json', status: 'in_progress' },
              { content: 'write docs', status: 'pending' },
            ],
          },
        },
      ],
      null,
      { id: 'todo' },
    );
    const todoId = todo.message.tool_calls?.[0]?.id ?? '';
    const remember = f.calls([{ name: 'remember', args: { note: 'tests need NODE_ENV=test' } }], null, {
      id: 'mem',
    });
    const pin = f.calls([{ name: 'pin', args: { text: 'Never push to main' } }], null, { id: 'pin' });
    return conversation(
      f.system('sys', { id: 'sys' }),
      f.user('Make the CLI accept --json', { id: 'task' }),
      todo,
      f.result(todoId, 'Todos updated', { id: 'todo-r' }),
      remember,
      f.result(remember.message.tool_calls?.[0]?.id ?? '', 'saved', { id: 'mem-r' }),
      pin,
      f.result(pin.message.tool_calls?.[0]?.id ?? '', 'pinned', { id: 'pin-r' }),
      f.assistant('ok', { id: 'ok' }),
    );
  }

  it('a TodoWrite, a remember and a pin become TASK_LIST, MEMORY and a pinned message right after their results', () => {
    const state = carried(withCalls());
    expect(state.items.map((i) => `${i.id}:${i.type}${i.pinned ? ':pinned' : ''}`)).toStrictEqual([
      'sys:SYSTEM_PROMPT',
      'task:USER_MESSAGE',
      'todo:ASSISTANT_MESSAGE',
      'todo-r:TOOL_RESULT',
      'c1:note:todo-r:0:TASK_LIST',
      'mem:ASSISTANT_MESSAGE',
      'mem-r:TOOL_RESULT',
      'c1:note:mem-r:1:MEMORY',
      'pin:ASSISTANT_MESSAGE',
      'pin-r:TOOL_RESULT',
      'c1:note:pin-r:2:USER_MESSAGE:pinned',
      'ok:ASSISTANT_MESSAGE',
    ]);
    const byId = new Map(state.items.map((i) => [i.id, i]));
    expect(textOf(byId.get('c1:note:todo-r:0'))).toBe(
      '[Task list]\n[x] parse the flag\n[~] print json\n[ ] write docs',
    );
    expect(textOf(byId.get('c1:note:mem-r:1'))).toBe('[Memory] tests need NODE_ENV=test');
    expect(textOf(byId.get('c1:note:pin-r:2'))).toBe('<Pin>Never push to main</Pin>');
    for (const id of ['c1:note:todo-r:0', 'c1:note:mem-r:1', 'c1:note:pin-r:2']) {
      expect(byId.get(id)).toMatchObject({ round: 1, isMeta: true });
      expect(byId.get(id)?.tokens).toBe(o200k.countItem(byId.get(id) as ContextItem));
    }
    expect(ids(state.added)).toStrictEqual(['c1:note:todo-r:0', 'c1:note:mem-r:1', 'c1:note:pin-r:2']);
    // In the header: the task list, the memory and the pin.
    const roles = headerRoles(state.items);
    expect([roles[4], roles[7], roles[10]]).toStrictEqual(['task_list', 'memory', 'pinned']);
  });

  it('is not duplicated when the note item exists already', () => {
    const once = carried(withCalls());
    const twice = carried(once.items, { idPrefix: 'c2' });
    expect(twice.items).toStrictEqual(once.items);
    expect(twice.added).toStrictEqual([]);
  });

  it('only the latest task-list call becomes a task list (an update_plan after a TodoWrite)', () => {
    const f = itemsFactory(o200k);
    const plan = f.block('update_plan', { plan: [{ step: 'write tests', status: 'pending' }] }, 'ok');
    const items = [...withCalls(f), ...plan.map((i) => ({ ...i, round: 1 }))];
    const lists = carried(items).items.filter((i) => i.type === 'TASK_LIST');
    expect(lists.map(textOf)).toStrictEqual(['[Task list]\n[ ] write tests']);
    expect(lists.map((i) => i.id)).toStrictEqual([`c1:note:${plan[1].id}:3`]);
  });

  it('a TASK_LIST item newer than the call wins: no task list from the call', () => {
    const f = itemsFactory(o200k);
    const items = [
      ...withCalls(f),
      { ...f.note('TASK_LIST', '[Task list]\n[ ] ours', { id: 'ours' }), round: 1 },
    ];
    expect(ids(carried(items).items.filter((i) => i.type === 'TASK_LIST'))).toStrictEqual(['ours']);
  });

  it('only the latest task list stays: an older one read after it would pass for the current one', () => {
    const f = itemsFactory(o200k);
    // A compaction's task list from the TodoWrite, then an update_plan: its list replaces that one.
    const first = carried(withCalls(f));
    const plan = f.block('update_plan', { plan: [{ step: 'write tests', status: 'pending' }] }, 'ok');
    const later = [...first.items, ...plan.map((i) => ({ ...i, round: 1 }))];
    const next = carried(later, { idPrefix: 'c2' });
    expect(ids(next.items.filter((i) => i.type === 'TASK_LIST'))).toStrictEqual([`c2:note:${plan[1].id}:3`]);
    // Nothing else goes, and the calls stay paired.
    expect(ids(next.items.filter((i) => !isCarried(i) && i.type !== 'TASK_LIST'))).toStrictEqual(
      ids(later.filter((i) => !isCarried(i) && i.type !== 'TASK_LIST')),
    );
    expect(next.pairs.callResult.every((at) => at === -1 || next.items[at]?.type === 'TOOL_RESULT')).toBe(
      true,
    );
    // Task lists the context holds (ours, read back from text): the latest one stays.
    const held = conversation(
      f.user('task'),
      f.note('TASK_LIST', '[Task list]\n[ ] old', { id: 'old' }),
      f.assistant('working'),
      f.note('TASK_LIST', '[Task list]\n[x] old\n[ ] new', { id: 'new' }),
      f.assistant('still working'),
    );
    expect(ids(carried(held).items.filter((i) => i.type === 'TASK_LIST'))).toStrictEqual(['new']);
    expect(carried(held).items).toHaveLength(held.length - 1);
  });

  it('a note call still waiting for its result: the note follows the call', () => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.user('task'),
      f.calls([{ name: 'save_memory', args: { fact: 'the API is v2' } }], null, { id: 'call' }),
    );
    expect(ids(carried(items).items)).toStrictEqual([...ids(items), 'c1:note:call:0']);
  });
});

describe('toolResultError: strict detection', () => {
  const f = itemsFactory();
  const result = (content: string, origin?: ToolResultItem['origin']): ToolResultItem => ({
    ...f.result('call_1', content),
    ...(origin ? { origin } : {}),
  });
  const longOutput = (middle: string) => `${'ok line\n'.repeat(1000)}${middle}\n${'ok line\n'.repeat(1000)}`;

  it.each<[string, string, string, ToolResultItem['origin'] | undefined, string | null]>([
    [
      'a file read that mentions errors',
      'read_file',
      'function onError(e) {\n  throw new Error("bad input");\n}',
      undefined,
      null,
    ],
    [
      'a file read that failed',
      'read_file',
      'Error: ENOENT: no such file or directory',
      undefined,
      'Error: ENOENT: no such file or directory',
    ],
    [
      'a pi result flagged isError',
      'read',
      '\nPermission denied\n',
      { format: 'pi', index: 3, fields: { message: { isError: true } } },
      'Permission denied',
    ],
    [
      'a flagged output that names no error: its last words',
      'bash',
      'Reading package lists... Done\nBuilding dependency tree\nE: Unable to locate package libponyc\n',
      { format: 'pi', index: 3, fields: { message: { isError: true } } },
      'E: Unable to locate package libponyc',
    ],
    [
      'a bare ERROR: label: with the line that says what',
      'str_replace_editor',
      'ERROR:\nNo replacement was performed, old_str `x` did not appear verbatim in a.c.',
      { format: 'openhands', index: 3, fields: { isError: true } },
      'ERROR: No replacement was performed, old_str `x` did not appear verbatim in a.c.',
    ],
    [
      'a pi result not flagged',
      'read',
      'Permission denied',
      { format: 'pi', index: 3, fields: { message: { isError: false } } },
      null,
    ],
    [
      'a non-zero exit: the last words before the exit status',
      'bash',
      'compiling 3 files\nCompilation aborted: out of memory\n\nCommand exited with code 1',
      undefined,
      'Compilation aborted: out of memory',
    ],
    [
      'a non-zero exit with nothing else to say',
      'bash',
      '(no output)\n\nCommand exited with code 1',
      undefined,
      'Command exited with code 1',
    ],
    [
      'a non-zero exit with nothing to say, inside a shell wrapper (Codex): the exit status, not `Output:`',
      'exec_command',
      'Chunk ID: 4f1a\nWall time: 0.2 seconds\nProcess exited with code 1\nOriginal token count: 0\nOutput:\n',
      { format: 'codex', index: 3, fields: { isError: true } },
      'Process exited with code 1',
    ],
    ['a zero exit', 'bash', 'building\nCommand exited with code 0', undefined, null],
    [
      'a traceback: its exception',
      'bash',
      'Traceback (most recent call last):\n  File "a.py", line 1\nValueError: bad',
      undefined,
      'ValueError: bad',
    ],
    ['npm', 'bash', 'npm ERR! code ELIFECYCLE', undefined, 'npm ERR! code ELIFECYCLE'],
    [
      'command not found',
      'bash',
      'bash: pytest: command not found',
      undefined,
      'bash: pytest: command not found',
    ],
    [
      'a failing test file',
      'bash',
      'PASS src/a.test.ts\nFAIL src/b.test.ts',
      undefined,
      'FAIL src/b.test.ts',
    ],
    ['failed tests counted', 'bash', 'Tests: 3 failed, 9 passed', undefined, 'Tests: 3 failed, 9 passed'],
    ['a clean run', 'bash', 'Tests: 12 passed\nno errors found', undefined, null],
    [
      'a failure at the end of a long output',
      'bash',
      `${'ok line\n'.repeat(2000)}Error: boom`,
      undefined,
      'Error: boom',
    ],
    [
      'a failure in the middle of a long output is not read',
      'bash',
      longOutput('ValueError: boom'),
      undefined,
      null,
    ],
    // The line that says what failed, before the one that gives the exit code.
    [
      'a compiler diagnostic before the exit code',
      'bash',
      '> tsc --noEmit\nsrc/a.ts(23,35): error TS2345: Argument of type "x" is not assignable.\nCommand exited with code 2',
      undefined,
      'src/a.ts(23,35): error TS2345: Argument of type "x" is not assignable.',
    ],
    [
      'npm 10’s error before the exit code',
      'bash',
      '> build\nnpm error Lifecycle script `build` failed with error:\nCommand exited with code 1',
      undefined,
      'npm error Lifecycle script `build` failed with error:',
    ],
    [
      'a flagged merge conflict: the conflict, not the remote it pulled from',
      'bash',
      'From https://github.com/o/r\n * branch main -> FETCH_HEAD\nAuto-merging a.ts\nCONFLICT (content): Merge conflict in a.ts\nAutomatic merge failed',
      { format: 'pi', index: 3, fields: { message: { isError: true } } },
      'CONFLICT (content): Merge conflict in a.ts',
    ],
    [
      'an output that only mentions an error is no failure',
      'bash',
      'src/a.ts(1,1): error handling reviewed\nall good',
      undefined,
      null,
    ],
  ])('%s', (_, tool, content, origin, expected) => {
    expect(toolResultError(result(content, origin), tool)).toBe(expected);
  });
});

describe('toolResultError: a command that only prints files', () => {
  const f = itemsFactory();
  const flagged = (content: string): ToolResultItem => ({
    ...f.result('call_1', content),
    origin: { format: 'codex', index: 0, fields: { isError: true } },
  });

  it.each<[string, string, string | null]>([
    // Codex flags a command's non-zero exit: a search that matched nothing printed nothing else.
    ['rg finding nothing', 'Exit code: 1\nWall time: 0 seconds\nOutput:\n', null],
    ['grep finding nothing', 'Process exited with code 1\n', null],
    [
      'its own diagnostic',
      'Exit code: 2\nOutput:\nrg: src/missing: No such file or directory (os error 2)',
      'rg: src/missing: No such file or directory (os error 2)',
    ],
    [
      'cat of a missing file',
      'cat: notes.md: No such file or directory',
      'cat: notes.md: No such file or directory',
    ],
    [
      'a flagged output that says more than its status',
      'Exit code: 124\nOutput:\ncommand timed out after 10s',
      'command timed out after 10s',
    ],
    // Silent, but another status: the search's own error (2), git's (128), a timeout (124).
    [
      'a silent exit 2',
      'Exit code: 2\nWall time: 0 seconds\nOutput:\n',
      'Exit code: 2 Wall time: 0 seconds Output:',
    ],
    ['a silent exit 128', 'Process exited with code 128\n', 'Process exited with code 128'],
    ['a silent exit 124', 'Exit code: 124\nOutput:\n', 'Exit code: 124 Output:'],
    ['a silent exit 11', 'Process exited with code 11', 'Process exited with code 11'],
    ['a silent exit -1 (still running)', 'Exit code: -1\nOutput:\n', 'Exit code: -1 Output:'],
    // OpenHands keeps the status in the event's metadata: the text holds nothing.
    ['nothing at all', '', null],
    ['pi: (no output), exit 1', '(no output)\n\nCommand exited with code 1', null],
  ])('%s', (_, content, expected) => {
    expect(toolResultError(flagged(content), 'exec_command', true)).toBe(expected);
  });

  it('the same silent result from a command that does more than print stays an error', () => {
    expect(
      toolResultError(flagged('Exit code: 1\nWall time: 0 seconds\nOutput:\n'), 'exec_command', false),
    ).toBe('Exit code: 1 Wall time: 0 seconds Output:');
  });
});

describe('collectOpenErrors', () => {
  function run(steps: [string, Record<string, unknown>, string][], previous: OpenError[] = []) {
    const f = itemsFactory();
    const items = conversation(f.user('task'), ...steps.map(([name, args, out]) => f.block(name, args, out)));
    return collectOpenErrors(items, previous);
  }
  const failed = ['bash', { command: 'npm test' }, 'npm ERR! Test failed'] as [
    string,
    Record<string, unknown>,
    string,
  ];

  it.each<[string, [string, Record<string, unknown>, string][], string[]]>([
    ['a failure stays open', [failed], ['bash npm test']],
    [
      'a later success of the same tool on the same target resolves it',
      [failed, ['bash', { command: 'npm test' }, 'all passed']],
      [],
    ],
    [
      'the target is the command after a `cd dir &&`, its first words',
      [failed, ['bash', { command: 'cd app && npm test | tail -5' }, 'ok']],
      [],
    ],
    [
      'a success on another target does not',
      [failed, ['bash', { command: 'npm run lint' }, 'ok']],
      ['bash npm test'],
    ],
    [
      'a success of another tool does not',
      [failed, ['shell', { command: 'npm test' }, 'ok']],
      ['bash npm test'],
    ],
    [
      'an edit that failed, then went through',
      [
        ['str_replace_editor', { command: 'str_replace', path: 'src/tax.ts' }, 'Error: no match for old_str'],
        [
          'str_replace_editor',
          { command: 'str_replace', path: 'src/tax.ts' },
          'The file src/tax.ts has been edited.',
        ],
      ],
      [],
    ],
    ['the same failure twice: once', [failed, failed], ['bash npm test']],
    [
      'another command that shares the target (its first three words) replaces nothing',
      [
        ['bash', { command: 'python -c "import a"' }, "ModuleNotFoundError: No module named 'a'"],
        ['bash', { command: 'python -c "import b"' }, "ModuleNotFoundError: No module named 'b'"],
      ],
      [
        `bash python -c "import: ModuleNotFoundError: No module named 'a'`,
        `bash python -c "import: ModuleNotFoundError: No module named 'b'`,
      ],
    ],
    [
      'another failure of the same call replaces it: what is open is its latest outcome',
      [
        ['bash', { command: 'python repro.py' }, "ModuleNotFoundError: No module named 'numpy'"],
        ['bash', { command: 'pip install numpy' }, 'Successfully installed numpy'],
        ['bash', { command: 'python repro.py' }, 'TypeError: only length-1 arrays can be converted'],
      ],
      ['bash python repro.py: TypeError: only length-1 arrays can be converted'],
    ],

    [
      'a shell command is the command it runs, not a file it writes or prints: reading that file resolves nothing',
      [
        [
          'bash',
          { command: 'python repro.py > out.txt 2>&1; cat out.txt' },
          'Traceback (most recent call last):',
        ],
        ['bash', { command: 'cat out.txt' }, 'ok'],
      ],
      ['bash python repro.py'],
    ],
    [
      "a patch given to apply_patch in the shell is applied to its file (Codex's bash -lc \"apply_patch <<'EOF' …\")",
      [
        [
          'shell',
          {
            command: ['bash', '-lc', "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/a.ts\nEOF"],
          },
          'error: patch failed to apply',
        ],
        [
          'shell',
          {
            command: ['bash', '-lc', "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/b.ts\nEOF"],
          },
          'Done!',
        ],
      ],
      ['shell src/a.ts'],
    ],
  ])('%s', (_, steps, open) => {
    const errors = run(steps);
    // Where the expectation names the text too (`tool target: text`), the text is checked.
    expect(
      errors.map((e, i) => `${e.tool} ${e.target}${open[i]?.includes(': ') ? `: ${e.text}` : ''}`),
    ).toStrictEqual(open);
  });

  it('takes a call cut short as no outcome: the failure before it stays', () => {
    const f = itemsFactory();
    const [call, result] = f.block('bash', { command: 'npm test' }, '[Tool execution was interrupted]');
    // As OpenCode's importer gives it: an error result.
    const cut = { ...result, facts: { error: '[Tool execution was interrupted]' } };
    const items = conversation(f.user('task'), f.block(...failed), [call, cut]);
    expect(collectOpenErrors(items).map((e) => e.text)).toEqual([
      'npm ERR! Test failed',
      '[Tool execution was interrupted]',
    ]);
  });

  it('starts from the carried errors and resolves them too', () => {
    const previous: OpenError[] = [
      { tool: 'bash', target: 'npm test', round: 1, text: 'npm ERR! Test failed' },
      { tool: 'bash', target: 'make', round: 1, text: 'make: *** Error 2' },
    ];
    expect(run([['bash', { command: 'npm test' }, 'ok']], previous)).toStrictEqual([previous[1]]);
  });

  it(`keeps the newest ${OPEN_ERRORS_LIMIT}, oldest first`, () => {
    const steps = Array.from({ length: 11 }, (_, i): [string, Record<string, unknown>, string] => [
      'bash',
      { command: `make t${i}` },
      `Error: t${i} failed`,
    ]);
    const open = run(steps);
    expect(open.map((e) => e.text)).toStrictEqual(
      Array.from({ length: 8 }, (_, i) => `Error: t${i + 3} failed`),
    );
    expect(open[0]).toStrictEqual({
      tool: 'bash',
      target: 'make t3',
      round: 1,
      text: 'Error: t3 failed',
      call: 'make t3',
    });
  });

  it(`across compactions: an older error still open is shown again when newer ones are resolved, as in the whole history`, () => {
    const f = itemsFactory(o200k);
    const failing = (i: number) => f.block('bash', { command: `make t${i}` }, `Error: t${i} failed`);
    const first = conversation(
      f.user('task', { id: 'task' }),
      ...Array.from({ length: 11 }, (_, i) => failing(i)),
    );
    const once = carried(first);
    const shown = (state: ReturnType<typeof carried>) =>
      textOf(state.items.find((i) => i.type === 'OPEN_ERRORS'))
        .split('\n')
        .slice(1)
        .map((line) => /Error: (t\d+)/.exec(line)?.[1]);
    expect(shown(once)).toStrictEqual(['t10', 't9', 't8', 't7', 't6', 't5', 't4', 't3']);
    // The failures summarized away, the next compaction sees the carried errors and two fixes; the
    // whole history has t1 and t2 open then.
    const fixes = [9, 10].flatMap((i) => f.block('bash', { command: `make t${i}` }, 'ok'));
    const compacted = once.items.filter((i) => i.id === 'task' || i.type === 'OPEN_ERRORS');
    const twice = carried([...compacted, ...fixes]);
    const whole = collectOpenErrors([...first, ...fixes]).map((e) => /t\d+/.exec(e.text)?.[0]);
    expect(shown(twice)).toStrictEqual([...whole].reverse());
    expect(shown(twice)).toStrictEqual(['t8', 't7', 't6', 't5', 't4', 't3', 't2', 't1']);
  });
});

describe('agent notes', () => {
  it.each<[string, string, Record<string, unknown> | string, CallNote | null]>([
    [
      'a TodoWrite',
      'TodoWrite',
      { todos: [{ content: 'a', status: 'completed' }, { content: 'b' }] },
      {
        kind: 'task_list',
        tasks: [
          { title: 'a', status: 'completed' },
          { title: 'b', status: 'pending' },
        ],
      },
    ],
    [
      'an update_plan',
      'update_plan',
      { plan: [{ step: 'read', status: 'in_progress' }] },
      { kind: 'task_list', tasks: [{ title: 'read', status: 'in_progress' }] },
    ],
    [
      'our update_tasks with plain strings',
      'update_tasks',
      { tasks: ['one', ' two '] },
      {
        kind: 'task_list',
        tasks: [
          { title: 'one', status: 'pending' },
          { title: 'two', status: 'pending' },
        ],
      },
    ],
    ['an empty task list', 'TodoWrite', { todos: [] }, null],
    ['our remember', 'remember', { note: ' use tabs ' }, { kind: 'memory', text: 'use tabs' }],
    ['a save_memory', 'save_memory', { fact: 'API v2' }, { kind: 'memory', text: 'API v2' }],
    ['our pin', 'pin', { text: 'never push to main' }, { kind: 'pin', text: 'never push to main' }],
    ['a pin_message', 'pin_message', { content: 'x' }, { kind: 'pin', text: 'x' }],
    ['spinner is not a pin', 'spinner', { text: 'x' }, null],
    ['a memory without text', 'remember', { note: '  ' }, null],
    ['not JSON', 'TodoWrite', 'todos: a, b', null],
    ['any other tool', 'read_file', { path: 'a.ts' }, null],
    [
      "Cline's task_progress checklist, given with any call",
      'execute_command',
      { command: 'npm test', task_progress: '- [x] Read the code\n- [ ] Run the tests\nnotes: none' },
      {
        kind: 'task_list',
        tasks: [
          { title: 'Read the code', status: 'completed' },
          { title: 'Run the tests', status: 'pending' },
        ],
      },
    ],
    [
      'a task_progress that is no checklist',
      'read_file',
      { path: 'a.ts', task_progress: 'almost done' },
      null,
    ],
    [
      "a memory tool's own note before a task_progress",
      'remember',
      { fact: 'API v2', task_progress: '- [ ] ship' },
      { kind: 'memory', text: 'API v2' },
    ],
    [
      "Roo Code's update_todo_list with a Markdown checklist",
      'update_todo_list',
      { todos: '[x] Analyze\n[-] Implement\n[ ] Test' },
      {
        kind: 'task_list',
        tasks: [
          { title: 'Analyze', status: 'completed' },
          { title: 'Implement', status: 'in_progress' },
          { title: 'Test', status: 'pending' },
        ],
      },
    ],
  ])('noteOfToolCall: %s', (_, name, args, note) => {
    expect(noteOfToolCall(name, typeof args === 'string' ? args : JSON.stringify(args))).toStrictEqual(note);
  });

  it('reads a long checklist line in linear time', () => {
    const started = performance.now();
    const note = noteOfToolCall('x', JSON.stringify({ task_progress: `- [ ] a${' '.repeat(40_000)}b ` }));
    expect(note).toMatchObject({ kind: 'task_list', tasks: [{ title: `a${' '.repeat(40_000)}b` }] });
    expect(performance.now() - started).toBeLessThan(200);
  });

  it.each<[string, string]>([
    ['completed', '[x]'],
    ['done', '[x]'],
    ['Finished', '[x]'],
    ['in_progress', '[~]'],
    ['active', '[~]'],
    ['pending', '[ ]'],
    ['blocked', '[ ]'],
  ])('formatTaskList: %s → %s', (status, box) => {
    const tasks: Task[] = [{ title: ' the task ', status }];
    expect(formatTaskList(tasks)).toBe(`${box} the task`);
  });

  it('formatTaskList: one task a line', () => {
    expect(
      formatTaskList([
        { title: 'a', status: 'done' },
        { title: 'b', status: 'pending' },
      ]),
    ).toBe('[x] a\n[ ] b');
  });

  it.each<[string, ChatMessage, boolean]>([
    ['a pin', { role: 'user', content: 'remember <Pin>use UTC</Pin> please' }, true],
    ['a pin over lines', { role: 'user', content: '<Pin>a\nb</Pin>' }, true],
    ['a pin in a text part', { role: 'user', content: [{ type: 'text', text: '<Pin>x</Pin>' }] }, true],
    ['the word pin', { role: 'user', content: 'pin this' }, false],
    ['an unclosed pin', { role: 'user', content: '<Pin>x' }, false],
  ])('hasPin: %s → %s', (_, message, expected) => {
    expect(hasPin(message)).toBe(expected);
    // The same answer twice (a global regex keeps no state between calls).
    expect(hasPin(message)).toBe(expected);
  });
});

describe('carried state written out as text and read back (a session file, chat messages)', () => {
  const files = Array.from({ length: 40 }, (_, i) => ({
    path: `/Users/me/project/src/module-${i}/file-${i}.ts`,
    ops: i % 3 === 0 ? ['read', 'edit'] : ['read'],
    lastRound: i + 1,
    handle: handleOf(`r${i}`),
  }));
  const trail = {
    files,
    commands: [
      { command: 'npm test', round: 39 },
      { command: 'git status --short', round: 40 },
    ],
  };

  it('a trail’s text gives back every path it names: in detail with its operations and round, listed bare without', () => {
    const whole = renderArtifactTrail(trail, 10_000, o200k);
    expect(trailFromText(whole)).toStrictEqual(trail);
    // Tier 3: the older files listed bare under their root.
    const bare = renderArtifactTrail(trail, 400, o200k);
    expect(bare).toContain('Also touched, older: (under /Users/me/project/src/)');
    const read = trailFromText(bare);
    expect(read.files.map((f) => f.path)).toStrictEqual(files.map((f) => f.path));
    const detailed = read.files.filter((f) => f.ops.length > 0);
    expect(detailed.length).toBeGreaterThan(0);
    for (const file of detailed) expect(file).toStrictEqual(files.find((f) => f.path === file.path));
    // Rendered again, a file read back bare says it was touched earlier.
    expect(renderArtifactTrail(read, 10_000, o200k)).toContain(`- ${files[0]?.path} (touched earlier)`);
  });

  it.each([
    [
      'a root holding ", "',
      [
        '/Users/me/Acme, Inc/project/a.ts',
        '/Users/me/Acme, Inc/project/b.ts',
        '/Users/me/Acme, Inc/project/c.ts',
      ],
    ],
    [
      'a path that is a root',
      [
        '/Users/me/git/project-alpha/',
        '/Users/me/git/project-alpha/a.ts',
        '/Users/me/git/project-alpha/b.ts',
        '/Users/me/git/project-alpha/c.ts',
      ],
    ],
    [
      'a name under a root that starts with ~',
      [
        '/Users/me/git/project-alpha/~$report.docx',
        '/Users/me/git/project-alpha/a.ts',
        '/Users/me/git/project-alpha/b.ts',
        '/Users/me/git/project-alpha/c.ts',
      ],
    ],
  ])('the list of older paths reads back as written: %s', (_, paths) => {
    const trail = {
      files: paths.map((path, i) => ({ path, ops: ['read'], lastRound: i + 1 })),
      commands: [],
    };
    const text = renderArtifactTrail(trail, 50, o200k);
    expect(text).toContain('(under /Users/me/');
    expect(text).not.toContain('- /Users');
    expect(trailFromText(text).files.map((f) => f.path)).toStrictEqual(paths);
    for (const path of paths) expect(pathInText(path, text)).toBe(true);
  });

  it('a trail of commands alone in no room: its heading alone, counted', () => {
    const commands = { files: [], commands: [{ command: `npm test -- ${words(30, 'flag')}`, round: 1 }] };
    const counted = renderTrailCounted(commands, 0, o200k);
    expect(counted.text).toBe(ARTIFACT_TRAIL_HEADING);
    expect(counted.tokens).toBe(o200k.countText(ARTIFACT_TRAIL_HEADING));
  });

  it('paths under several long roots: each root named once, its paths written from it, read back and found as written', () => {
    // Oldest first: a relative path, then two trees of absolute paths interleaved, and one outside both.
    const paths = [
      'notes/todo.md',
      ...Array.from({ length: 12 }, (_, i) =>
        i % 2 === 0
          ? `/Users/me/work/service-api/src/handlers/h${i}.ts`
          : `/Users/me/work/service-api/tests/unit/handlers/h${i}.test.ts`,
      ),
      '/etc/hosts',
      'README.md',
    ];
    const many = {
      files: paths.map((path, i) => ({ path, ops: ['read'], lastRound: i + 1 })),
      commands: [],
    };
    const text = renderArtifactTrail(many, 120, o200k);
    const bare = text.split('\n').find((line) => line.startsWith('Also touched, older:')) ?? '';
    for (const root of [
      '/Users/me/work/service-api/src/handlers/',
      '/Users/me/work/service-api/tests/unit/handlers/',
    ])
      expect(bare.split(`(under ${root})`)).toHaveLength(2);
    // The oldest path is relative and comes after a root's paths: written from no root ('./').
    expect(bare).toMatch(/\(under \.\/\) notes\/todo\.md$/);
    const listed = trailFromText(text).files.map((f) => f.path);
    expect([...listed].sort()).toStrictEqual([...paths].sort());
    for (const path of paths) expect(pathInText(path, text)).toBe(true);
    expect(pathInText('/Users/me/work/service-api/src/handlers/h1.test.ts', text)).toBe(false);
    expect(pathInText('/Users/me/work/service-api/tests/unit/handlers/notes/todo.md', text)).toBe(false);
    // Counted part by part, exactly.
    const counted = renderTrailCounted(many, 120, o200k);
    expect(counted.text).toBe(text);
    expect(counted.tokens).toBe(o200k.countText(text));
  });

  it('a path not under the list’s root, a root with parentheses and a command with backticks read back as written', () => {
    const text = [
      ARTIFACT_TRAIL_HEADING,
      '- src/new.ts (edited; round 9, #a1b2c3)',
      'Also touched, older: (under /Users/me/Proj (2)/src/) two.ts, one.ts, /etc/hosts, ~/.zshrc',
    ].join('\n');
    expect(trailFromText(text).files.map((f) => f.path)).toStrictEqual([
      '~/.zshrc',
      '/etc/hosts',
      '/Users/me/Proj (2)/src/one.ts',
      '/Users/me/Proj (2)/src/two.ts',
      'src/new.ts',
    ]);
    const commands = renderArtifactTrail(
      {
        files: [],
        commands: [
          { command: 'echo `date` > stamp.txt', round: 3 },
          { command: 'ls', round: 4 },
        ],
      },
      1000,
      o200k,
    );
    expect(trailFromText(commands).commands).toStrictEqual([
      { command: 'echo `date` > stamp.txt', round: 3 },
      { command: 'ls', round: 4 },
    ]);
  });

  it('a person’s message that quotes a trail and goes on is theirs, not a trail', () => {
    const f = itemsFactory(o200k);
    const trail = renderArtifactTrail({ files: files.slice(0, 2), commands: [] }, 1000, o200k);
    expect(asWritten(f.user(trail)).type).toBe('ARTIFACT_TRAIL');
    expect(asWritten(f.user(`${trail}\n\nNEW REQUIREMENT: also support 2027 brackets`)).type).toBe(
      'USER_MESSAGE',
    );
  });

  it('a context whose trail and open errors are text alone carries them on, as if their data were there', () => {
    const items = session();
    const first = carried(items);
    const asText = first.items.map((item) => (isCarried(item) ? { ...item, carried: undefined } : item));
    const again = carried(asText, { idPrefix: 'c2' });
    expect(again.trail.files.map((f) => [f.path, f.ops])).toStrictEqual(
      first.trail.files.map((f) => [f.path, f.ops]),
    );
    expect(again.openErrors).toStrictEqual(first.openErrors);
  });

  it('open errors’ text gives them back: one a line, or one a target of a line of the same text', () => {
    const errors: OpenError[] = [
      { tool: 'bash', target: 'npm test', round: 3, text: 'Error: expected 2, got 1' },
      { tool: 'edit', target: 'src/a.ts', round: 4, text: 'old_string not found' },
      { tool: 'edit', target: 'src/b.ts', round: 5, text: 'old_string not found' },
      { tool: 'bash', target: '', round: 6, text: 'fatal: not a git repository' },
    ];
    expect(openErrorsFromText(renderOpenErrors(errors))).toStrictEqual(errors);
    // Grouped by text: the group's latest round for each of its targets.
    const grouped = renderOpenErrorsWithin(errors, 72, o200k).text;
    expect(grouped).toContain('- old_string not found (edit, 2×, latest round 5): src/b.ts; src/a.ts');
    expect(openErrorsFromText(grouped)).toStrictEqual([
      errors[0],
      { ...errors[1], round: 5 },
      errors[2],
      errors[3],
    ]);
  });
});
