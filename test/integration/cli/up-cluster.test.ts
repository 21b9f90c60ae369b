/**
 * `up --cluster` in `npm test`: the production topology's smoke test (the attack on it is
 * `npm run test:cluster`). `up --cluster --workers 2 --no-ui` runs with DATABASE_URL at the
 * integration run's own PostgreSQL (a fresh database for the project's store): it creates
 * Temporal's two databases on that server, starts no embedded PostgreSQL (no `postgres/` in its
 * data directory), and a conversation's workflow lands in them. The conversation answers a round;
 * the worker that ran it is SIGKILLed, the supervisor restarts it (a new pid in the lock file, the
 * restart printed, the new process polling) and the conversation answers another. Ctrl-C exits 0
 * and leaves no server or worker running. A second start on the same data directory, DATABASE_URL
 * and port creates and migrates nothing, finds the conversation (its status answers, its rounds
 * kept, its context sent to the model) and it answers a third round; ended, then Ctrl-C again.
 *
 * Temporal's databases have fixed names (`temporal`, `temporal_visibility`: TEMPORAL_DATABASES;
 * no other test uses them). The test drops those it created at the end and reuses those it found
 * (TEST_DATABASE_URL at a server kept across runs; never one a live Temporal server uses); two
 * runs on one server take turns on an advisory lock. A run that starts within 20 s of the last
 * one's stop waits ~40 s more for its server's membership ring (see cluster-readiness.ts).
 *
 * Measured on this 2-core machine with the server built: ~25 s (31 s with the global setup), about
 * a minute under other test runs' load. A machine's first start builds the server from the Go
 * module cache the CLI's build leaves (~2 minutes more), inside the first start's 600 s and the
 * test's 900 s.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TEMPORAL_DATABASES } from '../../../src/infra/cluster-config';
import { sqlEndpoint } from '../../../src/infra/cluster';
import { payloadCodecsFor } from '../../../src/infra/codec';
import { redactUrl } from '../../../src/infra/postgres';
import { processInfo } from '../../../src/infra/stack-lock';
import { newUpdateId } from '../../../src/update-ids';
import { DEFAULT_TASK_QUEUE } from '../../../src/worker';
import {
  endUpdate,
  messageBody,
  sendMessageUpdate,
  statusQuery,
  type AgentConversationInput,
  type SendMessageResult,
} from '../../../workflows/definitions';
import { startClusterProcess, type ClusterProcess } from '../../support/cluster-process';
import { TEST_API_KEY, waitFor } from '../../support/conversation-env';
import { testDatabaseUrl } from '../../support/harness';
import { lastMessageText, startFakeOpenAI, step, type FakeOpenAI } from '../../support/fake-openai';

const TEMPORAL_DBS: string[] = Object.values(TEMPORAL_DATABASES);
/** The advisory lock two runs of this test on one server take turns on. */
const LOCK = "hashtext('durable-compaction up --cluster smoke test')";

/** The project's store: a database of this run's own on the run's PostgreSQL server. */
const storeDb = `dc_cluster_smoke_${randomUUID().slice(0, 8)}`;
const dataDir = mkdtempSync(join(tmpdir(), 'dc-cluster-smoke-'));
let llm: FakeOpenAI;
/** On the run's server: holds the advisory lock, creates and drops the databases. */
let admin: pg.Client | undefined;
let store: pg.Pool | undefined;
/** Temporal's databases that were on the server before the test: reused, never dropped. */
let foundBefore: string[] = [];
const clusters: ClusterProcess[] = [];
const connections: Connection[] = [];

