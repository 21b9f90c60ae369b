/**
 * Gemini CLI's chat recordings: a JSON record or, from v0.39, JSONL (metadata, then messages
 * written again when they change, `$set` and `$rewindTo` lines). Read with their calls, results,
 * thoughts and errors, the CLI's notices left out; written back deep-equal (JSONL line for line)
 * when unchanged and readable when changed. The records are made up in the shapes the CLI writes.
 */
import { describe, expect, it } from 'vitest';
import { collectArtifactTrail, trailPaths } from '../../../src/context/artifact-trail';
import type { ContextItem } from '../../../src/context/items';
import { collectOpenErrors } from '../../../src/context/open-errors';
import { exportSession, ImportError, importSession } from '../../../src/importers';
import { jsonlValues } from '../../support/files';
import { fakeTokenizer, itemSummary } from '../../support/items-factory';

const response = (id: string, name: string, body: Record<string, unknown>) => [
  { functionResponse: { id, name, response: body } },
];
const messages = [
  {
    id: 'u1',
    timestamp: '2026-03-18T02:48:35.570Z',
    type: 'user',
    content: [{ text: 'Fix the failing test in src/app.ts' }],
  },
  {
    id: 'g1',
    timestamp: '2026-03-18T02:48:41.628Z',
    type: 'gemini',
    content: 'Reading the file and running the tests.',
    thoughts: [
      { subject: 'Planning', description: 'Read first, then test.', timestamp: '2026-03-18T02:48:40.182Z' },
    ],
    toolCalls: [
      {
        id: 'read_file_1',
        name: 'read_file',
        args: { file_path: 'src/app.ts' },
        result: response('read_file_1', 'read_file', { output: 'export const x = 1;' }),
        status: 'success',
        timestamp: '2026-03-18T02:48:41.700Z',
        displayName: 'ReadFile',
      },
      {
        id: 'run_shell_command_2',
        name: 'run_shell_command',
        args: { command: 'npm test' },
        result: response('run_shell_command_2', 'run_shell_command', { error: 'Error: expected 2, got 1' }),
        status: 'error',
        timestamp: '2026-03-18T02:48:42.000Z',
      },
    ],
    tokens: { input: 100, output: 20, cached: 0, total: 120 },
    model: 'gemini-2.5-pro',
  },
  { id: 'i1', timestamp: '2026-03-18T02:49:00.000Z', type: 'info', content: 'Request cancelled.' },
  { id: 'u2', timestamp: '2026-03-18T02:50:00.000Z', type: 'user', content: 'use the UTC date' },
  { id: 'g2', timestamp: '2026-03-18T02:50:05.000Z', type: 'gemini', content: 'Done.', thoughts: [] },
];
const record = {
  sessionId: 'daa0ceb2',
  projectHash: 'abc123',
  startTime: '2026-03-18T02:48:35.000Z',
  lastUpdated: '2026-03-18T02:50:05.000Z',
  messages,
  kind: 'main',
};

