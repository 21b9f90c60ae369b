import { describe, expect, it } from 'vitest';
import { handleOf } from '../../../src/context/recall-handle';
import {
  ARTIFACT_TRAIL_HEADING,
  collectArtifactTrail,
  renderArtifactTrail,
  renderTrailCounted,
  type ArtifactTrail,
} from '../../../src/context/artifact-trail';
import { toolCallEffect, type CallEffect } from '../../../src/context/tool-facts';
import { buildCarriedState } from '../../../src/context/carried-state';
import { parseCompactionConfig } from '../../../src/context/config';
import {
  EXTRACTIVE_LABEL,
  extractiveSummary,
  parseExtractiveSummary,
  type ExtractiveInput,
} from '../../../src/context/extractive-summary';
import type { ContextItem, FileTouch } from '../../../src/context/items';
import { collectOpenErrors } from '../../../src/context/open-errors';
import { SUMMARY_MESSAGE_PREFIX } from '../../../src/context/post-compaction';
import {
  FOCUS_PREFIX,
  middleCutMarker,
  SUMMARIZER_SYSTEM_PROMPT,
  SUMMARY_PROMPT,
  UPDATE_SUMMARY_PROMPT,
} from '../../../src/context/summary-prompt';
import {
  buildSummaryRequest,
  headTailCut,
  serializeSpan,
  type SummaryRequestInput,
} from '../../../src/context/summary-request';
import { createTokenCounter } from '../../../src/tokens';
import { conversation, fakeTokenizer, itemsFactory } from '../../support/items-factory';

const o200k = createTokenCounter({ encoding: 'o200k_base' });

/** o200k, keeping every text it counts (`counted`), to see what a rendering counts again. */
function watchedO200k() {
  const counted: string[] = [];
  const watching = {
    ...o200k,
    countText: (text: string) => {
      counted.push(text);
      return o200k.countText(text);
    },
  };
  return { counted, watching };
}
const DEFAULTS = parseCompactionConfig({});

function request(over: Partial<SummaryRequestInput> & Pick<SummaryRequestInput, 'items'>) {
  return buildSummaryRequest({
    toSummarize: over.items,
    previousSummaries: [],
    focus: null,
    config: DEFAULTS,
    ...over,
  });
}

const userContent = (r: ReturnType<typeof buildSummaryRequest>): string => String(r.messages[1]?.content);

describe('headTailCut (seed 000: head 20%, tail 30% of the limit)', () => {
  it.each([
    [200_000, 0],
    [199_999, 0],
    [200_001, 200_001 - 100_000],
    [1_000_000, 900_000],
  ])('%d characters → %d dropped', (length, dropped) => {
    const text =
      'h'.repeat(Math.min(length, 40_000)) +
      'm'.repeat(Math.max(0, length - 100_000)) +
      't'.repeat(Math.max(0, Math.min(60_000, length - 40_000)));
    expect(text.length).toBe(length);
    const cut = headTailCut(text, 200_000, 0.2, 0.3);
    expect(cut.droppedChars).toBe(dropped);
    if (dropped === 0) {
      expect(cut.text).toBe(text);
      return;
    }
    expect(cut.text).toBe(text.slice(0, 40_000) + middleCutMarker(dropped) + text.slice(length - 60_000));
    expect(cut.text).toContain(
      `[... ${dropped} characters of the middle of the conversation omitted to fit the summarizer ...]`,
    );
  });

  it('never cuts a surrogate pair in half', () => {
    const text = '😀'.repeat(100); // 200 UTF-16 units
    const cut = headTailCut(text, 11, 0.5, 0.5); // head 5, tail 5: both inside a pair
    const [head, tail] = cut.text.split(middleCutMarker(cut.droppedChars));
    expect(head).toBe('😀'.repeat(2));
    expect(tail).toBe('😀'.repeat(3));
    expect(cut.droppedChars).toBe(200 - 4 - 6);
  });
});

