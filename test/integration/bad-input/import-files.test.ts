/**
 * Session files that are not what they claim: unknown roles and entry types, values that are no
 * session at all, empty files and empty conversations, JSON that is cut short or broken on one
 * line, fields of the wrong type. Every file goes through the real `import` path (read, detect,
 * convert, count, store); a refused file leaves nothing in the store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareImport, saveImport } from '../../../src/cli/commands/import';
import { exportSession } from '../../../src/importers';
import { StoredRowError } from '../../../src/store';
import { step } from '../../support/fake-openai';
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

/** Imports `text` as file `name` under a fresh id; expects a refusal matching `message`, nothing stored. */
async function expectImportRefused(name: string, text: string, message: RegExp): Promise<void> {
  const id = uniqueId('refused');
  const file = sessionFile(name, text);
  const err = await expectRefusedUnchanged(
    env.pool,
    id,
    async () => saveImport(env.store, prepareImport({ file, id })),
    message,
  );
  expect(err.message.startsWith(`cannot import ${file}: `)).toBe(true);
  expect(await storeSnapshot(env.pool, id)).toStrictEqual(NOTHING);
}

const SESSION_KINDS =
  /not a session: expected an OpenAI chat list .*, a SWE-agent trajectory .*, a pi session .*, a Claude Code session or a Codex rollout \(JSONL\), an OpenHands trajectory \(a list of events\), a Gemini CLI chat recording .*, got /;

describe('unknown item types', () => {
  it.each([
    [
      'an OpenAI list',
      'roles.json',
      JSON.stringify([
        { role: 'user', content: 'a' },
        { role: 'function', name: 'f', content: 'x' },
      ]),
      /: \[1\]\.role: expected one of system, developer, user, assistant, tool, got "function"$/,
    ],
    [
      'OpenAI JSONL',
      'roles.jsonl',
      '{"role":"user","content":"a"}\n{"role":"critic","content":"x"}\n',
      /: line 2, message\.role: expected one of system, developer, user, assistant, tool, got "critic"$/,
    ],
    [
      'a SWE-agent trajectory',
      'roles.traj',
      JSON.stringify({
        history: [
          { role: 'user', content: 'u' },
          { role: 'observer', content: 'c' },
        ],
        info: {},
      }),
      /: history\[1\]\.role: expected one of .*, got "observer"$/,
    ],
  ])(
    'an unknown role in %s is refused, naming the field and the value',
    async (_what, name, text, message) => {
      await expectImportRefused(name, text, message);
    },
  );

  it('unknown pi entry types and message roles are kept as entries, not items, and written back', async () => {
    const lines = [
      { type: 'session', version: 3, id: 's1' },
      { type: 'message', id: 'a', parentId: null, message: { role: 'user', content: 'hi' } },
      { type: 'wormhole', id: 'b', parentId: 'a', payload: { x: 1 } },
      { type: 'message', id: 'c', parentId: 'b', message: { role: 'narrator', content: 'once upon' } },
      {
        type: 'message',
        id: 'd',
        parentId: 'c',
        message: { role: 'assistant', content: [{ type: 'text', text: 'hello' }], stopReason: 'stop' },
      },
    ];
    const id = uniqueId('pi-unknown');
    const prepared = prepareImport({
      file: sessionFile('unknown.jsonl', lines.map((l) => JSON.stringify(l)).join('\n') + '\n'),
      id,
    });
    const result = await saveImport(env.store, prepared);
    expect(result).toMatchObject({ format: 'pi', items: 2 });
    expect((await env.store.getArchive(id)).map((i) => i.type)).toEqual([
      'USER_MESSAGE',
      'ASSISTANT_MESSAGE',
    ]);
    const exported = exportSession(prepared.session)
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown);
    expect(exported).toStrictEqual(lines);
  });

  it('a stored row of an unknown type is reported by item id, and reading it changes nothing', async () => {
    const id = uniqueId('odd-row');
    await env.store.createConversation(id, []);
    await env.pool.query(
      `insert into items (id, conversation_id, seq, type, role, body, tokens, round)
       values ($1, $2, 1, 'WIDGET', 'user', '{"role":"user","content":"?"}', 1, 1)`,
      [`${id}:w`, id],
    );
    await env.pool.query(
      `insert into context_version_items (conversation_id, version, position, item_id) values ($1, 1, 0, $2)`,
      [id, `${id}:w`],
    );
    const err = await expectRefusedUnchanged(
      env.pool,
      id,
      () => env.store.getActiveContext(id),
      `stored item ${id}:w is not a valid context item: unknown type "WIDGET"`,
    );
    expect(err).toBeInstanceOf(StoredRowError);
  });
});

