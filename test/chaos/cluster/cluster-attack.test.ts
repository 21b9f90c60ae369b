/**
 * The load test attacked on the production topology (issue 27): `up --cluster` with 3 worker
 * processes on the Temporal server with PostgreSQL persistence and 4 history shards; 200
 * conversations × 30 rounds (CLUSTER_CONVERSATIONS, CLUSTER_ROUNDS), 5 % of LLM calls failing;
 * meanwhile a worker process is SIGKILLed every 10 s (CLUSTER_KILL_EVERY_MS) and restarted by the
 * cluster's supervisor, and the Temporal server is SIGKILLed once, a third of the way in, and
 * restarted. Then: every message in its conversation's archive once and in order (0 lost), every
 * conversation idle (0 stuck), a sample of histories replays (0 nondeterminism), every compaction
 * committed at most once (one commit event at most; a committed one exactly one), and Ctrl-C
 * leaves no process behind.
 *
 * `npm test`'s last step, after every other test (alone: `npm run test:cluster`): ~15 minutes on
 * 2 cores, and its load takes every core.
 */
import { readFileSync } from 'node:fs';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payloadCodecsFor } from '../../../src/infra/codec';
import { processInfo } from '../../../src/infra/stack-lock';
import { replayHistories } from '../../../src/replay/histories';
import { ConversationStore } from '../../../src/store';
import { newUpdateId } from '../../../src/update-ids';
import {
  endUpdate,
  messageBody,
  sendMessageUpdate,
  statusQuery,
  type AgentConversationInput,
  type SendMessageResult,
} from '../../../workflows/definitions';
import { startClusterProcess, type ClusterProcess } from '../../support/cluster-process';
import { TEST_API_KEY, words } from '../../support/conversation-env';
import { isSummaryRequest, startFakeOpenAI, step, type FakeOpenAI } from '../../support/fake-openai';

const CONVERSATIONS = Number(process.env.CLUSTER_CONVERSATIONS ?? 200);
const ROUNDS = Number(process.env.CLUSTER_ROUNDS ?? 30);
const KILL_EVERY_MS = Number(process.env.CLUSTER_KILL_EVERY_MS ?? 10_000);
const WORKERS = 3;
const FAILURE_RATE = 0.05;

let llm: FakeOpenAI;
let cluster: ClusterProcess;
let connection: Connection;
let client: Client;
let pool: pg.Pool;

beforeAll(async () => {
  llm = await startFakeOpenAI({ apiKey: TEST_API_KEY, maxRecorded: 100 });
  cluster = await startClusterProcess({
    workers: WORKERS,
    env: { OPENAI_API_KEY: TEST_API_KEY, OPENAI_BASE_URL: llm.url, LLM_TIMEOUT_MS: '20000' },
  });
  pool = new pg.Pool({ connectionString: cluster.databaseUrl, max: 8 });
  pool.on('error', () => undefined);
  connection = await Connection.connect({ address: cluster.address });
  client = new Client({ connection, dataConverter: { payloadCodecs: payloadCodecsFor(pool) } });
}, 900_000);

afterAll(async () => {
  await connection?.close().catch(() => undefined);
  await pool?.end();
  await cluster?.stop();
  // CLUSTER_KEEP_DATA=1: the cluster's data directory stays for a look (`up --cluster` on it again).
  if (process.env.CLUSTER_KEEP_DATA === '1') console.error(`cluster data kept in ${cluster?.dataDir}`);
  else cluster?.remove();
  await llm?.close();
});

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** What a server restart or a killed worker causes for a moment: retried; anything else is a failure. */
// "Workflow Task in failed state": the server refuses Updates while a workflow task is being
// retried after a failure (e.g. a new worker could not fetch the history while the server was
// away); the causes are read from the histories below, and nondeterminism fails the test.
const TRANSIENT =
  /UNAVAILABLE|DEADLINE_EXCEEDED|unavailable|deadline|connect|reset|shutting down|not found|closed|no poller seen|Workflow Task in failed state/i;

/** Conversations whose Updates the server refuses as "in failed state", since when (for the progress lines). */
const refusedSince = new Map<string, number>();

/** `fn` retried every second on {@link TRANSIENT} errors, for at most 5 minutes. */
async function transient<T>(
  fn: () => Promise<T>,
  stats: { retries: number },
  workflowId?: string,
): Promise<T> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      const result = await fn();
      if (workflowId !== undefined) refusedSince.delete(workflowId);
      return result;
    } catch (err) {
      // The client's error says what it was doing; its cause, the server's status.
      const text = `${(err as Error).message} ${((err as Error).cause as Error | undefined)?.message ?? ''}`;
      if (Date.now() > deadline || !TRANSIENT.test(text)) throw err;
      if (workflowId !== undefined && /failed state/.test(text) && !refusedSince.has(workflowId))
        refusedSince.set(workflowId, Date.now());
      stats.retries++;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}

