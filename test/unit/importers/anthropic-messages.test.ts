/**
 * Lists in Anthropic's Messages format: told apart from OpenAI lists, read with their tool calls
 * and results (Cline's results written as text blocks answering the previous calls in order, the
 * other blocks beside results meta), written back deep-equal when unchanged and readable again
 * when changed, bad messages named by their field. The messages are made up in the shapes Cline
 * and the Messages API write.
 */
import { describe, expect, it } from 'vitest';
import { callFactsOf } from '../../../src/context/item-facts';
import { messageText, type ContextItem } from '../../../src/context/items';
import { collectArtifactTrail, trailPaths } from '../../../src/context/artifact-trail';
import { collectOpenErrors } from '../../../src/context/open-errors';
import { exportSession, ImportError, importSession } from '../../../src/importers';
import { jsonlValues } from '../../support/files';
import { fakeTokenizer, itemSummary } from '../../support/items-factory';

const ts = { ts: 1777073160794 };
/** A Cline task: the task, calls answered by text blocks, an interrupted call, a resumption. */
const cline = [
  {
    role: 'user',
    content: [
      { type: 'text', text: '<task>\nFix the date parsing in src/dates.ts\n</task>' },
      { type: 'text', text: '<environment_details>\n# Current Mode\nACT MODE\n</environment_details>' },
    ],
    ...ts,
  },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Reading both files.' },
      {
        type: 'tool_use',
        id: 'toolu_1',
        name: 'read_file',
        input: { path: 'src/dates.ts' },
        call_id: 'toolu_1',
      },
      {
        type: 'tool_use',
        id: 'toolu_2',
        name: 'read_file',
        input: { path: 'src/cli.ts' },
        call_id: 'toolu_2',
      },
    ],
    modelInfo: { modelId: 'claude-x', providerId: 'anthropic', mode: 'act' },
    ...ts,
  },
  {
    role: 'user',
    content: [
      { type: 'text', text: "[read_file for 'src/dates.ts'] Result:\n1 | export function parse() {}" },
      { type: 'text', text: "[read_file for 'src/cli.ts'] Result:\n1 | import { parse } from './dates';" },
      { type: 'text', text: '<environment_details>\n# Current Time\nnow\n</environment_details>' },
    ],
    ...ts,
  },
  {
    role: 'assistant',
    content: [
      {
        type: 'tool_use',
        id: 'toolu_3',
        name: 'execute_command',
        input: { command: 'npm test', requires_approval: false },
      },
    ],
    ...ts,
  },
  {
    role: 'user',
    content: [
      {
        type: 'text',
        text: "[execute_command for 'npm test'] Result:\nCommand executed.\nOutput:\nError: expected 2024-01-01\nnpm ERR! Test failed.",
      },
      { type: 'text', text: '<environment_details>\n</environment_details>' },
    ],
    ...ts,
  },
  {
    role: 'assistant',
    content: [
      {
        type: 'tool_use',
        id: 'toolu_4',
        name: 'replace_in_file',
        input: { path: 'src/dates.ts', diff: '------- SEARCH\n{}\n=======\n{ return 1; }\n+++++++ REPLACE' },
      },
    ],
    ...ts,
  },
  {
    role: 'user',
    content: [
      { type: 'text', text: '[TASK RESUMPTION] This task was interrupted just now.' },
      {
        type: 'text',
        text: 'New instructions for task continuation:\n<user_message>\nuse UTC\n</user_message>',
      },
    ],
    ...ts,
  },
];

