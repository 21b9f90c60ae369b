/**
 * SWE-agent 1.x in the thought/action layout (models without function calling) runs its file
 * editor as a command line: `str_replace_editor str_replace /repo/a.py --old_str '…' --new_str '…'`.
 * Each such action is read into the call the function-calling layout makes (`str_replace_editor`
 * with `command`, `path`, …), so the files it views, creates and edits are known to the artifact
 * trail and to `eval`; before, each was a `bash` call and the trajectory touched no file. The
 * trajectory below is made up for the test.
 */
import { describe, expect, it } from 'vitest';
import { collectArtifactTrail } from '../../../src/context/artifact-trail';
import type { ContextItem } from '../../../src/context/items';
import { touchedPaths } from '../../../src/eval/metrics';
import { exportSession, importSession } from '../../../src/importers';
import { parseSweAgentAction } from '../../../src/importers/swe-agent-import';
import { fakeTokenizer } from '../../support/items-factory';

const step = (thought: string, action: string) => ({
  role: 'assistant',
  content: `${thought}\n\n\`\`\`\n${action}\n\`\`\``,
  thought,
  action: `${action}\n`,
  agent: 'main',
  tool_calls: null,
  message_type: 'action',
});
const observation = (content: string) => ({
  role: 'user',
  content,
  agent: 'main',
  message_type: 'observation',
});

const HISTORY = [
  { role: 'system', content: 'You edit files with str_replace_editor.', agent: 'main' },
  { role: 'user', content: 'Make area() return w * h in /repo/shapes.py.', agent: 'main' },
  step('Look first.', 'str_replace_editor view /repo/shapes.py --view_range 1 20'),
  observation('OBSERVATION:\n     1\tdef area(w, h):\n     2\t    return 2 * (w + h)'),
  step(
    'Fix it.',
    "str_replace_editor str_replace /repo/shapes.py   --old_str '    return 2 * (w + h)' --new_str '    return w * h'",
  ),
  observation('OBSERVATION:\nThe file /repo/shapes.py has been edited.'),
  step(
    'A check script.',
    "str_replace_editor create /repo/check.py --file_text 'from shapes import area\nprint(area(2, 3))\n'",
  ),
  observation('OBSERVATION:\nFile created successfully at: /repo/check.py'),
  step('Run it.', 'python /repo/check.py'),
  observation('OBSERVATION:\n6'),
];
const TRAJECTORY = { trajectory: [], history: HISTORY, info: { exit_status: 'submitted' } };

function calls(items: readonly ContextItem[]): [string, unknown][] {
  return items.flatMap((item) =>
    item.type === 'ASSISTANT_MESSAGE'
      ? (item.message.tool_calls ?? []).map((c): [string, unknown] => [
          c.function.name,
          JSON.parse(c.function.arguments),
        ])
      : [],
  );
}

describe('str_replace_editor actions of a thought/action trajectory', () => {
  const text = JSON.stringify(TRAJECTORY, null, 2);
  const session = importSession(text, { tokenizer: fakeTokenizer, fileName: 't.traj' });

  it('become str_replace_editor calls with the arguments of the function-calling layout', () => {
    expect(calls(session.items)).toStrictEqual([
      ['str_replace_editor', { command: 'view', path: '/repo/shapes.py', view_range: [1, 20] }],
      [
        'str_replace_editor',
        {
          command: 'str_replace',
          path: '/repo/shapes.py',
          old_str: '    return 2 * (w + h)',
          new_str: '    return w * h',
        },
      ],
      [
        'str_replace_editor',
        {
          command: 'create',
          path: '/repo/check.py',
          file_text: 'from shapes import area\nprint(area(2, 3))\n',
        },
      ],
      ['bash', { command: 'python /repo/check.py' }],
    ]);
  });

  it('name the files they touch, for the artifact trail and for eval', () => {
    expect(touchedPaths(session.items)).toStrictEqual(['/repo/shapes.py', '/repo/check.py']);
    expect(collectArtifactTrail(session.items).files.map((f) => [f.path, f.ops])).toStrictEqual([
      ['/repo/shapes.py', ['read', 'edit']],
      ['/repo/check.py', ['write']],
    ]);
  });

  it('are written back as they were, and a changed step gets an action that parses back to its call', () => {
    expect(JSON.parse(exportSession(session))).toStrictEqual(TRAJECTORY);
    const items = session.items.map((item) =>
      item.type === 'ASSISTANT_MESSAGE' && item.id.endsWith(':4')
        ? { ...item, message: { ...item.message, content: 'Changed.' } }
        : item,
    );
    const exported = JSON.parse(exportSession({ ...session, items })) as typeof TRAJECTORY;
    const again = importSession(JSON.stringify(exported), { tokenizer: fakeTokenizer, fileName: 't.traj' });
    expect(calls(again.items)).toStrictEqual(calls(session.items));
  });
});

describe('parseSweAgentAction: str_replace_editor', () => {
  it.each([
    [
      "str_replace_editor insert /a.py --insert_line 3 --new_str 'x = 1'",
      {
        name: 'str_replace_editor',
        args: { command: 'insert', path: '/a.py', insert_line: 3, new_str: 'x = 1' },
      },
    ],
    [
      'str_replace_editor view /a.py --view_range 10 -1',
      { name: 'str_replace_editor', args: { command: 'view', path: '/a.py', view_range: [10, -1] } },
    ],
    [
      'str_replace_editor undo_edit /a.py',
      { name: 'str_replace_editor', args: { command: 'undo_edit', path: '/a.py' } },
    ],
    // Not the editor's syntax: the whole action stays a shell command.
    [
      'str_replace_editor delete /a.py',
      { name: 'bash', args: { command: 'str_replace_editor delete /a.py' } },
    ],
    ['str_replace_editor view', { name: 'bash', args: { command: 'str_replace_editor view' } }],
    [
      'str_replace_editor view /a.py --view_range 1',
      { name: 'bash', args: { command: 'str_replace_editor view /a.py --view_range 1' } },
    ],
    [
      "str_replace_editor create /a.py --file_text 'x' --file_text 'y'",
      { name: 'bash', args: { command: "str_replace_editor create /a.py --file_text 'x' --file_text 'y'" } },
    ],
    [
      "str_replace_editor create /a.py --file_text 'unclosed",
      { name: 'bash', args: { command: "str_replace_editor create /a.py --file_text 'unclosed" } },
    ],
    [
      'str_replace_editor view /a.py | head',
      { name: 'bash', args: { command: 'str_replace_editor view /a.py | head' } },
    ],
  ])('%j', (action, expected) => {
    expect(parseSweAgentAction(action, undefined)).toStrictEqual(expected);
  });
});
