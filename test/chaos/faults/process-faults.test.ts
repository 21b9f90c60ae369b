/**
 * Process faults: real worker processes against the dev server and PostgreSQL, killed with SIGKILL
 * at chosen points of a compaction — after selective prune staged its version, during the summary
 * call, after commit's transaction but before the activity reports back, during compensation — at
 * least 20 randomized kills per run (CHAOS_KILLS, CHAOS_SEED). After each: every message ever sent
 * is in the archive, the active version is the old or the new one (never a mix), a compaction is
 * committed at most once, and the conversation answers the next message.
 */
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { FAULT_POINTS, type FaultPoint } from '../../../activities/faults';
import { pairToolCalls, unansweredCalls } from '../../../src/context/tool-pairs';
import { ConversationStore } from '../../../src/store';
import {
  compactUpdate,
  sendMessageUpdate,
  type AgentConversationInput,
} from '../../../workflows/definitions';
import { TEST_API_KEY, waitFor, words } from '../../support/conversation-env';
import { isSummaryRequest, startFakeOpenAI, step, type FakeOpenAI } from '../../support/fake-openai';
import { testDatabaseUrl, testTemporalAddress, uniqueId } from '../../support/harness';
import { spawnWorker } from '../../support/cli-process';
import { payloadCodecsFor } from '../../../src/infra/codec';

const KILLS = Math.max(20, Number(process.env.CHAOS_KILLS ?? 20));
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
const BATCH = 4;