describe('buildSummaryRequest', () => {
  it('cuts an input over 200,000 characters and says so', () => {
    const f = itemsFactory();
    const items = conversation(f.user('task'), f.assistant(`${'a'.repeat(150_000)}${'z'.repeat(150_000)}`));
    const r = request({ items });
    const transcript = serializeSpan(items);
    expect(r.inputChars).toBe(transcript.length);
    expect(r.droppedChars).toBe(transcript.length - 100_000);
    expect(userContent(r)).toContain(middleCutMarker(r.droppedChars));
    expect(userContent(r)).toContain(`<conversation>\n${transcript.slice(0, 40_000)}`);
    expect(userContent(r)).toContain(`${transcript.slice(-60_000)}\n</conversation>`);
  });

  it('a system prompt that forbids continuing the conversation, then one user message', () => {
    const f = itemsFactory();
    const r = request({ items: conversation(f.user('task'), f.assistant('answer')) });
    expect(r.messages).toHaveLength(2);
    expect(r.messages[0]).toStrictEqual({ role: 'system', content: SUMMARIZER_SYSTEM_PROMPT });
    expect(SUMMARIZER_SYSTEM_PROMPT).toContain('Do NOT continue the conversation');
    expect(r.messages[1]?.role).toBe('user');
    expect(r.droppedChars).toBe(0);
  });

  it('serializes a transcript; the last assistant message loses its tool calls', () => {
    const f = itemsFactory();
    const first = f.block('read_file', { path: 'src/a.ts' }, 'export const a = 1;');
    const last = f.calls([{ name: 'bash', args: { command: 'npm test' } }], 'Running the tests.');
    const items = conversation(f.user('task'), first, f.meta('<reminder>'), last);
    expect(serializeSpan(items)).toBe(
      [
        '[User]: task',
        '[Assistant tool call] read_file({"path":"src/a.ts"})',
        '[Tool result read_file]: export const a = 1;',
        '[System note]: <reminder>',
        '[Assistant]: Running the tests.',
      ].join('\n\n'),
    );
  });

  it('keeps the calls when their results follow in the span', () => {
    const f = itemsFactory();
    const items = conversation(f.user('task'), f.block('bash', { command: 'ls' }, 'a b'));
    expect(serializeSpan(items)).toContain('[Assistant tool call] bash({"command":"ls"})');
  });

  it('uses the structured prompt when there is no previous summary', () => {
    const f = itemsFactory();
    const content = userContent(request({ items: conversation(f.user('task'), f.assistant('x')) }));
    expect(content.endsWith(SUMMARY_PROMPT)).toBe(true);
    for (const section of [
      '1. Task Overview',
      '2. Current State',
      '3. Important Discoveries',
      '4. Next Steps',
      '5. Context to Preserve',
    ])
      expect(content).toContain(section);
    expect(content).toContain('<summary></summary>');
    expect(content).not.toContain('<previous-summary>');
  });

  it('uses the update prompt with the previous summaries (without their prefix) before the conversation', () => {
    const f = itemsFactory();
    const old = f.summary(`${SUMMARY_MESSAGE_PREFIX}\nWe fixed the parser.`);
    const older = f.summary(`${SUMMARY_MESSAGE_PREFIX}\nWe read the spec.`);
    const items = conversation(f.user('task'), older, old, f.assistant('new work'));
    const content = userContent(
      request({ items, toSummarize: items.slice(3), previousSummaries: [older, old] }),
    );
    expect(content).toBe(
      [
        '<preserved-context>\nOriginal task:\ntask\n</preserved-context>',
        '<previous-summary>\nWe read the spec.\n\nWe fixed the parser.\n</previous-summary>',
        '<conversation>\n[Assistant]: new work\n</conversation>',
        UPDATE_SUMMARY_PROMPT,
      ].join('\n\n'),
    );
  });

  it.each([
    ['focus text', '  the database migration  ', `${FOCUS_PREFIX}the database migration`],
    ['blank focus', '   ', null],
    ['no focus', null, null],
  ])('%s', (_, focus, expected) => {
    const f = itemsFactory();
    const content = userContent(request({ items: conversation(f.user('task')), focus }));
    if (expected) expect(content.endsWith(expected)).toBe(true);
    else expect(content).not.toContain(FOCUS_PREFIX);
  });

  it('preserves the header: task, pins, the last 10 memories, the task list and the carried state', () => {
    const f = itemsFactory();
    const edit = f.block('str_replace_editor', { path: 'src/cli.ts', command: 'str_replace' }, 'edited');
    const read = f.block('read_file', { path: 'README.md' }, 'docs');
    const base = conversation(
      f.system('sys'),
      f.user('Make the CLI accept --json', { id: 'task' }),
      f.user('<Pin>Never push to main</Pin>', { pinned: true }),
      ...Array.from({ length: 12 }, (_, i) => f.note('MEMORY', `memory ${i}`)),
      f.note('TASK_LIST', '- [x] parse flag\n- [ ] print json'),
      edit,
      f.block('bash', { command: 'npm test' }, 'npm ERR! Test failed'),
      read,
    );
    const { items } = buildCarriedState({
      items: base,
      tokenizer: f.tokenizer,
      budgetTokens: 2000,
      idPrefix: 'c1',
      gitDiffStat: 'src/cli.ts | 4 ++--\n1 file changed, 2 insertions(+), 2 deletions(-)',
    });
    const content = userContent(request({ items, toSummarize: base.slice(-6) }));
    const preserved = /<preserved-context>\n([\s\S]*?)\n<\/preserved-context>/.exec(content)?.[1];
    expect(preserved).toBe(
      [
        'Original task:\nMake the CLI accept --json',
        'Pinned content:\n<Pin>Never push to main</Pin>',
        // The last 10 memories (seed 001), oldest first.
        `Recent memories:\n${Array.from({ length: 10 }, (_, i) => `- memory ${i + 2}`).join('\n')}`,
        'Task list:\n- [x] parse flag\n- [ ] print json',
        `${ARTIFACT_TRAIL_HEADING}\n- README.md (read; round 2, ${handleOf(read[1].id)})\n` +
          `- src/cli.ts (edited; round 2, ${handleOf(edit[1].id)})\n` +
          'Commands run, latest first: `npm test` (round 2)',
        '[Open errors] Reported by a tool and not seen resolved since\n- round 2, bash npm test: npm ERR! Test failed',
        '[Workspace changes] git diff --stat at the last compaction\nsrc/cli.ts | 4 ++--\n' +
          '1 file changed, 2 insertions(+), 2 deletions(-)',
      ].join('\n\n'),
    );
    expect(content.indexOf('<preserved-context>')).toBeLessThan(content.indexOf('<conversation>'));
  });

  it('no preserved block when there is nothing to preserve', () => {
    const f = itemsFactory();
    const content = userContent(request({ items: [f.assistant('hello')] }));
    expect(content).not.toContain('<preserved-context>');
    expect(content.startsWith('<conversation>\n[Assistant]: hello\n</conversation>')).toBe(true);
  });
});

