/**
 * Identifiers and paths: SQL metacharacters (and worse) in conversation ids and tool names, and
 * path traversal in the arguments of the built-in file tools. Conversation ids follow one rule
 * (`src/context/conversation-id.ts`) wherever a conversation is created — store, CLI, workflow —
 * and a refused id leaves no row anywhere; tool names are free text the store keeps verbatim.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from '../../../activities/tools/builtin';
import { ToolError, ToolRegistry, type AgentTool } from '../../../activities/tools/registry';
import { prepareImport, saveImport } from '../../../src/cli/commands/import';
import { parseTools } from '../../../src/cli/start-options';
import { checkConversationId } from '../../../src/context/conversation-id';
import { exportSession } from '../../../src/importers';
import type { ContextItem } from '../../../src/context/items';
import { StoreError } from '../../../src/store';
import { step } from '../../support/fake-openai';
import { startConversationEnv, type ConversationEnv } from '../../support/conversation-env';
import { uniqueId } from '../../support/harness';
import {
  innermostFailure,
  NOTHING,
  rejectionOf,
  removeSessionFiles,
  sessionFile,
  storeSnapshot,
  tableCounts,
} from '../../support/bad-input';

const BAD_IDS: [string, string][] = [
  ['a quote and a statement', "x'; drop table items; --"],
  ['a tautology', "x' or '1'='1"],
  ['a double quote', 'a"b'],
  ['a semicolon', 'a;b'],
  ['a space', 'a b'],
  ['a newline', 'a\nb'],
  ['a NUL', 'a\u0000b'],
  ['a backslash', 'a\\b'],
  ['a slash (path traversal)', '../etc/passwd'],
  ['a leading dash', '-rf'],
  ['a leading dot', '.hidden'],
  ['a non-ASCII letter', 'café'],
  ['the empty string', ''],
  ['129 characters', 'x'.repeat(129)],
];

/** Some of the ids above, by what they hold. */
const badIds = (...names: string[]): [string, string][] => BAD_IDS.filter(([what]) => names.includes(what));

let env: ConversationEnv;

beforeAll(async () => {
  env = await startConversationEnv();
});
afterAll(async () => {
  removeSessionFiles();
  await env?.close();
});

describe('conversation ids', () => {
  it.each(BAD_IDS)(
    '%s: the store refuses it with INVALID_CONVERSATION_ID and writes nothing',
    async (_what, id) => {
      const before = await tableCounts(env.pool);
      const err = await rejectionOf(env.store.createConversation(id, []));
      expect(err).toBeInstanceOf(StoreError);
      expect((err as StoreError).kind).toBe('INVALID_CONVERSATION_ID');
      expect((err as Error).message).toContain(`invalid conversation id ${JSON.stringify(id.slice(0, 140))}`);
      expect(await tableCounts(env.pool)).toStrictEqual(before);
    },
  );

  it('ids at the edge of the rule are accepted', async () => {
    for (const id of [uniqueId('a'), `${uniqueId('b')}:v1.2_x-y`, `C${'x'.repeat(127)}`]) {
      expect(checkConversationId(id)).toBe(id);
      await env.store.createConversation(id, []);
      expect(await env.store.exists(id)).toBe(true);
    }
  });

  it('reads and writes under a metacharacter id find nothing and change nothing (parameterized SQL)', async () => {
    const victim = uniqueId('victim');
    await env.store.createConversation(victim, []);
    const before = await tableCounts(env.pool);
    const id = "x' or '1'='1";
    expect(await env.store.exists(id)).toBe(false);
    expect(await env.store.getArchive(id)).toEqual([]);
    expect(await env.store.listCompactions(id)).toEqual([]);
    expect(await env.store.conversationStatus(id)).toBeNull();
    await expect(env.store.getActiveContext(id)).rejects.toMatchObject({ kind: 'CONVERSATION_NOT_FOUND' });
    const item: ContextItem = {
      id: `${victim}:u1`,
      type: 'USER_MESSAGE',
      message: { role: 'user', content: 'hi' },
      tokens: 4,
      round: 1,
      isMeta: false,
      pinned: false,
      ephemeral: false,
    };
    await expect(env.store.appendItems(id, [item])).rejects.toMatchObject({ kind: 'CONVERSATION_NOT_FOUND' });
    await env.store.endConversation(id);
    expect(await tableCounts(env.pool)).toStrictEqual(before);
    expect(await env.store.conversationStatus(victim)).toEqual({ status: 'open', activeVersion: 1 });
  });

  it.each(badIds('a quote and a statement', 'a newline', '129 characters'))(
    '%s: the workflow fails at once with INVALID_CONVERSATION_ID, nothing stored',
    async (_what, id) => {
      env.llm.reset();
      const before = await tableCounts(env.pool);
      // Temporal takes any workflow id; the conversation id is what the project checks.
      const handle = await env.client.workflow.start('agentConversation', {
        workflowId: uniqueId('bad-id-wf'),
        taskQueue: env.taskQueue,
        args: [
          {
            conversationId: id,
            systemPrompt: 'sys',
            model: { provider: 'openai', model: 'fake-model' },
            searchAttributes: false,
          },
        ],
      });
      const failure = innermostFailure(await rejectionOf(handle.result()));
      expect(failure.type).toBe('INVALID_CONVERSATION_ID');
      expect(failure.message).toMatch(/^invalid conversation id .*: use 1–128 letters, digits/);
      expect(env.llm.chatRequests()).toHaveLength(0);
      expect(await tableCounts(env.pool)).toStrictEqual(before);
      expect(await storeSnapshot(env.pool, id)).toStrictEqual(NOTHING);
    },
  );

  it.each(badIds('a quote and a statement', 'a slash (path traversal)'))(
    '%s: `import --id` refuses it before reading the store',
    async (_what, id) => {
      const before = await tableCounts(env.pool);
      const file = sessionFile('ok.json', '[{"role":"user","content":"hi"}]');
      expect(() => prepareImport({ file, id })).toThrow(/^invalid conversation id /);
      expect(await tableCounts(env.pool)).toStrictEqual(before);
    },
  );
});

