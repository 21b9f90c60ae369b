/**
 * OpenHands V1 event histories (software-agent-sdk): the system prompt and the task are header and
 * first round, the actions of one model response are one assistant message (their thoughts as its
 * text), observations, agent errors and rejections are the results of the calls their
 * `tool_call_id` names, failures are open errors, events the model is not sent are kept aside, and
 * the list is written back as it came, bare or in its wrapper. The events are made up in the shape
 * the SDK writes (`openhands/sdk/event`).
 */
import { describe, expect, it } from 'vitest';
import { callFactsOf } from '../../../src/context/item-facts';
import type { ContextItem } from '../../../src/context/items';
import { collectOpenErrors } from '../../../src/context/open-errors';
import { detectSessionFormat, exportSession, ImportError, importSession } from '../../../src/importers';
import { fakeTokenizer, itemSummary } from '../../support/items-factory';

const at = '2026-02-09T18:28:59.801826';

function action(id: string, response: string, call: string, tool: string, args: object, thought: string[]) {
  return {
    id,
    timestamp: at,
    source: 'agent',
    thought: thought.map((text) => ({ cache_prompt: false, type: 'text', text })),
    thinking_blocks: [],
    action: { ...args, kind: 'SomeAction' },
    tool_name: tool,
    tool_call_id: call,
    tool_call: { id: call, name: tool, arguments: JSON.stringify(args), origin: 'completion' },
    llm_response_id: response,
    security_risk: 'LOW',
    kind: 'ActionEvent',
  };
}

function observation(id: string, call: string, tool: string, observed: object) {
  return {
    id,
    timestamp: at,
    source: 'environment',
    tool_name: tool,
    tool_call_id: call,
    observation: observed,
    action_id: `action-of-${call}`,
    kind: 'ObservationEvent',
  };
}

const text = (t: string) => [{ cache_prompt: false, type: 'text', text: t }];

const events = [
  {
    id: 'e0',
    timestamp: at,
    source: 'agent',
    system_prompt: { cache_prompt: false, type: 'text', text: 'You are OpenHands agent.' },
    tools: [{ name: 'terminal' }, { name: 'file_editor' }],
    kind: 'SystemPromptEvent',
  },
  {
    id: 'e1',
    timestamp: at,
    source: 'user',
    llm_message: { role: 'user', content: text('Fix src/a.py'), thinking_blocks: [] },
    activated_skills: [],
    extended_content: [],
    kind: 'MessageEvent',
  },
  action('e2', 'r1', 'call_1', 'file_editor', { command: 'view', path: '/w/src/a.py' }, ['Let me look.']),
  action('e3', 'r1', 'call_2', 'terminal', { command: 'cd /w && cat src/b.py' }, []),
  observation('e4', 'call_1', 'file_editor', {
    kind: 'FileEditorObservation',
    content: text('x = 1\n'),
    is_error: false,
  }),
  observation('e5', 'call_2', 'terminal', {
    kind: 'TerminalObservation',
    content: text('y = 2\n'),
    is_error: false,
    exit_code: 0,
  }),
  action('e6', 'r2', 'call_3', 'terminal', { command: 'pytest -q' }, ['Run the tests.', 'Then fix.']),
  // An earlier SDK version's observation: its text in `output`, the exit code in its metadata.
  observation('e7', 'call_3', 'terminal', {
    kind: 'ExecuteBashObservation',
    output: 'F\n1 failed',
    error: false,
    exit_code: null,
    metadata: { exit_code: 1, pid: -1 },
  }),
  { id: 'e8', timestamp: at, source: 'user', kind: 'CondensationRequest' },
  {
    id: 'e9',
    timestamp: at,
    source: 'agent',
    forgotten_event_ids: ['e2', 'e4'],
    summary: 'Read a.py.',
    summary_offset: 1,
    kind: 'Condensation',
  },
  action(
    'e10',
    'r3',
    'call_4',
    'file_editor',
    { command: 'str_replace', path: '/w/src/a.py', old_str: 'x', new_str: 'y' },
    [],
  ),
  {
    id: 'e11',
    timestamp: at,
    source: 'agent',
    tool_name: 'file_editor',
    tool_call_id: 'call_4',
    error: 'old_str `x` not found',
    kind: 'AgentErrorEvent',
  },
  action('e12', 'r4', 'call_5', 'terminal', { command: 'rm -rf build' }, []),
  {
    id: 'e13',
    timestamp: at,
    source: 'environment',
    tool_name: 'terminal',
    tool_call_id: 'call_5',
    action_id: 'e12',
    rejection_reason: 'Not now',
    rejection_source: 'user',
    kind: 'UserRejectObservation',
  },
  // An observation of a call the history does not hold.
  observation('e14', 'call_9', 'terminal', {
    kind: 'TerminalObservation',
    content: text('late'),
    is_error: false,
  }),
  {
    id: 'e15',
    timestamp: at,
    source: 'environment',
    key: 'execution_status',
    value: 'finished',
    kind: 'ConversationStateUpdateEvent',
  },
  {
    id: 'e16',
    timestamp: at,
    source: 'agent',
    llm_message: { role: 'assistant', content: text('Fixed: a.py now sets y.') },
    llm_response_id: 'r5',
    activated_skills: [],
    extended_content: [],
    kind: 'MessageEvent',
  },
];