describe('toolCallEffect: the files a tool call touches and the command it runs', () => {
  const patch = [
    '*** Begin Patch',
    '*** Update File: src/a.ts',
    '@@',
    '-old',
    '+new',
    '*** Add File: src/b.ts',
    '+x',
    '*** Delete File: src/c.ts',
    '*** End Patch',
  ].join('\n');

  it.each<[string, string, Record<string, unknown> | string, string | null, CallEffect]>([
    ['read', 'read_file', { path: 'a.ts' }, null, { touches: [{ path: 'a.ts', op: 'read' }], command: null }],
    [
      'Claude Code Read',
      'Read',
      { file_path: '/r/a.ts' },
      null,
      { touches: [{ path: '/r/a.ts', op: 'read' }], command: null },
    ],
    [
      'write',
      'write_file',
      { filePath: 'b.ts', content: 'x' },
      null,
      { touches: [{ path: 'b.ts', op: 'write' }], command: null },
    ],
    [
      'edit',
      'edit_file',
      { path: 'b.ts', old: 'x', new: 'y' },
      null,
      { touches: [{ path: 'b.ts', op: 'edit' }], command: null },
    ],
    [
      'delete',
      'delete_file',
      { path: 'c.ts' },
      null,
      { touches: [{ path: 'c.ts', op: 'delete' }], command: null },
    ],
    ['list', 'list_dir', { path: 'src' }, null, { touches: [{ path: 'src', op: 'list' }], command: null }],
    [
      'search',
      'grep',
      { path: 'src', pattern: 'TODO' },
      null,
      { touches: [{ path: 'src', op: 'search' }], command: null },
    ],
    [
      'several paths',
      'read_many_files',
      { paths: ['a.ts', { path: 'b.ts' }] },
      null,
      {
        touches: [
          { path: 'a.ts', op: 'read' },
          { path: 'b.ts', op: 'read' },
        ],
        command: null,
      },
    ],
    [
      'an MCP tool',
      'mcp__fs__read_file',
      { path: 'a.ts' },
      null,
      { touches: [{ path: 'a.ts', op: 'read' }], command: null },
    ],
    [
      'editor view',
      'str_replace_editor',
      { command: 'view', path: 'a.py' },
      null,
      { touches: [{ path: 'a.py', op: 'read' }], command: null },
    ],
    [
      'editor create',
      'str_replace_editor',
      { command: 'create', path: 'a.py' },
      null,
      { touches: [{ path: 'a.py', op: 'write' }], command: null },
    ],
    [
      'editor str_replace',
      'str_replace_editor',
      { command: 'str_replace', path: 'a.py' },
      null,
      { touches: [{ path: 'a.py', op: 'edit' }], command: null },
    ],
    [
      'editor insert',
      'str_replace_based_edit_tool',
      { command: 'insert', path: 'a.py' },
      null,
      { touches: [{ path: 'a.py', op: 'edit' }], command: null },
    ],
    [
      'apply_patch',
      'apply_patch',
      { input: patch },
      null,
      {
        touches: [
          { path: 'src/a.ts', op: 'edit' },
          { path: 'src/b.ts', op: 'write' },
          { path: 'src/c.ts', op: 'delete' },
        ],
        command: null,
      },
    ],
    [
      'apply_patch, raw text',
      'apply_patch',
      patch,
      null,
      {
        touches: [
          { path: 'src/a.ts', op: 'edit' },
          { path: 'src/b.ts', op: 'write' },
          { path: 'src/c.ts', op: 'delete' },
        ],
        command: null,
      },
    ],
    [
      'a unified diff',
      'apply_patch',
      { patch: '--- a/src/d.ts\n+++ b/src/d.ts\n@@\n-x\n+y' },
      null,
      {
        touches: [{ path: 'src/d.ts', op: 'edit' }],
        command: null,
      },
    ],
    [
      'SWE-agent edit without a path: the open file',
      'edit',
      { start_line: 1, end_line: 2, replacement: 'x' },
      'src/m.py',
      {
        touches: [{ path: 'src/m.py', op: 'edit' }],
        command: null,
        editsOpenFile: true,
      },
    ],
    [
      'SWE-agent edit with no open file',
      'edit',
      { start_line: 1, end_line: 2, replacement: 'x' },
      null,
      { touches: [], command: null, editsOpenFile: true },
    ],
    ['a shell command', 'bash', { command: '  npm   test ' }, null, { touches: [], command: 'npm test' }],
    [
      'a command as a list',
      'shell',
      { command: ['git', 'status'] },
      null,
      { touches: [], command: 'git status', printsOnly: true },
    ],
    ['arguments that are not JSON', 'bash', 'ls -la', null, { touches: [], command: null }],
    [
      'a file read with a line range: the file; a glob: no file',
      'read',
      { path: '/w/lib/_t.py:424-440' },
      null,
      { touches: [{ path: '/w/lib/_t.py', op: 'read' }], command: null },
    ],
    [
      'a range and view after the path; a name with a colon and no range stays',
      'read',
      { file_path: 'logs/s.jsonl:1-5:raw', path: 'notes:draft' },
      null,
      {
        touches: [
          { path: 'notes:draft', op: 'read' },
          { path: 'logs/s.jsonl', op: 'read' },
        ],
        command: null,
      },
    ],
    [
      "a search tool's source that is no path names no file; a copy's source and destination do",
      'ctx_search',
      { queries: ['tools'], source: 'copilotkit-docs' },
      null,
      { touches: [], command: null },
    ],
    [
      'a copy',
      'copy_file',
      { source: 'a/b.txt', destination: 'c.txt' },
      null,
      {
        touches: [
          { path: 'a/b.txt', op: 'use' },
          { path: 'c.txt', op: 'use' },
        ],
        command: null,
      },
    ],
    [
      'patterns given to a finding tool name no file',
      'find',
      { paths: ['**/skills/**', 'src/*.ts', 'docs/guide.md'] },
      null,
      { touches: [{ path: 'docs/guide.md', op: 'search' }], command: null },
    ],
  ])('%s', (_, name, args, openFile, effect) => {
    const text = typeof args === 'string' ? args : JSON.stringify(args);
    expect(toolCallEffect(name, text, openFile)).toStrictEqual(effect);
  });

  it('cuts a long command to 160 characters', () => {
    const effect = toolCallEffect('bash', JSON.stringify({ command: `echo ${'x'.repeat(300)}` }), null);
    expect(effect.command).toBe(`echo ${'x'.repeat(155)}…`);
  });
});

