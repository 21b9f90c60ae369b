/**
 * OpenHands trajectories: the system prompt and the task are header and first round, the actions
 * of one model response are one assistant message (its content as text) whatever observations came
 * between them, observations pair with their action by `cause`, an `error` observation and a
 * non-zero exit code are open errors, an error that answers no call is a meta user message, state
 * changes and recalls are kept aside, older trajectories (flattened arguments, no ids, no metadata)
 * pair by order, the editor, bash and IPython tools give what they touch, and the list is written
 * back as it came, in its wrapper. The events are made up in the shape OpenHands writes.
 */
import { describe, expect, it } from 'vitest';
import { callFactsOf } from '../../../src/context/item-facts';
import { messageText, type ContextItem } from '../../../src/context/items';
import { collectOpenErrors } from '../../../src/context/open-errors';
import { touchedPaths } from '../../../src/eval/metrics';
import { detectSessionFormat, exportSession, ImportError, importSession } from '../../../src/importers';
import { fakeTokenizer, itemSummary } from '../../support/items-factory';

const at = '2025-04-30T17:56:40.640800';

/** `tool_call_metadata` of one call of a model response holding `calls` ([id, name, arguments]). */
function metadata(id: string, response: string, content: string | null, calls: [string, string, object][]) {
  const call = calls.find(([c]) => c === id) as [string, string, object];
  return {
    function_name: call[1],
    tool_call_id: id,
    model_response: {
      id: response,
      model: 'm',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content,
            tool_calls: calls.map(([c, name, args]) => ({
              id: c,
              type: 'function',
              function: { name, arguments: JSON.stringify(args) },
            })),
          },
        },
      ],
    },
    total_calls_in_response: calls.length,
  };
}

const first: [string, string, object][] = [
  ['toolu_01', 'str_replace_editor', { command: 'view', path: '/w/src/a.py' }],
  ['toolu_02', 'execute_bash', { command: "cd /w && sed -n '1,40p' src/b.py" }],
];
const second: [string, string, object][] = [['toolu_03', 'execute_bash', { command: 'pytest -q' }]];
const third: [string, string, object][] = [
  [
    'toolu_04',
    'str_replace_editor',
    { command: 'str_replace', path: '/w/src/a.py', old_str: 'x', new_str: 'y' },
  ],
];

