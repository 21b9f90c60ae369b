/**
 * A test environment for the agent conversation workflows on the real dev server and the real
 * PostgreSQL of the integration run (test/support/global-setup.ts): a worker with the real
 * activities (`createActivities`) on its own task queue, the LLM client pointed at a fake OpenAI
 * server in this process, and helpers to drive a conversation (start, send, compact, approve),
 * read its state (status, events, the store) and fetch its workflow history, children included.
 *
 * ```ts
 * const env = await startConversationEnv();
 * const conv = await env.startConversation({ config: { maxContextTokens: 2000 } });
 * env.llm.script(step.text('hello'));
 * const reply = await conv.send('hi');
 * const history = await conv.fullHistory();
 * await env.close();
 * ```
 */
import { randomUUID } from 'node:crypto';
import {
  Client,
  Connection,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { Pool } from 'pg';
import type { ContextItem } from '../../src/context/items';
import { ConversationStore, type CompactionEvent, type CompactionRecord } from '../../src/store';
import type { AgentTool } from '../../activities/tools/registry';
import { createWorker } from '../../src/worker';
import { payloadCodecsFor } from '../../src/infra/codec';
import { ConversationClient } from '../../src/client';
import {
  approveCompactionUpdate,
  compactUpdate,
  endUpdate,
  eventsQuery,
  messageBody,
  sendMessageUpdate,
  statusQuery,
  type AgentConversationInput,
  type CompactionBrief,
  type ConversationEvent,
  type ConversationStatus,
  type SendMessageResult,
} from '../../workflows/definitions';
import { startFakeOpenAI, type FakeOpenAI } from './fake-openai';
import { startTestWorker, testDatabaseUrl, testWorkflowBundle } from './harness';
import { newUpdateId } from '../../src/update-ids';
import { fetchFullHistory, waitFor, type FullHistory } from './histories';

// The history helpers live in ./histories (shared with bench/); tests import them from here too.
export * from './histories';

type History = temporal.api.history.v1.IHistory;

/** The API key the worker's LLM client presents (the fake checks it); must never reach history. */
export const TEST_API_KEY = `sk-test-${randomUUID().replace(/-/g, '')}`;

export interface ConversationEnvOptions {
  /** Tools registered on the worker besides the built-ins. */
  tools?: AgentTool[];
  /** The LLM client's per-request timeout. Default 20 s. */
  llmTimeoutMs?: number;
  /** Connect to this Temporal server (`host:port`, namespace `default`) instead of the run's shared one. */
  temporalAddress?: string;
  /** Replace activities of the worker (fault injection); see `createWorker`. */
  activityOverrides?: Record<string, (...args: never[]) => Promise<unknown>>;
}

export interface StartOptions {
  /** Compaction configuration (partial; the schema fills the rest). Default: a small window. */
  config?: Record<string, unknown>;
  systemPrompt?: string;
  tools?: string[];
  /** Workspace directory of the built-in file tools. Default: none. */
  workspace?: string;
  model?: Partial<AgentConversationInput['model']>;
  maxStepsPerRound?: number;
  /** Prefix of the conversation id (a unique suffix is added). */
  name?: string;
  /** The conversation id as it is (e.g. one imported into the store before); overrides `name`. */
  id?: string;
  searchAttributes?: boolean;
  /** Where model and tool calls run (default: the workflow's default, local activities). */
  agentCalls?: AgentConversationInput['agentCalls'];
  /** Where a compaction's summary call runs (default: the workflow's default, an activity). */
  summaryCalls?: AgentConversationInput['summaryCalls'];
}

export interface Conversation {
  id: string;
  handle: WorkflowHandle;
  /** Sends a user message; resolves with the round's result (rejects when the round fails). */
  send(text: string): Promise<SendMessageResult>;
  /** Requests a manual compaction. */
  compact(focus?: string): Promise<CompactionBrief>;
  approve(approve: boolean): Promise<{ decision: 'approved' | 'rejected' }>;
  end(): Promise<{ rounds: number }>;
  status(): Promise<ConversationStatus>;
  events(): Promise<ConversationEvent[]>;
  /** The active context in the store, in order. */
  activeContext(): Promise<{ version: number; items: ContextItem[] }>;
  /** Every item ever stored for the conversation (the archive). */
  archive(): Promise<ContextItem[]>;
  /** The compaction records in the store, by seq. */
  compactions(): Promise<CompactionRecord[]>;
  compactionEvents(compactionId: string): Promise<CompactionEvent[]>;
  /** The latest run's history. */
  history(): Promise<History>;
  /** Every run of the conversation and every compaction child. */
  fullHistory(): Promise<FullHistory>;
  /** Waits until `predicate(status)` holds (polling the `status` Query). */
  waitForStatus(
    predicate: (s: ConversationStatus) => boolean,
    timeoutMs?: number,
  ): Promise<ConversationStatus>;
}

export interface ConversationEnv {
  client: Client;
  /** The typed client on `client`, starting conversations on `taskQueue`, `export` on `pool`. */
  conversations: ConversationClient;
  llm: FakeOpenAI;
  pool: Pool;
  store: ConversationStore;
  taskQueue: string;
  startConversation(options?: StartOptions): Promise<Conversation>;
  close(): Promise<void>;
}

/** A small window, short timeouts: what most tests start from. */
export const SMALL_WINDOW_CONFIG: Record<string, unknown> = {
  maxContextTokens: 4000,
  cooldownMs: 2000,
};

/** Starts the fake LLM, a store on the test database and a worker on a fresh task queue. */
export async function startConversationEnv(options: ConversationEnvOptions = {}): Promise<ConversationEnv> {
  const llm = await startFakeOpenAI({ apiKey: TEST_API_KEY });
  const pool = new Pool({ connectionString: testDatabaseUrl(), max: 6 });
  const store = new ConversationStore(pool);
  // As long as the default queue's name (`durable-compaction`): it is in every workflow task's history.
  const taskQueue = `conv-${randomUUID().replace(/-/g, '').slice(0, 13)}`;
  const workerOptions = {
    taskQueue,
    llm: { apiKey: TEST_API_KEY, baseURL: llm.url, timeoutMs: options.llmTimeoutMs ?? 20_000 },
    tools: options.tools ?? [],
    shutdownGraceTime: '1s',
    ...(options.activityOverrides ? { activityOverrides: options.activityOverrides } : {}),
  };
  let worker: { client: Client; shutdown(): Promise<void> };
  try {
    worker = options.temporalAddress
      ? await startWorkerOn(options.temporalAddress, workerOptions)
      : await startTestWorker(workerOptions);
  } catch (err) {
    await llm.close();
    await pool.end();
    throw err;
  }
  const client = worker.client;
  const started: Conversation[] = [];

  const startConversation = async (opts: StartOptions = {}): Promise<Conversation> => {
    const id = opts.id ?? `${opts.name ?? 'conv'}-${randomUUID().slice(0, 8)}`;
    const input: AgentConversationInput = {
      conversationId: id,
      systemPrompt: opts.systemPrompt ?? 'You are a careful test agent.',
      tools: opts.tools ?? [],
      ...(opts.workspace !== undefined ? { workspace: opts.workspace } : {}),
      model: { provider: 'openai', model: 'fake-model', summaryModel: 'fake-summarizer', ...opts.model },
      config: { ...SMALL_WINDOW_CONFIG, ...opts.config },
      searchAttributes: opts.searchAttributes ?? false,
      ...(opts.maxStepsPerRound !== undefined ? { maxStepsPerRound: opts.maxStepsPerRound } : {}),
      ...(opts.agentCalls ? { agentCalls: opts.agentCalls } : {}),
      ...(opts.summaryCalls ? { summaryCalls: opts.summaryCalls } : {}),
    };
    const handle = await client.workflow.start('agentConversation', {
      workflowId: id,
      taskQueue,
      args: [input],
      workflowExecutionTimeout: '10 minutes',
    });
    const conv = conversation(client, store, handle, id);
    started.push(conv);
    return conv;
  };

  return {
    client,
    conversations: new ConversationClient({ client, taskQueue, pool }),
    llm,
    pool,
    store,
    taskQueue,
    startConversation,
    async close() {
      // Conversations still running would keep timers and pollers busy: end them first.
      await Promise.allSettled(
        started.map(async (c) => {
          const d = await c.handle.describe();
          if (d.status.name === 'RUNNING') await c.handle.terminate('test finished');
        }),
      );
      await worker.shutdown();
      await llm.close();
      await pool.end();
    },
  };
}

/** A worker like `startTestWorker`'s, on another Temporal server (e.g. one with its own dynamic config). */
async function startWorkerOn(
  address: string,
  options: {
    taskQueue: string;
    llm: { apiKey: string; baseURL: string; timeoutMs: number };
    tools: AgentTool[];
  },
): Promise<{ client: Client; shutdown(): Promise<void> }> {
  const connection = await Connection.connect({ address });
  const nativeConnection = await NativeConnection.connect({ address });
  const pool = new Pool({ connectionString: testDatabaseUrl(), max: 5 });
  pool.on('error', () => undefined);
  const worker = await createWorker({
    ...options,
    connection: nativeConnection,
    pool,
    workflowBundle: testWorkflowBundle(),
    shutdownGraceTime: '1s',
  });
  const running = worker.run();
  return {
    client: new Client({ connection, dataConverter: { payloadCodecs: payloadCodecsFor(pool) } }),
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await nativeConnection.close();
      await connection.close();
      await pool.end();
    },
  };
}