/** What the server says of a conversation's pending workflow task and its last events (for the progress lines). */
async function taskState(client: Client, workflowId: string): Promise<string> {
  const handle = client.workflow.getHandle(workflowId);
  const description = await handle.describe().catch((err: Error) => err);
  if (description instanceof Error) return `describe failed: ${description.message}`;
  const task = description.raw.pendingWorkflowTask;
  const history = await handle.fetchHistory().catch(() => null);
  const last = (history?.events ?? []).slice(-6).map((e) => {
    const type = Object.keys(e).find((k) => k.endsWith('EventAttributes')) ?? '?';
    return `${String(e.eventId)}:${type.replace('EventAttributes', '')}`;
  });
  const time = (t: { seconds?: unknown } | null | undefined): string =>
    t?.seconds ? new Date(Number(t.seconds) * 1000).toISOString().slice(11, 19) : '-';
  return (
    `task ${
      task
        ? `state ${String(task.state)} attempt ${String(task.attempt)} scheduled ${time(task.scheduledTime)} ` +
          `started ${time(task.startedTime)} first scheduled ${time(task.originalScheduledTime)}`
        : 'none'
    }; ` + `last events ${last.join(' ')}`
  );
}

/**
 * An Update retried with the same id while the server is away (killed and restarting): the server
 * deduplicates by id, so a retry never sends the message twice.
 */
async function sendOnce(
  handle: WorkflowHandle,
  text: string,
  stats: { retries: number },
): Promise<SendMessageResult> {
  const updateId = newUpdateId();
  try {
    return await transient(
      () => handle.executeUpdate(sendMessageUpdate, { updateId, args: [messageBody(text)] }),
      stats,
      handle.workflowId,
    );
  } catch (err) {
    // Why its workflow task keeps failing, when it does: the last failures in its history.
    const history = await handle.fetchHistory().catch(() => null);
    const failures = (history?.events ?? [])
      .filter((e) => e.workflowTaskFailedEventAttributes)
      .slice(-3)
      .map((e) => ({
        cause: e.workflowTaskFailedEventAttributes?.cause,
        message: e.workflowTaskFailedEventAttributes?.failure?.message,
        stack: e.workflowTaskFailedEventAttributes?.failure?.stackTrace?.slice(0, 1500),
      }));
    console.error(`cluster attack: ${handle.workflowId} failed: ${JSON.stringify(failures, null, 2)}`);
    throw err;
  }
}