const events = [
  {
    id: 0,
    timestamp: at,
    source: 'agent',
    message: 'You are OpenHands agent.',
    action: 'system',
    args: {
      content: 'You are OpenHands agent.',
      tools: [{ type: 'function' }],
      openhands_version: '0.35.0',
      agent_class: 'CodeActAgent',
    },
  },
  {
    id: 1,
    timestamp: at,
    source: 'user',
    message: 'Fix src/a.py',
    action: 'message',
    args: { content: 'Fix src/a.py', image_urls: null, wait_for_response: false },
  },
  {
    id: 2,
    timestamp: at,
    source: 'user',
    message: 'Retrieving content for: Fix',
    action: 'recall',
    args: { recall_type: 'workspace_context', query: 'Fix src/a.py', thought: '' },
  },
  {
    id: 3,
    timestamp: at,
    source: 'environment',
    message: 'Added workspace context',
    cause: 2,
    observation: 'recall',
    content: 'Added workspace context',
    extras: { recall_type: 'workspace_context' },
  },
  {
    id: 4,
    timestamp: at,
    source: 'environment',
    message: '',
    observation: 'agent_state_changed',
    content: '',
    extras: { agent_state: 'running' },
  },
  {
    id: 5,
    timestamp: at,
    source: 'agent',
    message: 'Reading file: /w/src/a.py',
    action: 'read',
    tool_call_metadata: metadata('toolu_01', 'r1', 'Let me look.', first),
    args: {
      path: '/w/src/a.py',
      start: 0,
      end: -1,
      thought: 'Let me look.',
      impl_source: 'oh_aci',
      view_range: null,
    },
  },
  {
    id: 6,
    timestamp: at,
    source: 'agent',
    message: 'I read the file /w/src/a.py.',
    cause: 5,
    observation: 'read',
    tool_call_metadata: metadata('toolu_01', 'r1', 'Let me look.', first),
    content: 'x = 1\n',
    extras: { path: '/w/src/a.py', impl_source: 'oh_aci' },
  },
  {
    id: 7,
    timestamp: at,
    source: 'agent',
    message: "Running command: cd /w && sed -n '1,40p' src/b.py",
    action: 'run',
    tool_call_metadata: metadata('toolu_02', 'r1', 'Let me look.', first),
    args: {
      command: "cd /w && sed -n '1,40p' src/b.py",
      is_input: false,
      thought: '',
      blocking: false,
      hidden: false,
      confirmation_state: 'confirmed',
    },
  },
  {
    id: 8,
    timestamp: at,
    source: 'agent',
    message: 'Command executed with exit code 0.',
    cause: 7,
    observation: 'run',
    tool_call_metadata: metadata('toolu_02', 'r1', 'Let me look.', first),
    content: 'y = 2\n',
    extras: { command: "sed -n '1,40p' src/b.py", metadata: { exit_code: 0, pid: -1 }, hidden: false },
    success: true,
  },
  {
    id: 9,
    timestamp: at,
    source: 'agent',
    message: 'Running command: pytest -q',
    action: 'run',
    tool_call_metadata: metadata('toolu_03', 'r2', null, second),
    args: { command: 'pytest -q', is_input: false, thought: '', blocking: false },
  },
  {
    id: 10,
    timestamp: at,
    source: 'agent',
    message: 'Command `pytest -q` executed with exit code 1.',
    cause: 9,
    observation: 'run',
    tool_call_metadata: metadata('toolu_03', 'r2', null, second),
    content: 'F\n1 failed in 0.1s',
    extras: { command: 'pytest -q', metadata: { exit_code: 1 } },
    success: false,
  },
  {
    id: 11,
    timestamp: at,
    source: 'agent',
    message: "Parameter 'command' is expected to be one of ['view', 'create'].",
    observation: 'error',
    content: "Parameter 'command' is expected to be one of ['view', 'create'].",
    extras: { error_id: '' },
  },
  {
    id: 12,
    timestamp: at,
    source: 'agent',
    message: '',
    action: 'edit',
    tool_call_metadata: metadata('toolu_04', 'r3', 'Fixing it.', third),
    args: { path: '/w/src/a.py', command: 'str_replace', old_str: 'x', new_str: 'y', thought: 'Fixing it.' },
  },
  {
    id: 13,
    timestamp: at,
    source: 'agent',
    message: 'I edited the file /w/src/a.py.',
    cause: 12,
    observation: 'edit',
    tool_call_metadata: metadata('toolu_04', 'r3', 'Fixing it.', third),
    content: 'The file /w/src/a.py has been edited.',
    extras: { path: '/w/src/a.py', prev_exist: true },
  },
  {
    id: 14,
    timestamp: at,
    source: 'agent',
    message: 'Fixed: a.py now sets y.',
    action: 'message',
    args: { content: 'Fixed: a.py now sets y.', image_urls: null, wait_for_response: true },
  },
  {
    id: 15,
    timestamp: at,
    source: 'agent',
    message: 'No observation',
    cause: 14,
    observation: 'null',
    content: '',
    extras: {},
  },
];

const text = JSON.stringify(events, null, 4);

const calls = (items: readonly ContextItem[]) =>
  items.flatMap((i) => (i.type === 'ASSISTANT_MESSAGE' ? (i.message.tool_calls ?? []) : []));

