/**
 * Compaction for a workflow of your own (issue 26 item 4): a user's agent-loop workflow
 * (test/support/user-workflows/agent-loop.ts) keeps its messages in our store through the
 * stored-conversation activities, runs our compaction child with `compactConversation` when the
 * context is full, and reads the compacted context back for its next model call — on a worker made
 * with `createWorker({ workflowsPath, activities })`, the real dev server, PostgreSQL and the fake
 * model.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities, type StoredMessage } from '../../../activities';
import { SUMMARY_MESSAGE_PREFIX } from '../../../src/context/post-compaction';
import { pairToolCalls, unansweredCalls } from '../../../src/context/tool-pairs';
import { payloadCodecsFor } from '../../../src/infra/codec';
import { ConversationStore } from '../../../src/store';
import { createWorker } from '../../../src/worker';
import {
  allHistories,
  encodeHistory,
  fetchFullHistory,
  TEST_API_KEY,
  words,
} from '../../support/conversation-env';
import {
  fakeMessageText,
  isSummaryRequest,
  startFakeOpenAI,
  step,
  type FakeOpenAI,
  type RecordedRequest,
} from '../../support/fake-openai';
import { testDatabaseUrl, testTemporalAddress, uniqueId } from '../../support/harness';
import * as userActivities from '../../support/user-workflows/agent-loop-activities';
import type { userAgentLoop, UserAgentLoopInput } from '../../support/user-workflows/agent-loop';

/** A word no summary or prompt holds: finds page text wherever it went. */
const PAGE_WORD = `pageword${randomUUID().slice(0, 6)}`;
const CONFIG = { maxContextTokens: 4000 };

let llm: FakeOpenAI;
let pool: pg.Pool;
let store: ConversationStore;
let nativeConnection: NativeConnection;
let connection: Connection;
let client: Client;
let worker: Worker;
let running: Promise<void>;
let taskQueue: string;

beforeAll(async () => {
  llm = await startFakeOpenAI({ apiKey: TEST_API_KEY });
  userActivities.configureUserActivities({
    baseURL: llm.url,
    apiKey: TEST_API_KEY,
    // Short pages: the tool results alone never fill the window (see `turn`).
    page: (url) => `${url}\n${words(300, PAGE_WORD)}`,
  });
  pool = new pg.Pool({ connectionString: testDatabaseUrl(), max: 5 });
  pool.on('error', () => undefined);
  store = new ConversationStore(pool);
  nativeConnection = await NativeConnection.connect({ address: testTemporalAddress() });
  connection = await Connection.connect({ address: testTemporalAddress() });
  client = new Client({ connection, dataConverter: { payloadCodecs: payloadCodecsFor(pool) } });
  taskQueue = uniqueId('user-loop');
  worker = await createWorker({
    connection: nativeConnection,
    pool,
    taskQueue,
    // The user's workflows file (their workflow and our compaction child), bundled at creation.
    workflowsPath: join(__dirname, '..', '..', 'support', 'user-workflows', 'agent-loop.ts'),
    activities: { callAgentModel: userActivities.callAgentModel, runUserTool: userActivities.runUserTool },
    llm: { apiKey: TEST_API_KEY, baseURL: llm.url, timeoutMs: 20_000 },
    shutdownGraceTime: '1s',
  });
  running = worker.run();
});

afterAll(async () => {
  worker?.shutdown();
  await running?.catch(() => undefined);
  await connection?.close();
  await nativeConnection?.close();
  await pool?.end();
  await llm?.close();
});

/**
 * The user's message of turn `i`: long (about 450 tokens), so that the window fills with
 * conversation the prune cannot cut (recent rounds' messages are kept whole) and a summary is needed.
 */
const turn = (i: number): string => `Read page ${i + 1}, given these notes: ${words(1800, `note${i}x`)}`;

/** The agent: fetch a page for each user message, then say it read it. Summaries from their lane. */
function scriptAgent(summary: Parameters<FakeOpenAI['setDefault']>[0]): void {
  llm.reset();
  llm.when((r) => isSummaryRequest(r)).setDefault(summary);
  llm.setDefault((r: RecordedRequest) =>
    r.body.messages?.at(-1)?.role === 'user'
      ? step.toolCalls([{ name: 'fetch_page', arguments: { url: `https://example.com/${r.index}` } }])
      : step.text('I read the page.'),
  );
}

/** Runs the user's workflow to its end: its result and its first run's id. */
async function runLoop(input: Omit<UserAgentLoopInput, 'model' | 'config'>) {
  const handle = await client.workflow.start<typeof userAgentLoop>('userAgentLoop', {
    workflowId: input.conversationId,
    taskQueue,
    args: [{ model: 'fake-model', config: CONFIG, ...input }],
    workflowExecutionTimeout: '5 minutes',
  });
  return { result: await handle.result(), runId: handle.firstExecutionRunId };
}