describe('tool names', () => {
  const EVIL = "read_file'; drop table items; --";

  it('a model calling a tool named with SQL metacharacters gets an error; the name is stored verbatim', async () => {
    env.llm.reset();
    env.llm.script(step.toolCalls([{ id: 'call_evil', name: EVIL, arguments: {} }]), step.text('oh well'));
    const conv = await env.startConversation({ tools: ['read_file'] });
    const result = await conv.send('read something');
    expect(result.reply).toBe('oh well');
    const { items } = await conv.activeContext();
    const output = items.find((i) => i.type === 'TOOL_RESULT');
    expect(output?.type === 'TOOL_RESULT' && output.message).toMatchObject({
      name: EVIL,
      content: expect.stringMatching(
        /^Error: unknown tool "read_file'; drop table items; --"\. Available tools: /,
      ),
    });
    // Looked up by the name as a parameter: one row, and the table is still there.
    const found = await env.pool.query(
      `select id from items where conversation_id = $1 and type = 'TOOL_RESULT' and body::jsonb ->> 'name' = $2`,
      [conv.id, EVIL],
    );
    expect(found.rows).toEqual([{ id: output?.id }]);
  });

  it('tool names with metacharacters in an imported file are stored and exported verbatim', async () => {
    const id = uniqueId('evil-tools');
    const messages = [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: "c'1", type: 'function', function: { name: EVIL, arguments: '{"path":"\'"}' } }],
      },
      { role: 'tool', tool_call_id: "c'1", content: 'done', name: EVIL },
    ];
    const prepared = prepareImport({ file: sessionFile('evil.json', JSON.stringify(messages)), id });
    await saveImport(env.store, prepared);
    const { items } = await env.store.getActiveContext(id);
    expect(items.map((i) => (i.type === 'TOOL_DEFINITIONS' ? null : i.message))).toStrictEqual(messages);
    const exported = exportSession({ items: prepared.session.items, document: prepared.session.document });
    expect(JSON.parse(exported)).toStrictEqual(messages);
  });

  it('a tool cannot be registered, nor asked for at start, under such a name', () => {
    const tool: AgentTool = {
      name: EVIL,
      description: '',
      parameters: {},
      run: async () => ({ content: '' }),
    };
    expect(() => new ToolRegistry([tool])).toThrow(`invalid tool name ${JSON.stringify(EVIL)}`);
    expect(() => parseTools(EVIL)).toThrow(/^invalid tool name "read_file';"/);
  });
});

