/**
 * SWE-agent 0.x trajectories (the "thought_action" parser: assistant entries with `thought` and
 * `action`, observations as user entries, no tool calls): each step imported as an assistant
 * message with one tool call parsed from its action, its observation as the result, a round per
 * step; written back in the same layout. The trajectory below is made up for the test, laid out as
 * SWE-agent 0.x writes one.
 */
import { describe, expect, it } from 'vitest';
import { exportSession, ImportError, importSession, type ImportedSession } from '../../../src/importers';
import { parseSweAgentAction } from '../../../src/importers/swe-agent-import';
import type { ContextItem } from '../../../src/context/items';
import { pairToolCalls, unansweredCalls } from '../../../src/context/tool-pairs';
import { collectArtifactTrail } from '../../../src/context/artifact-trail';
import { finishCompaction, planCompaction } from '../../../src/context/compaction-plan';
import { parseCompactionConfig } from '../../../src/context/config';
import { contextText } from '../../../src/eval/metrics';
import { fakeTokenizer } from '../../support/items-factory';

const STATE = (file: string) => `(Open file: ${file})\n(Current directory: /shapes)\nbash-$`;

/** A step as SWE-agent 0.x logs it: the content is the thought followed by the action in a block. */
function step(thought: string, action: string): Record<string, unknown> {
  return {
    role: 'assistant',
    content: `${thought}\n\n\`\`\`\n${action}\n\`\`\``,
    thought: `${thought}\n\n`,
    action: `${action}\n`,
    agent: 'primary',
  };
}
const observation = (content: string) => ({ role: 'user', content, agent: 'primary' });

const HISTORY = [
  { role: 'system', content: 'You are an autonomous programmer with a file viewer.', agent: 'primary' },
  {
    role: 'user',
    content: 'Here is a demonstration:\n> ls\nREADME.md\n> submit',
    agent: 'primary',
    is_demo: true,
  },
  observation('ISSUE:\nRectangle.area returns the perimeter.\n\n' + STATE('n/a')),
  step('Let us look at the area method first.', 'open "src/shapes/rect.py" 40'),
  observation(
    '[File: /shapes/src/shapes/rect.py (60 lines total)]\n41:    def area(self):\n42:        return 2 * (self.w + self.h)\n' +
      STATE('/shapes/src/shapes/rect.py'),
  ),
  step(
    'Line 42 computes the perimeter; replace it.',
    'edit 42:42\n        return self.w * self.h\nend_of_edit',
  ),
  observation(
    '[File: /shapes/src/shapes/rect.py (60 lines total)]\n42:        return self.w * self.h\n' +
      STATE('/shapes/src/shapes/rect.py'),
  ),
  step('Now a script to check the fix.', 'create check_area.py'),
  observation('[File: /shapes/check_area.py (1 lines total)]\n1:\n' + STATE('/shapes/check_area.py')),
  // No `thought`: the discussion is the content without its action block.
  {
    role: 'assistant',
    content: 'Run it.\n```\npython check_area.py\n```',
    action: 'python check_area.py\n',
    agent: 'primary',
  },
  observation('12\n' + STATE('/shapes/check_area.py')),
  observation('Reminder: 40 steps left.'),
  step('Is perimeter still used by the check?', 'search_file "def perimeter"'),
  observation(
    'No matches found for "def perimeter" in /shapes/check_area.py\n' + STATE('/shapes/check_area.py'),
  ),
  step('The fix works; submitting.', 'submit'),
];

const TRAJECTORY = {
  environment: 'swe_main',
  trajectory: [{ action: 'submit\n', observation: 'diff --git a/src/shapes/rect.py ...', thought: 'done' }],
  history: HISTORY,
  info: { exit_status: 'submitted', model_stats: { api_calls: 6 } },
};

function load(value: unknown = TRAJECTORY): { text: string; session: ImportedSession } {
  const text = JSON.stringify(value, null, 2);
  return { text, session: importSession(text, { tokenizer: fakeTokenizer, fileName: 'rect.traj' }) };
}

/** The item's position in the history (its id's suffix). */
const at = (item: ContextItem): number => Number(item.id.slice(item.id.lastIndexOf(':') + 1));

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