describe('not a session, or an empty one', () => {
  it.each([
    ['a number', 'number.json', '42', SESSION_KINDS],
    ['a string', 'string.json', '"a transcript"', SESSION_KINDS],
    ['null', 'null.json', 'null', SESSION_KINDS],
    ['an object without messages', 'object.json', '{"transcript": []}', SESSION_KINDS],
    ['an empty file', 'empty.json', '', /: the input is empty$/],
    ['only whitespace', 'blank.jsonl', '  \n\n \t\n', /: the input is empty$/],
    ['only a byte order mark', 'bom.json', '\ufeff', /: the input is empty$/],
    ['an empty list', 'list.json', '[]', /: it holds no messages$/],
    ['an object with no messages', 'messages.json', '{"messages": []}', /: it holds no messages$/],
    [
      'a pi session with only its header',
      'header.jsonl',
      '{"type":"session","version":3,"id":"s"}\n',
      /: it holds no messages$/,
    ],
    ['an empty SWE-agent history', 'empty.traj', '{"history": [], "info": {}}', /: it holds no messages$/],
    [
      'JSONL of an agent that is not read (made-up lines with a type)',
      'other-agent.jsonl',
      '{"type":"prompt","text":"Hi"}\n{"type":"reply","text":"Hello"}\n',
      /: line 1: not a pi session: no line has type "session" or "message" \(types seen: "prompt" ×1, "reply" ×1\)/,
    ],
    [
      'a Claude Code user line without a message object',
      'claude-no-message.jsonl',
      '{"type":"user","uuid":"u1","parentUuid":null}\n' +
        '{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"role":"assistant","content":[]}}\n',
      /: line 1, message: expected a message object, got missing$/,
    ],
    [
      'a Claude Code session with only its title',
      'claude-title.jsonl',
      '{"type":"summary","summary":"A title","leafUuid":"x"}\n{"type":"user","isSidechain":true,"message":{"role":"user","content":[]}}\n',
      /: it holds no messages$/,
    ],
    [
      'a Codex rollout with only its session meta',
      'rollout-meta.jsonl',
      '{"timestamp":"2025-09-01T00:00:00Z","type":"session_meta","payload":{"id":"s"}}\n',
      /: it holds no messages$/,
    ],
    [
      'a Codex function call without a name',
      'rollout-call.jsonl',
      '{"timestamp":"2025-09-01T00:00:00Z","type":"session_meta","payload":{"id":"s"}}\n' +
        '{"timestamp":"2025-09-01T00:00:01Z","type":"response_item","payload":{"type":"function_call","arguments":"{}","call_id":"c"}}\n',
      /: line 2, payload\.name: expected a string, got missing$/,
    ],
    [
      'an OpenHands trajectory with only state changes',
      'openhands-states.json',
      '[{"id":0,"source":"environment","observation":"agent_state_changed","content":"","extras":{"agent_state":"loading"}},' +
        '{"id":1,"source":"environment","action":"change_agent_state","args":{"agent_state":"init","thought":""}}]',
      /: it holds no messages$/,
    ],
    [
      'an OpenHands event with both an action and an observation',
      'openhands-both.json',
      '{"history":[{"id":0,"source":"user","action":"message","args":{"content":"Fix a.py"}},' +
        '{"id":1,"source":"agent","action":"run","observation":"run","args":{"command":"ls"}}]}',
      /: history\[1\]\.action: expected an action or an observation, got both$/,
    ],
    [
      'an OpenHands observation without content',
      'openhands-content.json',
      '[{"id":0,"source":"user","action":"message","args":{"content":"Fix a.py"}},' +
        '{"id":1,"source":"agent","action":"run","args":{"command":"ls","thought":""}},' +
        '{"id":2,"source":"agent","cause":1,"observation":"run","extras":{}}]',
      /: \[2\]\.content: expected a string, got missing$/,
    ],
    [
      'a Gemini CLI chat recording whose tool call has no name',
      'gemini-call.json',
      '{"sessionId":"s","projectHash":"p","startTime":"","lastUpdated":"","messages":[' +
        '{"id":"u","type":"user","content":"Fix a.py"},' +
        '{"id":"g","type":"gemini","content":"","toolCalls":[{"id":"c1","args":{"file_path":"a.py"}}]}]}',
      /: messages\[1\]\.toolCalls\[0\]: expected a tool call with a string id and name$/,
    ],
    [
      'a Gemini chat shared as Content whose model entry has no list of parts',
      'gemini-share.json',
      '[{"role":"user","parts":[{"text":"Fix a.py"}]},{"role":"model","parts":"x"}]',
      /: \[1\]\.parts: expected a list of parts, got a string$/,
    ],
    [
      'a Gemini CLI JSONL recording with a line that is no message, $set or $rewindTo',
      'gemini-session.jsonl',
      '{"sessionId":"s","projectHash":"p"}\n{"id":"u","type":"user","content":"Fix a.py"}\n{"nothing":true}',
      /: line 3: expected a message \(with an id\), a \$set or a \$rewindTo record$/,
    ],
    [
      'an OpenCode export whose tool part has no call id',
      'opencode-session.json',
      '{"info":{"id":"ses_1","version":"1.15.6"},"messages":[' +
        '{"info":{"id":"msg_1","role":"user"},"parts":[{"type":"text","text":"Fix a.py"}]},' +
        '{"info":{"id":"msg_2","role":"assistant"},"parts":[{"type":"tool","tool":"read","state":{}}]}]}',
      /: messages\[1\]\.parts\[0\]: expected a tool part with a string callID and tool, and a state$/,
    ],
  ])('%s is refused', async (_what, name, text, message) => {
    await expectImportRefused(name, text, message);
  });

  it('an empty conversation (no system prompt, no tools, no messages) compacts to a clear skip', async () => {
    env.llm.reset();
    const conv = await env.startConversation({ systemPrompt: '', tools: [] });
    const brief = await conv.compact();
    expect(brief).toMatchObject({ trigger: 'manual', status: 'skipped', tokensBefore: 0, tokensAfter: 0 });
    expect(brief.reason).toMatch(/^no_progress: /);
    expect(env.llm.chatRequests()).toHaveLength(0);
    const { version, items } = await conv.activeContext();
    expect({ version, items }).toEqual({ version: 1, items: [] });
    // And it goes on as any conversation would.
    env.llm.script(step.text('hello'));
    expect((await conv.send('hi')).reply).toBe('hello');
  });
});