/** mulberry32: a small seeded generator, so a failing run can be repeated with CHAOS_SEED. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Plan {
  point: FaultPoint;
  roundsBefore: number;
  trigger: 'manual' | 'rounds';
}

let llm: FakeOpenAI;
let pool: pg.Pool;
let store: ConversationStore;
let connection: Connection;
let client: Client;
const children = new Set<ChildProcess>();
const failingSummaries = new Set<string>();

function startWorker(taskQueue: string, fault: FaultPoint | null): ChildProcess {
  const { child } = spawnWorker(
    taskQueue,
    {
      TEMPORAL_ADDRESS: testTemporalAddress(),
      DATABASE_URL: testDatabaseUrl(),
      OPENAI_API_KEY: TEST_API_KEY,
      OPENAI_BASE_URL: llm.url,
      LLM_TIMEOUT_MS: '10000',
      ...(fault ? { DC_FAULT_KILL_AT: fault } : {}),
    },
    { workflowBundle: inject('workflowBundlePath'), grace: '1s' },
  );
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function exited(child: ChildProcess): Promise<NodeJS.Signals | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.signalCode);
    else child.once('exit', (_code, signal) => resolve(signal));
  });
}

beforeAll(async () => {
  llm = await startFakeOpenAI({ apiKey: TEST_API_KEY });
  // Summaries fail for conversations planned to die during compensation (a rollback needs them to).
  llm
    .when((r) => isSummaryRequest(r))
    .setDefault((r) => {
      const text = JSON.stringify(r.body.messages ?? []);
      return [...failingSummaries].some((id) => text.includes(id))
        ? step.contentNull()
        : step.summary('chaos summary');
    });
  llm.setDefault(step.text(words(1200, 'reply')));
  pool = new pg.Pool({ connectionString: testDatabaseUrl(), max: 4 });
  store = new ConversationStore(pool);
  connection = await Connection.connect({ address: testTemporalAddress() });
  client = new Client({ connection, dataConverter: { payloadCodecs: payloadCodecsFor(pool) } });
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await connection?.close();
  await pool?.end();
  await llm?.close();
});

/** One conversation, one planned kill, then the checks. */
async function runOne(plan: Plan, index: number): Promise<void> {
  const taskQueue = uniqueId(`chaos${index}`);
  const conversationId = uniqueId(`chaos-${plan.point}`);
  if (plan.point === 'compensation') failingSummaries.add(conversationId);
  const sent: string[] = [];
  // The first worker runs the rounds; it must not die before the compaction.
  let worker = startWorker(taskQueue, null);
  const input: AgentConversationInput = {
    conversationId,
    systemPrompt: `You are agent ${conversationId}.`,
    model: { provider: 'openai', model: 'fake-model' },
    config: {
      maxContextTokens: 20_000,
      roundsThreshold: plan.trigger === 'rounds' ? plan.roundsBefore + 1 : 200,
    },
    searchAttributes: false,
  };
  const handle = await client.workflow.start('agentConversation', {
    workflowId: conversationId,
    taskQueue,
    args: [input],
  });
  const send = async (text: string) => {
    sent.push(text);
    return handle.executeUpdate(sendMessageUpdate, { args: [text] });
  };
  for (let i = 0; i < plan.roundsBefore; i++) await send(words(400, `${conversationId}-m${i}-`));
  const before = await store.getActiveContext(conversationId);

  // Swap to a worker that will kill itself at the planned point.
  worker.kill('SIGTERM');
  await exited(worker);
  worker = startWorker(taskQueue, plan.point);
  const faulty = worker;
  const outcome =
    plan.trigger === 'manual'
      ? handle.executeUpdate(compactUpdate, { args: [{}] }).then((b) => b.status)
      : send(`${conversationId} trigger`).then((r) => r.compactions[0]?.status ?? 'none');
  const signal = await exited(faulty);
  expect(signal, `the worker was to die at ${plan.point}`).toBe('SIGKILL');
  worker = startWorker(taskQueue, null);
  const status = await outcome;
  expect(status).toBe(plan.point === 'compensation' ? 'rolled_back' : 'committed');

  // Every message sent is in the archive, once.
  const archive = await store.getArchive(conversationId);
  const userTexts = archive
    .filter((i) => i.type === 'USER_MESSAGE' && !i.isMeta && !i.sourceId)
    .map((i) => (i.type === 'USER_MESSAGE' ? i.message.content : ''));
  expect(userTexts).toEqual(sent);
  // Committed at most once; the active version is the staged one (committed) or the base (rolled back).
  const records = await store.listCompactions(conversationId);
  expect(records.filter((c) => c.status === 'committed').length).toBeLessThanOrEqual(1);
  const record = records.find((c) => c.status !== 'skipped');
  const active = await store.getActiveContext(conversationId);
  const commits = (await store.listEvents(record!.id)).filter((e) => e.phase === 'commit');
  if (status === 'committed') {
    expect(active.version).toBe(record!.stagedVersion);
    expect(commits).toHaveLength(1);
    expect(active.items.filter((i) => i.type === 'COMPACTION_SUMMARY')).toHaveLength(1);
  } else {
    expect(commits).toHaveLength(0);
    // The old context, plus the triggering round's own messages when the trigger was a round.
    expect(active.items.slice(0, before.items.length).map((i) => i.id)).toEqual(
      before.items.map((i) => i.id),
    );
  }
  const pairs = pairToolCalls(active.items);
  expect(unansweredCalls(pairs)).toEqual([]);
  // The conversation goes on.
  failingSummaries.delete(conversationId);
  const next = await send(`${conversationId} after the crash`);
  expect(next.reply.length).toBeGreaterThan(0);
  worker.kill('SIGTERM');
  await exited(worker);
}

describe('process faults', () => {
  it(`survives ${KILLS} randomized SIGKILLs at the compaction's fault points (seed ${SEED})`, async () => {
    const random = rng(SEED);
    const plans: Plan[] = Array.from({ length: KILLS }, (_, i) => ({
      point: FAULT_POINTS[i % FAULT_POINTS.length]!,
      roundsBefore: 2 + Math.floor(random() * 3),
      trigger: (random() < 0.5 ? 'manual' : 'rounds') as Plan['trigger'],
    })).sort(() => random() - 0.5);
    console.error(
      `chaos: ${KILLS} kills, seed ${SEED}: ${plans.map((p) => `${p.point}/${p.trigger}`).join(', ')}`,
    );
    for (let i = 0; i < plans.length; i += BATCH) {
      await Promise.all(plans.slice(i, i + BATCH).map((plan, j) => runOne(plan, i + j)));
    }
    await waitFor(
      async () => children.size,
      (n) => n === 0,
      30_000,
      'workers to stop',
    );
  }, 1_200_000);
});
