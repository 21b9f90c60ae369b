/**
 * A worker configured in code (issue 26 item 3): the user's own tools, made with `defineTool`,
 * through a real conversation on the dev server, PostgreSQL and the fake model — a valid call's
 * output reaches the model; invalid arguments, a throw and a timeout reach it as tool errors and
 * the conversation goes on — and `createWorker({ databaseUrl })`, which opens (and closes) its own
 * pool. The schema and limit rules alone: test/unit/llm/define-tool.test.ts.
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, ToolError } from '../../../activities';
import { payloadCodecsFor } from '../../../src/infra/codec';
import { createWorker } from '../../../src/worker';
import { messageBody, sendMessageUpdate, type AgentConversationInput } from '../../../workflows/definitions';
import { newUpdateId } from '../../../src/update-ids';
import { startConversationEnv, TEST_API_KEY, type ConversationEnv } from '../../support/conversation-env';
import { startFakeOpenAI, step, type RecordedRequest } from '../../support/fake-openai';
import { testDatabaseUrl, testTemporalAddress, testWorkflowBundle, uniqueId } from '../../support/harness';

/** Calls of each tool's `run`, by tool name. */
const runs = new Map<string, number>();
const counted = (name: string): void => {
  runs.set(name, (runs.get(name) ?? 0) + 1);
};

const weather = defineTool({
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: z.object({ city: z.string().min(1), days: z.number().int().min(1).max(7).default(1) }),
  run: async ({ city, days }) => {
    counted('get_weather');
    return { city, days, sky: 'clear' };
  },
});
const flaky = defineTool({
  name: 'flaky_lookup',
  description: 'Always fails.',
  parameters: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
  run: async () => {
    counted('flaky_lookup');
    throw new Error('the lookup service is down');
  },
});
const refusing = defineTool({
  name: 'strict_lookup',
  description: 'Refuses unknown keys.',
  parameters: z.object({ key: z.string() }),
  run: async ({ key }) => {
    counted('strict_lookup');
    throw new ToolError(`no entry for ${key}`);
  },
});
const slow = defineTool({
  name: 'slow_report',
  description: 'Takes forever.',
  parameters: z.object({}),
  timeoutMs: 500,
  run: (_args, { signal }) => {
    counted('slow_report');
    return new Promise<string>((resolve) => signal.addEventListener('abort', () => resolve('too late')));
  },
});
const loud = defineTool({
  name: 'loud_dump',
  description: 'Prints a lot.',
  parameters: z.object({}),
  maxOutputChars: 1000,
  run: () => 'y'.repeat(50_000),
});
const TOOLS = [weather, flaky, refusing, slow, loud];
const TOOL_NAMES = TOOLS.map((t) => t.name);

/** The tool messages a request sends, by call id. */
const toolMessages = (request: RecordedRequest | undefined): Record<string, unknown> =>
  Object.fromEntries(
    (request?.body.messages ?? []).filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]),
  );

describe('user tools in a conversation', () => {
  let env: ConversationEnv;
  beforeAll(async () => {
    env = await startConversationEnv({ tools: TOOLS });
  });
  afterAll(async () => {
    await env?.close();
  });

  it("a valid call runs the tool and its output is the model's next input", async () => {
    env.llm.reset();
    runs.clear();
    env.llm.script(
      step.toolCalls([{ id: 'call_w', name: 'get_weather', arguments: { city: 'Oslo' } }]),
      step.text('clear skies in Oslo'),
    );
    const conv = await env.startConversation({ tools: TOOL_NAMES, config: { maxContextTokens: 64_000 } });
    const result = await conv.send('weather in Oslo?');
    expect(result.reply).toBe('clear skies in Oslo');
    const [first, second] = env.llm.chatRequests();
    // The model was offered the tool with the schema converted from zod.
    expect(first?.body.tools).toContainEqual({
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'The weather in a city.',
        parameters: {
          type: 'object',
          properties: {
            city: { type: 'string', minLength: 1 },
            days: { type: 'integer', minimum: 1, maximum: 7, default: 1 },
          },
          required: ['city'],
        },
      },
    });
    expect(toolMessages(second)).toEqual({ call_w: '{"city":"Oslo","days":1,"sky":"clear"}' });
    expect(runs.get('get_weather')).toBe(1);
  });

  it('invalid arguments, a ToolError, a throw and a timeout are tool errors the model reads; the conversation goes on', async () => {
    env.llm.reset();
    runs.clear();
    env.llm.script(
      step.toolCalls([
        { id: 'call_bad', name: 'get_weather', arguments: { city: 7 } },
        { id: 'call_refused', name: 'strict_lookup', arguments: { key: 'k1' } },
        { id: 'call_throw', name: 'flaky_lookup', arguments: { key: 'k2' } },
        { id: 'call_slow', name: 'slow_report', arguments: {} },
        { id: 'call_loud', name: 'loud_dump', arguments: {} },
      ]),
      step.text('some tools failed'),
      step.toolCalls([{ id: 'call_ok', name: 'get_weather', arguments: { city: 'Bergen', days: 2 } }]),
      step.text('rain in Bergen'),
    );
    const conv = await env.startConversation({ tools: TOOL_NAMES, config: { maxContextTokens: 64_000 } });
    const first = await conv.send('try every tool');
    expect(first.reply).toBe('some tools failed');
    const results = toolMessages(env.llm.chatRequests()[1]);
    expect(results).toEqual({
      call_bad: 'Error: invalid arguments: city: Invalid input: expected string, received number',
      call_refused: 'Error: no entry for k1',
      call_throw: 'Error: the tool failed: the lookup service is down',
      call_slow: 'Error: the tool did not finish within 500 ms',
      call_loud: `${'y'.repeat(1000)}\n[cut at 1000 characters: the tool returned 50000]`,
    });
    // Invalid arguments never reach run; a ToolError and a timeout are reported at once; any other
    // error is retried as for the built-in tools, and the third attempt's is reported.
    expect(Object.fromEntries(runs)).toEqual({ strict_lookup: 1, flaky_lookup: 3, slow_report: 1 });

    // The round ended normally, and the next one runs.
    const second = await conv.send('and Bergen?');
    expect(second.reply).toBe('rain in Bergen');
    expect(toolMessages(env.llm.chatRequests()[3])).toMatchObject({
      call_ok: '{"city":"Bergen","days":2,"sky":"clear"}',
    });
    const { items } = await conv.activeContext();
    const errors = items.filter((i) => i.type === 'TOOL_RESULT' && i.message.content.startsWith('Error:'));
    expect(errors).toHaveLength(4);
    expect((await conv.handle.describe()).status.name).toBe('RUNNING');
  });
});

