/**
 * Codex rollouts: developer and environment messages are header and meta, a message and the calls
 * after it are one assistant message, a command's JSON output is read as its text and a non-zero
 * exit code is an open error, `shell`, `apply_patch` and `update_plan` give what they touch and
 * the task list, Codex's compaction is its summary on import and the whole history for eval, older
 * rollouts (header, bare items) read the same, and the file is written back line for line. The
 * lines are made up in the shape Codex writes.
 */
import { describe, expect, it } from 'vitest';
import { callFactsOf } from '../../../src/context/item-facts';
import { messageText, type ContextItem } from '../../../src/context/items';
import { collectOpenErrors } from '../../../src/context/open-errors';
import { headerRoles } from '../../../src/context/segments';
import { touchedPaths } from '../../../src/eval/metrics';
import { exportSession, ImportError, importSession } from '../../../src/importers';
import { jsonlValues } from '../../support/files';
import { fakeTokenizer, itemSummary } from '../../support/items-factory';

const at = '2025-09-01T10:00:00.000Z';
const item = (payload: object) => ({ timestamp: at, type: 'response_item', payload });
const input = (role: string, text: string) => ({
  type: 'message',
  role,
  content: [{ type: 'input_text', text }],
});
const shell = (id: string, script: string) => ({
  type: 'function_call',
  name: 'shell',
  arguments: JSON.stringify({ command: ['bash', '-lc', script], workdir: '/w' }),
  call_id: id,
});
const output = (id: string, text: string, exitCode: number) => ({
  type: 'function_call_output',
  call_id: id,
  output: JSON.stringify({ output: text, metadata: { exit_code: exitCode, duration_seconds: 0.5 } }),
});
const patch =
  '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-export const a = 1;\n+export const a = 2;\n*** End Patch\n';