describe('a Gemini CLI chat recording', () => {
  const text = JSON.stringify(record, null, 2);
  const session = importSession(text, { tokenizer: fakeTokenizer });

  it('is read as its user and gemini messages, each call answered by its result, the notices left out', () => {
    expect(session.format).toBe('gemini');
    expect(itemSummary(session.items)).toEqual([
      ['USER_MESSAGE', false, 'Fix the failing test in src/app.ts'],
      ['ASSISTANT_MESSAGE', false, 'Reading the file and running the tests.'],
      ['TOOL_RESULT', false, 'export const x = 1;'],
      ['TOOL_RESULT', false, 'Error: expected 2, got 1'],
      ['USER_MESSAGE', false, 'use the UTC date'],
      ['ASSISTANT_MESSAGE', false, 'Done.'],
    ]);
    expect(session.items[1]).toMatchObject({
      message: {
        reasoning_content: 'Planning: Read first, then test.',
        tool_calls: [
          { id: 'read_file_1', function: { name: 'read_file', arguments: '{"file_path":"src/app.ts"}' } },
          {
            id: 'run_shell_command_2',
            function: { name: 'run_shell_command', arguments: '{"command":"npm test"}' },
          },
        ],
      },
    });
    expect(session.items.map((i) => i.round)).toEqual([1, 1, 1, 1, 2, 2]);
  });

  it('gives the files their operations and the failed call as an open error', () => {
    expect(trailPaths(collectArtifactTrail(session.items))).toEqual(['src/app.ts']);
    expect(collectOpenErrors(session.items)).toMatchObject([
      { tool: 'run_shell_command', text: expect.stringContaining('expected 2, got 1') },
    ]);
  });

  it('writes back deep-equal when unchanged', () => {
    expect(JSON.parse(exportSession(session))).toEqual(record);
    expect(exportSession(session)).toBe(`${text}\n`);
  });

  it('written back after a change (a result cut, a message dropped, a summary added), reads back as the changed items', () => {
    const cut = session.items.map((item) =>
      item.type === 'TOOL_RESULT' && item.message.tool_call_id === 'read_file_1'
        ? { ...item, message: { ...item.message, content: 'export const [cut]' } }
        : item,
    );
    const kept = cut.filter((i) => !(i.type === 'USER_MESSAGE' && i.round === 2));
    const summary = {
      ...(session.items[0] as ContextItem),
      id: 'summary-1',
      type: 'COMPACTION_SUMMARY',
      origin: undefined,
      summarizer: 'extractive',
      message: { role: 'user', content: '[summary] earlier work' },
    } as ContextItem;
    const written = JSON.parse(
      exportSession({ items: [summary, ...kept.slice(1)], document: session.document }),
    ) as {
      messages: Record<string, unknown>[];
    };
    // The notice stays; the dropped message is gone; the summary is a user message of its own.
    expect(written.messages.map((m) => m.type)).toEqual(['user', 'gemini', 'info', 'gemini']);
    expect(written.messages[0]?.content).toEqual([{ text: '[summary] earlier work' }]);
    const calls = written.messages[1]?.toolCalls as Record<string, unknown>[];
    expect(calls[0]?.result).toEqual(response('read_file_1', 'read_file', { output: 'export const [cut]' }));
    // The call that was not changed keeps its result as it was.
    expect(calls[1]).toEqual(messages[1]?.toolCalls?.[1]);
    const again = importSession(JSON.stringify(written), { tokenizer: fakeTokenizer });
    expect(itemSummary(again.items).map((r) => r[2])).toEqual([
      '[summary] earlier work',
      'Reading the file and running the tests.',
      'export const [cut]',
      'Error: expected 2, got 1',
      'Done.',
    ]);
  });
});

describe('a Gemini CLI chat recording as JSONL', () => {
  const { messages: _, ...meta } = record;
  const lines = [
    { ...meta, messages: [] },
    messages[0],
    // The message written again once its calls finished: the last copy counts.
    { ...messages[1], toolCalls: [], content: '' },
    { $set: { lastUpdated: '2026-03-18T02:48:42.000Z' } },
    messages[1],
    messages[3],
    { id: 'g9', timestamp: '2026-03-18T02:50:01.000Z', type: 'gemini', content: 'A reply the user rewound.' },
    { $rewindTo: 'g9' },
    messages[4],
  ];
  const text = lines.map((l) => JSON.stringify(l)).join('\n');
  const session = importSession(text, { tokenizer: fakeTokenizer, fileName: 'session-1.jsonl' });

  it('folds the lines as the CLI does: the last copy of a message, the rewound one gone', () => {
    expect(session.format).toBe('gemini');
    expect(itemSummary(session.items).map((r) => r[2])).toEqual([
      'Fix the failing test in src/app.ts',
      'Reading the file and running the tests.',
      'export const x = 1;',
      'Error: expected 2, got 1',
      'use the UTC date',
      'Done.',
    ]);
  });

  it('writes back line for line when unchanged, and as its metadata and messages when changed', () => {
    expect(jsonlValues(exportSession(session))).toEqual(lines);
    const kept = session.items.slice(0, 4);
    const written = jsonlValues(exportSession({ items: kept, document: session.document }));
    expect(written[0]).toMatchObject({
      sessionId: 'daa0ceb2',
      lastUpdated: '2026-03-18T02:48:42.000Z',
      messages: [],
    });
    expect(written.slice(1)).toEqual([messages[0], messages[1]]);
  });

  it('a $set that replaces the messages (the CLI’s compression) is honoured on import, left out for the whole history', () => {
    const compressed = [
      ...lines,
      { $set: { messages: [{ id: 's1', type: 'user', content: 'summary of it all' }] } },
    ];
    const jsonl = compressed.map((l) => JSON.stringify(l)).join('\n');
    const imported = importSession(jsonl, { tokenizer: fakeTokenizer, fileName: 'session-1.jsonl' });
    expect(itemSummary(imported.items).map((r) => r[2])).toEqual(['summary of it all']);
    const whole = importSession(jsonl, {
      tokenizer: fakeTokenizer,
      fileName: 'session-1.jsonl',
      wholeHistory: true,
    });
    expect(whole.items).toHaveLength(6);
  });

  it('names a bad line, and a bad call by its field', () => {
    const bad = [...lines.slice(0, 2), { nothing: true }].map((l) => JSON.stringify(l)).join('\n');
    expect(() => importSession(bad, { tokenizer: fakeTokenizer, fileName: 's.jsonl' })).toThrow(ImportError);
    expect(() => importSession(bad, { tokenizer: fakeTokenizer, fileName: 's.jsonl' })).toThrow(/line 3/);
    const badCall = structuredClone(record);
    (badCall.messages[1]?.toolCalls?.[0] as { id: unknown }).id = 7;
    expect(() => importSession(JSON.stringify(badCall), { tokenizer: fakeTokenizer })).toThrow(
      /messages\[1\]\.toolCalls\[0\]: expected a tool call with a string id and name/,
    );
  });
});