describe('an OpenHands trajectory', () => {
  const session = importSession(text, { tokenizer: fakeTokenizer });

  it('is detected and read as the messages OpenHands sends', () => {
    expect(session.format).toBe('openhands');
    expect(itemSummary(session.items)).toEqual([
      ['SYSTEM_PROMPT', true, 'You are OpenHands agent.'],
      ['USER_MESSAGE', false, 'Fix src/a.py'],
      ['ASSISTANT_MESSAGE', false, 'Let me look.'],
      ['TOOL_RESULT', false, 'x = 1\n'],
      ['TOOL_RESULT', false, 'y = 2\n'],
      ['ASSISTANT_MESSAGE', false, ''],
      ['TOOL_RESULT', false, 'F\n1 failed in 0.1s'],
      ['USER_MESSAGE', true, "Parameter 'command' is expected to be one of ['view', 'create']."],
      ['ASSISTANT_MESSAGE', false, 'Fixing it.'],
      ['TOOL_RESULT', false, 'The file /w/src/a.py has been edited.'],
      ['ASSISTANT_MESSAGE', false, 'Fixed: a.py now sets y.'],
    ]);
    // The two actions of response r1 are one message; the calls are what the model wrote.
    expect(
      calls(session.items).map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)]),
    ).toEqual([...first, ...second, ...third]);
    const results = session.items.filter((i) => i.type === 'TOOL_RESULT');
    expect(results.map((r) => r.message.tool_call_id)).toEqual([
      'toolu_01',
      'toolu_02',
      'toolu_03',
      'toolu_04',
    ]);
  });

  it('gives what each tool touches, and the failed command as an open error', () => {
    const facts = session.items.flatMap((i) => (i.type === 'ASSISTANT_MESSAGE' ? callFactsOf(i) : []));
    expect(facts.map((c) => [c.touches, c.command])).toEqual([
      [[{ path: '/w/src/a.py', op: 'read' }], null],
      [[{ path: '/w/src/b.py', op: 'read' }], "cd /w && sed -n '1,40p' src/b.py"],
      [[], 'pytest -q'],
      [[{ path: '/w/src/a.py', op: 'edit' }], null],
    ]);
    expect(collectOpenErrors(session.items).map((e) => [e.tool, e.target])).toEqual([
      ['execute_bash', 'pytest -q'],
    ]);
    // eval reads the same files on its own.
    expect(touchedPaths(session.items)).toEqual(['/w/src/a.py', 'src/b.py']);
  });

  it('marks an error observation that answers a call as failed', () => {
    const failing = events.map((e) =>
      e.id === 13
        ? { ...e, observation: 'error', content: 'ERROR: no such file', extras: { error_id: '' } }
        : e,
    );
    const read = importSession(JSON.stringify(failing), { tokenizer: fakeTokenizer });
    const result = read.items.find((i) => i.type === 'TOOL_RESULT' && i.message.tool_call_id === 'toolu_04');
    expect(result?.origin?.fields.isError).toBe(true);
    expect(collectOpenErrors(read.items).map((e) => e.tool)).toContain('str_replace_editor');
  });

  it("counts the system action's tools in the header, with their parameters; the event keeps them", () => {
    const schema = { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] };
    const tools = [
      {
        type: 'function',
        function: { name: 'execute_bash', description: 'Run a command.', parameters: schema },
      },
      { type: 'function' },
    ];
    const withTools = events.map((e) => (e.id === 0 ? { ...e, args: { ...e.args, tools } } : e));
    const read = importSession(JSON.stringify(withTools), { tokenizer: fakeTokenizer });
    expect(read.items.map((i) => i.type).slice(0, 3)).toEqual([
      'SYSTEM_PROMPT',
      'TOOL_DEFINITIONS',
      'USER_MESSAGE',
    ]);
    const item = read.items[1] as ContextItem;
    expect(item.type === 'TOOL_DEFINITIONS' && item.tools).toEqual([
      {
        type: 'function',
        function: { name: 'execute_bash', description: 'Run a command.', parameters: schema },
      },
    ]);
    expect(item.tokens).toBeGreaterThan(0);
    expect(JSON.parse(exportSession(read))).toEqual(withTools);
    // The fixture's tool has no name: nothing to count, no item.
    expect(session.items.some((i) => i.type === 'TOOL_DEFINITIONS')).toBe(false);
  });

  it('writes back event for event when unchanged, bare or in its wrapper', () => {
    expect(JSON.parse(exportSession(session))).toEqual(events);
    expect(exportSession(session)).toBe(`${text}\n`);
    const wrapped = JSON.stringify({
      instance_id: 'x__y-1',
      instruction: 'Fix',
      history: events,
      metrics: {},
    });
    const read = importSession(wrapped, { tokenizer: fakeTokenizer });
    expect(read.format).toBe('openhands');
    expect(itemSummary(read.items)).toEqual(itemSummary(session.items));
    expect(JSON.parse(exportSession(read))).toEqual(JSON.parse(wrapped));
    const download = JSON.stringify({ trajectory: events });
    expect(JSON.parse(exportSession(importSession(download, { tokenizer: fakeTokenizer })))).toEqual({
      trajectory: events,
    });
  });

  it("reads an evaluation's output.jsonl of one trajectory, and refuses one of several with what to do", () => {
    const output = (id: string) =>
      JSON.stringify({ instance_id: id, instruction: 'Fix', history: events, metrics: {} });
    const one = importSession(`${output('x__y-1')}\n`, {
      tokenizer: fakeTokenizer,
      fileName: 'output.jsonl',
    });
    expect(one.format).toBe('openhands');
    expect(itemSummary(one.items)).toEqual(itemSummary(session.items));
    expect(JSON.parse(exportSession(one))).toEqual(JSON.parse(output('x__y-1')));
    expect(() =>
      importSession(`${output('x__y-1')}\n${output('x__y-2')}\n`, {
        tokenizer: fakeTokenizer,
        fileName: 'output.jsonl',
      }),
    ).toThrow(/an OpenHands evaluation output of 2 trajectories, one a line: .* a file of its own/);
  });

  it('writes a changed context in event shape: a cut result, a dropped turn, a new message and summary', () => {
    const items = session.items
      .filter((i) => !(i.type === 'TOOL_RESULT' && i.message.tool_call_id === 'toolu_04'))
      .filter((i) => !(i.type === 'ASSISTANT_MESSAGE' && i.message.tool_calls?.[0]?.id === 'toolu_04'))
      .map((i) =>
        i.type === 'TOOL_RESULT' && i.message.tool_call_id === 'toolu_03'
          ? { ...i, id: 'cut-3', sourceId: i.id, message: { ...i.message, content: '1 failed [cut]' } }
          : i,
      );
    const added: ContextItem = {
      ...(session.items[1] as ContextItem),
      id: 'new-1',
      origin: undefined,
      message: { role: 'user', content: 'Also run the linter' },
    } as ContextItem;
    const summaryItem = {
      ...(session.items[1] as ContextItem),
      id: 'sum-1',
      type: 'COMPACTION_SUMMARY',
      isMeta: true,
      summarizer: 'extractive',
      origin: undefined,
      message: { role: 'user', content: 'Summary: a.py read.' },
    } as ContextItem;
    const changed = [...items.slice(0, 2), summaryItem, ...items.slice(2), added];
    const out = JSON.parse(exportSession({ items: changed, document: session.document })) as Record<
      string,
      unknown
    >[];
    expect(out.filter((e) => e.id === 12 || e.id === 13)).toEqual([]);
    expect(out.find((e) => e.id === 10)?.content).toBe('1 failed [cut]');
    expect(out.find((e) => e.observation === 'condense')).toMatchObject({ content: 'Summary: a.py read.' });
    // A new item goes after the events of the item before it (the agent's last message, id 14).
    expect(out[out.findIndex((e) => e.id === 14) + 1]).toMatchObject({
      source: 'user',
      action: 'message',
      args: { content: 'Also run the linter' },
    });
    const again = importSession(JSON.stringify(out), { tokenizer: fakeTokenizer });
    expect(itemSummary(again.items)).toEqual(itemSummary(changed));
    // eval replays the whole history: OpenHands' own summaries left out.
    const whole = importSession(JSON.stringify(out), { tokenizer: fakeTokenizer, wholeHistory: true });
    expect(whole.items.some((i) => i.type === 'COMPACTION_SUMMARY')).toBe(false);
  });

  it('reads an older trajectory (flattened arguments, no ids, no metadata) pairing by order', () => {
    const older = [
      { content: 'Please fix the dark mode', images_urls: null, wait_for_response: false, action: 'message' },
      {
        command: 'cat src/App.css',
        thought: 'Let me see the styles.',
        keep_prompt: true,
        action: 'run',
        is_confirmed: 'confirmed',
      },
      {
        content: 'body { color: #000 }',
        command_id: -1,
        command: 'cat src/App.css',
        exit_code: 0,
        observation: 'run',
      },
      {
        code: "open_file('/workspace/src/App.tsx')",
        thought: 'Now the component.',
        action: 'run_ipython',
        kernel_init_code: 'from agentskills import *',
      },
      {
        content: '[File: /workspace/src/App.tsx (10 lines total)]',
        code: "open_file('/workspace/src/App.tsx')",
        observation: 'run_ipython',
      },
      { outputs: {}, thought: 'Done.', action: 'finish' },
    ];
    const t = JSON.stringify({ instruction: 'x', history: older, error: null });
    const read = importSession(t, { tokenizer: fakeTokenizer });
    expect(read.format).toBe('openhands');
    expect(itemSummary(read.items)).toEqual([
      ['USER_MESSAGE', false, 'Please fix the dark mode'],
      ['ASSISTANT_MESSAGE', false, 'Let me see the styles.'],
      ['TOOL_RESULT', false, 'body { color: #000 }'],
      ['ASSISTANT_MESSAGE', false, 'Now the component.'],
      ['TOOL_RESULT', false, '[File: /workspace/src/App.tsx (10 lines total)]'],
      ['ASSISTANT_MESSAGE', false, 'Done.'],
    ]);
    expect(calls(read.items).map((c) => [c.id, c.function.name])).toEqual([
      ['openhands_1', 'execute_bash'],
      ['openhands_3', 'execute_ipython_cell'],
      ['openhands_5', 'finish'],
    ]);
    expect(
      JSON.parse((calls(read.items)[0] as { function: { arguments: string } }).function.arguments),
    ).toEqual({
      command: 'cat src/App.css',
      keep_prompt: true,
      is_confirmed: 'confirmed',
    });
    expect(touchedPaths(read.items)).toEqual(['src/App.css', '/workspace/src/App.tsx']);
    const facts = read.items.flatMap((i) => (i.type === 'ASSISTANT_MESSAGE' ? callFactsOf(i) : []));
    expect(facts[1]?.touches).toEqual([{ path: '/workspace/src/App.tsx', op: 'read' }]);
    expect(JSON.parse(exportSession(read))).toEqual(JSON.parse(t));
  });

  it('gives a call id the prompt-based calling used again another one, pairing each output with its own call', () => {
    // OpenHands numbers the calls of each prompt it converts from toolu_01 again.
    const run = (id: number, call: string, command: string, output: string) => [
      {
        id,
        source: 'agent',
        action: 'run',
        tool_call_metadata: metadata(call, `r${id}`, null, [[call, 'execute_bash', { command }]]),
        args: { command, thought: '' },
      },
      {
        id: id + 1,
        source: 'agent',
        cause: id,
        observation: 'run',
        tool_call_metadata: metadata(call, `r${id}`, null, [[call, 'execute_bash', { command }]]),
        content: output,
        extras: { command, metadata: { exit_code: 0 } },
      },
    ];
    const t = JSON.stringify([
      events[1],
      ...run(2, 'toolu_01', 'ls', 'a.py'),
      ...run(4, 'toolu_01', 'cat a.py', 'x = 1'),
    ]);
    const read = importSession(t, { tokenizer: fakeTokenizer });
    expect(calls(read.items).map((c) => c.id)).toEqual(['toolu_01', 'toolu_01@3']);
    expect(
      read.items.flatMap((i) =>
        i.type === 'TOOL_RESULT' ? [[i.message.tool_call_id, messageText(i.message)]] : [],
      ),
    ).toEqual([
      ['toolu_01', 'a.py'],
      ['toolu_01@3', 'x = 1'],
    ]);
    expect(JSON.parse(exportSession(read))).toEqual(JSON.parse(t));
  });

  it('pairs by order only tool observations, and an output whose cause names no event with the waiting call', () => {
    const older = [
      { content: 'Fix it', action: 'message' },
      { command: 'ls', thought: 'Look.', action: 'run' },
      // A state change between a call and its output answers nothing.
      { content: '', agent_state: 'awaiting_user_input', observation: 'agent_state_changed' },
      { content: 'a.py', command: 'ls', exit_code: 0, observation: 'run' },
    ];
    const read = importSession(JSON.stringify(older), { tokenizer: fakeTokenizer });
    expect(itemSummary(read.items)).toEqual([
      ['USER_MESSAGE', false, 'Fix it'],
      ['ASSISTANT_MESSAGE', false, 'Look.'],
      ['TOOL_RESULT', false, 'a.py'],
    ]);
    const strayCause = [
      events[1],
      { ...events[5], tool_call_metadata: undefined },
      { ...events[6], cause: 999, tool_call_metadata: undefined },
    ];
    const stray = importSession(JSON.stringify(strayCause), { tokenizer: fakeTokenizer });
    expect(stray.items.filter((i) => i.type === 'TOOL_RESULT').map((i) => messageText(i.message))).toEqual([
      (events[6] as { content: string }).content,
    ]);
  });

  it('keeps detection of the other JSON formats', () => {
    expect(detectSessionFormat(JSON.stringify([{ role: 'user', content: 'hi' }])).format).toBe('openai');
    expect(detectSessionFormat('[]').format).toBe('openai');
    expect(detectSessionFormat(JSON.stringify({ history: [{ role: 'system', content: 'x' }] })).format).toBe(
      'swe-agent',
    );
    // SWE-agent's trajectory steps hold both an action and an observation.
    const swe = { trajectory: [{ action: 'ls', observation: 'a.py', thought: '' }], history: [], info: {} };
    expect(detectSessionFormat(JSON.stringify(swe)).format).toBe('swe-agent');
    expect(detectSessionFormat(text).format).toBe('openhands');
  });

  it.each([
    [
      'an event that is no object',
      (e: object[]) => [e[0], 'oops'],
      /^\[1\]: expected an event object, got a string$/,
    ],
    [
      'an event with both an action and an observation',
      (e: object[]) => [e[0], { ...e[1], observation: 'run' }],
      /^\[1\]\.action: expected an action or an observation, got both$/,
    ],
    [
      'a message without content',
      (e: object[]) => [e[0], { ...e[1], args: { wait_for_response: false } }],
      /^\[1\]\.args\.content: expected a string, got missing$/,
    ],
    [
      'tool call metadata without a function name',
      (e: object[]) => [e[0], e[1], { ...e[5], tool_call_metadata: { tool_call_id: 'c' } }],
      /^\[2\]\.tool_call_metadata\.function_name: expected a string, got missing$/,
    ],
    [
      'an event whose id is no number or string',
      (e: object[]) => [e[0], { ...e[1], id: {} }],
      /^\[1\]\.id: expected a number or a string, got an object$/,
    ],
    [
      'an observation whose content is no string',
      (e: object[]) => [e[0], e[1], e[5], { ...e[6], content: null }],
      /^\[3\]\.content: expected a string, got null$/,
    ],
  ])('refuses %s, naming the event and field', (_name, make, message) => {
    const t = JSON.stringify(make(events));
    expect(() => importSession(t, { tokenizer: fakeTokenizer })).toThrow(ImportError);
    expect(() => importSession(t, { tokenizer: fakeTokenizer })).toThrow(message);
    // In a wrapper, the path starts at its list.
    const wrapped = JSON.stringify({ history: make(events) });
    expect(() => importSession(wrapped, { tokenizer: fakeTokenizer })).toThrow(/^history\[\d\]/);
  });

  it('refuses a trajectory with no message in it', () => {
    const t = JSON.stringify([events[4], events[15]]);
    expect(() => importSession(t, { tokenizer: fakeTokenizer })).toThrow(/^it holds no messages$/);
  });
});