describe('createWorker configured in code', () => {
  let nativeConnection: NativeConnection;
  beforeAll(async () => {
    nativeConnection = await NativeConnection.connect({ address: testTemporalAddress() });
  });
  afterAll(async () => {
    await nativeConnection?.close();
  });

  it.each([
    ['no store', {}, /give `databaseUrl` \(e\.g\. process\.env\.DATABASE_URL\) or `pool`/],
    [
      'two stores',
      { databaseUrl: 'postgres://localhost/x', pool: new pg.Pool() },
      /give `pool` or `databaseUrl`, not both/,
    ],
    [
      'a tool named like a built-in one',
      {
        databaseUrl: 'postgres://localhost/x',
        tools: [
          defineTool({ name: 'read_file', description: 'mine', parameters: z.object({}), run: () => '' }),
        ],
      },
      /tool name "read_file" is a built-in tool's/,
    ],
  ])('refuses %s before connecting', async (_case, options, message) => {
    await expect(
      createWorker({ connection: nativeConnection, workflowBundle: testWorkflowBundle(), ...options }),
    ).rejects.toThrow(message);
  });

  it('refuses an activity named like one of ours, and closes the pool it opened', async () => {
    const app = uniqueId('dc-refused');
    await expect(
      createWorker({
        connection: nativeConnection,
        databaseUrl: withApplicationName(testDatabaseUrl(), app),
        workflowBundle: testWorkflowBundle(),
        activities: { callModel: async () => 'mine' },
      }),
    ).rejects.toThrow(/activity "callModel" would replace ours of the same name/);
    expect(await connectionsNamed(app)).toBe(0);
  });

  it('databaseUrl: the worker connects and migrates its own pool, runs a conversation with a user tool, and closes the pool when run() ends', async () => {
    const llm = await startFakeOpenAI({ apiKey: TEST_API_KEY });
    const app = uniqueId('dc-worker');
    const taskQueue = uniqueId('lib-worker');
    const worker = await createWorker({
      connection: nativeConnection,
      databaseUrl: withApplicationName(testDatabaseUrl(), app),
      poolSize: 3,
      taskQueue,
      workflowBundle: testWorkflowBundle(),
      llm: { apiKey: TEST_API_KEY, baseURL: llm.url, timeoutMs: 20_000 },
      tools: [weather],
      shutdownGraceTime: '1s',
    });
    const running = worker.run();
    const connection = await Connection.connect({ address: testTemporalAddress() });
    const clientPool = new pg.Pool({ connectionString: testDatabaseUrl(), max: 2 });
    try {
      const client = new Client({
        connection,
        dataConverter: { payloadCodecs: payloadCodecsFor(clientPool) },
      });
      llm.script(
        step.toolCalls([{ id: 'call_w', name: 'get_weather', arguments: { city: 'Lima' } }]),
        step.text('sunny'),
      );
      const id = uniqueId('lib-worker-conv');
      const input: AgentConversationInput = {
        conversationId: id,
        systemPrompt: 'You are a test agent.',
        tools: ['get_weather'],
        model: { provider: 'openai', model: 'fake-model' },
        config: { maxContextTokens: 64_000 },
        searchAttributes: false,
      };
      const handle = await client.workflow.start('agentConversation', {
        workflowId: id,
        taskQueue,
        args: [input],
      });
      const result = await handle.executeUpdate(sendMessageUpdate, {
        updateId: newUpdateId(),
        args: [messageBody('weather in Lima?')],
      });
      expect(result.reply).toBe('sunny');
      expect(toolMessages(llm.chatRequests()[1])).toEqual({
        call_w: '{"city":"Lima","days":1,"sky":"clear"}',
      });
      expect(await connectionsNamed(app)).toBeGreaterThan(0);
      await handle.terminate('test finished');
    } finally {
      worker.shutdown();
      await running;
      await connection.close();
      await clientPool.end();
      await llm.close();
    }
    expect(await connectionsNamed(app)).toBe(0);
  });
});

/** The URL with `application_name` set, so the worker's connections can be counted. */
function withApplicationName(url: string, name: string): string {
  const u = new URL(url);
  u.searchParams.set('application_name', name);
  return u.toString();
}

/** Open connections to the test database whose application name is `name`. */
async function connectionsNamed(name: string): Promise<number> {
  const pool = new pg.Pool({ connectionString: testDatabaseUrl(), max: 1 });
  try {
    const r = await pool.query<{ n: number }>(
      'select count(*)::int as n from pg_stat_activity where application_name = $1',
      [name],
    );
    return r.rows[0]?.n ?? 0;
  } finally {
    await pool.end();
  }
}
