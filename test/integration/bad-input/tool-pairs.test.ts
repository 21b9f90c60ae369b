/**
 * Bad tool call / tool result pairs: orphan results and calls without results in imported sessions
 * (continued by the workflow), ids repeated by the model or by a file, and arguments that are not
 * JSON, not an object, or nested without end. The fake model is strict: it refuses a request whose
 * tool messages do not answer the calls right before them, as OpenAI does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareImport, saveImport } from '../../../src/cli/commands/import';
import type { ContextItem } from '../../../src/context/items';
import { MISSING_TOOL_RESULT } from '../../../src/context/lower';
import { step, type FakeMessage } from '../../support/fake-openai';
import { startConversationEnv, type ConversationEnv } from '../../support/conversation-env';
import { uniqueId } from '../../support/harness';
import {
  expectRefusedUnchanged,
  NOTHING,
  removeSessionFiles,
  sessionFile,
  storeSnapshot,
} from '../../support/bad-input';

let env: ConversationEnv;

beforeAll(async () => {
  env = await startConversationEnv();
});
afterAll(async () => {
  removeSessionFiles();
  await env?.close();
});

/** Imports `lines` (OpenAI messages) as JSONL under a fresh id and returns the id. */
async function importMessages(name: string, messages: unknown[]): Promise<string> {
  const id = uniqueId(name);
  const file = sessionFile(`${name}.jsonl`, messages.map((m) => JSON.stringify(m)).join('\n') + '\n');
  await saveImport(env.store, prepareImport({ file, id }));
  return id;
}

const call = (id: string, name: string, args: string) => ({
  id,
  type: 'function',
  function: { name, arguments: args },
});

function sentMessages(index: number): FakeMessage[] {
  return env.llm.chatRequests()[index]?.body.messages ?? [];
}

function toolResults(items: readonly ContextItem[]) {
  return items.flatMap((i) => (i.type === 'TOOL_RESULT' ? [i.message] : []));
}

describe('imported sessions with broken pairs, continued by the workflow', () => {
  it('an orphan tool result is kept in the store and left out of the request', async () => {
    const id = await importMessages('orphan', [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'check the logs' },
      { role: 'tool', tool_call_id: 'call_from_nowhere', content: 'stray output' },
      { role: 'assistant', content: 'Nothing to report.' },
    ]);
    env.llm.reset();
    env.llm.script(step.text('carrying on'));
    const conv = await env.startConversation({ id });
    const result = await conv.send('anything new?');
    expect(result.reply).toBe('carrying on');
    expect(sentMessages(0).map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    // Nothing is lost: the orphan is still in the archive and in the active context.
    expect(toolResults((await conv.activeContext()).items)).toEqual([
      expect.objectContaining({ tool_call_id: 'call_from_nowhere', content: 'stray output' }),
    ]);
  });

  it('a tool call without a result (a session cut short) is answered with a placeholder', async () => {
    const id = await importMessages('cut-short', [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'list the files' },
      { role: 'assistant', content: null, tool_calls: [call('call_a', 'list_directory', '{}')] },
    ]);
    env.llm.reset();
    env.llm.script(step.text('let me try again'));
    const conv = await env.startConversation({ id });
    const result = await conv.send('go on');
    expect(result.reply).toBe('let me try again');
    const sent = sentMessages(0);
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(sent[3]).toMatchObject({ tool_call_id: 'call_a', content: MISSING_TOOL_RESULT });
    // The placeholder is the request's, not the store's.
    expect(toolResults((await conv.activeContext()).items)).toEqual([]);
  });

  it('an id repeated within one assistant message is sent as two ids, each answered once', async () => {
    const id = await importMessages('dup-in-message', [
      { role: 'user', content: 'read both' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          call('dup', 'read_file', '{"path":"a.txt"}'),
          call('dup', 'read_file', '{"path":"b.txt"}'),
        ],
      },
      { role: 'tool', tool_call_id: 'dup', content: 'A' },
      { role: 'tool', tool_call_id: 'dup', content: 'B' },
    ]);
    env.llm.reset();
    env.llm.script(step.text('both read'));
    const conv = await env.startConversation({ id });
    expect((await conv.send('and?')).reply).toBe('both read');
    const sent = sentMessages(0);
    const ids = sent.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id));
    expect(new Set(ids).size).toBe(2);
    const answered = sent.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
    expect([...answered].sort()).toEqual([...ids].sort());
    // The store keeps the file's ids as they were.
    const stored = (await conv.activeContext()).items.find((i) => i.type === 'ASSISTANT_MESSAGE');
    expect(stored?.type === 'ASSISTANT_MESSAGE' && stored.message.tool_calls?.map((c) => c.id)).toEqual([
      'dup',
      'dup',
    ]);
  });

  it('an id reused across turns (as SWE-agent writes them) pairs by position and is sent as it is', async () => {
    const turn = (path: string, output: string) => [
      {
        role: 'assistant',
        content: null,
        tool_calls: [call('call_0', 'read_file', JSON.stringify({ path }))],
      },
      { role: 'tool', tool_call_id: 'call_0', content: output },
    ];
    const id = await importMessages('dup-across', [
      { role: 'user', content: 'read two files' },
      ...turn('a.txt', 'first'),
      ...turn('b.txt', 'second'),
    ]);
    env.llm.reset();
    env.llm.script(step.text('read them'));
    const conv = await env.startConversation({ id });
    expect((await conv.send('summarize')).reply).toBe('read them');
    expect(sentMessages(0).map((m) => [m.role, m.tool_call_id ?? m.tool_calls?.[0]?.id ?? null])).toEqual([
      ['user', null],
      ['assistant', 'call_0'],
      ['tool', 'call_0'],
      ['assistant', 'call_0'],
      ['tool', 'call_0'],
      ['user', null],
    ]);
  });
});

