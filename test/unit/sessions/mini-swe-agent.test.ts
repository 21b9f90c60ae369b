/**
 * mini-SWE-agent trajectories (`.traj.json`): in the text layout (1.x) each reply's one action
 * block is imported as a `bash` call and the user message after it as its result, a round per
 * step; in the tool-call layout (2.x) the list is OpenAI's, its final `exit` message kept aside.
 * Both are written back as they were. The trajectories below are made up for the test, laid out
 * as mini-SWE-agent writes them.
 */
import { describe, expect, it } from 'vitest';
import {
  detectSessionFormat,
  exportSession,
  ImportError,
  importSession,
  type ImportedSession,
} from '../../../src/importers';
import type { ContextItem } from '../../../src/context/items';
import { pairToolCalls, unansweredCalls } from '../../../src/context/tool-pairs';
import { collectArtifactTrail } from '../../../src/context/artifact-trail';
import { finishCompaction, planCompaction } from '../../../src/context/compaction-plan';
import { parseCompactionConfig } from '../../../src/context/config';
import { contextText } from '../../../src/eval/metrics';
import { fakeTokenizer } from '../../support/items-factory';

const reply = (thought: string, command: string, fence = 'bash') => ({
  role: 'assistant',
  content: `THOUGHT: ${thought}\n\n\`\`\`${fence}\n${command}\n\`\`\``,
  extra: { response: { id: 'resp' } },
});
const user = (content: string) => ({ role: 'user', content });
const output = (text: string, code = 0) =>
  user(`<returncode>${code}</returncode>\n<output>\n${text}\n</output>`);

