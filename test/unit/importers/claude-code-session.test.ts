/**
 * Claude Code sessions: the lines of one API message are one assistant message, the active chain
 * is followed past a branch, sidechains and meta lines are told apart, Claude Code's compaction
 * is its summary on import and the whole history for eval, an `is_error` result is an open error,
 * and the file is written back line for line (and relinked when items change). The lines are made
 * up in the shape Claude Code writes.
 */
import { describe, expect, it } from 'vitest';
import { collectOpenErrors } from '../../../src/context/open-errors';
import { messageText, type ContextItem } from '../../../src/context/items';
import { callFactsOf } from '../../../src/context/item-facts';
import { headerRoles } from '../../../src/context/segments';
import { exportSession, ImportError, importSession } from '../../../src/importers';
import { jsonlValues } from '../../support/files';
import { fakeTokenizer, itemSummary } from '../../support/items-factory';

const env = { sessionId: 's-1', cwd: '/w', version: '2.1.0', isSidechain: false, userType: 'external' };
const user = (uuid: string, parentUuid: string | null, content: unknown, extra: object = {}) => ({
  parentUuid,
  ...env,
  type: 'user',
  message: { role: 'user', content },
  uuid,
  timestamp: '2026-01-01T00:00:00Z',
  ...extra,
});
const assistant = (uuid: string, parentUuid: string, id: string, content: unknown[]) => ({
  parentUuid,
  ...env,
  message: { model: 'claude-x', id, type: 'message', role: 'assistant', content, stop_reason: null },
  requestId: 'req_1',
  type: 'assistant',
  uuid,
  timestamp: '2026-01-01T00:00:01Z',
});
const attachment = (uuid: string, parentUuid: string, value: object) => ({
  parentUuid,
  ...env,
  type: 'attachment',
  attachment: value,
  uuid,
  timestamp: '2026-01-01T00:00:02Z',
});
const result = (id: string, content: unknown, extra: object = {}) => ({
  tool_use_id: id,
  type: 'tool_result',
  content,
  ...extra,
});