const agentRequests = (): RecordedRequest[] => llm.chatRequests().filter((r) => !isSummaryRequest(r));

describe("compaction in the user's own workflow", () => {
  /** The conversation the first test compacted. */
  let compactedId = '';

  it('compacts the stored messages when the window fills; the next model call reads the compacted context back', async () => {
    scriptAgent(step.summary('The agent fetched pages 1 to 5 of example.com for the user.'));
    const conversationId = uniqueId('user-loop');
    compactedId = conversationId;
    const turns = Array.from({ length: 8 }, (_, i) => turn(i));
    const { result, runId } = await runLoop({ conversationId, turns });

    const [first] = result.compactions;
    expect(first).toMatchObject({ status: 'committed', trigger: 'precheck', seq: 1, reason: null });
    expect(first?.tokensBefore).toBeGreaterThanOrEqual(0.8 * CONFIG.maxContextTokens);
    expect(first?.tokensAfter).toBeLessThan(first?.tokensBefore ?? 0);
    expect(first?.summaryItemId).toEqual(expect.any(String));
    // Every turn ran to its answer: two model calls each.
    expect(result.modelCalls).toBe(turns.length * 2);

    // The store: each compaction committed as the workflow was told, numbered in order; the last
    // one's summary (a later summary merges the earlier one) is in the active context, tool pairs whole.
    const records = await store.listCompactions(conversationId);
    expect(records.map((r) => [r.seq, r.status, r.trigger, r.summaryItemId])).toEqual(
      result.compactions.map((c, i) => [i + 1, 'committed', 'precheck', c.summaryItemId]),
    );
    const last = result.compactions.at(-1);
    const { items } = await store.getActiveContext(conversationId);
    expect(items.filter((i) => i.type === 'COMPACTION_SUMMARY').map((i) => i.id)).toEqual([
      last?.summaryItemId,
    ]);
    const pairs = pairToolCalls(items);
    expect(pairs.orphanResults).toEqual([]);
    expect(unansweredCalls(pairs)).toEqual([]);

    // What the workflow read back (readStoredContext) and sent: the summary, then whole tool pairs
    // (the fake refuses a tool result without its call, and a call without its result).
    const summaryRequest = llm.chatRequests().find((r) => isSummaryRequest(r));
    const after = agentRequests().filter((r) => r.index > (summaryRequest?.index ?? Infinity));
    expect(after.length).toBeGreaterThan(0);
    const messages = after[0]?.body.messages ?? [];
    expect(messages[0]).toMatchObject({ role: 'system' });
    expect(messages.map(fakeMessageText).find((t) => t.startsWith(SUMMARY_MESSAGE_PREFIX))).toContain(
      'The agent fetched pages 1 to 5 of example.com',
    );
    // The compacted request is smaller than the one that filled the window.
    const before = agentRequests().filter((r) => r.index < (summaryRequest?.index ?? 0));
    expect(after[0]?.rawBody.length).toBeLessThan(before.at(-1)?.rawBody.length ?? 0);

    // The same through the activity a user workflow calls.
    const acts = createActivities({ pool });
    const context = await acts.readStoredContext({ conversationId });
    expect(context.tokens).toBe(items.reduce((n, i) => n + i.tokens, 0));
    expect(
      context.messages.some((m) => m.role === 'user' && String(m.content).startsWith(SUMMARY_MESSAGE_PREFIX)),
    ).toBe(true);

    // Bodies went by reference: no page text in the user workflow's history or the child's.
    const histories = allHistories(await fetchFullHistory(client, conversationId, runId));
    expect(histories.length).toBeGreaterThanOrEqual(2);
    for (const history of histories) {
      expect(Buffer.from(encodeHistory(history)).toString('latin1')).not.toContain(PAGE_WORD);
    }
  });

  it('recallStoredArchive reads back what the compaction took out of the context', async () => {
    expect(compactedId).not.toBe('');
    const acts = createActivities({ pool });
    const recall = (args: string) =>
      acts.recallStoredArchive({
        conversationId: compactedId,
        arguments: args,
        model: 'fake-model',
        config: CONFIG,
      });
    const { items } = await store.getActiveContext(compactedId);
    // The second turn's notes were summarized away (the first is the original task, kept in the
    // header): only the archive has them.
    expect(
      items.some((i) => i.type === 'USER_MESSAGE' && String(i.message.content).includes('note1x1 ')),
    ).toBe(false);
    const found = await recall(JSON.stringify({ query: 'note1x1' }));
    expect(found.isError).toBeUndefined();
    expect(found.content).toMatch(
      /^#[0-9a-f]{6} · round 2 · user message · \d+ tokens\n {2}Read page 2, given these notes: note1x0 note1x1 /m,
    );
    expect(await recall('{nope')).toMatchObject({
      isError: true,
      content: expect.stringMatching(/^Error: the arguments are not valid JSON/),
    });
    expect(await recall('{}')).toMatchObject({
      isError: true,
      content: expect.stringMatching(/^Error: give "query"/),
    });
  });

  it('a compaction whose summary fails rolls back: the result says why, the context is as it was, the loop goes on', async () => {
    scriptAgent(step.badRequest('the summarizer refuses'));
    const conversationId = uniqueId('user-loop-fail');
    const turns = Array.from({ length: 8 }, (_, i) => turn(i));
    const { result } = await runLoop({ conversationId, turns });

    expect(result.compactions.length).toBeGreaterThan(0);
    for (const compaction of result.compactions) {
      expect(compaction).toMatchObject({
        status: 'rolled_back',
        failedPhase: 'summary',
        summaryItemId: null,
      });
      expect(compaction.reason).toMatch(/LLM_BAD_REQUEST/);
      expect(compaction.tokensAfter).toBe(compaction.tokensBefore);
    }
    expect(result.modelCalls).toBe(turns.length * 2);
    const records = await store.listCompactions(conversationId);
    expect(records.map((r) => r.status)).toEqual(result.compactions.map(() => 'rolled_back'));
    // No compaction changed the context: it holds every message the loop appended.
    const { items } = await store.getActiveContext(conversationId);
    expect(items.filter((i) => i.type === 'USER_MESSAGE')).toHaveLength(turns.length);
    expect(items.filter((i) => i.type === 'TOOL_RESULT')).toHaveLength(turns.length);
    expect(items.some((i) => i.type === 'COMPACTION_SUMMARY')).toBe(false);
  });
});