describe('path traversal in the built-in file tools', () => {
  let root: string;
  let workspace: string;
  let outside: string;
  const SECRET = 'the-secret-outside-the-workspace';

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'dc-paths-'));
    workspace = join(root, 'workspace');
    outside = join(root, 'outside');
    mkdirSync(join(workspace, 'sub'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(workspace, 'inside.txt'), 'inside');
    writeFileSync(join(outside, 'secret.txt'), SECRET);
    symlinkSync(outside, join(workspace, 'link-out'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const tool = (name: string): AgentTool => {
    const found = BUILTIN_TOOLS.find((t) => t.name === name);
    if (!found) throw new Error(`no built-in tool ${name}`);
    return found;
  };
  const run = (name: string, args: Record<string, unknown>, ws: string | null = workspace) =>
    tool(name).run(args, { conversationId: 'paths', round: 1, workspace: ws });

  it.each([
    ['read_file', { path: '../outside/secret.txt' }, /outside the workspace/],
    ['read_file', { path: 'sub/../../outside/secret.txt' }, /outside the workspace/],
    ['read_file', { path: '/etc/passwd' }, /is absolute; use a path relative to the workspace/],
    ['read_file', { path: 'link-out/secret.txt' }, /leads outside the workspace \(through a symlink\)/],
    ['read_file', { path: 'inside.txt\u0000../../outside/secret.txt' }, /contains a NUL byte/],
    ['read_file', { path: '' }, /must be a non-empty string/],
    ['read_file', { path: ['..', 'outside'] }, /argument "path" must be a string/],
    ['list_directory', { path: '..' }, /outside the workspace/],
    ['list_directory', { path: 'link-out' }, /through a symlink/],
    ['search_text', { pattern: 'secret', path: '../outside' }, /outside the workspace/],
    ['write_file', { path: '../outside/planted.txt', content: 'x' }, /outside the workspace/],
    ['write_file', { path: 'new/../../../outside/planted.txt', content: 'x' }, /outside the workspace/],
    ['write_file', { path: 'link-out/planted.txt', content: 'x' }, /through a symlink/],
  ])('%s %o is refused', async (name, args, message) => {
    const err = await rejectionOf(run(name, args));
    expect(err).toBeInstanceOf(ToolError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain(SECRET);
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    expect(existsSync(join(workspace, 'new'))).toBe(false);
  });

  it('encoded or doubled dots are plain names inside the workspace', async () => {
    for (const path of [
      '%2e%2e/outside/secret.txt',
      '....//outside/secret.txt',
      '..%2foutside%2fsecret.txt',
    ]) {
      await expect(run('read_file', { path })).rejects.toThrow(`file "${path}" does not exist`);
    }
    // A name that starts with two dots is not a parent directory.
    writeFileSync(join(workspace, '..notes.txt'), 'dotted');
    expect((await run('read_file', { path: '..notes.txt' })).content).toBe('dotted');
    expect((await run('search_text', { pattern: 'secret' })).content).toBe('no match for "secret"');
  });

  it('without a workspace the file tools are refused', async () => {
    await expect(run('read_file', { path: 'inside.txt' }, null)).rejects.toThrow(
      'this conversation has no workspace, so file tools are not available',
    );
  });

  it('through the workflow: the model reads the refusal, nothing outside is read or written', async () => {
    env.llm.reset();
    env.llm.script(
      step.toolCalls([
        { id: 'call_read', name: 'read_file', arguments: { path: '../outside/secret.txt' } },
        { id: 'call_write', name: 'write_file', arguments: { path: '../outside/planted.txt', content: 'x' } },
      ]),
      step.text('I cannot reach it'),
    );
    const conv = await env.startConversation({ tools: ['read_file', 'write_file'], workspace });
    expect((await conv.send('get the secret')).reply).toBe('I cannot reach it');
    const outputs = (await conv.archive()).flatMap((i) =>
      i.type === 'TOOL_RESULT' ? [i.message.content] : [],
    );
    expect(outputs).toEqual([
      'Error: path "../outside/secret.txt" is outside the workspace',
      'Error: path "../outside/planted.txt" is outside the workspace',
    ]);
    expect(JSON.stringify(await conv.archive())).not.toContain(SECRET);
    expect(readdirSync(outside)).toEqual(['secret.txt']);
  });
});