const TEXT_MESSAGES = [
  { role: 'system', content: 'You are a helpful assistant that can interact with a computer.' },
  // The task's instructions show blocks too: only replies are read for actions.
  user('<pr_description>\nRectangle.area returns the perimeter.\n</pr_description>\n```bash\nls\n```'),
  reply('Find the method.', "nl -ba src/shapes/rect.py | sed -n '35,50p'"),
  output('    42\t        return 2 * (self.w + self.h)'),
  // Two blocks: mini-SWE-agent answers with a format error and runs nothing.
  { role: 'assistant', content: 'Two at once.\n```bash\nls\n```\n```bash\npwd\n```' },
  user('Please always provide EXACTLY ONE action in triple backticks, found 2 actions.'),
  reply('Fix it.', "sed -i '42s/2 \\* (self.w + self.h)/self.w * self.h/' src/shapes/rect.py"),
  output(''),
  reply(
    'Check it.',
    "cat <<'EOF' > check_area.py\nfrom shapes.rect import Rect\nprint(Rect(3, 4).area())\nEOF\npython check_area.py",
  ),
  user('The last command <command>python check_area.py</command> timed out and has been killed.'),
  reply('Submit.', 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached'),
  user('diff --git a/src/shapes/rect.py b/src/shapes/rect.py'),
];

const TEXT_TRAJECTORY = {
  info: {
    exit_status: 'Submitted',
    submission: 'diff --git a/src/shapes/rect.py b/src/shapes/rect.py',
    model_stats: { instance_cost: 0.01, api_calls: 5 },
    mini_version: '1.15.0',
    config: { agent: { system_template: '…' } },
  },
  messages: TEXT_MESSAGES,
  trajectory_format: 'mini-swe-agent-1',
};

const call = (id: string, command: string) => ({
  function: { arguments: JSON.stringify({ command }), name: 'bash' },
  id,
  type: 'function',
});

const TOOL_MESSAGES = [
  { role: 'system', content: 'You are a helpful assistant that can interact with a computer shell.' },
  user('<pr_description>\nRectangle.area returns the perimeter.\n</pr_description>'),
  {
    content: null,
    role: 'assistant',
    tool_calls: [call('call_a', 'cat src/shapes/rect.py')],
    function_call: null,
    provider_specific_fields: { refusal: null },
    extra: { actions: [{ command: 'cat src/shapes/rect.py', tool_call_id: 'call_a' }], cost: 0.001 },
  },
  {
    content: '<returncode>0</returncode>\n<output>\nclass Rect: ...\n</output>',
    extra: { raw_output: 'class Rect: ...', returncode: 0 },
    tool_call_id: 'call_a',
    role: 'tool',
  },
  { role: 'user', content: 'No tool calls found in the response.', extra: { interrupt_type: 'FormatError' } },
  {
    content: 'Editing.',
    role: 'assistant',
    tool_calls: [call('call_b', "sed -i 's/2 \\* (self.w + self.h)/self.w * self.h/' src/shapes/rect.py")],
    extra: { cost: 0.001 },
  },
  { content: '<returncode>0</returncode>\n<output>\n</output>', tool_call_id: 'call_b', role: 'tool' },
  {
    content: null,
    role: 'assistant',
    tool_calls: [call('call_c', 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt')],
  },
  {
    role: 'exit',
    content: 'diff --git a/src/shapes/rect.py',
    extra: { exit_status: 'Submitted', submission: 'diff' },
  },
];

const TOOL_TRAJECTORY = {
  info: { mini_version: '2.2.4', exit_status: 'Submitted', submission: 'diff' },
  messages: TOOL_MESSAGES,
  trajectory_format: 'mini-swe-agent-1.1',
  instance_id: 'shapes-1',
};

function load(value: unknown): { text: string; session: ImportedSession } {
  const text = JSON.stringify(value, null, 2);
  return { text, session: importSession(text, { tokenizer: fakeTokenizer, fileName: 'rect.traj.json' }) };
}

/** The item's position in the list (its id's suffix). */
const at = (item: ContextItem): number => Number(item.id.slice(item.id.lastIndexOf(':') + 1));

function commands(items: readonly ContextItem[]): string[] {
  return items.flatMap((item) =>
    item.type === 'ASSISTANT_MESSAGE'
      ? (item.message.tool_calls ?? []).map(
          (c) => (JSON.parse(c.function.arguments) as { command: string }).command,
        )
      : [],
  );
}

describe('importing a mini-SWE-agent text trajectory', () => {
  const { session } = load(TEXT_TRAJECTORY);
  const { items } = session;

  it('is told from an OpenAI object by its trajectory_format, or by info.mini_version', () => {
    const text = JSON.stringify(TEXT_TRAJECTORY);
    expect(detectSessionFormat(text, 'rect.traj.json').format).toBe('swe-agent');
    const { trajectory_format: _, ...unmarked } = TEXT_TRAJECTORY;
    expect(detectSessionFormat(JSON.stringify(unmarked), 'x.json').format).toBe('swe-agent');
    // 1.0–1.3 wrote neither: their info tells them.
    const early = { ...unmarked, info: { exit_status: 'Submitted', model_stats: { api_calls: 5 } } };
    expect(detectSessionFormat(JSON.stringify(early), 'x.json').format).toBe('swe-agent');
    expect(commands(load(early).session.items)).toStrictEqual(commands(items));
    const { info: __, ...plain } = unmarked;
    expect(detectSessionFormat(JSON.stringify(plain), 'x.json').format).toBe('openai');
    expect(detectSessionFormat(JSON.stringify({ ...plain, info: { note: 1 } }), 'x.json').format).toBe(
      'openai',
    );
    expect(session.document).toMatchObject({ format: 'swe-agent', layout: 'mini_text', exit: [] });
  });

  it('makes each reply with one action block a bash call and the next user message its result; a round per step', () => {
    expect(items.map((item) => [at(item), item.type, item.isMeta, item.round])).toStrictEqual([
      [0, 'SYSTEM_PROMPT', false, 0],
      [1, 'USER_MESSAGE', false, 1],
      [2, 'ASSISTANT_MESSAGE', false, 2],
      [3, 'TOOL_RESULT', false, 2],
      [4, 'ASSISTANT_MESSAGE', false, 3],
      [5, 'USER_MESSAGE', true, 3],
      [6, 'ASSISTANT_MESSAGE', false, 4],
      [7, 'TOOL_RESULT', false, 4],
      [8, 'ASSISTANT_MESSAGE', false, 5],
      [9, 'TOOL_RESULT', false, 5],
      [10, 'ASSISTANT_MESSAGE', false, 6],
      [11, 'TOOL_RESULT', false, 6],
    ]);
    expect(commands(items)).toStrictEqual([
      "nl -ba src/shapes/rect.py | sed -n '35,50p'",
      "sed -i '42s/2 \\* (self.w + self.h)/self.w * self.h/' src/shapes/rect.py",
      "cat <<'EOF' > check_area.py\nfrom shapes.rect import Rect\nprint(Rect(3, 4).area())\nEOF\npython check_area.py",
      'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached',
    ]);
    // The reply keeps its words without the block; the one with two blocks stays as it was.
    expect(items.filter((i) => i.type === 'ASSISTANT_MESSAGE').map((i) => i.message.content)).toStrictEqual([
      'THOUGHT: Find the method.',
      TEXT_MESSAGES[4]?.content,
      'THOUGHT: Fix it.',
      'THOUGHT: Check it.',
      'THOUGHT: Submit.',
    ]);
  });

  it('answers every call, the submission included, and orphans no result', () => {
    const pairs = pairToolCalls(items);
    expect(pairs.orphanResults).toStrictEqual([]);
    expect(unansweredCalls(pairs)).toStrictEqual([]);
    for (const [i, item] of items.entries()) {
      if (item.type !== 'TOOL_RESULT') continue;
      expect(pairs.byResult.get(item.id)?.callItemId).toBe(items[i - 1]?.id);
      expect(item.message.content).toBe(TEXT_MESSAGES[at(item)]?.content);
    }
  });

  it('puts the files its commands read, edit and write in the artifact trail, and a compaction keeps them', () => {
    expect(collectArtifactTrail(items).files.map((file) => [file.path, file.ops])).toStrictEqual([
      ['src/shapes/rect.py', ['read', 'edit']],
      ['check_area.py', ['write']],
    ]);
    const config = parseCompactionConfig({ maxContextTokens: 400, summarizer: 'extractive' });
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
  });

  it("reads the run's own action_regex, and the 2.x block by default", () => {
    const custom = {
      ...TEXT_TRAJECTORY,
      info: { ...TEXT_TRAJECTORY.info, config: { agent: { action_regex: '<cmd>(.*?)</cmd>' } } },
      messages: [
        TEXT_MESSAGES[0],
        TEXT_MESSAGES[1],
        { role: 'assistant', content: 'Look.\n<cmd>ls src</cmd>' },
        output('rect.py'),
      ],
    };
    expect(commands(load(custom).session.items)).toStrictEqual(['ls src']);
    // A Python-only pattern: the version's default block stands.
    const python = { ...custom, info: { config: { agent: { action_regex: '<(?P<x>cmd)>(.*?)</cmd>' } } } };
    expect(commands(load(python).session.items)).toStrictEqual([]);
    const v2 = {
      ...TEXT_TRAJECTORY,
      trajectory_format: 'mini-swe-agent-1.1',
      messages: [
        TEXT_MESSAGES[0],
        TEXT_MESSAGES[1],
        reply('Look.', 'ls src', 'mswea_bash_command'),
        output('rect.py'),
      ],
    };
    expect(commands(load(v2).session.items)).toStrictEqual(['ls src']);
  });
});

describe('exporting a mini-SWE-agent text trajectory', () => {
  it('writes an unchanged import back deep-equal', () => {
    const { text, session } = load(TEXT_TRAJECTORY);
    expect(JSON.parse(exportSession(session))).toStrictEqual(JSON.parse(text));
  });

  it('writes a changed step as its words and action block, and a changed result as its user message', () => {
    const { session } = load(TEXT_TRAJECTORY);
    const items = session.items.map((item) => {
      if (at(item) === 2 && item.type === 'ASSISTANT_MESSAGE')
        return { ...item, message: { ...item.message, content: 'Look again.' } };
      if (at(item) === 3 && item.type === 'TOOL_RESULT')
        return { ...item, message: { ...item.message, content: '[cut] 1 line' } };
      return item;
    });
    const exported = JSON.parse(exportSession({ ...session, items })) as typeof TEXT_TRAJECTORY;
    expect(exported.messages[2]).toStrictEqual({
      role: 'assistant',
      content: "Look again.\n\n```bash\nnl -ba src/shapes/rect.py | sed -n '35,50p'\n```",
      extra: { response: { id: 'resp' } },
    });
    expect(exported.messages[3]).toStrictEqual({ role: 'user', content: '[cut] 1 line' });
    expect(exported.messages.filter((_, i) => i !== 2 && i !== 3)).toStrictEqual(
      TEXT_MESSAGES.filter((_, i) => i !== 2 && i !== 3),
    );
    const again = load(exported).session.items;
    expect(commands(again)).toStrictEqual(commands(session.items));
    expect(again.map((item) => [item.type, item.round])).toStrictEqual(
      session.items.map((item) => [item.type, item.round]),
    );
  });
});

describe('mini-SWE-agent text trajectories of other shapes', () => {
  const task = [TEXT_MESSAGES[0], TEXT_MESSAGES[1]];

  it('writes a changed 2.x step in the block its model reads, its own pattern included', () => {
    for (const [config, block] of [
      [{}, reply('Look.', 'ls src', 'mswea_bash_command')],
      [
        { model: { action_regex: '<mswea_bash_command>(.*?)</mswea_bash_command>' } },
        { role: 'assistant', content: 'Look.\n<mswea_bash_command>ls src</mswea_bash_command>' },
      ],
    ] as const) {
      const value = {
        ...TEXT_TRAJECTORY,
        info: { mini_version: '2.1.0', config },
        trajectory_format: 'mini-swe-agent-1.1',
        messages: [...task, block, output('rect.py')],
      };
      const { session } = load(value);
      expect(commands(session.items)).toStrictEqual(['ls src']);
      const items = session.items.map((item) =>
        item.type === 'ASSISTANT_MESSAGE'
          ? { ...item, message: { ...item.message, content: 'Look again.' } }
          : item,
      );
      const again = load(JSON.parse(exportSession({ ...session, items }))).session.items;
      expect(commands(again)).toStrictEqual(['ls src']);
      expect(again.map((item) => item.type)).toStrictEqual(session.items.map((item) => item.type));
    }
  });

  it('writes a cut command back as the shell text it was, not as JSON', () => {
    const { session } = load(TEXT_TRAJECTORY);
    const items = session.items.map((item) =>
      at(item) === 8 && item.type === 'ASSISTANT_MESSAGE'
        ? {
            ...item,
            message: {
              ...item.message,
              tool_calls: (item.message.tool_calls ?? []).map((call) => ({
                ...call,
                function: {
                  ...call.function,
                  arguments: `${call.function.arguments.slice(0, 52)}[…]\n[TRUNCATED original~90 tokens; recall #a1f3c2]`,
                },
              })),
            },
          }
        : item,
    );
    const exported = JSON.parse(exportSession({ ...session, items })) as typeof TEXT_TRAJECTORY;
    expect(exported.messages[8]?.content).toBe(
      "THOUGHT: Check it.\n\n```bash\ncat <<'EOF' > check_area.py\nfrom shapes[…]\n[TRUNCATED original~90 tokens; recall #a1f3c2]\n```",
    );
  });

  it('reads content lists, keeps the text layout for an empty tool_calls list, and takes 1.x blocks by version', () => {
    const value = {
      info: { mini_version: '1.2.0' },
      messages: [
        ...task,
        {
          role: 'assistant',
          content: [{ type: 'text', text: 'THOUGHT: Look.\n\n```bash\nls src\n```' }],
          tool_calls: [],
        },
        { role: 'user', content: [{ type: 'text', text: 'rect.py', cache_control: { type: 'ephemeral' } }] },
      ],
    };
    const { text, session } = load(value);
    expect(session.document).toMatchObject({ layout: 'mini_text' });
    expect(commands(session.items)).toStrictEqual(['ls src']);
    expect(session.items.map((item) => item.type)).toStrictEqual([
      'SYSTEM_PROMPT',
      'USER_MESSAGE',
      'ASSISTANT_MESSAGE',
      'TOOL_RESULT',
    ]);
    expect(JSON.parse(exportSession(session))).toStrictEqual(JSON.parse(text));
  });
});

describe('importing a mini-SWE-agent tool-call trajectory', () => {
  const { text, session } = load(TOOL_TRAJECTORY);
  const { items } = session;

  it('reads the OpenAI list with a round per step, format errors meta, and keeps the exit message aside', () => {
    expect(items.map((item) => [at(item), item.type, item.isMeta, item.round])).toStrictEqual([
      [0, 'SYSTEM_PROMPT', false, 0],
      [1, 'USER_MESSAGE', false, 1],
      [2, 'ASSISTANT_MESSAGE', false, 2],
      [3, 'TOOL_RESULT', false, 2],
      [4, 'USER_MESSAGE', true, 2],
      [5, 'ASSISTANT_MESSAGE', false, 3],
      [6, 'TOOL_RESULT', false, 3],
      [7, 'ASSISTANT_MESSAGE', false, 4],
    ]);
    expect(session.document).toMatchObject({ format: 'swe-agent', layout: 'mini', exit: [TOOL_MESSAGES[8]] });
    expect(collectArtifactTrail(items).files.map((file) => [file.path, file.ops])).toStrictEqual([
      ['src/shapes/rect.py', ['read', 'edit']],
      ['patch.txt', ['read']],
    ]);
  });

  it('writes an unchanged import back deep-equal, the exit message last', () => {
    expect(JSON.parse(exportSession(session))).toStrictEqual(JSON.parse(text));
  });

  it("makes a new task the user typed the user's message, with a round of its own", () => {
    const messages = [
      ...TOOL_MESSAGES.slice(0, 4),
      {
        role: 'user',
        content: 'The user added a new task: also fix perimeter.',
        extra: { interrupt_type: 'UserNewTask' },
      },
      ...TOOL_MESSAGES.slice(5),
    ];
    const { items } = load({ ...TOOL_TRAJECTORY, messages }).session;
    expect(items.map((item) => [item.type, item.isMeta, item.round])).toStrictEqual([
      ['SYSTEM_PROMPT', false, 0],
      ['USER_MESSAGE', false, 1],
      ['ASSISTANT_MESSAGE', false, 2],
      ['TOOL_RESULT', false, 2],
      ['USER_MESSAGE', false, 3],
      ['ASSISTANT_MESSAGE', false, 4],
      ['TOOL_RESULT', false, 4],
      ['ASSISTANT_MESSAGE', false, 5],
    ]);
  });

  it('refuses an exit message that does not end the list, naming the message after it', () => {
    const messages = [...TOOL_MESSAGES.slice(0, 2), TOOL_MESSAGES[8], ...TOOL_MESSAGES.slice(2, 4)];
    expect(() => load({ ...TOOL_TRAJECTORY, messages })).toThrow(ImportError);
    expect(() => load({ ...TOOL_TRAJECTORY, messages })).toThrow(/messages\[3\]/);
  });
});