describe('collectArtifactTrail', () => {
  it('every file with its operations, last round and the handle of its last touch; the commands in order', () => {
    const f = itemsFactory();
    const writeB = f.block('write_file', { path: 'b.ts', content: 'x' }, '');
    const readA = f.block('read_file', { path: 'a.ts' }, '');
    const items = conversation(
      f.user('task'),
      f.block('read_file', { path: 'a.ts' }, ''),
      writeB,
      f.user('next'),
      f.block('edit_file', { path: 'a.ts' }, ''),
      f.block('bash', { command: 'npm test' }, ''),
      readA,
    );
    expect(collectArtifactTrail(items)).toStrictEqual({
      files: [
        { path: 'b.ts', ops: ['write'], lastRound: 1, handle: handleOf(writeB[1].id) },
        { path: 'a.ts', ops: ['read', 'edit'], lastRound: 2, handle: handleOf(readA[1].id) },
      ],
      commands: [{ command: 'npm test', round: 2 }],
    });
  });

  it('a removal replaces what came before; a file only removed in the shell is left out', () => {
    const f = itemsFactory();
    const remove = f.block('bash', { command: 'rm a.ts build.log' }, '');
    const rewrite = f.block('bash', { command: 'mv b.tmp a.ts' }, '');
    const items = conversation(
      f.user('task'),
      f.block('edit_file', { path: 'a.ts' }, ''),
      f.block('write_file', { path: 'b.tmp' }, ''),
      remove,
      rewrite,
    );
    expect(collectArtifactTrail(items).files).toStrictEqual([
      { path: 'b.tmp', ops: ['remove'], lastRound: 1, handle: handleOf(rewrite[1].id) },
      { path: 'a.ts', ops: ['remove', 'write'], lastRound: 1, handle: handleOf(rewrite[1].id) },
    ]);
  });

  it('a file a patch deleted is kept, though it was never touched before', () => {
    const f = itemsFactory();
    const patch = f.block(
      'apply_patch',
      { input: '*** Begin Patch\n*** Delete File: src/legacy.py\n*** End Patch' },
      '',
    );
    expect(collectArtifactTrail(conversation(f.user('task'), patch)).files).toStrictEqual([
      { path: 'src/legacy.py', ops: ['delete'], lastRound: 1, handle: handleOf(patch[1].id) },
    ]);
  });

  it('keeps the count of a file it does not touch again, and drops the count of one it does', () => {
    const f = itemsFactory();
    const previous: ArtifactTrail = {
      files: [
        { path: 'kept.ts', ops: ['read'], lastRound: 1, handle: '#aaaaaa', tokens: 11 },
        { path: 'again.ts', ops: ['read'], lastRound: 1, handle: '#bbbbbb', tokens: 12 },
      ],
      commands: [{ command: 'npm test', round: 1, tokens: 5 }],
    };
    const edit = f.block('edit_file', { path: 'again.ts' }, '');
    const trail = collectArtifactTrail(conversation(f.user('next'), edit), previous);
    expect(trail.files).toStrictEqual([
      { path: 'kept.ts', ops: ['read'], lastRound: 1, handle: '#aaaaaa', tokens: 11 },
      { path: 'again.ts', ops: ['read', 'edit'], lastRound: 1, handle: handleOf(edit[1].id) },
    ]);
    expect(trail.commands).toStrictEqual([{ command: 'npm test', round: 1, tokens: 5 }]);
  });

  it('a relative path naming a file of the workspace also touched by its absolute path is that file', () => {
    const f = itemsFactory();
    const edit = f.block('edit_file', { path: 'src/a.ts' }, '');
    const readB = f.block('read_file', { path: '/w/src/b.ts' }, '');
    const items = conversation(
      f.user('task'),
      f.block('read_file', { path: '/w/src/a.ts' }, ''),
      f.block('read_file', { path: 'src/b.ts' }, ''),
      f.block('read_file', { path: 'notes.md' }, ''),
      f.user('next'),
      edit,
      readB,
    );
    const trail = collectArtifactTrail(items);
    expect(trail).toStrictEqual({
      files: [
        { path: 'notes.md', ops: ['read'], lastRound: 1, handle: expect.any(String) },
        { path: '/w/src/a.ts', ops: ['read', 'edit'], lastRound: 2, handle: handleOf(edit[1].id) },
        { path: '/w/src/b.ts', ops: ['read'], lastRound: 2, handle: handleOf(readB[1].id) },
      ],
      commands: [],
      workspace: '/w/',
    });
    // Across compactions the workspace is the trail's: a shell removal by the relative path ends
    // the file (its line counted again, its list entry's count kept); a path that is not the
    // workspace's stays as written, though the span alone would not tell.
    const previous: ArtifactTrail = {
      files: [
        { path: '/opt/vendor/lib/x.ts', ops: ['read'], lastRound: 1 },
        { path: '/w/src/a.ts', ops: ['read', 'edit'], lastRound: 1, tokens: 12, listTokens: 9 },
      ],
      commands: [],
      workspace: '/w/',
    };
    const remove = f.block('bash', { command: 'rm src/a.ts' }, '');
    const vendor = f.block('edit_file', { path: 'lib/x.ts' }, '');
    expect(collectArtifactTrail(conversation(f.user('clean'), remove, vendor), previous).files).toStrictEqual(
      [
        { path: '/opt/vendor/lib/x.ts', ops: ['read'], lastRound: 1 },
        { path: '/w/src/a.ts', ops: ['remove'], lastRound: 1, handle: handleOf(remove[1].id), listTokens: 9 },
        { path: 'lib/x.ts', ops: ['edit'], lastRound: 1, handle: handleOf(vendor[1].id) },
      ],
    );
    // The other way round: a file listed relative, removed by its absolute path.
    const relative: ArtifactTrail = {
      files: [{ path: 'src/c.ts', ops: ['read'], lastRound: 1, tokens: 8, listTokens: 5 }],
      commands: [],
      workspace: '/w/',
    };
    const gone = f.block('bash', { command: 'rm /w/src/c.ts' }, '');
    expect(collectArtifactTrail(conversation(f.user('clean'), gone), relative).files).toStrictEqual([
      { path: '/w/src/c.ts', ops: ['remove'], lastRound: 1, handle: handleOf(gone[1].id) },
    ]);
    // The operations in the order they happened, whichever way the path was written.
    const patch = (path: string) =>
      f.block('apply_patch', { input: `*** Begin Patch\n*** Delete File: ${path}\n*** End Patch` }, '');
    const interleaved = conversation(
      f.user('t'),
      f.block('read_file', { path: 'src/b.ts' }, ''),
      f.block('read_file', { path: '/w/src/b.ts' }, ''),
      patch('/w/src/a.ts'),
      f.block('write_file', { path: 'src/a.ts', content: 'x' }, ''),
      f.block('read_file', { path: '/w/src/a.ts' }, ''),
    );
    expect(collectArtifactTrail(interleaved).files.map((file) => [file.path, file.ops])).toStrictEqual([
      ['/w/src/b.ts', ['read']],
      ['/w/src/a.ts', ['delete', 'write', 'read']],
    ]);
  });

  it('the workspace is the directory two relative paths or more agree on, more than on any other', () => {
    const f = itemsFactory();
    const trailOf = (...paths: string[]) =>
      collectArtifactTrail(
        conversation(f.user('t'), ...paths.map((path) => f.block('read_file', { path }, ''))),
      );
    const paths = (...list: string[]) => trailOf(...list).files.map((file) => file.path);
    // One pair is not enough (a vendored copy may end with the same path); two directories
    // agreeing as often tell nothing.
    expect(paths('/w/README.md', 'README.md')).toStrictEqual(['/w/README.md', 'README.md']);
    expect(trailOf('/a/x.ts', '/a/y.ts', '/b/x.ts', '/b/y.ts', 'x.ts', 'y.ts').workspace).toBeUndefined();
    // Two agree on /w/: `README.md` is the workspace's, not docs/'s.
    expect(paths('/w/src/a.ts', '/w/README.md', '/w/docs/README.md', 'src/a.ts', 'README.md')).toStrictEqual([
      '/w/docs/README.md',
      '/w/src/a.ts',
      '/w/README.md',
    ]);
    // Kept as written: a path that climbs, one from home, one written from ./ and one written with
    // other separators than its absolute twin.
    expect(
      paths(
        '/w/a/b.ts',
        '/w/c.ts',
        'a/b.ts',
        'c.ts',
        '../c.ts',
        '~/c.ts',
        './c.ts',
        'C:\\w\\d\\e.ts',
        'd/e.ts',
      ),
    ).toStrictEqual(['/w/a/b.ts', '/w/c.ts', '../c.ts', '~/c.ts', './c.ts', 'C:\\w\\d\\e.ts', 'd/e.ts']);
    // Windows: a drive letter's case and the separators of the directory aside; each spelling of
    // the absolute path stays.
    const windows = trailOf(
      'c:\\w\\notes.md',
      'c:\\w\\.gitignore',
      'C:/w/.gitignore',
      '.gitignore',
      'notes.md',
    );
    expect(windows.workspace).toBe('c:/w/');
    expect(windows.files.map((file) => file.path)).toStrictEqual([
      'c:\\w\\.gitignore',
      'C:/w/.gitignore',
      'c:\\w\\notes.md',
    ]);
  });

  it('a shell removal by a relative path ends the one file the trail holds ending with it, though no workspace is known', () => {
    const f = itemsFactory();
    // A trail read back from its text has no workspace.
    const read = (path: string): FileTouch => ({ path, ops: ['read'], lastRound: 1 });
    const remove = f.block('bash', { command: 'rm src/a.ts' }, '');
    const ops = (previous: ArtifactTrail) =>
      collectArtifactTrail(conversation(f.user('clean'), remove), previous).files.map((file) => [
        file.path,
        file.ops,
      ]);
    expect(ops({ files: [read('/w/src/a.ts'), read('/w/src/b.ts')], commands: [] })).toStrictEqual([
      ['/w/src/b.ts', ['read']],
      ['/w/src/a.ts', ['remove']],
    ]);
    // Two files end with it: which one is not known.
    expect(ops({ files: [read('/w/src/a.ts'), read('/v/src/a.ts')], commands: [] })).toStrictEqual([
      ['/w/src/a.ts', ['read']],
      ['/v/src/a.ts', ['read']],
    ]);
  });

  it('a relative path merges into the spelling of its absolute path that it ends', () => {
    const f = itemsFactory();
    const reads = ['C:/w/src/a.ts', 'C:/w/b.ts', 'src/a.ts', 'b.ts', 'C:\\w\\src\\a.ts'];
    const trail = collectArtifactTrail(
      conversation(f.user('t'), ...reads.map((path) => f.block('read_file', { path }, ''))),
    );
    expect(trail.files.map((file) => file.path)).toStrictEqual([
      'C:/w/src/a.ts',
      'C:/w/b.ts',
      'C:\\w\\src\\a.ts',
    ]);
  });

  it('merges the files an earlier compaction listed both ways once the workspace is known', () => {
    const f = itemsFactory();
    const previous: ArtifactTrail = {
      files: [
        { path: 'src/a.ts', ops: ['read'], lastRound: 1, handle: '#aaaaaa', tokens: 7 },
        { path: '/w/src/a.ts', ops: ['edit'], lastRound: 2, handle: '#bbbbbb', tokens: 9, listTokens: 6 },
      ],
      commands: [],
    };
    const read = f.block('read_file', { path: '/w/src/b.ts' }, '');
    const trail = collectArtifactTrail(
      conversation(f.user('t'), f.block('read_file', { path: 'src/b.ts' }, ''), read),
      previous,
    );
    expect(trail.workspace).toBe('/w/');
    expect(trail.files).toStrictEqual([
      { path: '/w/src/a.ts', ops: ['read', 'edit'], lastRound: 2, handle: '#bbbbbb', listTokens: 6 },
      { path: '/w/src/b.ts', ops: ['read'], lastRound: 1, handle: handleOf(read[1].id) },
    ]);
  });

  it('a SWE-agent edit applies to the file opened last', () => {
    const f = itemsFactory();
    const editM = f.block('edit', { start_line: 3, end_line: 4, replacement: 'y' }, 'ok');
    const editN = f.block('edit', { start_line: 1, end_line: 1, replacement: 'z' }, 'ok');
    const items = conversation(
      f.user('fix it'),
      f.block('open', { path: 'src/m.py' }, '[file]'),
      editM,
      f.block('open', { path: 'src/n.py', line_number: 10 }, '[file]'),
      editN,
    );
    expect(collectArtifactTrail(items).files).toStrictEqual([
      { path: 'src/m.py', ops: ['read', 'edit'], lastRound: 1, handle: handleOf(editM[1].id) },
      { path: 'src/n.py', ops: ['read', 'edit'], lastRound: 1, handle: handleOf(editN[1].id) },
    ]);
  });

  it('a touch without its result (cut away, or still running) names the call', () => {
    const f = itemsFactory();
    const [call] = f.block('read_file', { path: 'a.ts' }, '');
    expect(collectArtifactTrail(conversation(f.user('q'), call)).files).toStrictEqual([
      { path: 'a.ts', ops: ['read'], lastRound: 1, handle: handleOf(call.id) },
    ]);
  });

  it('reads each touch from the result the pairing gives its call, where calls reuse an id', () => {
    // A result answers the latest earlier call with its id that has none yet (tool-pairs.ts):
    // the first result answers the second call, the second result the first.
    const f = itemsFactory();
    const first = f.calls([{ id: 'call_x', name: 'read_file', args: { path: 'one.ts' } }]);
    const second = f.calls([{ id: 'call_x', name: 'read_file', args: { path: 'two.ts' } }]);
    const answerSecond = f.result('call_x', 'two');
    const answerFirst = f.result('call_x', 'one');
    const items = conversation(f.user('q'), first, second, answerSecond, answerFirst);
    expect(collectArtifactTrail(items).files.map((file) => [file.path, file.handle])).toStrictEqual([
      ['one.ts', handleOf(answerFirst.id)],
      ['two.ts', handleOf(answerSecond.id)],
    ]);
  });

  it('never reads a touch from the results of another item with the same id', () => {
    const f = itemsFactory();
    const call = f.calls([{ id: 'call_a', name: 'read_file', args: { path: 'a.ts' } }], null, { id: 'dup' });
    // A later item under the same id with other calls (ids are unique; a copy must still not
    // mislead): pairing is by position, so each item reads its own calls' results, never the
    // other's.
    const copy = f.calls(
      [
        { id: 'call_b', name: 'bash', args: { command: 'true' } },
        { id: 'call_c', name: 'read_file', args: { path: 'c.ts' } },
      ],
      null,
      { id: 'dup' },
    );
    const answerA = f.result('call_a', 'a');
    const answerC = f.result('call_c', 'c');
    const items = conversation(f.user('q'), call, answerA, copy, f.result('call_b', ''), answerC);
    expect(collectArtifactTrail(items).files.map((file) => [file.path, file.handle])).toStrictEqual([
      ['a.ts', handleOf(answerA.id)],
      ['c.ts', handleOf(answerC.id)],
    ]);
  });

  it('extends a previous trail (a path touched again moves to the end) and does not change it', () => {
    const previous: ArtifactTrail = {
      files: [
        { path: 'old.ts', ops: ['read'], lastRound: 1 },
        { path: 'a.ts', ops: ['read'], lastRound: 2 },
      ],
      commands: [{ command: 'make', round: 2 }],
    };
    const frozen = structuredClone(previous);
    const f = itemsFactory();
    const editA = f.block('edit_file', { path: 'a.ts' }, '');
    const items = conversation(f.user('q'), editA, f.block('bash', { command: 'make test' }, ''));
    const shifted = items.map((i) => ({ ...i, round: i.round + 4 }));
    expect(collectArtifactTrail(shifted, previous)).toStrictEqual({
      files: [
        { path: 'old.ts', ops: ['read'], lastRound: 1 },
        { path: 'a.ts', ops: ['read', 'edit'], lastRound: 5, handle: handleOf(editA[1].id) },
      ],
      commands: [
        { command: 'make', round: 2 },
        { command: 'make test', round: 5 },
      ],
    });
    expect(previous).toStrictEqual(frozen);
  });

  it('keeps the 30 latest commands', () => {
    const f = itemsFactory();
    const items = conversation(
      f.user('q'),
      Array.from({ length: 35 }, (_, i) => f.block('bash', { command: `step ${i}` }, '')),
    );
    const commands = collectArtifactTrail(items).commands.map((c) => c.command);
    expect(commands).toStrictEqual(Array.from({ length: 30 }, (_, i) => `step ${i + 5}`));
  });
});