describe('importing a thought/action trajectory', () => {
  const { session } = load();
  const { items } = session;

  it('makes each step an assistant message and its observation the result; rounds follow the steps', () => {
    expect(items.map((item) => [at(item), item.type, item.isMeta, item.round])).toStrictEqual([
      [0, 'SYSTEM_PROMPT', false, 0],
      [1, 'USER_MESSAGE', true, 0],
      [2, 'USER_MESSAGE', false, 1],
      [3, 'ASSISTANT_MESSAGE', false, 2],
      [4, 'TOOL_RESULT', false, 2],
      [5, 'ASSISTANT_MESSAGE', false, 3],
      [6, 'TOOL_RESULT', false, 3],
      [7, 'ASSISTANT_MESSAGE', false, 4],
      [8, 'TOOL_RESULT', false, 4],
      [9, 'ASSISTANT_MESSAGE', false, 5],
      [10, 'TOOL_RESULT', false, 5],
      [11, 'USER_MESSAGE', true, 5],
      [12, 'ASSISTANT_MESSAGE', false, 6],
      [13, 'TOOL_RESULT', false, 6],
      [14, 'ASSISTANT_MESSAGE', false, 7],
    ]);
    expect(session.document).toMatchObject({ format: 'swe-agent', layout: 'thought_action' });
  });

  it('parses each action into a tool call; an edit and a bare search_file apply to the open file', () => {
    expect(calls(items)).toStrictEqual([
      ['open', { path: 'src/shapes/rect.py', line_number: 40 }],
      [
        'edit',
        {
          path: 'src/shapes/rect.py',
          start_line: 42,
          end_line: 42,
          replacement: '        return self.w * self.h',
        },
      ],
      ['create', { path: 'check_area.py' }],
      ['bash', { command: 'python check_area.py' }],
      ['search_file', { search_term: 'def perimeter', path: 'check_area.py' }],
      ['submit', {}],
    ]);
  });

  it('keeps the thought (trimmed) as the content, or the content without the action block', () => {
    const contents = items.flatMap((item) =>
      item.type === 'ASSISTANT_MESSAGE' ? [item.message.content] : [],
    );
    expect(contents).toStrictEqual([
      'Let us look at the area method first.',
      'Line 42 computes the perimeter; replace it.',
      'Now a script to check the fix.',
      'Run it.',
      'Is perimeter still used by the check?',
      'The fix works; submitting.',
    ]);
  });

  it('answers every call with the observation after it; only the final submit has none', () => {
    const pairs = pairToolCalls(items);
    expect(pairs.orphanResults).toStrictEqual([]);
    for (const [i, item] of items.entries()) {
      if (item.type !== 'TOOL_RESULT') continue;
      expect(pairs.byResult.get(item.id)?.callItemId).toBe(items[i - 1]?.id);
      expect(item.message.content).toBe(HISTORY[at(item)]?.content);
    }
    // SWE-agent 0.x logs no observation after `submit`.
    expect(
      unansweredCalls(pairs).map((p) => at(items.find((i) => i.id === p.callItemId) as ContextItem)),
    ).toStrictEqual([14]);
    const { session: answered } = load({
      ...TRAJECTORY,
      history: [...HISTORY, observation('diff --git a/...')],
    });
    expect(unansweredCalls(pairToolCalls(answered.items))).toStrictEqual([]);
    expect(answered.items.at(-1)).toMatchObject({ type: 'TOOL_RESULT', round: 7 });
  });

  it('keeps the task as the only real user message', () => {
    const real = items.filter((item) => item.type === 'USER_MESSAGE' && !item.isMeta);
    expect(real.map(at)).toStrictEqual([2]);
  });

  it('puts the files its actions open, create and edit in the artifact trail, and a compaction keeps them', () => {
    expect(collectArtifactTrail(items).files.map((file) => [file.path, file.ops])).toStrictEqual([
      ['src/shapes/rect.py', ['read', 'edit']],
      ['check_area.py', ['write', 'search']],
    ]);
    const config = parseCompactionConfig({ maxContextTokens: 600, summarizer: 'extractive' });
    const plan = planCompaction({
      items,
      config,
      tokenizer: fakeTokenizer,
      trigger: 'manual',
      compactionId: 't',
    });
    expect(plan.steps.length).toBeGreaterThan(0);
    const out = contextText(finishCompaction(plan, null));
    for (const path of ['src/shapes/rect.py', 'check_area.py']) expect(out).toContain(path);
    // Rounds follow the steps, so round-based settings reach into the trajectory.
    expect(new Set(items.map((item) => item.round)).size).toBeGreaterThan(5);
  });

  it('gives the same items for the same text (deterministic ids, call ids included)', () => {
    expect(load().session.items).toStrictEqual(items);
    const ids = items.flatMap((item) =>
      item.type === 'ASSISTANT_MESSAGE' ? (item.message.tool_calls ?? []).map((c) => c.id) : [],
    );
    expect(new Set(ids).size).toBe(6);
  });
});