/** An API request: system and tools at the top, results as `tool_result` blocks. */
const request = {
  model: 'claude-x',
  max_tokens: 1024,
  system: [{ type: 'text', text: 'You are a coding agent.' }],
  tools: [{ name: 'bash', description: 'Run a command', input_schema: { type: 'object' } }],
  messages: [
    { role: 'user', content: 'Run the tests' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Run them.', signature: 'sig' },
        { type: 'tool_use', id: 'toolu_9', name: 'bash', input: { command: 'npm test' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_9', content: [{ type: 'text', text: 'all 3 passed' }] },
        { type: 'text', text: 'Now commit.' },
      ],
    },
  ],
};

describe("a list in Anthropic's Messages format", () => {
  const text = JSON.stringify(cline);
  const session = importSession(text, { tokenizer: fakeTokenizer });

  it('is detected, as an array, an object with messages and JSONL; an OpenAI list stays one', () => {
    expect(session.format).toBe('anthropic');
    expect(importSession(JSON.stringify(request), { tokenizer: fakeTokenizer }).format).toBe('anthropic');
    const lines = cline.map((m) => JSON.stringify(m)).join('\n');
    expect(importSession(lines, { tokenizer: fakeTokenizer, fileName: 'h.jsonl' }).format).toBe('anthropic');
    const openai = [
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: 'hello' },
    ];
    expect(importSession(JSON.stringify(openai), { tokenizer: fakeTokenizer }).format).toBe('openai');
  });

  it("reads Cline's text results as the results of the calls before them, in order, and their neighbours as meta", () => {
    expect(itemSummary(session.items).map(([type, meta]) => `${type}${meta ? ' (meta)' : ''}`)).toEqual([
      'USER_MESSAGE',
      // The agent's environment details, beside the task: a meta message of their own.
      'USER_MESSAGE (meta)',
      'ASSISTANT_MESSAGE',
      'TOOL_RESULT',
      'TOOL_RESULT',
      'USER_MESSAGE (meta)',
      'ASSISTANT_MESSAGE',
      'TOOL_RESULT',
      'USER_MESSAGE (meta)',
      'ASSISTANT_MESSAGE',
      'USER_MESSAGE',
    ]);
    const results = session.items.filter((i) => i.type === 'TOOL_RESULT');
    expect(results.map((r) => r.type === 'TOOL_RESULT' && r.message.tool_call_id)).toEqual([
      'toolu_1',
      'toolu_2',
      'toolu_3',
    ]);
    expect(itemSummary(results)[1]?.[2]).toContain("import { parse } from './dates'");
    // Rounds follow the user's own messages: the task, then the resumption.
    expect(session.items.map((i) => i.round)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2]);
    expect(itemSummary(session.items)[0]?.[2]).toBe('<task>\nFix the date parsing in src/dates.ts\n</task>');
  });

  it('gives the calls their files and commands, and the failed run as an open error', () => {
    const calls = session.items.flatMap((i) => (i.type === 'ASSISTANT_MESSAGE' ? callFactsOf(i) : []));
    expect(calls.map((c) => c.command)).toContain('npm test');
    expect(trailPaths(collectArtifactTrail(session.items))).toEqual(['src/cli.ts', 'src/dates.ts']);
    expect(collectOpenErrors(session.items)).toMatchObject([
      {
        tool: 'execute_command',
        target: 'npm test',
        text: expect.stringContaining('Error: expected 2024-01-01'),
      },
    ]);
  });

  it('writes back deep-equal when unchanged, in each layout', () => {
    expect(JSON.parse(exportSession(session))).toEqual(cline);
    const object = importSession(JSON.stringify(request), { tokenizer: fakeTokenizer });
    expect(JSON.parse(exportSession(object))).toEqual(request);
    const lines = cline.map((m) => JSON.stringify(m)).join('\n');
    const jsonl = importSession(lines, { tokenizer: fakeTokenizer, fileName: 'h.jsonl' });
    expect(jsonlValues(exportSession(jsonl))).toEqual(cline);
  });

  it('reads the top level: the system prompt and the tools, as function tools', () => {
    const object = importSession(JSON.stringify(request), { tokenizer: fakeTokenizer });
    expect(object.items[0]).toMatchObject({
      type: 'SYSTEM_PROMPT',
      message: { role: 'system', content: 'You are a coding agent.' },
    });
    expect(object.items[1]).toMatchObject({
      type: 'TOOL_DEFINITIONS',
      tools: [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }],
    });
    const assistant = object.items.find((i) => i.type === 'ASSISTANT_MESSAGE');
    expect(assistant).toMatchObject({
      message: {
        reasoning_content: 'Run them.',
        tool_calls: [{ id: 'toolu_9', function: { name: 'bash' } }],
      },
    });
    expect(itemSummary(object.items.slice(2))).toEqual([
      ['USER_MESSAGE', false, 'Run the tests'],
      ['ASSISTANT_MESSAGE', false, ''],
      ['TOOL_RESULT', false, 'all 3 passed'],
      ['USER_MESSAGE', true, 'Now commit.'],
    ]);
  });

  it('written back after a change (a result cut, an item dropped, one appended), reads back as the changed items', () => {
    const cut = session.items.map((item) =>
      item.type === 'TOOL_RESULT' && item.message.tool_call_id === 'toolu_3'
        ? {
            ...item,
            message: {
              ...item.message,
              content: "[execute_command for 'npm test'] Result:\nError: expected 2024-01-01 [cut]",
            },
          }
        : item,
    );
    const kept = cut.filter(
      (i) => !(i.type === 'USER_MESSAGE' && i.isMeta && messageText(i.message).includes('Current Time')),
    );
    const appended = {
      ...(session.items[0] as ContextItem),
      id: 'new-1',
      origin: undefined,
      message: { role: 'user', content: 'Now fix the CLI.' },
    } as ContextItem;
    const written = exportSession({ items: [...kept, appended], document: session.document });
    const messages = JSON.parse(written) as { role: string; content: unknown }[];
    // Cline's results go back as the text blocks they were, the cut one with its new text.
    expect(messages[4]?.content).toEqual([
      { type: 'text', text: "[execute_command for 'npm test'] Result:\nError: expected 2024-01-01 [cut]" },
      { type: 'text', text: '<environment_details>\n</environment_details>' },
    ]);
    expect(messages[messages.length - 1]).toEqual({ role: 'user', content: 'Now fix the CLI.' });
    const again = importSession(written, { tokenizer: fakeTokenizer });
    expect(itemSummary(again.items).map((s) => s[2])).toContain('Now fix the CLI.');
    expect(
      again.items.some((i) =>
        messageText(i.type === 'TOOL_DEFINITIONS' ? { role: 'user', content: '' } : i.message).includes(
          'Current Time',
        ),
      ),
    ).toBe(false);
  });

  it('pairs text results with the calls of every assistant message since the user spoke, and beside tool_result blocks', () => {
    const list = [
      { role: 'user', content: 'Read both.' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 't1', name: 'read_file', input: { path: 'a.ts' } }],
      },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 't2', name: 'read_file', input: { path: 'b.ts' } }],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: "[read_file for 'a.ts'] Result:\nA" },
          { type: 'text', text: "[read_file for 'b.ts'] Result:\nB" },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 't3', name: 'read_file', input: { path: 'c.ts' } },
          { type: 'tool_use', id: 't4', name: 'read_file', input: { path: 'd.ts' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't3', content: 'C' },
          { type: 'text', text: "[read_file for 'd.ts'] Result:\nD" },
        ],
      },
    ];
    const read = importSession(JSON.stringify(list), { tokenizer: fakeTokenizer });
    const answered = read.items.flatMap((i) =>
      i.type === 'TOOL_RESULT' ? [`${i.message.tool_call_id}=${String(i.message.content).slice(-1)}`] : [],
    );
    expect(answered).toEqual(['t1=A', 't2=B', 't3=C', 't4=D']);
    expect(JSON.parse(exportSession(read))).toEqual(list);
  });

  it('keeps two assistant messages with the same id apart (each message is whole)', () => {
    const list = [
      { role: 'user', content: 'go' },
      { role: 'assistant', id: 'msg_1', content: [{ type: 'tool_use', id: 't1', name: 'bash', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
      { role: 'assistant', id: 'msg_1', content: [{ type: 'text', text: 'done' }] },
    ];
    const read = importSession(JSON.stringify(list), { tokenizer: fakeTokenizer });
    expect(itemSummary(read.items).map((s) => s[0])).toEqual([
      'USER_MESSAGE',
      'ASSISTANT_MESSAGE',
      'TOOL_RESULT',
      'ASSISTANT_MESSAGE',
    ]);
  });

  it('reads a system message among the messages as the system prompt, and writes it back where it was', () => {
    const list = [{ role: 'system', content: [{ type: 'text', text: 'Be brief.' }] }, ...cline];
    const read = importSession(JSON.stringify(list), { tokenizer: fakeTokenizer });
    expect(read.format).toBe('anthropic');
    expect(itemSummary(read.items)[0]).toEqual(['SYSTEM_PROMPT', false, 'Be brief.']);
    expect(JSON.parse(exportSession(read))).toEqual(list);
  });

  it('a result cut so that it lost its header goes back as a result with its tool’s header, not as the user’s words', () => {
    const cut = session.items.map((item) =>
      item.type === 'TOOL_RESULT' && item.message.tool_call_id === 'toolu_2'
        ? { ...item, message: { ...item.message, content: '1 | import { parse }' } }
        : item,
    );
    const written = exportSession({ items: cut, document: session.document });
    // A text block again, never a tool_result: Cline's calls may exist only as text, and a
    // tool_result must answer a tool_use block.
    expect((JSON.parse(written) as { content: unknown }[])[2]?.content).toContainEqual({
      type: 'text',
      text: '[read_file] Result:\n1 | import { parse }',
    });
    const again = importSession(written, { tokenizer: fakeTokenizer });
    expect(again.items.filter((i) => i.type === 'TOOL_RESULT')).toHaveLength(3);
    expect(again.items.filter((i) => i.type === 'USER_MESSAGE' && !i.isMeta)).toHaveLength(2);
  });

  it('a message whose first item was dropped keeps its envelope: its other items are written in it', () => {
    // The results of the first calls summarized: the environment details beside them stay.
    const kept = session.items.filter(
      (i) => !(i.type === 'TOOL_RESULT' && ['toolu_1', 'toolu_2'].includes(i.message.tool_call_id)),
    );
    const written = JSON.parse(exportSession({ items: kept, document: session.document })) as {
      role?: string;
      content: unknown;
    }[];
    expect(written[2]).toMatchObject({ role: 'user', ts: 1777073160794 });
    expect(() => importSession(JSON.stringify(written), { tokenizer: fakeTokenizer })).not.toThrow();
  });

  it('names the message of a bad entry by its field (or line, in JSONL)', () => {
    const bad = [...cline.slice(0, 3), { role: 'tool', content: 'x' }];
    // A list with a role Anthropic's format lacks is not detected as it: read in that format, it is refused.
    const err = (() => {
      try {
        importSession(JSON.stringify(bad), { tokenizer: fakeTokenizer, format: 'anthropic' });
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(ImportError);
    expect((err as ImportError).field).toBe('[3].role');
    const badCall = structuredClone(cline);
    (badCall[1]?.content[1] as { id: unknown }).id = 7;
    expect(() => importSession(JSON.stringify(badCall), { tokenizer: fakeTokenizer })).toThrow(
      /\[1\]\.content\[1\]\.id: expected a string, got a number/,
    );
    const lines = badCall.map((m) => JSON.stringify(m)).join('\n');
    expect(() => importSession(lines, { tokenizer: fakeTokenizer, fileName: 'h.jsonl' })).toThrow(
      /line 2, content\[1\]\.id: expected a string/,
    );
  });
});