describe('the stored-conversation activities refuse what they cannot store', () => {
  it.each([
    [
      'a tool result without its call',
      [{ role: 'tool', tool_call_id: 'call_nowhere', content: 'x' }],
      'TOOL_CALL_NOT_FOUND',
      /answers call "call_nowhere", which no message before it/,
    ],
    [
      'a system message',
      [{ role: 'system', content: 'be nice' }],
      'MESSAGE_INVALID',
      /^messages\.0: a system message is part of the header: give it as openStoredConversation's systemPrompt$/,
    ],
    [
      'a role the API does not have',
      [{ role: 'robot', content: 'beep' }],
      'MESSAGE_INVALID',
      /^messages\.0\.role: Invalid discriminator value\. Expected 'user' \| 'assistant' \| 'tool'$/,
    ],
    [
      'a tool call without arguments',
      [
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f' } }],
        },
      ],
      'MESSAGE_INVALID',
      /^messages\.0\.tool_calls\.0\.function\.arguments: Invalid input: expected string/,
    ],
  ])('%s', async (_case, messages, type, message) => {
    const acts = createActivities({ pool });
    const conversationId = uniqueId('stored-refusal');
    await acts.openStoredConversation({ conversationId, model: 'fake-model' });
    const error = await acts
      .appendStoredMessages({ conversationId, model: 'fake-model', messages: messages as never })
      .catch((err: unknown) => err);
    expect(error).toMatchObject({ type, nonRetryable: true, message: expect.stringMatching(message) });
    expect((await store.getActiveContext(conversationId)).items).toEqual([]);
  });

  it('a message appended twice by the same activity call is stored once', async () => {
    const acts = createActivities({ pool });
    const conversationId = uniqueId('stored-once');
    await acts.openStoredConversation({ conversationId, systemPrompt: 'sys', model: 'fake-model' });
    const { MockActivityEnvironment } = await import('@temporalio/testing');
    // One call's attempts share its run and activity id: so do the ids its messages are stored with.
    const env = new MockActivityEnvironment({
      activityId: '1',
      workflowExecution: { workflowId: conversationId, runId: randomUUID() },
    });
    const messages: StoredMessage[] = [
      { role: 'user', content: 'hello' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'result' },
    ];
    const append = () =>
      env.run(acts.appendStoredMessages, { conversationId, model: 'fake-model', messages });
    const once = await append();
    const twice = await append();
    expect(twice).toEqual(once);
    expect(once).toMatchObject({ itemCount: 4, round: 1 });
    expect((await store.getActiveContext(conversationId)).items.map((i) => i.type)).toEqual([
      'SYSTEM_PROMPT',
      'USER_MESSAGE',
      'ASSISTANT_MESSAGE',
      'TOOL_RESULT',
    ]);
  });
});