describe('exporting a thought/action trajectory', () => {
  it('writes an unchanged import back deep-equal', () => {
    const { text, session } = load();
    expect(JSON.parse(exportSession(session))).toStrictEqual(JSON.parse(text));
  });

  it('writes a shortened observation as its user entry, which imports again as the result', () => {
    const { session } = load();
    const items = session.items.map((item) =>
      item.type === 'TOOL_RESULT' && at(item) === 4
        ? { ...item, message: { ...item.message, content: '[cut] 60 lines' } }
        : item,
    );
    const exported = JSON.parse(exportSession({ ...session, items })) as typeof TRAJECTORY;
    expect(exported.history[4]).toStrictEqual({ role: 'user', content: '[cut] 60 lines', agent: 'primary' });
    expect(exported.history.filter((_, i) => i !== 4)).toStrictEqual(HISTORY.filter((_, i) => i !== 4));
    expect(exported.info).toStrictEqual(TRAJECTORY.info);

    const again = load(exported).session.items;
    expect(again.map((item) => [item.type, item.round])).toStrictEqual(
      session.items.map((item) => [item.type, item.round]),
    );
    expect(calls(again)).toStrictEqual(calls(session.items));
    expect(again.find((item) => at(item) === 4)).toMatchObject({
      type: 'TOOL_RESULT',
      message: { content: '[cut] 60 lines' },
    });
  });

  it('writes a changed step with thought and action from its call, which parses back to the same call', () => {
    const { session } = load();
    const items = session.items.map((item) =>
      item.type === 'ASSISTANT_MESSAGE' && at(item) === 5
        ? { ...item, message: { ...item.message, content: 'Fix line 42.' } }
        : item,
    );
    const exported = JSON.parse(exportSession({ ...session, items })) as typeof TRAJECTORY;
    expect(exported.history[5]).toStrictEqual({
      role: 'assistant',
      content: 'Fix line 42.\n\n```\nedit 42:42\n        return self.w * self.h\nend_of_edit\n```',
      thought: 'Fix line 42.',
      action: 'edit 42:42\n        return self.w * self.h\nend_of_edit',
      agent: 'primary',
    });
    expect(calls(load(exported).session.items)).toStrictEqual(calls(session.items));
  });

  it('writes arguments cut by compaction (no longer JSON) as the command they held, still importable', () => {
    const { session } = load();
    const items = session.items.map((item) => {
      if (item.type !== 'ASSISTANT_MESSAGE' || at(item) !== 9) return item;
      const [call] = item.message.tool_calls ?? [];
      if (!call) return item;
      const cut = { ...call, function: { ...call.function, arguments: '{"command": "python ch… [cut]' } };
      return { ...item, message: { ...item.message, tool_calls: [cut] } };
    });
    const exported = JSON.parse(exportSession({ ...session, items })) as typeof TRAJECTORY;
    expect(exported.history[9]).toMatchObject({
      action: 'python ch… [cut]',
      thought: 'Run it.',
    });
    const again = load(exported).session.items;
    expect(again.map((item) => item.type)).toStrictEqual(session.items.map((item) => item.type));
    expect(calls(again)[3]).toStrictEqual(['bash', { command: 'python ch… [cut]' }]);
  });
});

describe('parseSweAgentAction', () => {
  it.each([
    ['open src/a.py', { name: 'open', args: { path: 'src/a.py' } }],
    ["open 'my dir/a.py' 7", { name: 'open', args: { path: 'my dir/a.py', line_number: 7 } }],
    ['goto 120\n', { name: 'goto', args: { line_number: 120 } }],
    ['goto top', { name: 'bash', args: { command: 'goto top' } }],
    ['scroll_down', { name: 'scroll_down', args: {} }],
    ['find_file "fields.py" src', { name: 'find_file', args: { file_name: 'fields.py', dir: 'src' } }],
    ['search_dir "a \\"b\\"" lib', { name: 'search_dir', args: { search_term: 'a "b"', dir: 'lib' } }],
    ['search_file x other.py', { name: 'search_file', args: { search_term: 'x', path: 'other.py' } }],
    ["submit 'flag{x y}'", { name: 'submit', args: { flag: 'flag{x y}' } }],
    [
      'edit 3:4\nend_of_edit',
      { name: 'edit', args: { path: 'open.py', start_line: 3, end_line: 4, replacement: '' } },
    ],
    ['edit\n  x\nend_of_edit', { name: 'edit', args: { path: 'open.py', replacement: '  x' } }],
    ['edit 3:4\nno end marker', { name: 'bash', args: { command: 'edit 3:4\nno end marker' } }],
    ['find_file a.py | head', { name: 'bash', args: { command: 'find_file a.py | head' } }],
    ['open "unclosed', { name: 'bash', args: { command: 'open "unclosed' } }],
    ['open a.py\nls', { name: 'bash', args: { command: 'open a.py\nls' } }],
    ['find . -name "*.py"', { name: 'bash', args: { command: 'find . -name "*.py"' } }],
  ])('%j', (action, expected) => {
    expect(parseSweAgentAction(action, 'open.py')).toStrictEqual(expected);
  });

  it('leaves the path out of an edit when no file is open', () => {
    expect(parseSweAgentAction('edit 1:1\nx\nend_of_edit', undefined).args).toStrictEqual({
      start_line: 1,
      end_line: 1,
      replacement: 'x',
    });
  });
});

describe('malformed thought/action entries', () => {
  it.each([
    ['action', 7, /^history\[3\]\.action: expected a string, got a number$/],
    ['action', null, /^history\[3\]\.action: expected a string, got null$/],
    ['thought', ['x'], /^history\[3\]\.thought: expected a string, got an array$/],
    ['content', { text: 'x' }, /^history\[3\]\.content: expected a string, got an object$/],
  ])('a step whose %s is %j is refused, naming the field', (key, value, message) => {
    const history = HISTORY.map((entry, i) => (i === 3 ? { ...entry, [key]: value } : entry));
    const run = () => load({ ...TRAJECTORY, history });
    expect(run).toThrow(ImportError);
    expect(run).toThrow(message);
  });
});