const lines = [
  { type: 'summary', summary: 'Fix the parser', leafUuid: 'a4' },
  user('u1', null, 'Fix the parser in src/parse.ts'),
  assistant('a1', 'u1', 'msg_1', [{ type: 'thinking', thinking: 'Read it first.', signature: 'sig' }]),
  assistant('a2', 'a1', 'msg_1', [
    { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/w/src/parse.ts' } },
  ]),
  user('u2', 'a2', [result('toolu_1', '     1→export const parse = 1;')], {
    toolUseResult: { type: 'text', file: { filePath: '/w/src/parse.ts' } },
  }),
  assistant('a3', 'u2', 'msg_2', [
    { type: 'text', text: 'Editing and testing.' },
    {
      type: 'tool_use',
      id: 'toolu_2',
      name: 'Edit',
      input: { file_path: '/w/src/parse.ts', old_string: '1', new_string: '2' },
    },
  ]),
  user('u3', 'a3', [result('toolu_2', 'The file has been updated.')]),
  assistant('a4', 'u3', 'msg_2', [
    { type: 'tool_use', id: 'toolu_3', name: 'Bash', input: { command: 'npm test' } },
  ]),
  { type: 'file-history-snapshot', messageId: 'x', snapshot: {}, isSnapshotUpdate: false },
  user('u4', 'a4', [
    result('toolu_3', [{ type: 'text', text: 'FAIL test/parse.test.ts' }], { is_error: true }),
  ]),
  // A subagent's line: not the main conversation.
  { ...user('s1', 'a4', 'subagent prompt'), isSidechain: true },
  // A branch abandoned by a rewind: the chain ends at the last message line (a5).
  assistant('b1', 'u4', 'msg_9', [{ type: 'text', text: 'Abandoned branch.' }]),
  user('u5', 'u4', '[Request interrupted by user]'),
  user('u6', 'u5', 'Caveat: local commands below.', { isMeta: true }),
  assistant('a5', 'u6', 'msg_3', [{ type: 'text', text: 'The test still fails.' }]),
];
const text = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';

describe('a Claude Code session', () => {
  const session = importSession(text, { tokenizer: fakeTokenizer });

  it('is detected and read along the active chain, one item per API message', () => {
    expect(session.format).toBe('claude-code');
    expect(itemSummary(session.items)).toEqual([
      ['USER_MESSAGE', false, 'Fix the parser in src/parse.ts'],
      ['ASSISTANT_MESSAGE', false, ''],
      ['TOOL_RESULT', false, '     1→export const parse = 1;'],
      ['ASSISTANT_MESSAGE', false, 'Editing and testing.'],
      ['TOOL_RESULT', false, 'The file has been updated.'],
      ['TOOL_RESULT', false, 'FAIL test/parse.test.ts'],
      ['USER_MESSAGE', true, '[Request interrupted by user]'],
      ['USER_MESSAGE', true, 'Caveat: local commands below.'],
      ['ASSISTANT_MESSAGE', false, 'The test still fails.'],
    ]);
    const first = session.items[1] as Extract<ContextItem, { type: 'ASSISTANT_MESSAGE' }>;
    expect(first.message.reasoning_content).toBe('Read it first.');
    const merged = session.items[3] as Extract<ContextItem, { type: 'ASSISTANT_MESSAGE' }>;
    expect(merged.message.tool_calls?.map((c) => [c.id, c.function.name])).toEqual([
      ['toolu_2', 'Edit'],
      ['toolu_3', 'Bash'],
    ]);
    expect(JSON.parse(merged.message.tool_calls?.[0]?.function.arguments ?? '')).toEqual({
      file_path: '/w/src/parse.ts',
      old_string: '1',
      new_string: '2',
    });
    expect(session.items.filter((i) => i.round === 1)).toHaveLength(session.items.length);
  });

  it("gives a system reminder block its own meta message: the user's words stay the user's message", () => {
    const reminded = [
      user('u1', null, [
        { type: 'text', text: 'Fix the parser' },
        { type: 'text', text: '<system-reminder>\nThe todo list is empty.\n</system-reminder>' },
      ]),
    ];
    const text = reminded.map((l) => JSON.stringify(l)).join('\n');
    const read = importSession(text, { tokenizer: fakeTokenizer });
    expect(itemSummary(read.items)).toEqual([
      ['USER_MESSAGE', false, 'Fix the parser'],
      ['USER_MESSAGE', true, '<system-reminder>\nThe todo list is empty.\n</system-reminder>'],
    ]);
    expect(jsonlValues(exportSession(read))).toEqual(reminded);
  });

  it("reads what Claude Code writes for a `!` shell command or a slash command as context: the task is the user's first words", () => {
    const typed = [
      user('u1', null, '<bash-input>ls ~/notes*.md</bash-input>'),
      user('u2', 'u1', '<bash-stdout>/home/me/notes-2026.md</bash-stdout><bash-stderr></bash-stderr>'),
      user('u3', 'u2', '<command-name>/model</command-name>'),
      user('u4', 'u3', 'Move the notes into docs/'),
    ];
    const read = importSession(typed.map((l) => JSON.stringify(l)).join('\n'), { tokenizer: fakeTokenizer });
    expect(read.items.map((i) => [i.isMeta, i.round])).toEqual([
      [true, 0],
      [true, 0],
      [true, 0],
      [false, 1],
    ]);
    expect(headerRoles(read.items)).toEqual([undefined, undefined, undefined, 'task']);
    expect(jsonlValues(exportSession(read))).toEqual(typed);
  });

  it('a line whose first item was dropped keeps its envelope and its place in the chain', () => {
    const reminded = [
      user('u1', null, [
        { type: 'text', text: '<system-reminder>\nThe todo list is empty.\n</system-reminder>' },
        { type: 'text', text: 'Fix the parser' },
      ]),
      assistant('a1', 'u1', 'msg_1', [{ type: 'text', text: 'On it.' }]),
    ];
    const read = importSession(reminded.map((l) => JSON.stringify(l)).join('\n'), {
      tokenizer: fakeTokenizer,
    });
    const withoutReminder = read.items.filter((i) => !i.isMeta);
    const out = jsonlValues(exportSession({ items: withoutReminder, document: read.document }));
    expect(out[0]).toMatchObject({
      type: 'user',
      uuid: 'u1',
      message: { role: 'user', content: [{ text: 'Fix the parser' }] },
    });
    const again = importSession(out.map((l) => JSON.stringify(l)).join('\n'), { tokenizer: fakeTokenizer });
    expect(itemSummary(again.items).map((s) => s[2])).toEqual(['Fix the parser', 'On it.']);
  });

  it('is read in file order when no line links to another', () => {
    const unlinked = [
      user('u1', null, 'Fix the parser'),
      { ...assistant('a1', 'u1', 'msg_1', [{ type: 'text', text: 'Reading it.' }]), parentUuid: null },
      user('u2', null, 'Go on'),
      { ...assistant('a2', 'u2', 'msg_2', [{ type: 'text', text: 'Done.' }]), parentUuid: null },
    ];
    const read = importSession(unlinked.map((l) => JSON.stringify(l)).join('\n'), {
      tokenizer: fakeTokenizer,
    });
    expect(itemSummary(read.items).map((s) => s[2])).toEqual([
      'Fix the parser',
      'Reading it.',
      'Go on',
      'Done.',
    ]);
  });

  it('gives the tools what they touch and the failed result as an open error', () => {
    const calls = session.items.flatMap((i) => (i.type === 'ASSISTANT_MESSAGE' ? callFactsOf(i) : []));
    expect(calls.map((c) => [c.touches, c.command])).toEqual([
      [[{ path: '/w/src/parse.ts', op: 'read' }], null],
      [[{ path: '/w/src/parse.ts', op: 'edit' }], null],
      [[], 'npm test'],
    ]);
    expect(collectOpenErrors(session.items).map((e) => [e.tool, e.target, e.text])).toEqual([
      ['Bash', 'npm test', 'FAIL test/parse.test.ts'],
    ]);
  });

  it('writes back line for line when unchanged, in context and whole-history imports', () => {
    expect(jsonlValues(exportSession(session))).toEqual(jsonlValues(text));
    const whole = importSession(text, { tokenizer: fakeTokenizer, wholeHistory: true });
    expect(jsonlValues(exportSession(whole))).toEqual(jsonlValues(text));
  });

  it('relinks the chain around a dropped item and links an appended one', () => {
    const items = session.items.filter(
      (i) => i.type !== 'TOOL_DEFINITIONS' && messageText(i.message) !== '[Request interrupted by user]',
    );
    const appended: ContextItem = {
      ...(session.items[0] as ContextItem),
      id: 'new-1',
      origin: undefined,
      message: { role: 'user', content: 'Now fix the test.' },
    } as ContextItem;
    const out = jsonlValues(exportSession({ items: [...items, appended], document: session.document }));
    const byUuid = new Map(out.map((l) => [(l as { uuid?: string }).uuid, l as Record<string, unknown>]));
    expect(byUuid.has('u5')).toBe(false);
    expect(byUuid.get('u6')?.parentUuid).toBe('u4');
    const last = out[out.length - 1] as Record<string, unknown>;
    expect(last).toMatchObject({ type: 'user', parentUuid: 'a5', message: { content: 'Now fix the test.' } });
    const again = importSession(out.map((l) => JSON.stringify(l)).join('\n'), { tokenizer: fakeTokenizer });
    expect(itemSummary(again.items).map((s) => s[2])).toEqual([
      ...itemSummary(items).map((s) => s[2]),
      'Now fix the test.',
    ]);
  });

  it('puts back the results of parallel calls that hang off the chain (2.1: each result a child of its own call)', () => {
    const parallel = [
      user('p1', null, 'Read both files.'),
      assistant('q1', 'p1', 'msg_p', [
        { type: 'tool_use', id: 'toolu_a', name: 'Read', input: { file_path: '/w/a.ts' } },
      ]),
      assistant('q2', 'q1', 'msg_p', [
        { type: 'tool_use', id: 'toolu_b', name: 'Read', input: { file_path: '/w/b.ts' } },
      ]),
      // The first call's result is a child of the first call's line, not on the chain from the end.
      user('r1', 'q1', [result('toolu_a', 'a says 1')], { sourceToolAssistantUUID: 'q1' }),
      user('r2', 'q2', [result('toolu_b', 'b says 2')], { sourceToolAssistantUUID: 'q2' }),
      // A prompt edited by the user: another branch off the chain, with nothing the chain waits for.
      user('e1', 'q1', 'An edited prompt, abandoned.'),
      assistant('q3', 'r2', 'msg_q', [{ type: 'text', text: 'Both read.' }]),
    ];
    const t = parallel.map((l) => JSON.stringify(l)).join('\n') + '\n';
    for (const wholeHistory of [false, true]) {
      const read = importSession(t, { tokenizer: fakeTokenizer, wholeHistory });
      expect(itemSummary(read.items)).toEqual([
        ['USER_MESSAGE', false, 'Read both files.'],
        ['ASSISTANT_MESSAGE', false, ''],
        ['TOOL_RESULT', false, 'a says 1'],
        ['TOOL_RESULT', false, 'b says 2'],
        ['ASSISTANT_MESSAGE', false, 'Both read.'],
      ]);
      const reply = read.items[1] as Extract<ContextItem, { type: 'ASSISTANT_MESSAGE' }>;
      expect(reply.message.tool_calls?.map((c) => c.id)).toEqual(['toolu_a', 'toolu_b']);
      expect(jsonlValues(exportSession(read))).toEqual(jsonlValues(t));
    }
  });

  it("reads a message typed while the agent worked as the user's, and an @-named or edited file as context (2.x attachments)", () => {
    const attached = [
      user('p1', null, 'Tidy the notes.'),
      attachment('f1', 'p1', {
        type: 'file',
        filename: '/w/notes.md',
        content: { type: 'text', file: { filePath: '/w/notes.md', content: '# Notes\n- one' } },
      }),
      assistant('q1', 'f1', 'msg_1', [
        { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls /w' } },
      ]),
      user('r1', 'q1', [result('toolu_1', 'notes.md')]),
      attachment('c1', 'r1', {
        type: 'queued_command',
        prompt: [{ type: 'text', text: 'Answer in French from now on.' }],
        commandMode: 'prompt',
      }),
      attachment('e1', 'c1', { type: 'edited_text_file', filename: '/w/notes.md', snippet: '1\t# Notes' }),
      // A reminder: not the user's, left out as before.
      attachment('t1', 'e1', { type: 'todo_reminder', content: [], itemCount: 0 }),
      assistant('q2', 't1', 'msg_2', [{ type: 'text', text: 'Très bien.' }]),
    ];
    const t = attached.map((l) => JSON.stringify(l)).join('\n') + '\n';
    const read = importSession(t, { tokenizer: fakeTokenizer, wholeHistory: true });
    expect(itemSummary(read.items)).toEqual([
      ['USER_MESSAGE', false, 'Tidy the notes.'],
      ['USER_MESSAGE', true, '/w/notes.md:\n# Notes\n- one'],
      ['ASSISTANT_MESSAGE', false, ''],
      ['TOOL_RESULT', false, 'notes.md'],
      ['USER_MESSAGE', false, 'Answer in French from now on.'],
      ['USER_MESSAGE', true, '/w/notes.md was modified:\n1\t# Notes'],
      ['ASSISTANT_MESSAGE', false, 'Très bien.'],
    ]);
    // The typed message opens a round of its own.
    expect(read.items.map((item) => item.round)).toEqual([1, 1, 1, 1, 2, 2, 2]);
    expect(exportSession(read)).toBe(t);
    // Changed, it is written back as the user's line in its place.
    const items = read.items.map((item, i) =>
      i === 4 && item.type === 'USER_MESSAGE'
        ? { ...item, message: { role: 'user' as const, content: 'En français.' } }
        : item,
    );
    const out = jsonlValues(exportSession({ ...read, items })) as Record<string, unknown>[];
    expect(out[4]).toMatchObject({
      type: 'user',
      uuid: 'c1',
      parentUuid: 'r1',
      message: { role: 'user', content: 'En français.' },
    });
    expect(out[4]).not.toHaveProperty('attachment');
    // A changed file attachment stays context: a meta user line.
    const edited = read.items.map((item, i) =>
      i === 5 && item.type === 'USER_MESSAGE'
        ? { ...item, message: { role: 'user' as const, content: '/w/notes.md was modified.' } }
        : item,
    );
    const again = importSession(exportSession({ ...read, items: edited }), { tokenizer: fakeTokenizer });
    expect(itemSummary(again.items)[5]).toEqual(['USER_MESSAGE', true, '/w/notes.md was modified.']);
  });

  it('reads the attachments that hold something of the session as context (skills, plan, MCP instructions, tools, memory files, hooks the model sees), and leaves out reminders and what the user alone saw', () => {
    const lines = [
      user('p1', null, 'Ship the release.'),
      attachment('a1', 'p1', { type: 'skill_listing', content: '- release: cut a release', skillCount: 1 }),
      attachment('a2', 'a1', {
        type: 'nested_memory',
        content: { path: '/w/CLAUDE.md', content: 'Use pnpm.' },
      }),
      attachment('a3', 'a2', {
        type: 'hook_success',
        hookEvent: 'SessionStart',
        hookName: 'SessionStart:startup',
        content: 'branch main, clean',
      }),
      attachment('a4', 'a3', {
        type: 'hook_success',
        hookEvent: 'PostToolUse',
        hookName: 'fmt',
        content: '',
      }),
      attachment('a5', 'a4', {
        type: 'deferred_tools_delta',
        addedLines: ['mcp__gh__create_pr'],
        removedNames: [],
      }),
      attachment('a6', 'a5', { type: 'mcp_instructions_delta', addedBlocks: ['## gh\nUse it for PRs.'] }),
      attachment('a7', 'a6', { type: 'todo_reminder', content: [], itemCount: 0 }),
      attachment('a8', 'a7', { type: 'hook_non_blocking_error', hookName: 'lint', stderr: 'x' }),
      attachment('a9', 'a8', { type: 'date_change', newDate: '2026-11-28' }),
      assistant('q1', 'a9', 'msg_1', [{ type: 'text', text: 'On it.' }]),
      { ...user('s1', 'q1', 'Summary so far.'), isCompactSummary: true },
      attachment('b1', 's1', {
        type: 'plan_file_reference',
        planFilePath: '/w/plan.md',
        planContent: '1. tag',
      }),
      attachment('b2', 'b1', {
        type: 'invoked_skills',
        skills: [{ name: 'release', path: '/w/.claude/skills/release', content: 'Tag, then push.' }],
      }),
      assistant('q2', 'b2', 'msg_2', [{ type: 'text', text: 'Tagged.' }]),
    ];
    const t = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
    const whole = importSession(t, { tokenizer: fakeTokenizer, wholeHistory: true });
    expect(itemSummary(whole.items)).toEqual([
      ['USER_MESSAGE', false, 'Ship the release.'],
      ['USER_MESSAGE', true, 'Skills available:\n\n- release: cut a release'],
      ['USER_MESSAGE', true, 'Contents of /w/CLAUDE.md:\n\nUse pnpm.'],
      ['USER_MESSAGE', true, 'SessionStart:startup: branch main, clean'],
      ['USER_MESSAGE', true, 'Tools now available through ToolSearch:\nmcp__gh__create_pr'],
      ['USER_MESSAGE', true, "MCP servers' instructions:\n\n## gh\nUse it for PRs."],
      ['USER_MESSAGE', true, 'The date is now 2026-11-28.'],
      ['ASSISTANT_MESSAGE', false, 'On it.'],
      // The plan and the skill Claude Code attaches again after its compaction were there before it.
      ['ASSISTANT_MESSAGE', false, 'Tagged.'],
    ]);
    expect(whole.items.map((i) => i.round)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1]);
    // The context Claude Code sends next holds them, after its summary.
    const resumed = importSession(t, { tokenizer: fakeTokenizer });
    expect(
      itemSummary(resumed.items)
        .map((r) => r[2])
        .slice(-4),
    ).toEqual([
      'Summary so far.',
      'The plan file /w/plan.md:\n\n1. tag',
      'Skills invoked in this session:\n\n### Skill: release\nPath: /w/.claude/skills/release\n\nTag, then push.',
      'Tagged.',
    ]);
    expect(exportSession(whole)).toBe(t);
    expect(exportSession(resumed)).toBe(t);
  });

  it("reads a queued notice or another session's message as context, skips malformed ones, and leaves out the files attached again after Claude Code's compaction in the whole history", () => {
    const file = {
      type: 'file',
      filename: '/w/a.ts',
      content: { type: 'text', file: { filePath: '/w/a.ts', content: 'export {}' } },
    };
    const compacted = [
      user('p1', null, 'Start.'),
      assistant('q1', 'p1', 'msg_1', [{ type: 'text', text: 'Started.' }]),
      { ...user('s1', 'q1', 'Summary of the session so far.'), isCompactSummary: true },
      attachment('f1', 's1', file),
      attachment('n1', 'f1', {
        type: 'queued_command',
        prompt: 'Task 7 finished.',
        commandMode: 'task-notification',
      }),
      attachment('m1', 'n1', {
        type: 'queued_command',
        prompt: 'From the other window.',
        origin: { kind: 'peer' },
      }),
      attachment('b1', 'm1', { type: 'queued_command', prompt: [{ text: 'no type' }] }),
      assistant('q2', 'b1', 'msg_2', [{ type: 'text', text: 'Noted.' }]),
    ];
    const t = compacted.map((l) => JSON.stringify(l)).join('\n') + '\n';
    const whole = importSession(t, { tokenizer: fakeTokenizer, wholeHistory: true });
    expect(itemSummary(whole.items)).toEqual([
      ['USER_MESSAGE', false, 'Start.'],
      ['ASSISTANT_MESSAGE', false, 'Started.'],
      ['USER_MESSAGE', true, 'Task 7 finished.'],
      ['USER_MESSAGE', true, 'From the other window.'],
      ['ASSISTANT_MESSAGE', false, 'Noted.'],
    ]);
    // Resumed from the summary, the model saw the file attached after it.
    const resumed = importSession(t, { tokenizer: fakeTokenizer });
    expect(itemSummary(resumed.items).map((s) => s[2])).toContain('/w/a.ts:\nexport {}');
    expect(exportSession(whole)).toBe(t);
  });

  it('is its own compaction summary on import, and the whole history for eval', () => {
    const compacted = [
      ...lines.slice(0, 8),
      {
        parentUuid: null,
        logicalParentUuid: 'a4',
        ...env,
        type: 'system',
        subtype: 'compact_boundary',
        content: 'Conversation compacted',
        uuid: 'c0',
      },
      user('c1', 'c0', 'This session is being continued. Summary: the parser was edited.', {
        isCompactSummary: true,
      }),
      assistant('c2', 'c1', 'msg_7', [{ type: 'text', text: 'Continuing.' }]),
    ];
    const t = compacted.map((l) => JSON.stringify(l)).join('\n');
    const context = importSession(t, { tokenizer: fakeTokenizer });
    expect(itemSummary(context.items)).toEqual([
      ['COMPACTION_SUMMARY', true, 'This session is being continued. Summary: the parser was edited.'],
      ['ASSISTANT_MESSAGE', false, 'Continuing.'],
    ]);
    const whole = importSession(t, { tokenizer: fakeTokenizer, wholeHistory: true });
    expect(whole.items.map((i) => i.type)).not.toContain('COMPACTION_SUMMARY');
    expect(whole.items).toHaveLength(6);
    expect(itemSummary(whole.items)[0]?.[2]).toBe('Fix the parser in src/parse.ts');
    expect(jsonlValues(exportSession(context))).toEqual(jsonlValues(t));
    // Claude Code 2.1.41 may name as the logical parent a line it did not write (a progress line's
    // parent): the whole history goes on from the message line before the boundary.
    const unwritten = t.replace('"logicalParentUuid":"a4"', '"logicalParentUuid":"gone"');
    const history = importSession(unwritten, { tokenizer: fakeTokenizer, wholeHistory: true });
    expect(itemSummary(history.items)).toEqual(itemSummary(whole.items));
    // A line after the boundary whose parent the file does not hold: its context still starts at
    // the boundary.
    const orphaned = t.replace('"parentUuid":"c0"', '"parentUuid":"gone"');
    expect(itemSummary(importSession(orphaned, { tokenizer: fakeTokenizer }).items)).toEqual(
      itemSummary(context.items),
    );
    expect(
      itemSummary(importSession(orphaned, { tokenizer: fakeTokenizer, wholeHistory: true }).items),
    ).toEqual(itemSummary(whole.items));
  });

  it.each([
    [
      'a message that is no object',
      { type: 'user', uuid: 'x', message: 'hi' },
      /^line 2, message: expected a message object, got a string$/,
    ],
    [
      'a tool use without a name',
      assistant('x', 'u1', 'm', [{ type: 'tool_use', id: 't' }]),
      /^line 2, message\.content\[0\]\.name: expected a string, got missing$/,
    ],
    [
      'a tool result without an id',
      user('x', 'u1', [{ type: 'tool_result', content: 'x' }]),
      /^line 2, message\.content\[0\]\.tool_use_id: expected a string, got missing$/,
    ],
  ])('refuses %s, naming the line and field', (_name, bad, message) => {
    const t = [JSON.stringify(user('u1', null, 'hi')), JSON.stringify(bad)].join('\n');
    expect(() => importSession(t, { tokenizer: fakeTokenizer })).toThrow(ImportError);
    expect(() => importSession(t, { tokenizer: fakeTokenizer })).toThrow(message);
  });
});
