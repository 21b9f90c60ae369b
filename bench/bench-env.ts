/**
 * The live environment of the durable figures: a Temporal dev server and an embedded PostgreSQL
 * started by this process (src/infra), the workflows bundled once, the fake OpenAI server of the
 * tests (a real HTTP server on 127.0.0.1), and workers with the real activities.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Client } from '@temporalio/client';
import { DefaultLogger, Runtime, type Worker } from '@temporalio/worker';
import pg from 'pg';
import type { AgentTool } from '../activities/tools/registry';
import { connectPostgres, type PostgresHandle } from '../src/infra/postgres';
import { connectTemporal, type TemporalHandle } from '../src/infra/temporal';
import { ConversationStore } from '../src/store';
import { bundleWorkflows, createWorker } from '../src/worker';
import { CLAIM, messageBody, sendMessageUpdate, type AgentConversationInput } from '../workflows/definitions';
import { payloadCodecsFor } from '../src/infra/codec';
import { startFakeOpenAI, type FakeOpenAI } from '../test/support/fake-openai';
import { spawnWorker, workerStarted } from '../test/support/cli-process';

export const API_KEY = 'sk-bench';

export interface BenchWorker {
  worker: Worker;
  pool: pg.Pool;
  stop(): Promise<void>;
}

export interface BenchEnv {
  temporal: TemporalHandle;
  postgres: PostgresHandle;
  client: Client;
  llm: FakeOpenAI;
  store: ConversationStore;
  startWorker(taskQueue: string, options?: { tools?: AgentTool[]; poolSize?: number }): Promise<BenchWorker>;
  /** A worker in its own process (`durable-compaction worker`), e.g. a second worker on a task queue. */
  spawnWorker(taskQueue: string): Promise<{ pid: number; stop(): Promise<void> }>;
  /** Starts an agentConversation and returns a function that sends one user message. */
  startConversation(taskQueue: string, options: ConversationOptions): Promise<BenchConversation>;
  close(): Promise<void>;
}

export interface ConversationOptions {
  name: string;
  config: Record<string, unknown>;
  tools?: string[];
  model?: Partial<AgentConversationInput['model']>;
  systemPrompt?: string;
  maxStepsPerRound?: number;
  summaryCalls?: AgentConversationInput['summaryCalls'];
}

export interface BenchConversation {
  id: string;
  firstRunId: string;
  send(text: string): Promise<unknown>;
}

export async function startBenchEnv(): Promise<BenchEnv> {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // installed already
  }
  const postgres = await connectPostgres({ poolSize: 4 });
  const temporal = await connectTemporal({ ui: false, payloadCodecs: payloadCodecsFor(postgres.pool) });
  const bundle = await bundleWorkflows();
  // Thousands of whole-context requests over a long run: keep only the recent ones in memory.
  const llm = await startFakeOpenAI({ apiKey: API_KEY, maxRecorded: 100 });
  const bundlePath = join(__dirname, '..', 'test-output', 'bench-workflow-bundle.js');
  mkdirSync(join(__dirname, '..', 'test-output'), { recursive: true });
  writeFileSync(bundlePath, bundle.code);
  const store = new ConversationStore(postgres.pool);
  const client = temporal.client;
  return {
    temporal,
    postgres,
    client,
    llm,
    store,
    async startWorker(taskQueue, options = {}) {
      const pool = new pg.Pool({ connectionString: postgres.url, max: options.poolSize ?? 10 });
      pool.on('error', () => undefined);
      const worker = await createWorker({
        connection: temporal.nativeConnection,
        pool,
        taskQueue,
        workflowBundle: bundle,
        llm: { apiKey: API_KEY, baseURL: llm.url, timeoutMs: 60_000 },
        tools: options.tools ?? [],
        shutdownGraceTime: '1s',
      });
      const running = worker.run();
      return {
        worker,
        pool,
        async stop() {
          if (worker.getState() === 'RUNNING') worker.shutdown();
          await running.catch(() => undefined);
          await pool.end();
        },
      };
    },
    async spawnWorker(taskQueue) {
      const worker = spawnWorker(
        taskQueue,
        {
          TEMPORAL_ADDRESS: temporal.address,
          DATABASE_URL: postgres.url,
          OPENAI_API_KEY: API_KEY,
          OPENAI_BASE_URL: llm.url,
        },
        { workflowBundle: bundlePath, grace: '1s' },
      );
      const { child } = worker;
      await workerStarted(worker);
      return {
        pid: child.pid ?? 0,
        async stop() {
          if (child.exitCode !== null) return;
          const exited = new Promise((r) => child.once('exit', r));
          child.kill('SIGTERM');
          await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
          if (child.exitCode === null) child.kill('SIGKILL');
        },
      };
    },
    async startConversation(taskQueue, options) {
      const id = `${options.name}-${randomUUID().slice(0, 8)}`;
      const input: AgentConversationInput = {
        conversationId: id,
        systemPrompt: options.systemPrompt ?? 'You are a benchmark agent.',
        tools: options.tools ?? [],
        model: { provider: 'openai', model: 'fake-model', summaryModel: 'fake-summarizer', ...options.model },
        config: options.config,
        ...(options.maxStepsPerRound !== undefined ? { maxStepsPerRound: options.maxStepsPerRound } : {}),
        ...(options.summaryCalls !== undefined ? { summaryCalls: options.summaryCalls } : {}),
      };
      const handle = await client.workflow.start('agentConversation', {
        workflowId: id,
        taskQueue,
        args: [{ ...CLAIM, ...input }],
      });
      return {
        id,
        firstRunId: handle.firstExecutionRunId,
        send: (text) => handle.executeUpdate(sendMessageUpdate, { args: [messageBody(text)] }),
      };
    },
    async close() {
      await llm.close();
      await postgres.shutdown();
      await temporal.shutdown();
    },
  };
}