describe('the cluster under attack', () => {
  it(`${CONVERSATIONS} conversations × ${ROUNDS} rounds on ${WORKERS} workers, a worker SIGKILLed every ${KILL_EVERY_MS / 1000} s, the server once`, async () => {
    let calls = 0;
    let injected = 0;
    const answer = (ok: ReturnType<typeof step.text>) => () => {
      calls++;
      if (calls % Math.round(1 / FAILURE_RATE) === 0) {
        injected++;
        return step.serverError();
      }
      return ok;
    };
    llm.when((r) => isSummaryRequest(r)).setDefault(answer(step.summary('cluster summary')));
    llm.setDefault(answer(step.text(words(1500, 'answer'))));

    const handles: { id: string; handle: WorkflowHandle }[] = [];
    for (let i = 0; i < CONVERSATIONS; i++) {
      const id = `attack${i}-${Date.now().toString(36)}`;
      const input: AgentConversationInput = {
        conversationId: id,
        systemPrompt: 'You are a careful test agent.',
        tools: [],
        model: { provider: 'openai', model: 'fake-model', summaryModel: 'fake-summarizer' },
        config: { maxContextTokens: 4000, cooldownMs: 2000 },
        // The search attributes go to the cluster's SQL visibility store.
        searchAttributes: true,
      };
      const handle = await client.workflow.start('agentConversation', {
        workflowId: id,
        taskQueue: 'durable-compaction',
        args: [input],
      });
      handles.push({ id, handle });
    }

    // The attack: a worker every KILL_EVERY_MS (round robin), the server once a third of the way in.
    const kills = { workers: 0, server: 0 };
    let done = false;
    let roundsDone = 0;
    const total = CONVERSATIONS * ROUNDS;
    const attack = (async () => {
      let next = 0;
      while (!done) {
        await new Promise((r) => setTimeout(r, KILL_EVERY_MS));
        if (done) break;
        const { server, workers } = cluster.pids();
        if (kills.server === 0 && roundsDone >= total / 3 && server !== null && processInfo(server)) {
          process.kill(server, 'SIGKILL');
          kills.server++;
          console.error(`attack: SIGKILL the Temporal server (pid ${server}) at ${roundsDone} rounds`);
          continue;
        }
        const victim = workers[next++ % workers.length];
        if (victim !== undefined && processInfo(victim)) {
          process.kill(victim, 'SIGKILL');
          kills.workers++;
        }
      }
    })();

    const stats = { retries: 0 };
    // Progress every 20 s: rounds, retries, and what the server says of the longest-refused conversation.
    const progress = setInterval(() => {
      const oldest = [...refusedSince].sort((a, b) => a[1] - b[1])[0];
      const line =
        `cluster attack: ${roundsDone} of ${total} rounds, ${stats.retries} retries, ` +
        `${refusedSince.size} conversations refused as in failed state`;
      if (!oldest) return console.error(line);
      void taskState(client, oldest[0]).then((state) =>
        console.error(`${line}; ${oldest[0]} for ${Math.round((Date.now() - oldest[1]) / 1000)} s: ${state}`),
      );
    }, 20_000);
    const latencies: number[] = [];
    const sent = new Map<string, string[]>();
    const started = Date.now();
    try {
      await Promise.all(
        handles.map(async ({ id, handle }) => {
          const texts: string[] = [];
          sent.set(id, texts);
          for (let round = 0; round < ROUNDS; round++) {
            const text = `${id} round ${round}: ${words(200, 'q')}`;
            texts.push(text);
            const t = Date.now();
            const result = await sendOnce(handle, text, stats);
            latencies.push(Date.now() - t);
            roundsDone++;
            expect(result.round).toBe(round + 1);
          }
        }),
      );
    } finally {
      done = true;
      clearInterval(progress);
      await attack;
    }
    const seconds = (Date.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const store = new ConversationStore(pool);
    const compactions = (await Promise.all(handles.map(({ id }) => store.listCompactions(id)))).flat();
    const committed = compactions.filter((c) => c.status === 'committed');
    console.error(
      `cluster attack: ${total} rounds in ${seconds.toFixed(1)} s = ${(total / seconds).toFixed(1)} rounds/s; ` +
        `round latency p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${latencies.at(-1)} ms; ` +
        `${kills.workers} worker kills, ${kills.server} server kill(s), ${stats.retries} Update retries; ` +
        `${committed.length} compactions committed (${compactions.length} records); ${injected} of ${calls} LLM calls failed on purpose`,
    );
    expect(kills.server).toBe(1);
    expect(kills.workers).toBeGreaterThan(0);
    expect(injected).toBeGreaterThan(0);
    expect(committed.length).toBeGreaterThan(0);

    // 0 lost: every message of every conversation in its archive, in order, once.
    for (const { id } of handles) {
      const users = (await store.getArchive(id)).filter(
        (i) => i.type === 'USER_MESSAGE' && !i.isMeta && !i.sourceId,
      );
      expect(users.map((i) => (i.type === 'USER_MESSAGE' ? i.message.content : ''))).toEqual(sent.get(id));
    }
    // Each compaction committed at most once; a committed one exactly once.
    for (const record of compactions) {
      const commits = (await store.listEvents(record.id)).filter((e) => e.phase === 'commit');
      expect(commits.length, `compaction ${record.id}`).toBe(record.status === 'committed' ? 1 : 0);
    }
    // 0 stuck: every conversation idle, and it ends cleanly.
    // (A query needs a worker: one just killed may still be restarting, so these retry like the sends.)
    for (const { handle } of handles)
      expect((await transient(() => handle.query(statusQuery), stats)).phase).toBe('idle');
    await Promise.all(
      handles.map(({ handle }) => transient(() => handle.executeUpdate(endUpdate, { args: [] }), stats)),
    );
    // 0 nondeterminism: no workflow task of any conversation failed for it (the causes of those
    // that failed are printed), and a sample of the histories replays against the workers' bundle.
    const taskFailures = new Map<string, number>();
    for (const { handle } of handles) {
      const history = await transient(() => handle.fetchHistory(), stats);
      for (const event of history.events ?? []) {
        const failed = event.workflowTaskFailedEventAttributes;
        if (!failed) continue;
        const key = `${String(failed.cause)}: ${(failed.failure?.message ?? '').slice(0, 120)}`;
        taskFailures.set(key, (taskFailures.get(key) ?? 0) + 1);
      }
    }
    console.error(`cluster attack: failed workflow tasks by cause: ${JSON.stringify([...taskFailures])}`);
    expect([...taskFailures.keys()].filter((k) => /NON_DETERMINISTIC|nondetermin/i.test(k))).toEqual([]);
    const sample = handles.filter((_, i) => i % Math.max(1, Math.floor(CONVERSATIONS / 20)) === 0);
    const histories = await Promise.all(
      sample.map(async ({ id, handle }) => ({ workflowId: id, history: await handle.fetchHistory() })),
    );
    console.error(`cluster attack: ${stats.retries} client retries in all`);
    const outcomes = await replayHistories({ code: readFileSync(cluster.bundlePath, 'utf8') }, histories, {
      payloadCodecs: payloadCodecsFor(pool),
    });
    expect(outcomes.filter((o) => o.error !== null)).toEqual([]);

    // Ctrl-C stops everything: the up process, the server and every worker.
    const pids = cluster.pids();
    await connection.close();
    expect(await cluster.stop()).toBe(0);
    for (const pid of [pids.server, ...pids.workers]) if (pid !== null) expect(processInfo(pid)).toBeNull();
  }, 3_600_000);
});