/** A chat as `/chat share` writes it: the API's `Content`, calls without ids, responses with them. */
const contents = [
  {
    role: 'user',
    parts: [{ text: 'This is the Gemini CLI. We are setting up the context for our chat.\nOS: linux' }],
  },
  { role: 'model', parts: [{ text: 'Got it. Thanks for the context!' }] },
  { role: 'user', parts: [{ text: 'Fix the failing test in src/app.ts' }] },
  {
    role: 'model',
    parts: [
      { text: 'Checking the file first.', thought: true },
      { functionCall: { name: 'read_file', args: { file_path: 'src/app.ts' } }, thoughtSignature: 'sig1' },
      { functionCall: { name: 'run_shell_command', args: { command: 'npm test' } } },
    ],
  },
  {
    role: 'user',
    parts: [
      {
        functionResponse: {
          id: 'run_shell_command-1',
          name: 'run_shell_command',
          response: { error: 'Error: expected 2' },
        },
      },
      {
        functionResponse: {
          id: 'read_file-1',
          name: 'read_file',
          response: { output: 'export const x = 1;' },
        },
      },
    ],
  },
  { role: 'model', parts: [{ text: 'The constant is wrong.' }, { thoughtSignature: 'sig2' }] },
];

describe('a Gemini chat saved as the API’s Content', () => {
  const session = importSession(JSON.stringify(contents, null, 2), { tokenizer: fakeTokenizer });

  it('is read with its calls, each response answering the call of its name, the CLI’s setup meta', () => {
    expect(session.format).toBe('gemini');
    expect(itemSummary(session.items)).toEqual([
      [
        'USER_MESSAGE',
        true,
        'This is the Gemini CLI. We are setting up the context for our chat.\nOS: linux',
      ],
      ['ASSISTANT_MESSAGE', false, 'Got it. Thanks for the context!'],
      ['USER_MESSAGE', false, 'Fix the failing test in src/app.ts'],
      ['ASSISTANT_MESSAGE', false, ''],
      ['TOOL_RESULT', false, 'Error: expected 2'],
      ['TOOL_RESULT', false, 'export const x = 1;'],
      ['ASSISTANT_MESSAGE', false, 'The constant is wrong.'],
    ]);
    const calls =
      session.items[3]?.type === 'ASSISTANT_MESSAGE' ? (session.items[3].message.tool_calls ?? []) : [];
    const answered = session.items.flatMap((i) => (i.type === 'TOOL_RESULT' ? [i.message.tool_call_id] : []));
    expect(answered).toEqual([calls[1]?.id, calls[0]?.id]);
    expect(session.items[3]).toMatchObject({ message: { reasoning_content: 'Checking the file first.' } });
    expect(collectOpenErrors(session.items)).toMatchObject([{ tool: 'run_shell_command' }]);
  });

  it('writes back deep-equal when unchanged, bare or as a checkpoint', () => {
    expect(JSON.parse(exportSession(session))).toEqual(contents);
    const checkpoint = { history: contents, authType: 'oauth-personal' };
    const saved = importSession(JSON.stringify(checkpoint), { tokenizer: fakeTokenizer });
    expect(saved.format).toBe('gemini');
    expect(JSON.parse(exportSession(saved))).toEqual(checkpoint);
  });

  it('written back after a change, parts change in place and a part no item stands for stays', () => {
    const changed = session.items
      .map((item) =>
        item.type === 'TOOL_RESULT' && item.message.content.startsWith('export')
          ? { ...item, message: { ...item.message, content: 'export [cut]' } }
          : item,
      )
      .map((item) =>
        item.type === 'ASSISTANT_MESSAGE' && item.message.content === 'The constant is wrong.'
          ? { ...item, message: { ...item.message, content: 'The constant is wrong (x).' } }
          : item,
      );
    const written = JSON.parse(
      exportSession({ items: changed, document: session.document }),
    ) as typeof contents;
    expect(written[4]?.parts[1]).toEqual({
      functionResponse: { id: 'read_file-1', name: 'read_file', response: { output: 'export [cut]' } },
    });
    expect(written[4]?.parts[0]).toEqual(contents[4]?.parts[0]);
    expect(written[5]?.parts).toEqual([{ text: 'The constant is wrong (x).' }, { thoughtSignature: 'sig2' }]);
    const again = importSession(JSON.stringify(written), { tokenizer: fakeTokenizer });
    expect(itemSummary(again.items).map((r) => r[2])).toContain('export [cut]');
    expect(again.items.filter((i) => i.type === 'TOOL_RESULT')).toHaveLength(2);
  });
});