/** The run's PostgreSQL server, database `database`. */
function urlOf(database: string): string {
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${database}`;
  return url.toString();
}

async function temporalDatabasesOnServer(): Promise<string[]> {
  const rows = await admin!.query<{ datname: string }>(
    'select datname from pg_database where datname = any($1) order by datname',
    [TEMPORAL_DBS],
  );
  return rows.rows.map((r) => r.datname);
}

/**
 * `up --cluster` on the test's data directory, with the store database as DATABASE_URL; on
 * `port`, as a user restarts it (default: free ports).
 */
async function startCluster(port?: number): Promise<ClusterProcess> {
  const cluster = await startClusterProcess({
    workers: 2,
    dataDir,
    port,
    args: ['--workflow-bundle', inject('workflowBundlePath')],
    env: {
      DATABASE_URL: urlOf(storeDb),
      OPENAI_API_KEY: TEST_API_KEY,
      OPENAI_BASE_URL: llm.url,
    },
  });
  clusters.push(cluster);
  return cluster;
}

/** A client of the cluster (message bodies travel by reference in the store). */
async function clientOf(cluster: ClusterProcess): Promise<{ client: Client; connection: Connection }> {
  const connection = await Connection.connect({ address: cluster.address });
  connections.push(connection);
  return {
    connection,
    client: new Client({ connection, dataConverter: { payloadCodecs: payloadCodecsFor(store!) } }),
  };
}

function send(handle: WorkflowHandle, text: string): Promise<SendMessageResult> {
  return handle.executeUpdate(sendMessageUpdate, { updateId: newUpdateId(), args: [messageBody(text)] });
}

/** The pid of the worker that completed the workflow's last task (its identity, `pid@host`). */
async function lastWorkerPid(handle: WorkflowHandle): Promise<number> {
  const events = (await handle.fetchHistory()).events ?? [];
  const completed = events.filter((e) => e.workflowTaskCompletedEventAttributes).at(-1);
  return Number(completed?.workflowTaskCompletedEventAttributes?.identity?.split('@')[0]);
}

/** Ctrl-C: `up --cluster` exits 0 and neither the server nor a worker it ran is left. */
async function stopCluster(cluster: ClusterProcess): Promise<void> {
  const { server, workers } = cluster.pids();
  expect(workers).toHaveLength(2);
  expect(await cluster.stop()).toBe(0);
  expect(cluster.output.stdout).toMatch(
    /^stopped\. Start again with `npm run cluster`; the data is kept\.$/m,
  );
  for (const pid of [server, ...workers]) expect(pid === null ? 'no pid' : processInfo(pid)).toBeNull();
}

beforeAll(async () => {
  llm = await startFakeOpenAI({ apiKey: TEST_API_KEY });
  llm.setDefault((request) => step.text(`answer to: ${lastMessageText(request)}`));
  admin = new pg.Client({ connectionString: testDatabaseUrl() });
  await admin.connect();
  await admin.query(`select pg_advisory_lock(${LOCK})`);
  foundBefore = await temporalDatabasesOnServer();
  await admin.query(`create database ${pg.escapeIdentifier(storeDb)}`);
  store = new pg.Pool({ connectionString: urlOf(storeDb), max: 2 });
  store.on('error', () => undefined);
});

afterAll(async () => {
  for (const connection of connections) await connection.close().catch(() => undefined);
  for (const cluster of clusters) await cluster.stop().catch(() => undefined);
  await store?.end();
  if (admin) {
    // `with (force)`: a cluster that did not stop cleanly may still hold connections.
    for (const name of [storeDb, ...TEMPORAL_DBS.filter((name) => !foundBefore.includes(name))])
      await admin.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
    await admin.end();
  }
  rmSync(dataDir, { recursive: true, force: true });
  await llm?.close();
});

describe('up --cluster with DATABASE_URL', () => {
  it("runs on DATABASE_URL's server, restarts a SIGKILLed worker, stops on Ctrl-C and continues on the same data", async () => {
    // ---- first start: Temporal's databases on the run's server, no embedded PostgreSQL ----
    const first = await startCluster();
    expect(first.output.stdout).toContain(`\n  PostgreSQL   ${redactUrl(urlOf(storeDb))}\n`);
    const { host, port } = sqlEndpoint(testDatabaseUrl());
    const missing = TEMPORAL_DBS.filter((name) => !foundBefore.includes(name));
    if (missing.length > 0)
      expect(first.output.stdout).toContain(
        `\n  databases    created ${missing.join(', ')} on ${host}:${port}\n`,
      );
    else expect(first.output.stdout).not.toContain('databases    created');
    expect(await temporalDatabasesOnServer()).toEqual([...TEMPORAL_DBS].sort());
    expect(existsSync(join(dataDir, 'postgres'))).toBe(false);

    let { client, connection } = await clientOf(first);
    const id = `cluster-smoke-${randomUUID().slice(0, 8)}`;
    const input: AgentConversationInput = {
      conversationId: id,
      systemPrompt: 'You are a careful test agent.',
      model: { provider: 'openai', model: 'fake-model', summaryModel: 'fake-summarizer' },
    };
    const handle = await client.workflow.start('agentConversation', {
      workflowId: id,
      taskQueue: DEFAULT_TASK_QUEUE,
      args: [input],
    });
    expect(await send(handle, 'first question')).toMatchObject({
      round: 1,
      reply: 'answer to: first question',
    });
    // The workflow is in Temporal's database on the run's server.
    const temporalDb = new pg.Client({ connectionString: urlOf(TEMPORAL_DATABASES.default) });
    await temporalDb.connect();
    const executions = await temporalDb
      .query('select 1 from current_executions where workflow_id = $1', [id])
      .finally(() => temporalDb.end());
    expect(executions.rowCount).toBe(1);

    // ---- the worker that ran the round SIGKILLed: restarted, and the conversation goes on ----
    const victim = await lastWorkerPid(handle);
    const [survivor] = first.pids().workers.filter((pid) => pid !== victim);
    expect(first.pids().workers).toContain(victim);
    process.kill(victim, 'SIGKILL');
    const restarted = await waitFor(
      async () => first.pids().workers,
      (pids) => pids.length === 2 && !pids.includes(victim),
      30_000,
      'a new worker pid in the lock file',
    );
    expect(restarted).toContain(survivor);
    expect(await send(handle, 'second question')).toMatchObject({
      round: 2,
      reply: 'answer to: second question',
    });
    // The supervisor said so, and the restarted worker is up again: its log (appended across
    // restarts) says so a second time.
    const restart = new RegExp(
      `^(worker \\d) \\(pid ${victim}\\) exited \\(SIGKILL\\); restarting in 0\\.1 s`,
      'm',
    ).exec(first.output.stdout);
    expect(restart?.[1], first.output.stdout).toBeDefined();
    const name = restart![1]!;
    const workerLog = join(dataDir, 'temporal-cluster', 'logs', `${name.replace(' ', '-')}.log`);
    await waitFor(
      async () => readFileSync(workerLog, 'utf8').match(/worker: task queue/g)?.length ?? 0,
      (starts) => starts === 2,
      60_000,
      `the restarted ${name} up (${workerLog})`,
    );

    // ---- Ctrl-C ----
    await connection.close();
    await stopCluster(first);

    // ---- second start on the same data: nothing created or migrated, the conversation goes on ----
    const second = await startCluster(first.port);
    expect(second.output.stdout).not.toContain('databases    created');
    expect(second.output.stdout).not.toContain('versions applied');
    expect(existsSync(join(dataDir, 'postgres'))).toBe(false);
    ({ client, connection } = await clientOf(second));
    const again = client.workflow.getHandle(id);
    expect(await again.query(statusQuery)).toMatchObject({ conversationId: id, phase: 'idle', rounds: 2 });
    expect(await send(again, 'third question')).toMatchObject({
      round: 3,
      reply: 'answer to: third question',
    });
    // The model saw the conversation so far, from the store on DATABASE_URL's server.
    const sent = JSON.stringify(llm.chatRequests().at(-1)?.body.messages);
    for (const text of ['first question', 'answer to: second question', 'third question'])
      expect(sent).toContain(text);
    // Ended, so that nothing is left running on Temporal's databases when they are reused.
    expect(await again.executeUpdate(endUpdate, { args: [] })).toEqual({ rounds: 3 });
    await connection.close();
    await stopCluster(second);
  }, 900_000);
});
