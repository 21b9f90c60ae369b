/**
 * Dependency faults: PostgreSQL stopped in the middle of a compaction's commit and restarted (the
 * commit retries and lands once, no partial version), and the Temporal dev server restarted on its
 * persistent database while a conversation runs (it resumes where it was).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { connectPostgres, type PostgresHandle } from '../../../src/infra/postgres';
import { connectTemporal, type TemporalHandle } from '../../../src/infra/temporal';
import { ConversationStore } from '../../../src/store';
import { createWorker } from '../../../src/worker';
import {
  compactUpdate,
  sendMessageUpdate,
  statusQuery,
  type AgentConversationInput,
} from '../../../workflows/definitions';
import { TEST_API_KEY, words } from '../../support/conversation-env';
import { isSummaryRequest, startFakeOpenAI, step, type FakeOpenAI } from '../../support/fake-openai';
import { testDatabaseUrl, testTemporalAddress, testWorkflowBundle, uniqueId } from '../../support/harness';
import { payloadCodecsFor } from '../../../src/infra/codec';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

async function fakeLlm(): Promise<FakeOpenAI> {
  const llm = await startFakeOpenAI({ apiKey: TEST_API_KEY });
  llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('summary across a fault'));
  llm.setDefault(step.text(words(1200, 'reply')));
  cleanups.push(() => llm.close());
  return llm;
}

function conversationInput(conversationId: string): AgentConversationInput {
  return {
    conversationId,
    systemPrompt: 'You are an agent.',
    model: { provider: 'openai', model: 'fake-model' },
    config: { maxContextTokens: 20_000 },
    searchAttributes: false,
  };
}

describe('PostgreSQL stopped during a commit', () => {
  it('the commit retries after the restart and lands once, with no partial version', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'dc-pg-fault-')), 'data');
    let postgres: PostgresHandle = await connectPostgres({ dataDir, poolSize: 2 });
    const port = Number(new URL(postgres.url).port);
    const pool = new pg.Pool({ connectionString: postgres.url, max: 4 });
    pool.on('error', () => undefined);
    cleanups.push(async () => {
      await pool.end();
      await postgres.shutdown();
    });
    const llm = await fakeLlm();
    const nativeConnection = await NativeConnection.connect({ address: testTemporalAddress() });
    const connection = await Connection.connect({ address: testTemporalAddress() });
    cleanups.push(async () => {
      await nativeConnection.close();
      await connection.close();
    });
    const client = new Client({ connection, dataConverter: { payloadCodecs: payloadCodecsFor(pool) } });
    const taskQueue = uniqueId('pgfault');
    let restarted = false;
    let commitCalls = 0;
    const { createActivities } = await import('../../../activities');
    const real = createActivities({
      pool,
      llm: { apiKey: TEST_API_KEY, baseURL: llm.url, timeoutMs: 10_000 },
    });
    const worker: Worker = await createWorker({
      connection: nativeConnection,
      pool,
      taskQueue,
      workflowBundle: testWorkflowBundle(),
      llm: { apiKey: TEST_API_KEY, baseURL: llm.url, timeoutMs: 10_000 },
      shutdownGraceTime: '1s',
      activityOverrides: {
        // The first commit finds PostgreSQL stopped; it comes back two seconds later.
        commitCompaction: async (input: never) => {
          commitCalls++;
          if (!restarted) {
            restarted = true;
            await postgres.shutdown();
            setTimeout(() => {
              void connectPostgres({ dataDir, port, poolSize: 2 }).then((p) => (postgres = p));
            }, 2000);
          }
          return real.commitCompaction(input);
        },
      },
    });
    const running = worker.run();
    cleanups.push(async () => {
      worker.shutdown();
      await running;
    });
    const conversationId = uniqueId('pg-restart');
    const handle = await client.workflow.start('agentConversation', {
      workflowId: conversationId,
      taskQueue,
      args: [conversationInput(conversationId)],
    });
    const sent: string[] = [];
    for (let i = 0; i < 3; i++) {
      sent.push(words(400, `p${i}x`));
      await handle.executeUpdate(sendMessageUpdate, { args: [sent[i]!] });
    }
    const brief = await handle.executeUpdate(compactUpdate, { args: [{}] });
    expect(brief.status).toBe('committed');
    expect(commitCalls).toBeGreaterThan(1);

    const store = new ConversationStore(pool);
    const records = await store.listCompactions(conversationId);
    expect(records.filter((c) => c.status === 'committed')).toHaveLength(1);
    const versions = await store.listVersions(conversationId);
    expect(versions.filter((v) => v.status === 'active')).toHaveLength(1);
    expect(versions.filter((v) => v.status === 'staged')).toHaveLength(0);
    const active = await store.getActiveContext(conversationId);
    expect(active.version).toBe(records[0]!.stagedVersion);
    expect(active.items.filter((i) => i.type === 'COMPACTION_SUMMARY')).toHaveLength(1);
    const archive = await store.getArchive(conversationId);
    expect(
      archive
        .filter((i) => i.type === 'USER_MESSAGE' && !i.sourceId)
        .map((i) => (i.type === 'USER_MESSAGE' ? i.message.content : '')),
    ).toEqual(sent);
    const next = await handle.executeUpdate(sendMessageUpdate, { args: ['after the restart'] });
    expect(next.reply.length).toBeGreaterThan(0);
  });
});

describe('the Temporal server restarted', () => {
  it('a running conversation resumes on the restarted server with its state', async () => {
    const dbFilename = join(mkdtempSync(join(tmpdir(), 'dc-temporal-fault-')), 'temporal.db');
    const pool = new pg.Pool({ connectionString: testDatabaseUrl(), max: 4 });
    cleanups.push(() => pool.end());
    const payloadCodecs = payloadCodecsFor(pool);
    let temporal: TemporalHandle = await connectTemporal({ dbFilename, ui: false, payloadCodecs });
    const port = Number(temporal.address.split(':').pop());
    cleanups.push(() => temporal.shutdown());
    const llm = await fakeLlm();
    const taskQueue = uniqueId('tfault');
    const startWorker = async (t: TemporalHandle) => {
      const w = await createWorker({
        connection: t.nativeConnection,
        pool,
        taskQueue,
        workflowBundle: testWorkflowBundle(),
        llm: { apiKey: TEST_API_KEY, baseURL: llm.url, timeoutMs: 10_000 },
        shutdownGraceTime: '1s',
      });
      return { worker: w, running: w.run() };
    };
    let w = await startWorker(temporal);
    const conversationId = uniqueId('temporal-restart');
    await temporal.client.workflow.start('agentConversation', {
      workflowId: conversationId,
      taskQueue,
      args: [conversationInput(conversationId)],
    });
    for (let i = 0; i < 2; i++) {
      await temporal.client.workflow
        .getHandle(conversationId)
        .executeUpdate(sendMessageUpdate, { args: [`before ${i}`] });
    }
    // Stop everything on the Temporal side; start the server again on the same file and port.
    w.worker.shutdown();
    await w.running;
    await temporal.shutdown();
    temporal = await connectTemporal({ dbFilename, port, ui: false, payloadCodecs });
    w = await startWorker(temporal);
    cleanups.push(async () => {
      w.worker.shutdown();
      await w.running;
    });
    const handle = temporal.client.workflow.getHandle(conversationId);
    const reply = await handle.executeUpdate(sendMessageUpdate, { args: ['after the restart'] });
    expect(reply.round).toBe(3);
    const status = await handle.query(statusQuery);
    expect(status.rounds).toBe(3);
    const last = llm.chatRequests().at(-1);
    expect((last?.body.messages ?? []).filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'before 0',
      'before 1',
      'after the restart',
    ]);
  });
});