describe('Gemini chats written back after a compaction, and read as the CLI reads them', () => {
  const session = importSession(JSON.stringify(record), { tokenizer: fakeTokenizer });
  const appended = (text: string): ContextItem =>
    ({
      ...(session.items[0] as ContextItem),
      id: 'new-user',
      origin: undefined,
      message: { role: 'user', content: text },
    }) as ContextItem;

  it('a user message appended after a gemini message leaves its results as they were', () => {
    const written = JSON.parse(
      exportSession({
        items: [...session.items.slice(0, 4), appended('now fix it')],
        document: session.document,
      }),
    ) as { messages: Record<string, unknown>[] };
    expect(written.messages[1]).toEqual(messages[1]);
    expect(written.messages.map((m) => m.id)).toEqual(['u1', 'g1', 'durable-compaction-1', 'i1']);
    expect(written.messages[2]).toMatchObject({ type: 'user', content: [{ text: 'now fix it' }] });
  });

  it('a call whose arguments a cut made no JSON keeps what they still hold as its args', () => {
    const cut = session.items.map((item) =>
      item.type === 'ASSISTANT_MESSAGE' && item.message.tool_calls
        ? {
            ...item,
            message: {
              ...item.message,
              tool_calls: item.message.tool_calls.map((c, k) =>
                k === 0
                  ? {
                      ...c,
                      function: {
                        ...c.function,
                        arguments:
                          '{"file_path":"src/app.ts","mo\n[TRUNCATED original~90 tokens; recall #abc]',
                      },
                    }
                  : c,
              ),
            },
          }
        : item,
    );
    const written = JSON.parse(exportSession({ items: cut, document: session.document })) as {
      messages: Record<string, unknown>[];
    };
    const calls = written.messages[1]?.toolCalls as Record<string, unknown>[];
    expect(calls[0]?.args).toEqual({ file_path: 'src/app.ts\n[TRUNCATED original~90 tokens; recall #abc]' });
    expect(calls[1]?.args).toEqual({ command: 'npm test' });
  });

  it('each call’s result is its own response, though the CLI recorded the whole turn’s after resuming; a null result is none', () => {
    const both = [
      ...response('read_file_1', 'read_file', { output: 'export const x = 1;' }),
      ...response('run_shell_command_2', 'run_shell_command', { error: 'boom' }),
    ];
    const resumed = structuredClone(record);
    const calls = resumed.messages[1]?.toolCalls as Record<string, unknown>[];
    calls[0]!.result = both;
    calls[1]!.result = both;
    resumed.messages[4] = {
      ...messages[4],
      toolCalls: [
        { id: 'c9', name: 'glob', args: {}, result: null, resultDisplay: 'Cancelled', status: 'cancelled' },
      ],
    } as unknown as (typeof messages)[number];
    const read = importSession(JSON.stringify(resumed), { tokenizer: fakeTokenizer });
    expect(itemSummary(read.items.filter((i) => i.type === 'TOOL_RESULT')).map((r) => r[2])).toEqual([
      'export const x = 1;',
      'boom',
    ]);
    expect(collectOpenErrors(read.items).map((e) => e.tool)).toEqual(['run_shell_command']);
  });

  it('a slash command is never the model’s: it stays in the document, out of the context and its rounds', () => {
    const command = structuredClone(record);
    command.messages[3] = {
      ...messages[3],
      content: [{ text: '/handoff' }],
    } as unknown as (typeof messages)[number];
    const read = importSession(JSON.stringify(command), { tokenizer: fakeTokenizer });
    expect(itemSummary(read.items).map((r) => r[2])).not.toContain('/handoff');
    expect(Math.max(...read.items.map((i) => i.round))).toBe(1);
    expect(JSON.parse(exportSession(read))).toEqual(command);
    // Kept when the message before it changes.
    const cut = read.items.map((item) =>
      item.type === 'TOOL_RESULT' ? { ...item, message: { ...item.message, content: '[cut]' } } : item,
    );
    const written = JSON.parse(exportSession({ items: cut, document: read.document })) as typeof command;
    expect(written.messages[3]).toEqual(command.messages[3]);
  });

  it('two calls with one id keep their own results when the message is rebuilt', () => {
    const twice = structuredClone(record);
    const calls = twice.messages[1]?.toolCalls as Record<string, unknown>[];
    calls[1] = {
      ...calls[0],
      args: { file_path: 'b.ts' },
      result: response('read_file_1', 'read_file', { output: 'BBB' }),
    };
    const read = importSession(JSON.stringify(twice), { tokenizer: fakeTokenizer });
    const changed = read.items.map((item) =>
      item.type === 'ASSISTANT_MESSAGE' && item.message.tool_calls
        ? { ...item, message: { ...item.message, content: 'Reading both.' } }
        : item,
    );
    const written = JSON.parse(exportSession({ items: changed, document: read.document })) as {
      messages: Record<string, unknown>[];
    };
    const again = importSession(JSON.stringify(written), { tokenizer: fakeTokenizer });
    expect(itemSummary(again.items.filter((i) => i.type === 'TOOL_RESULT')).map((r) => r[2])).toEqual([
      'export const x = 1;',
      'BBB',
    ]);
  });

  it('thought parts in a message’s content are its reasoning, not its text', () => {
    const thought = structuredClone(record);
    thought.messages[4] = {
      ...messages[4],
      content: [{ text: 'Weighing it.', thought: true }, { text: 'Done.' }],
    } as unknown as (typeof messages)[number];
    const read = importSession(JSON.stringify(thought), { tokenizer: fakeTokenizer });
    expect(read.items[5]).toMatchObject({ message: { content: 'Done.', reasoning_content: 'Weighing it.' } });
  });

  it('JSONL folds as the CLI: a rewind to an unknown id clears, ids are one message, a second metadata line merges', () => {
    const { messages: _, ...meta } = record;
    const jsonl = (lines: unknown[]) => lines.map((l) => JSON.stringify(l)).join('\n');
    const read = (lines: unknown[]) =>
      itemSummary(importSession(jsonl(lines), { tokenizer: fakeTokenizer, fileName: 's.jsonl' }).items).map(
        (r) => r[2],
      );
    expect(read([{ ...meta, messages: [] }, messages[0], { $rewindTo: 'nope' }, messages[3]])).toEqual([
      'use the UTC date',
    ]);
    expect(read([{ ...meta, messages: [messages[0], { ...messages[0], content: 'again' }] }])).toEqual([
      'again',
    ]);
    expect(
      read([{ ...meta, messages: [] }, messages[0], { ...meta, lastUpdated: 'later' }, messages[3]]),
    ).toEqual(['Fix the failing test in src/app.ts', 'use the UTC date']);
  });

  it('the responses the CLI records again (v0.44 on) stay out of the context and follow the results: cut with them, gone with them', () => {
    const { messages: _, ...meta } = record;
    const again = {
      id: 'r1',
      timestamp: '2026-03-18T02:48:43.000Z',
      type: 'user',
      content: messages[1]?.toolCalls?.map((c) => c.result[0]),
    };
    const lines = [{ ...meta, messages: [] }, messages[0], messages[1], again, messages[3], messages[4]];
    const read = importSession(lines.map((l) => JSON.stringify(l)).join('\n'), {
      tokenizer: fakeTokenizer,
      fileName: 's.jsonl',
    });
    expect(read.items.filter((i) => i.type === 'USER_MESSAGE').map((i) => i.round)).toEqual([1, 2]);
    const cut = read.items.map((item) =>
      item.type === 'TOOL_RESULT' && item.message.tool_call_id === 'read_file_1'
        ? { ...item, message: { ...item.message, content: 'export [cut]' } }
        : item,
    );
    const written = jsonlValues(exportSession({ items: cut, document: read.document })) as Record<
      string,
      unknown
    >[];
    expect(JSON.stringify(written.find((m) => m.id === 'r1'))).toContain('export [cut]');
    const dropped = read.items.filter((i) => i.round === 2 || i.type === 'USER_MESSAGE');
    const without = jsonlValues(exportSession({ items: dropped, document: read.document })) as Record<
      string,
      unknown
    >[];
    expect(without.map((m) => m.id ?? 'meta')).toEqual(['meta', 'u1', 'u2', 'g2']);
  });
});