describe('renderArtifactTrail: within its budget, every path kept while any tier can hold it', () => {
  const trail: ArtifactTrail = {
    files: [
      { path: 'lib/old/a.ts', ops: ['read'], lastRound: 1 },
      { path: 'lib/old/b.ts', ops: ['read'], lastRound: 2 },
      { path: 'lib/util/c.ts', ops: ['read', 'edit'], lastRound: 3 },
      { path: 'src/d.ts', ops: ['write'], lastRound: 4 },
      { path: 'src/e.ts', ops: ['edit'], lastRound: 5 },
    ],
    commands: Array.from({ length: 12 }, (_, i) => ({ command: `make t${i}`, round: i + 1 })),
  };
  const detail = [
    '- src/e.ts (edited; round 5)',
    '- src/d.ts (written; round 4)',
    '- lib/util/c.ts (read, edited; round 3)',
    '- lib/old/b.ts (read; round 2)',
    '- lib/old/a.ts (read; round 1)',
  ];
  const commands = (n: number) =>
    `Commands run, latest first: ${Array.from({ length: n }, (_, i) => `\`make t${11 - i}\` (round ${12 - i})`).join('; ')}`;
  const text = (...lines: string[]) => [ARTIFACT_TRAIL_HEADING, ...lines].join('\n');

  it.each<[string, number, string]>([
    ['every file in detail, the 10 latest commands', 180, text(...detail, commands(10))],
    ['5 commands', 179, text(...detail, commands(5))],
    ['5 commands, still', 130, text(...detail, commands(5))],
    ['no commands', 129, text(...detail)],
    ['no commands, still', 74, text(...detail)],
    // Past the whole text each line and each listed path is counted on its own, and the tiers
    // below are chosen on their exact sums: 71 tokens for four files in detail, 64 for three, 48
    // for one, 41 for none.
    ['the oldest file by path only', 73, text(...detail.slice(0, 4), 'Also touched, older: lib/old/a.ts')],
    [
      'the oldest file by path only, at its count',
      71,
      text(...detail.slice(0, 4), 'Also touched, older: lib/old/a.ts'),
    ],
    [
      'the two oldest files by path only',
      70,
      text(...detail.slice(0, 3), 'Also touched, older: lib/old/b.ts, lib/old/a.ts'),
    ],
    [
      'all but the newest file by path only',
      48,
      text(detail[0] as string, 'Also touched, older: src/d.ts, lib/util/c.ts, lib/old/b.ts, lib/old/a.ts'),
    ],
    [
      'every file by path only',
      47,
      text('Also touched, older: src/e.ts, src/d.ts, lib/util/c.ts, lib/old/b.ts, lib/old/a.ts'),
    ],
    [
      'the oldest directory collapsed',
      40,
      text('Also touched, older: src/e.ts, src/d.ts, lib/util/c.ts, lib/old/ (2 files)'),
    ],
    [
      'every directory collapsed (no budget holds more)',
      10,
      text('Also touched, older: src/ (2 files), lib/util/ (1 file), lib/old/ (2 files)'),
    ],
  ])('%s (budget %d)', (_, budget, expected) => {
    expect(renderArtifactTrail(trail, budget, o200k)).toBe(expected);
  });

  it("collapses a Windows trail's directories as written, by their backslashes", () => {
    const windows: ArtifactTrail = {
      files: trail.files.map((file) => ({ ...file, path: `D:\\w\\${file.path.replaceAll('/', '\\')}` })),
      commands: [],
    };
    expect(renderArtifactTrail(windows, 12, o200k)).toBe(
      text(
        'Also touched, older: D:\\w\\src\\ (2 files), D:\\w\\lib\\util\\ (1 file), D:\\w\\lib\\old\\ (2 files)',
      ),
    );
  });

  it.each([300, 180, 129, 74, 73, 71, 70, 64, 60, 48, 47, 42, 41])(
    'budget %d: every path is in the text, within the budget',
    (budget) => {
      const rendered = renderArtifactTrail(trail, budget, o200k);
      for (const file of trail.files) expect(rendered).toContain(file.path);
      expect(o200k.countText(rendered)).toBeLessThanOrEqual(budget);
    },
  );

  // Tokens summed part by part are the text's count; a tokenizer whose counts do not add up at
  // breaks (characters / 4, rounded up) has the text counted whole.
  it.each([
    ['o200k_base', o200k],
    ['characters / 4', fakeTokenizer],
  ] as const)('the tokens it states are the count of its text, at every tier (%s)', (_, tokenizer) => {
    for (const [budget, grown] of [
      [300, 300],
      [179, 179],
      [100, 100],
      [73, 73],
      [60, 60],
      [41, 41],
      [41, 60],
      [30, 38],
      [10, 10],
    ]) {
      const rendered = renderTrailCounted(trail, budget as number, tokenizer, grown);
      if (rendered.tokens !== undefined) expect(rendered.tokens).toBe(tokenizer.countText(rendered.text));
    }
  });

  it('carries the counts of its lines and commands: rendered again, the same text and tokens, counting no line', () => {
    const first = renderTrailCounted(trail, 129, o200k);
    expect(first.tokens).toBe(o200k.countText(first.text));
    expect(first.trail.files.every((file) => typeof file.tokens === 'number')).toBe(true);
    // The ten latest commands were tried: each is counted as it is written followed by another
    // (the last one shown has nothing after it, so the tenth newest has no such count yet).
    expect(first.trail.commands.map((c) => c.tokens !== undefined)).toEqual([
      false,
      false,
      false,
      ...new Array<boolean>(9).fill(true),
    ]);
    const { counted, watching } = watchedO200k();
    const again = renderTrailCounted(first.trail, 129, watching);
    expect([again.text, again.tokens]).toEqual([first.text, first.tokens]);
    // No line is counted with its line break (the last line, with none after it, is).
    expect(counted.filter((text) => text.startsWith('- ') && text.endsWith('\n'))).toEqual([]);
    expect(counted.filter((text) => text.startsWith('- ')).length).toBe(1);
    // Rendered with nothing carried, every line is.
    counted.length = 0;
    renderTrailCounted(trail, 129, watching);
    expect(counted.filter((text) => text.startsWith('- ') && text.endsWith('\n')).length).toBe(5);
  });

  it('carries the counts of its older paths: rendered again, no path of the list counted; touched again, the count stays', () => {
    const first = renderTrailCounted(trail, 48, o200k);
    expect(first.text).toContain('Also touched, older: src/d.ts, lib/util/c.ts');
    expect(first.tokens).toBe(o200k.countText(first.text));
    // Every file's entry with a comma is counted (the list's sums from each file on choose how
    // many stay in detail); the oldest, with no comma after it, has no such count.
    expect(first.trail.files.map((file) => file.listTokens)).toEqual([
      undefined,
      ...['lib/old/b.ts', 'lib/util/c.ts', 'src/d.ts', 'src/e.ts'].map((path) =>
        o200k.countText(` ${path},`),
      ),
    ]);
    const { counted, watching } = watchedO200k();
    const again = renderTrailCounted(first.trail, 48, watching);
    expect([again.text, again.tokens]).toEqual([first.text, first.tokens]);
    expect(counted.filter((text) => text.endsWith(','))).toEqual([]);
    // A file touched again has a new line (its count goes) but the same path (its list count stays).
    const touchedAgain = collectArtifactTrail(
      conversation(itemsFactory(o200k).block('read_file', { path: 'lib/util/c.ts' }, 'x')),
      first.trail,
    );
    const file = touchedAgain.files.find((f) => f.path === 'lib/util/c.ts');
    expect([file?.tokens, file?.listTokens]).toEqual([undefined, o200k.countText(' lib/util/c.ts,')]);
  });

  it('counts a line again whose stored count cannot be its count (not a whole number, more than its bytes)', () => {
    const first = renderTrailCounted(trail, 129, o200k);
    const spoiled: ArtifactTrail = {
      ...first.trail,
      files: first.trail.files.map((file, i) => ({
        ...file,
        tokens: [-1, 2.5, Number.NaN, 1e9, '7'][i] as number,
      })),
    };
    const again = renderTrailCounted(spoiled, 129, o200k);
    expect([again.text, again.tokens]).toEqual([first.text, first.tokens]);
    expect(again.trail.files.map((file) => file.tokens)).toEqual(
      first.trail.files.map((file) => file.tokens),
    );
  });

  it('an empty trail renders as nothing', () => {
    expect(renderArtifactTrail({ files: [], commands: [] }, 100, o200k)).toBe('');
  });
});

describe('extractiveSummary', () => {
  function session() {
    const f = itemsFactory(o200k);
    return conversation(
      f.system('sys'),
      f.user('Fix the date parsing bug', { id: 'task' }),
      f.user('<Pin>Use UTC everywhere</Pin>', { pinned: true }),
      f.note('MEMORY', '[Memory] the CI runs on Node 20'),
      f.block('read_file', { path: 'src/dates.ts' }, 'export function parse() {}'),
      f.block('bash', { command: 'npm test' }, 'Error: expected 2024-01-01, got 2023-12-31'),
      f.block('str_replace_editor', { path: 'src/dates.ts', command: 'str_replace' }, 'edited'),
      f.block('bash', { command: 'npm test' }, 'all 12 tests passed'),
      f.assistant('The timezone bug is fixed. Next, I will add a regression test for leap years.'),
      f.user('also check the CLI'),
      f.block('bash', { command: 'node cli.js' }, 'TypeError: cannot read properties of undefined', {
        text: 'Let me look at tasks.',
      }),
      f.assistant('The CLI crashes on start. Let me look at cli.js to find the cause.'),
    );
  }

  function summarize(items: readonly ContextItem[], over: Partial<ExtractiveInput> = {}): string {
    return extractiveSummary({
      context: items,
      toSummarize: items.slice(4),
      previousSummaries: [],
      openErrors: collectOpenErrors(items),
      budgetTokens: 2000,
      tokenizer: o200k,
      ...over,
    });
  }

  it('has its label and the five sections, in order', () => {
    const text = summarize(session());
    expect(text.split('\n')[0]).toBe(EXTRACTIVE_LABEL);
    const positions = [
      '## 1. Task Overview',
      '## 2. Current State',
      '## 3. Important Discoveries',
      '## 4. Next Steps',
      '## 5. Context to Preserve',
    ].map((h) => text.indexOf(h));
    expect(positions.every((p) => p > 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toStrictEqual(positions);
  });

  it('names the task, requests, files, commands, findings, errors (open or resolved), next steps and what to preserve', () => {
    expect(summarize(session())).toBe(
      [
        EXTRACTIVE_LABEL,
        '## 1. Task Overview',
        'Task: Fix the date parsing bug',
        'User requests:',
        '- round 3: also check the CLI',
        '## 2. Current State',
        'Covered: rounds 2–3 (13 messages, 5 tool calls).',
        'Files modified:',
        '- src/dates.ts',
        'Files read:',
        '- src/dates.ts',
        'Commands run:',
        '- `npm test` (round 2)',
        '- `node cli.js` (round 3)',
        '## 3. Important Discoveries',
        'Findings and decisions:',
        '- round 2: The timezone bug is fixed.',
        '- round 3: The CLI crashes on start.',
        'Errors:',
        '- round 2, bash: Error: expected 2024-01-01, got 2023-12-31 (resolved later)',
        '- round 3, bash: TypeError: cannot read properties of undefined (still open)',
        '## 4. Next Steps',
        'Next steps:',
        '- round 2: Next, I will add a regression test for leap years.',
        '- round 3: Let me look at cli.js to find the cause.',
        '## 5. Context to Preserve',
        'To preserve:',
        '- pinned: Use UTC everywhere',
        '- memory: the CI runs on Node 20',
      ].join('\n'),
    );
  });

  it('never takes a next step from a tool call’s preamble', () => {
    const text = summarize(session());
    expect(text).not.toContain('Let me look at tasks.');
  });

  it('takes the next steps from the open tasks of the task list first', () => {
    const f = itemsFactory(o200k);
    const items = [
      ...session(),
      {
        ...f.note('TASK_LIST', '[Task list]\n[x] fix parse\n[~] check the CLI\n[ ] add a leap-year test'),
        round: 3,
      },
    ];
    const text = summarize(items);
    expect(text).toContain(
      [
        'Next steps:',
        '- [~] check the CLI',
        '- [ ] add a leap-year test',
        '- round 2: Next, I will add a regression test for leap years.',
        '- round 3: Let me look at cli.js to find the cause.',
        '## 5.',
      ].join('\n'),
    );
  });

  it('says when no task is recorded', () => {
    const f = itemsFactory(o200k);
    const items = [f.assistant('hello')];
    expect(summarize(items, { toSummarize: items })).toContain('Task: (no original task recorded)');
  });

  it('merges a previous extractive summary into one, without nesting', () => {
    const items = session();
    const f = itemsFactory(o200k);
    const first = summarize(items, { toSummarize: items.slice(4, 10) });
    const previous = f.summary(`${SUMMARY_MESSAGE_PREFIX}\n${first}`, { id: 'prev' });
    const merged = summarize(items, { toSummarize: items.slice(10), previousSummaries: [previous] });
    expect(merged.split(EXTRACTIVE_LABEL)).toHaveLength(2);
    expect(merged).not.toContain('Earlier summary');
    expect(merged).toBe(summarize(items));
    expect(parseExtractiveSummary(merged)).toMatchObject({
      task: 'Fix the date parsing bug',
      covered: { fromRound: 2, toRound: 3, messages: 13, toolCalls: 5 },
      modified: ['src/dates.ts'],
      commands: ['`npm test` (round 2)', '`node cli.js` (round 3)'],
      earlier: [],
    });
  });

  it('keeps a summary it cannot read verbatim at the top, once, through later merges', () => {
    const items = session();
    const f = itemsFactory(o200k);
    const llm = f.summary(
      `${SUMMARY_MESSAGE_PREFIX}\nWe fixed the parser.\n## 1. Task Overview\nparse dates`,
      { id: 'llm' },
    );
    const once = summarize(items, { toSummarize: items.slice(4, 10), previousSummaries: [llm] });
    expect(
      once.startsWith(
        `${EXTRACTIVE_LABEL}\nEarlier summary, kept verbatim:\nWe fixed the parser.\n## 1. Task Overview\nparse dates\n## 1. Task Overview\nTask: Fix`,
      ),
    ).toBe(true);
    const twice = summarize(items, {
      toSummarize: items.slice(10),
      previousSummaries: [f.summary(`${SUMMARY_MESSAGE_PREFIX}\n${once}`)],
    });
    expect(twice.split('Earlier summary, kept verbatim:')).toHaveLength(2);
    expect(twice.split('We fixed the parser.')).toHaveLength(2);
    expect(twice).toContain('- round 3: also check the CLI');
  });

  it('over its budget, the oldest commands go first, then the oldest files read', () => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.user('task', { id: 'task' }),
      Array.from({ length: 8 }, (_, i) => f.block('read_file', { path: `src/file${i}.ts` }, 'x')),
      Array.from({ length: 10 }, (_, i) => f.block('bash', { command: `make step${i}` }, 'ok')),
    );
    const full = summarize(items, { toSummarize: items.slice(1) });
    const lines = (text: string, label: string) => {
      const rest = text.slice(text.indexOf(`${label}\n`) + label.length + 1).split('\n');
      return rest.slice(
        0,
        rest.findIndex((l) => !l.startsWith('- ')),
      );
    };
    expect(lines(full, 'Commands run:')).toHaveLength(10);
    const cost = (text: string) => text.split('\n').reduce((n, l) => n + o200k.countText(l) + 1, 0);
    const fullCost = cost(full);
    // Three command lines over: the three oldest commands go.
    const threeOver = summarize(items, {
      toSummarize: items.slice(1),
      budgetTokens: fullCost - 3 * cost('- `make step0` (round 1)'),
    });
    expect(lines(threeOver, 'Commands run:')).toStrictEqual([
      '- `make step3` (round 1)',
      '- `make step4` (round 1)',
      '- `make step5` (round 1)',
      '- `make step6` (round 1)',
      '- `make step7` (round 1)',
      '- `make step8` (round 1)',
      '- `make step9` (round 1)',
    ]);
    expect(lines(threeOver, 'Files read:')).toHaveLength(8);
    // Far over: one command left (the newest), then the files read shrink, oldest first.
    const farOver = summarize(items, {
      toSummarize: items.slice(1),
      budgetTokens: fullCost - 9 * cost('- `make step0` (round 1)') - 3 * cost('- src/file0.ts'),
    });
    expect(lines(farOver, 'Commands run:')).toStrictEqual(['- `make step9` (round 1)']);
    expect(lines(farOver, 'Files read:')).toStrictEqual([
      '- src/file3.ts',
      '- src/file4.ts',
      '- src/file5.ts',
      '- src/file6.ts',
      '- src/file7.ts',
    ]);
  });
});