function conversation(
  client: Client,
  store: ConversationStore,
  handle: WorkflowHandleWithFirstExecutionRunId,
  id: string,
): Conversation {
  const conv: Conversation = {
    id,
    handle,
    send: (text) =>
      handle.executeUpdate(sendMessageUpdate, {
        updateId: newUpdateId(),
        args: [messageBody(text)],
      }),
    compact: (focus) => handle.executeUpdate(compactUpdate, { args: [focus === undefined ? {} : { focus }] }),
    approve: (approve) => handle.executeUpdate(approveCompactionUpdate, { args: [{ approve }] }),
    end: () => handle.executeUpdate(endUpdate, { args: [] }),
    status: () => handle.query(statusQuery),
    events: () => handle.query(eventsQuery, {}),
    activeContext: () => store.getActiveContext(id),
    archive: () => store.getArchive(id),
    compactions: () => store.listCompactions(id),
    compactionEvents: (compactionId) => store.listEvents(compactionId),
    history: () => client.workflow.getHandle(id).fetchHistory(),
    fullHistory: () => fetchFullHistory(client, id, handle.firstExecutionRunId),
    async waitForStatus(predicate, timeoutMs = 30_000) {
      return waitFor(() => conv.status(), predicate, timeoutMs, `status of ${id}`);
    },
  };
  return conv;
}

/** A unique id for items written by a test directly to the store. */
export function testItemId(prefix = 'test'): string {
  return `${prefix}-${randomUUID()}`;
}

/** A user message item, as a test appends it to the store behind the workflow's back. */
export function userItem(text: string, round: number): ContextItem {
  return {
    id: testItemId('direct'),
    type: 'USER_MESSAGE',
    message: { role: 'user', content: text },
    tokens: Math.ceil(text.length / 4) + 4,
    round,
    isMeta: false,
    pinned: false,
    ephemeral: false,
  };
}