const source = JSON.stringify(events, null, 2);

const calls = (items: readonly ContextItem[]) =>
  items.flatMap((i) => (i.type === 'ASSISTANT_MESSAGE' ? (i.message.tool_calls ?? []) : []));

describe('an OpenHands V1 (software-agent-sdk) event history', () => {
  const session = importSession(source, { tokenizer: fakeTokenizer });

  it('is detected, bare or in its wrapper, and read as the messages the SDK sends', () => {
    expect(detectSessionFormat(source)).toEqual({ format: 'openhands' });
    expect(detectSessionFormat(JSON.stringify({ instance_id: 'x', history: events }))).toEqual({
      format: 'openhands',
    });
    expect(session.format).toBe('openhands');
    expect(itemSummary(session.items)).toEqual([
      ['SYSTEM_PROMPT', true, 'You are OpenHands agent.'],
      ['TOOL_DEFINITIONS', false, ''],
      ['USER_MESSAGE', false, 'Fix src/a.py'],
      ['ASSISTANT_MESSAGE', false, 'Let me look.'],
      ['TOOL_RESULT', false, 'x = 1\n'],
      ['TOOL_RESULT', false, 'y = 2\n'],
      ['ASSISTANT_MESSAGE', false, 'Run the tests.\nThen fix.'],
      ['TOOL_RESULT', false, 'F\n1 failed'],
      ['ASSISTANT_MESSAGE', false, ''],
      ['TOOL_RESULT', false, 'old_str `x` not found'],
      ['ASSISTANT_MESSAGE', false, ''],
      ['TOOL_RESULT', false, 'Action rejected: Not now'],
      ['ASSISTANT_MESSAGE', false, 'Fixed: a.py now sets y.'],
    ]);
    // The two actions of response r1 are one message; the calls are what the model wrote.
    expect(calls(session.items).map((c) => [c.id, c.function.name])).toEqual([
      ['call_1', 'file_editor'],
      ['call_2', 'terminal'],
      ['call_3', 'terminal'],
      ['call_4', 'file_editor'],
      ['call_5', 'terminal'],
    ]);
    expect(JSON.parse(calls(session.items)[3]?.function.arguments ?? '')).toEqual({
      command: 'str_replace',
      path: '/w/src/a.py',
      old_str: 'x',
      new_str: 'y',
    });
    const results = session.items.filter((i) => i.type === 'TOOL_RESULT');
    expect(results.map((r) => [r.message.tool_call_id, r.origin?.fields.isError === true])).toEqual([
      ['call_1', false],
      ['call_2', false],
      ['call_3', true],
      ['call_4', true],
      ['call_5', true],
    ]);
  });

  it('gives what each tool touches, and the failures as open errors', () => {
    const facts = session.items.flatMap((i) => (i.type === 'ASSISTANT_MESSAGE' ? callFactsOf(i) : []));
    expect(facts.map((c) => c.touches)).toEqual([
      [{ path: '/w/src/a.py', op: 'read' }],
      [{ path: '/w/src/b.py', op: 'read' }],
      [],
      [{ path: '/w/src/a.py', op: 'edit' }],
      [],
    ]);
    expect(collectOpenErrors(session.items).map((e) => [e.tool, e.target])).toEqual([
      ['terminal', 'pytest -q'],
      ['file_editor', '/w/src/a.py'],
      ['terminal', 'rm -rf build'],
    ]);
  });

  it("counts the system prompt's tools in the header: their names and descriptions, as the SDK saves them", () => {
    const tools = session.items.find((i) => i.type === 'TOOL_DEFINITIONS');
    expect(tools?.type === 'TOOL_DEFINITIONS' && tools.tools.map((t) => t.function.name)).toEqual([
      'terminal',
      'file_editor',
    ]);
    // The SDK's own records: a title, a description, the action's type; no parameters.
    const described = [
      {
        ...events[0],
        tools: [
          { title: 'terminal', description: 'Run a command.', action_type: 'TerminalAction', kind: 'T' },
          { description: 'no name: left out' },
          'not a tool',
        ],
      },
      ...events.slice(1),
    ];
    const read = importSession(JSON.stringify(described), { tokenizer: fakeTokenizer });
    const item = read.items[1] as ContextItem;
    expect(item.type === 'TOOL_DEFINITIONS' && item.tools).toEqual([
      { type: 'function', function: { name: 'terminal', description: 'Run a command.' } },
    ]);
    expect(item.tokens).toBeGreaterThan(0);
    // The event keeps them: the file is written back as it was.
    expect(JSON.parse(exportSession(read))).toEqual(described);
    // Each system prompt's own tools, after it (a delegate's prompt lists others).
    const twice = [
      { ...events[0], tools: [] },
      ...events.slice(1, 2),
      { ...events[0], id: 'e0b', tools: [{ title: 'browser', description: 'Browse.' }] },
      ...events.slice(2),
    ];
    const both = importSession(JSON.stringify(twice), { tokenizer: fakeTokenizer });
    expect(both.items.slice(0, 4).map((i) => [i.type, i.type === 'TOOL_DEFINITIONS' ? i.id : ''])).toEqual([
      ['SYSTEM_PROMPT', ''],
      ['USER_MESSAGE', ''],
      ['SYSTEM_PROMPT', ''],
      ['TOOL_DEFINITIONS', `${both.items[0]?.id.replace(/\d+$/, '')}tools.1`],
    ]);
    expect(JSON.parse(exportSession(both))).toEqual(twice);
    // No tools: no item.
    const bare = importSession(JSON.stringify([{ ...events[0], tools: [] }, ...events.slice(1)]), {
      tokenizer: fakeTokenizer,
    });
    expect(bare.items.some((i) => i.type === 'TOOL_DEFINITIONS')).toBe(false);
  });

  it('writes back event for event when unchanged, bare, in its wrapper or as an output.jsonl line', () => {
    expect(exportSession(session)).toBe(`${source}\n`);
    const wrapped = JSON.stringify({
      instance_id: 'x__y-1',
      instruction: 'Fix',
      history: events,
      metrics: null,
    });
    const read = importSession(wrapped, { tokenizer: fakeTokenizer });
    expect(itemSummary(read.items)).toEqual(itemSummary(session.items));
    expect(exportSession(read)).toBe(`${wrapped}\n`);
    const line = importSession(`${wrapped}\n`, { tokenizer: fakeTokenizer, fileName: 'output.jsonl' });
    expect(itemSummary(line.items)).toEqual(itemSummary(session.items));
    expect(JSON.parse(exportSession(line))).toEqual(JSON.parse(wrapped));
  });

  it('writes a changed context in event shape: a cut result and arguments, a dropped turn, a new message and summary', () => {
    const items = session.items
      .filter((i) => !(i.type === 'TOOL_RESULT' && i.message.tool_call_id === 'call_5'))
      .filter((i) => !(i.type === 'ASSISTANT_MESSAGE' && i.message.tool_calls?.[0]?.id === 'call_5'))
      .map((i) => {
        if (i.type === 'TOOL_RESULT' && i.message.tool_call_id === 'call_3')
          return { ...i, id: 'cut-3', sourceId: i.id, message: { ...i.message, content: 'F [cut]' } };
        if (i.type === 'ASSISTANT_MESSAGE' && i.message.tool_calls?.[0]?.id === 'call_1') {
          const [one, two] = i.message.tool_calls;
          const cut = { ...one!, function: { ...one!.function, arguments: '{"command": "view"}' } };
          return {
            ...i,
            id: 'cut-1',
            sourceId: i.id,
            message: { ...i.message, content: 'Look.', tool_calls: [cut, two!] },
          };
        }
        return i;
      });
    const base = session.items[2] as ContextItem;
    const added = {
      ...base,
      id: 'new-1',
      origin: undefined,
      message: { role: 'user', content: 'Also lint' },
    } as ContextItem;
    const summaryItem = {
      ...base,
      id: 'sum-1',
      type: 'COMPACTION_SUMMARY',
      isMeta: true,
      summarizer: 'llm',
      origin: undefined,
      message: {
        role: 'user',
        content: '[System] Context cleared. Summary of previous conversation:\nRead a.py.',
      },
    } as ContextItem;
    const changed = [...items.slice(0, 3), summaryItem, ...items.slice(3), added];
    const out = JSON.parse(exportSession({ items: changed, document: session.document })) as {
      id?: string;
      observation?: { output?: string };
    }[];
    expect(out.filter((e) => e.id === 'e12' || e.id === 'e13')).toEqual([]);
    expect(out.find((e) => e.id === 'e7')?.observation?.output).toBe('F [cut]');
    expect(out.find((e) => e.id === 'e2')).toMatchObject({
      thought: [{ type: 'text', text: 'Look.' }],
      tool_call: { id: 'call_1', arguments: '{"command": "view"}' },
    });
    // The kept-aside events stay in their places.
    expect(out.map((e) => e.id).filter((id) => ['e8', 'e9', 'e14', 'e15'].includes(id ?? ''))).toEqual([
      'e8',
      'e9',
      'e14',
      'e15',
    ]);
    expect(out.at(-1)).toMatchObject({ kind: 'MessageEvent', source: 'user', llm_message: { role: 'user' } });
    const again = importSession(JSON.stringify(out), { tokenizer: fakeTokenizer });
    expect(itemSummary(again.items)).toEqual(itemSummary(changed));
    expect(again.items.find((i) => i.id.endsWith(':2'))?.type).toBe('COMPACTION_SUMMARY');
  });

  it('gives a call id used again another one, pairing each result with its own call; the file keeps its ids', () => {
    const repeated = [
      ...events.slice(0, 2),
      action('a1', 'r1', 'call_1', 'terminal', { command: 'ls' }, []),
      observation('o1', 'call_1', 'terminal', { content: text('a.py'), is_error: false }),
      action('a2', 'r2', 'call_1', 'terminal', { command: 'ls -a' }, []),
      observation('o2', 'call_1', 'terminal', { content: text('.git a.py'), is_error: false }),
    ];
    const read = importSession(JSON.stringify(repeated), { tokenizer: fakeTokenizer });
    expect(calls(read.items).map((c) => c.id)).toEqual(['call_1', 'call_1@4']);
    expect(read.items.filter((i) => i.type === 'TOOL_RESULT').map((r) => r.message.tool_call_id)).toEqual([
      'call_1',
      'call_1@4',
    ]);
    expect(JSON.parse(exportSession(read))).toEqual(repeated);
  });

  it('pairs results of calls sharing an id oldest first, and writes a call kept whole with the id the file had', () => {
    // Two calls of one id before either result (ids numbered from :0 again by the model).
    const parallel = [
      ...events.slice(0, 2),
      action('a1', 'r1', 'functions.terminal:0', 'terminal', { command: 'ls' }, []),
      action('a2', 'r2', 'functions.terminal:0', 'terminal', { command: 'pwd' }, []),
      observation('o1', 'functions.terminal:0', 'terminal', { content: text('a.py'), is_error: false }),
      observation('o2', 'functions.terminal:0', 'terminal', { content: text('/w'), is_error: false }),
    ];
    const read = importSession(JSON.stringify(parallel), { tokenizer: fakeTokenizer });
    const results = read.items.filter((i) => i.type === 'TOOL_RESULT');
    expect(results.map((r) => [r.message.tool_call_id, r.message.content])).toEqual([
      ['functions.terminal:0', 'a.py'],
      ['functions.terminal:0@3', '/w'],
    ]);
    // A call whose event is kept whole (arguments not a string: not rebuilt exactly), then cut: the
    // event written for it keeps the file's id, so its result still answers it when read again.
    const odd = parallel.map((e) => {
      if (e.id !== 'a2') return e;
      const call = e as ReturnType<typeof action>;
      return { ...call, thought: null, tool_call: { ...call.tool_call, arguments: { command: 'pwd' } } };
    });
    const session2 = importSession(JSON.stringify(odd), { tokenizer: fakeTokenizer });
    const cut = session2.items.map((i) =>
      i.type === 'ASSISTANT_MESSAGE' && i.message.tool_calls?.[0]?.id === 'functions.terminal:0@3'
        ? {
            ...i,
            message: {
              ...i.message,
              tool_calls: [{ ...i.message.tool_calls[0]!, function: { name: 'terminal', arguments: '{}' } }],
            },
          }
        : i,
    );
    const out = JSON.parse(exportSession({ items: cut, document: session2.document })) as {
      tool_call?: { id: string; arguments: unknown };
    }[];
    expect(out[3]?.tool_call).toMatchObject({ id: 'functions.terminal:0', arguments: '{}' });
    const again = importSession(JSON.stringify(out), { tokenizer: fakeTokenizer });
    expect(again.items.filter((i) => i.type === 'TOOL_RESULT')).toHaveLength(2);
    // A thought the SDK wrote as null stays null.
    expect(JSON.parse(exportSession(session2))).toEqual(odd);
  });

  it('writes a changed result back where the model reads it, whatever the event held', () => {
    const shapes = [
      ...events.slice(0, 2),
      action('a1', 'r1', 'call_1', 'terminal', { command: 'rm -rf build' }, []),
      { ...events[13], tool_call_id: 'call_1', rejection_reason: undefined },
      action('a2', 'r2', 'call_2', 'terminal', { command: 'ls' }, []),
      observation('o2', 'call_2', 'terminal', { kind: 'X', is_error: false }),
      // Between SDK versions: an empty `content` beside the `output` that holds the text.
      action('a3', 'r3', 'call_3', 'terminal', { command: 'pwd' }, []),
      observation('o3', 'call_3', 'terminal', { kind: 'X', content: [], output: '/w\n' }),
      action('a4', 'r4', 'call_4', 'terminal', { command: 'ls' }, []),
      observation('o4', 'call_4', 'terminal', {
        kind: 'X',
        content: [{ type: 'image', url: 'x' }, ...text('')],
        output: 'a.py\n',
      }),
    ];
    const read = importSession(JSON.stringify(shapes), { tokenizer: fakeTokenizer });
    expect(
      itemSummary(read.items)
        .slice(4)
        .map(([, , t]) => t),
    ).toEqual(['Action rejected: User rejected the action', '', '', '', '/w\n', '', 'a.py\n']);
    expect(JSON.parse(exportSession(read))).toEqual(JSON.parse(JSON.stringify(shapes)));
    const cleared = read.items.map((i) =>
      i.type === 'TOOL_RESULT' ? { ...i, message: { ...i.message, content: '[cleared]' } } : i,
    );
    const out = exportSession({ items: cleared, document: read.document });
    const again = importSession(out, { tokenizer: fakeTokenizer });
    expect(again.items.filter((i) => i.type === 'TOOL_RESULT').map((r) => r.message.content)).toEqual([
      'Action rejected: [cleared]',
      '[cleared]',
      '[cleared]',
      '[cleared]',
    ]);
    const written = JSON.parse(out) as {
      id?: string;
      observation?: { content?: unknown; output?: unknown };
    }[];
    expect(written.find((e) => e.id === 'o3')?.observation).toMatchObject({
      content: [],
      output: '[cleared]',
    });
    expect(written.find((e) => e.id === 'o4')?.observation).toMatchObject({
      content: [{ type: 'image', url: 'x' }, ...text('')],
      output: '[cleared]',
    });
  });

  it('refuses a malformed event naming it and the field, and a history with no message', () => {
    const without = events.map((e) => (e.id === 'e6' ? { ...e, tool_call: undefined } : e));
    expect(() => importSession(JSON.stringify(without), { tokenizer: fakeTokenizer })).toThrow(
      /\[6\]\.tool_call: expected a tool call object/,
    );
    const numbered = events.map((e) =>
      e.id === 'e1' ? { ...e, llm_message: { role: 'user', content: 7 } } : e,
    );
    try {
      importSession(JSON.stringify({ history: numbered }), { tokenizer: fakeTokenizer });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ImportError);
      expect((err as ImportError).field).toBe('history[1].llm_message.content');
    }
    expect(() =>
      importSession(JSON.stringify([events[8], events[15]]), { tokenizer: fakeTokenizer }),
    ).toThrow(/holds no messages/);
    // An event without its kind, or no object: named, with what it should be.
    for (const [odd, field] of [
      [{ source: 'agent', note: 'x' }, '[2].kind'],
      [null, '[2]'],
    ] as const) {
      try {
        importSession(JSON.stringify([events[0], events[1], odd]), { tokenizer: fakeTokenizer });
        expect.unreachable();
      } catch (err) {
        expect((err as ImportError).field).toBe(field);
        expect((err as ImportError).message).toMatch(/an OpenHands V1 event/);
      }
    }
  });
});