describe('Gemini Content lists written back after a compaction', () => {
  const session = importSession(JSON.stringify(contents), { tokenizer: fakeTokenizer });

  it('a summary and a new user message are Content with their text; a new call and its response keep id and name', () => {
    const base = session.items[2] as ContextItem;
    const summary = {
      ...base,
      id: 's',
      type: 'COMPACTION_SUMMARY',
      origin: undefined,
      summarizer: 'extractive',
      message: { role: 'user', content: '[summary]' },
    } as ContextItem;
    const call = {
      ...base,
      id: 'c',
      type: 'ASSISTANT_MESSAGE',
      origin: undefined,
      message: {
        role: 'assistant',
        content: 'listing',
        tool_calls: [
          {
            id: 'new-1',
            type: 'function',
            function: { name: 'list_directory', arguments: '{"dir_path":"."}' },
          },
        ],
      },
    } as ContextItem;
    const result = {
      ...base,
      id: 'r',
      type: 'TOOL_RESULT',
      origin: undefined,
      message: { role: 'tool', content: 'a\nb', tool_call_id: 'new-1' },
    } as ContextItem;
    const user = {
      ...base,
      id: 'u',
      origin: undefined,
      message: { role: 'user', content: 'now lint' },
    } as ContextItem;
    const written = JSON.parse(
      exportSession({
        items: [summary, ...session.items.slice(6), call, result, user],
        document: session.document,
      }),
    ) as typeof contents;
    expect(written[0]).toEqual({ role: 'user', parts: [{ text: '[summary]' }] });
    expect(written.slice(-3)).toEqual([
      {
        role: 'model',
        parts: [
          { text: 'listing' },
          { functionCall: { id: 'new-1', name: 'list_directory', args: { dir_path: '.' } } },
        ],
      },
      {
        role: 'user',
        parts: [{ functionResponse: { id: 'new-1', name: 'list_directory', response: { output: 'a\nb' } } }],
      },
      { role: 'user', parts: [{ text: 'now lint' }] },
    ]);
  });

  it('a cut error response stays an error', () => {
    const cut = session.items.map((item) =>
      item.type === 'TOOL_RESULT' && item.message.content.startsWith('Error')
        ? { ...item, message: { ...item.message, content: 'Error: exp [cut]' } }
        : item,
    );
    const written = JSON.parse(exportSession({ items: cut, document: session.document })) as typeof contents;
    expect(written[4]?.parts[0]).toEqual({
      functionResponse: {
        id: 'run_shell_command-1',
        name: 'run_shell_command',
        response: { error: 'Error: exp [cut]' },
      },
    });
  });

  it('an empty saved chat, and one with no reply yet, are Gemini’s; a bad entry is named', () => {
    expect(
      importSession(JSON.stringify({ history: [], authType: 'oauth' }), { tokenizer: fakeTokenizer }).format,
    ).toBe('gemini');
    expect(
      importSession(JSON.stringify({ history: [contents[2]], authType: 'oauth' }), {
        tokenizer: fakeTokenizer,
      }).items,
    ).toHaveLength(1);
    expect(() =>
      importSession(JSON.stringify([contents[2], { role: 'model', parts: 'x' }]), {
        tokenizer: fakeTokenizer,
      }),
    ).toThrow(/\[1\]\.parts: expected a list of parts/);
  });
});