const lines = [
  { timestamp: at, type: 'session_meta', payload: { id: 's-1', cwd: '/w', cli_version: '0.40.0' } },
  item(input('developer', '<permissions instructions>workspace-write</permissions instructions>')),
  item(input('user', '<environment_context>\n  <cwd>/w</cwd>\n</environment_context>')),
  { timestamp: at, type: 'turn_context', payload: { cwd: '/w', model: 'gpt-5-codex' } },
  item(input('user', 'Fix src/a.ts and run the tests')),
  {
    timestamp: at,
    type: 'event_msg',
    payload: { type: 'user_message', message: 'Fix src/a.ts and run the tests' },
  },
  item({ type: 'reasoning', summary: [], encrypted_content: 'gAAA' }),
  item({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Reading it.' }] }),
  item(shell('call_1', "sed -n '1,80p' src/a.ts")),
  item(shell('call_2', 'nl -ba src/b.ts')),
  item(output('call_1', 'export const a = 1;\n', 0)),
  item(output('call_2', '     1\texport const b = 1;\n', 0)),
  item({
    type: 'custom_tool_call',
    status: 'completed',
    call_id: 'call_3',
    name: 'apply_patch',
    input: patch,
  }),
  item({
    type: 'custom_tool_call_output',
    call_id: 'call_3',
    output: 'Success. Updated the following files:\nM src/a.ts\n',
  }),
  item(shell('call_4', 'npm test')),
  item(output('call_4', 'FAIL test/a.test.ts\n1 failing', 1)),
  item({
    type: 'function_call',
    name: 'update_plan',
    arguments: JSON.stringify({
      plan: [
        { step: 'Fix src/a.ts', status: 'completed' },
        { step: 'Make the tests pass', status: 'in_progress' },
      ],
    }),
    call_id: 'call_5',
  }),
  item({ type: 'function_call_output', call_id: 'call_5', output: 'Plan updated' }),
  item({
    type: 'message',
    role: 'assistant',
    content: [{ type: 'output_text', text: 'One test still fails.' }],
  }),
];
const jsonl = (ls: readonly unknown[]) => ls.map((l) => JSON.stringify(l)).join('\n') + '\n';
const text = jsonl(lines);

describe('a Codex rollout', () => {
  const session = importSession(text, { tokenizer: fakeTokenizer });

  it('is detected and read as the history Codex sends', () => {
    expect(session.format).toBe('codex');
    expect(itemSummary(session.items)).toEqual([
      ['SYSTEM_PROMPT', true, '<permissions instructions>workspace-write</permissions instructions>'],
      ['USER_MESSAGE', true, '<environment_context>\n  <cwd>/w</cwd>\n</environment_context>'],
      ['USER_MESSAGE', false, 'Fix src/a.ts and run the tests'],
      ['ASSISTANT_MESSAGE', false, 'Reading it.'],
      ['TOOL_RESULT', false, 'export const a = 1;\n'],
      ['TOOL_RESULT', false, '     1\texport const b = 1;\n'],
      ['ASSISTANT_MESSAGE', false, ''],
      ['TOOL_RESULT', false, 'Success. Updated the following files:\nM src/a.ts\n'],
      ['ASSISTANT_MESSAGE', false, ''],
      ['TOOL_RESULT', false, 'FAIL test/a.test.ts\n1 failing'],
      ['ASSISTANT_MESSAGE', false, ''],
      ['TOOL_RESULT', false, 'Plan updated'],
      ['ASSISTANT_MESSAGE', false, 'One test still fails.'],
    ]);
    const opening = session.items[3] as Extract<ContextItem, { type: 'ASSISTANT_MESSAGE' }>;
    expect(opening.message.tool_calls?.map((c) => c.id)).toEqual(['call_1', 'call_2']);
  });

  it('gives what each tool touches, the task list and the failed command as an open error', () => {
    const calls = session.items.flatMap((i) => (i.type === 'ASSISTANT_MESSAGE' ? callFactsOf(i) : []));
    expect(calls.map((c) => [c.touches, c.command])).toEqual([
      [[{ path: 'src/a.ts', op: 'read' }], "sed -n '1,80p' src/a.ts"],
      [[{ path: 'src/b.ts', op: 'read' }], 'nl -ba src/b.ts'],
      [[{ path: 'src/a.ts', op: 'edit' }], null],
      [[], 'npm test'],
      [[], null],
    ]);
    expect(calls[4]?.note).toEqual({
      kind: 'task_list',
      tasks: [
        { title: 'Fix src/a.ts', status: 'completed' },
        { title: 'Make the tests pass', status: 'in_progress' },
      ],
    });
    expect(collectOpenErrors(session.items).map((e) => [e.tool, e.target])).toEqual([['shell', 'npm test']]);
    // eval reads the same files on its own.
    expect(touchedPaths(session.items)).toEqual(['src/a.ts', 'src/b.ts']);
  });

  it("takes an error line in a file a shell command prints for the file's text, not the command's error", () => {
    const printed = [
      ...lines.slice(0, 5),
      item(shell('call_1', 'cat schema.sql')),
      item(output('call_1', 'CREATE TABLE runs (\n  error TEXT,\n  status TEXT\n);', 0)),
      item(shell('call_2', 'cat ci.yml | grep -n exit')),
      item(output('call_2', '12:      - run: npm test || exit 1', 0)),
      item(shell('call_3', 'npm test')),
      item(output('call_3', 'Error: Cannot find module x', 1)),
    ];
    const read = importSession(jsonl(printed), { tokenizer: fakeTokenizer });
    expect(collectOpenErrors(read.items).map((e) => e.target)).toEqual(['npm test']);
  });

  it('writes back line for line when unchanged', () => {
    expect(jsonlValues(exportSession(session))).toEqual(jsonlValues(text));
  });

  it('writes changed items in rollout shape: a cut output, an added call, a dropped turn', () => {
    const items = session.items
      .filter(
        (i) =>
          i.type !== 'TOOL_DEFINITIONS' &&
          messageText(i.message) !== 'Plan updated' &&
          !(i.type === 'ASSISTANT_MESSAGE' && i.facts?.calls?.[0]?.note),
      )
      .map((i) =>
        i.type === 'TOOL_RESULT' && i.message.tool_call_id === 'call_4'
          ? { ...i, id: 'cut-4', sourceId: i.id, message: { ...i.message, content: 'FAIL [cut]' } }
          : i,
      );
    const out = jsonlValues(exportSession({ items, document: session.document })) as Record<
      string,
      unknown
    >[];
    expect(out).toHaveLength(lines.length - 2);
    const cut = out.find(
      (l) =>
        (l.payload as { call_id?: string }).call_id === 'call_4' && (l.payload as { output?: string }).output,
    );
    expect(JSON.parse((cut?.payload as { output: string }).output)).toEqual({
      output: 'FAIL [cut]',
      metadata: { exit_code: 1, duration_seconds: 0.5 },
    });
    const again = importSession(jsonl(out), { tokenizer: fakeTokenizer });
    expect(itemSummary(again.items)).toEqual(itemSummary(items));
  });

  it('reads an output given as a list of text parts (newer rollouts) as their text, and writes it back in that shape', () => {
    const parts = [
      { type: 'input_text', text: 'Script failed\nOutput:\n' },
      { type: 'input_text', text: 'exec cell 12 not found' },
    ];
    const t = jsonl([
      item(input('user', 'Wait for it')),
      item({ type: 'function_call', name: 'wait', arguments: '{"cell_id":"12"}', call_id: 'call_w' }),
      item({ type: 'function_call_output', call_id: 'call_w', output: parts }),
    ]);
    const read = importSession(t, { tokenizer: fakeTokenizer });
    const result = read.items.find((i) => i.type === 'TOOL_RESULT');
    expect(result && messageText(result.message)).toBe('Script failed\nOutput:\n\nexec cell 12 not found');
    expect(jsonlValues(exportSession(read))).toEqual(jsonlValues(t));
    const cut = read.items.map((i) =>
      i.type === 'TOOL_RESULT'
        ? { ...i, id: 'cut', sourceId: i.id, message: { ...i.message, content: 'Script [cut]' } }
        : i,
    );
    const out = jsonlValues(exportSession({ items: cut, document: read.document })) as Record<
      string,
      unknown
    >[];
    expect((out[2]?.payload as { output: unknown }).output).toEqual([
      { type: 'input_text', text: 'Script [cut]' },
    ]);
  });

  it('reads a developer bundle of tagged sections (0.142 on) as a system prompt per section: one sent again later is conversation, the others header', () => {
    const section = (tag: string, body: string) => ({
      type: 'input_text',
      text: `<${tag}>\n${body}\n</${tag}>`,
    });
    const sections = [
      section('permissions instructions', 'read-only'),
      section('apps_instructions', 'Apps can be named with $.'),
      section('skills_instructions', 'A skill is a SKILL.md.'),
    ];
    const bundle = item({ type: 'message', role: 'developer', content: sections });
    const rollout = [
      lines[0],
      bundle,
      item(input('user', 'Fix src/a.ts')),
      item({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'On it.' }] }),
      item(input('developer', '<permissions instructions>\nworkspace-write\n</permissions instructions>')),
    ];
    const text = rollout.map((l) => JSON.stringify(l)).join('\n') + '\n';
    const read = importSession(text, { tokenizer: fakeTokenizer });
    expect(itemSummary(read.items).slice(0, 3)).toEqual([
      ['SYSTEM_PROMPT', true, '<permissions instructions>\nread-only\n</permissions instructions>'],
      ['SYSTEM_PROMPT', true, '<apps_instructions>\nApps can be named with $.\n</apps_instructions>'],
      ['SYSTEM_PROMPT', true, '<skills_instructions>\nA skill is a SKILL.md.\n</skills_instructions>'],
    ]);
    expect(headerRoles(read.items).slice(0, 3)).toEqual([undefined, 'system', 'system']);
    expect(exportSession(read)).toBe(text);
    // With the old permissions compacted away, the line keeps the sections left, in order.
    const out = jsonlValues(exportSession({ ...read, items: read.items.slice(1) })) as {
      payload?: { content?: unknown };
    }[];
    expect(out[1]?.payload?.content).toEqual([sections[1], sections[2]]);
    // A developer message with anything outside its sections stays one prompt.
    const mixed = item({
      type: 'message',
      role: 'developer',
      content: [section('a', 'x'), { type: 'input_text', text: 'Be brief.' }],
    });
    const one = importSession([lines[0], mixed].map((l) => JSON.stringify(l)).join('\n') + '\n', {
      tokenizer: fakeTokenizer,
    });
    expect(one.items.filter((i) => i.type === 'SYSTEM_PROMPT')).toHaveLength(1);
  });

  it('is its own compaction summary on import, and the whole history for eval', () => {
    const compacted = [
      ...lines.slice(0, 12),
      { timestamp: at, type: 'compacted', payload: { message: 'Summary: a.ts read, b.ts read.' } },
      ...lines.slice(12),
    ];
    const t = jsonl(compacted);
    const context = importSession(t, { tokenizer: fakeTokenizer });
    expect(itemSummary(context.items).slice(0, 2)).toEqual([
      ['COMPACTION_SUMMARY', true, 'Summary: a.ts read, b.ts read.'],
      ['ASSISTANT_MESSAGE', false, ''],
    ]);
    expect(context.items).toHaveLength(8);
    const whole = importSession(t, { tokenizer: fakeTokenizer, wholeHistory: true });
    expect(itemSummary(whole.items)).toEqual(itemSummary(session.items));
    expect(jsonlValues(exportSession(context))).toEqual(jsonlValues(t));
  });

  it('drops the turns a rollback undid, in eval too, and writes their lines back', () => {
    const rolledBack = (turns: unknown) => ({
      timestamp: at,
      type: 'event_msg',
      payload: { type: 'thread_rolled_back', num_turns: turns },
    });
    const second = [
      item(input('user', '<environment_context>\n  <cwd>/w/sub</cwd>\n</environment_context>')),
      item(input('user', 'Now delete src/b.ts')),
      item(shell('call_6', 'rm src/b.ts')),
      item(output('call_6', '', 0)),
    ];
    const t = jsonl([
      ...lines,
      ...second,
      rolledBack(1),
      item(input('user', 'Keep b.ts; rename it instead')),
    ]);
    for (const wholeHistory of [false, true]) {
      const read = importSession(t, { tokenizer: fakeTokenizer, wholeHistory });
      // The undone turn and the environment update written for it are gone; the next turn follows.
      expect(itemSummary(read.items)).toEqual([
        ...itemSummary(session.items),
        ['USER_MESSAGE', false, 'Keep b.ts; rename it instead'],
      ]);
      expect(touchedPaths(read.items)).toEqual(['src/a.ts', 'src/b.ts']);
      expect(jsonlValues(exportSession(read))).toEqual(jsonlValues(t));
    }
    // More turns than there are: every turn goes, what came before the first stays.
    const all = importSession(jsonl([...lines, rolledBack(5)]), { tokenizer: fakeTokenizer });
    expect(itemSummary(all.items)).toEqual(itemSummary(session.items).slice(0, 2));
    expect(() => importSession(jsonl([...lines, rolledBack('2')]), { tokenizer: fakeTokenizer })).toThrow(
      `line ${lines.length + 1}, payload.num_turns: expected a whole number of turns, got a string`,
    );
  });

  it('reads an older rollout (a header, then bare items) the same way', () => {
    const older = [
      { id: 's-0', timestamp: at, instructions: null },
      { record_type: 'state' },
      ...lines.filter((l) => l.type === 'response_item').map((l) => (l as { payload: object }).payload),
    ];
    const t = jsonl(older);
    const read = importSession(t, { tokenizer: fakeTokenizer });
    expect(read.format).toBe('codex');
    expect(itemSummary(read.items)).toEqual(itemSummary(session.items));
    expect(jsonlValues(exportSession(read))).toEqual(jsonlValues(t));
    const shellPatch = {
      ...shell('call_9', ''),
      arguments: JSON.stringify({ command: ['apply_patch', patch] }),
    };
    const withPatch = importSession(jsonl([...older, shellPatch]), { tokenizer: fakeTokenizer });
    const last = withPatch.items[withPatch.items.length - 1] as Extract<
      ContextItem,
      { type: 'ASSISTANT_MESSAGE' }
    >;
    expect(callFactsOf(last)[0]?.touches).toEqual([{ path: 'src/a.ts', op: 'edit' }]);
  });

  it.each([
    [
      'a response item without a type',
      { timestamp: at, type: 'response_item', payload: { role: 'user' } },
      /^line 2, payload\.type: expected a response item with a string type, got missing$/,
    ],
    [
      'a function call without arguments',
      item({ type: 'function_call', name: 'shell', call_id: 'c' }),
      /^line 2, payload\.arguments: expected a string, got missing$/,
    ],
    [
      'a message of an unknown role',
      item(input('critic', 'x')),
      /^line 2, payload\.role: expected one of user, assistant, developer, system, got "critic"$/,
    ],
  ])('refuses %s, naming the line and field', (_name, bad, message) => {
    const t = jsonl([lines[0], bad]);
    expect(() => importSession(t, { tokenizer: fakeTokenizer })).toThrow(ImportError);
    expect(() => importSession(t, { tokenizer: fakeTokenizer })).toThrow(message);
  });
});