describe('what the model sends', () => {
  it('duplicate tool call ids in one answer: each call runs with its own arguments', async () => {
    env.llm.reset();
    env.llm.script(
      step.toolCalls([
        { id: 'dup', name: 'remember', arguments: { note: 'first note' } },
        { id: 'dup', name: 'remember', arguments: { note: 'second note' } },
      ]),
      step.text('both remembered'),
    );
    const conv = await env.startConversation({ tools: ['remember'] });
    const result = await conv.send('remember two things');
    expect(result.reply).toBe('both remembered');
    const { items } = await conv.activeContext();
    const memories = items.flatMap((i) => (i.type === 'MEMORY' ? [String(i.message.content)] : []));
    expect(memories).toEqual(['[Memory] first note', '[Memory] second note']);
    const assistant = items.find((i) => i.type === 'ASSISTANT_MESSAGE');
    const callIds =
      assistant?.type === 'ASSISTANT_MESSAGE' ? (assistant.message.tool_calls ?? []).map((c) => c.id) : [];
    expect(new Set(callIds).size).toBe(2);
    expect(toolResults(items).map((m) => m.tool_call_id)).toEqual(callIds);
  });

  it('two task-list updates in one answer: the older list does not come between the calls and their results', async () => {
    env.llm.reset();
    const tasks = (title: string) => ({ tasks: [{ title, status: 'pending' }] });
    env.llm.script(
      step.toolCalls([
        { id: 'call_t1', name: 'update_tasks', arguments: tasks('first plan') },
        { id: 'call_t2', name: 'update_tasks', arguments: tasks('second plan') },
      ]),
      step.text('planned'),
    );
    const conv = await env.startConversation({ tools: ['update_tasks'] });
    expect((await conv.send('plan it')).reply).toBe('planned');
    // Stored in the order things happened: each result, then the task list it wrote.
    const { items } = await conv.activeContext();
    expect(items.slice(-5, -1).map((i) => i.type)).toEqual([
      'TOOL_RESULT',
      'TASK_LIST',
      'TOOL_RESULT',
      'TASK_LIST',
    ]);
    // Sent with both results right after the call; the latest list is in the header, the older after.
    const sent = sentMessages(1);
    const at = sent.findIndex((m) => m.role === 'assistant');
    expect(sent.slice(at, at + 3).map((m) => m.tool_call_id ?? m.role)).toEqual([
      'assistant',
      'call_t1',
      'call_t2',
    ]);
    expect(sent.filter((m) => String(m.content).includes('first plan'))).toHaveLength(1);
  });

  it.each([
    ['invalid JSON', '{"note": "unterminated', /^Error: the arguments are not valid JSON \(/],
    ['a JSON array', '[1, 2]', /^Error: arguments must be a JSON object$/],
    ['a JSON string', '"just text"', /^Error: arguments must be a JSON object$/],
    [
      'JSON nested 20,000 levels deep',
      `{"note": ${'['.repeat(20_000)}${']'.repeat(20_000)}}`,
      /^Error: argument "note" must be a string$/,
    ],
  ])(
    'tool-call arguments that are %s: the model reads the error, the round goes on',
    async (_what, args, error) => {
      env.llm.reset();
      env.llm.script(
        step.toolCalls([{ id: 'call_bad', name: 'remember', arguments: args }]),
        step.text('sorry'),
      );
      const conv = await env.startConversation({
        tools: ['remember'],
        config: { maxContextTokens: 200_000 },
      });
      const result = await conv.send('remember this');
      expect(result.reply).toBe('sorry');
      const { items } = await conv.activeContext();
      const [output] = toolResults(items);
      expect(output?.content).toMatch(error);
      expect(items.some((i) => i.type === 'MEMORY')).toBe(false);
      // The arguments are stored as the model sent them, and the model saw its error.
      const assistant = items.find((i) => i.type === 'ASSISTANT_MESSAGE');
      expect(
        assistant?.type === 'ASSISTANT_MESSAGE' && assistant.message.tool_calls?.[0]?.function.arguments,
      ).toBe(args);
      expect(sentMessages(1).find((m) => m.role === 'tool')?.content).toBe(output?.content);
    },
  );
});

describe('deeply nested JSON in an imported file', () => {
  it('is refused with the field named, before anything is stored', async () => {
    const id = uniqueId('deep');
    const nested = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    const file = sessionFile(
      'deep.json',
      `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":` +
        `[{"id":"c1","type":"function","function":{"name":"f","arguments":${nested}}}]}]}`,
    );
    await expectRefusedUnchanged(
      env.pool,
      id,
      async () => saveImport(env.store, prepareImport({ file, id })),
      /messages\[1\]\.tool_calls\[0\]….*nested more than 256 levels deep/,
    );
    expect(await storeSnapshot(env.pool, id)).toStrictEqual(NOTHING);
  });
});