describe('broken JSON and wrong types', () => {
  it.each([
    ['cut short', 'cut.json', '[{"role":"user",\n"content":"a"},\n{"role":', /: line 3: not valid JSON \(/],
    [
      'a bad third line of JSONL',
      'bad.jsonl',
      '{"role":"user","content":"a"}\n{"role":"assistant","content":"b"}\n{"role": oops}\n',
      /: line 3: not valid JSON \(/,
    ],
    [
      'tool_calls that are not a list',
      'calls.json',
      JSON.stringify([
        { role: 'user', content: 'a' },
        { role: 'assistant', content: null, tool_calls: { id: 'x' } },
      ]),
      /: \[1\]\.tool_calls: expected a list, got an object$/,
    ],
    [
      'content that is a number',
      'content.json',
      JSON.stringify([{ role: 'user', content: 42 }]),
      /: \[0\]\.content: expected a string or a list of content parts, got a number$/,
    ],
    [
      'a tool message without tool_call_id',
      'result.json',
      JSON.stringify([
        { role: 'user', content: 'a' },
        { role: 'tool', content: 'r' },
      ]),
      /: \[1\]\.tool_call_id: expected a string, got missing$/,
    ],
    [
      'a pi tool call without a name',
      'call.jsonl',
      JSON.stringify({
        type: 'message',
        message: { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', arguments: {} }] },
      }) + '\n',
      /: line 1, message\.content\[0\]\.name: expected a string, got missing$/,
    ],
    [
      'a SWE-agent 0.x step whose action is not a string',
      'action.traj',
      JSON.stringify({
        history: [
          { role: 'system', content: 's' },
          { role: 'user', content: 'task' },
          { role: 'assistant', content: 'a', thought: 'look', action: 'ls\n' },
          { role: 'assistant', content: 'b', thought: 'run', action: ['python', 'x.py'] },
          { role: 'user', content: 'out' },
        ],
        info: {},
      }),
      /: history\[3\]\.action: expected a string, got an array$/,
    ],
  ])('%s is refused with the line or field', async (_what, name, text, message) => {
    await expectImportRefused(name, text, message);
  });

  it('invalid JSON in tool-call arguments is kept as the text it is, stored and written back', async () => {
    const id = uniqueId('bad-args');
    const messages = [
      { role: 'user', content: 'a' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{not json' } }],
      },
      { role: 'tool', tool_call_id: 'c', content: 'r' },
    ];
    const prepared = prepareImport({ file: sessionFile('args.json', JSON.stringify(messages)), id });
    await saveImport(env.store, prepared);
    const stored = (await env.store.getArchive(id)).find((i) => i.type === 'ASSISTANT_MESSAGE');
    expect(stored?.type === 'ASSISTANT_MESSAGE' && stored.message.tool_calls?.[0]?.function.arguments).toBe(
      '{not json',
    );
    expect(JSON.parse(exportSession(prepared.session))).toStrictEqual(messages);
  });

  it('a file imported under an id already taken is refused and the existing conversation is untouched', async () => {
    const id = uniqueId('taken');
    await saveImport(
      env.store,
      prepareImport({ file: sessionFile('a.json', '[{"role":"user","content":"a"}]'), id }),
    );
    await expectRefusedUnchanged(
      env.pool,
      id,
      async () =>
        saveImport(
          env.store,
          prepareImport({ file: sessionFile('b.json', '[{"role":"user","content":"b"}]'), id }),
        ),
      `conversation ${id} already exists: choose another --id`,
    );
  });
});
