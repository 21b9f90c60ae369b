/**
 * `npm run bench:cluster`: figure 6's load (N conversations × R rounds, window 3,000, fake LLM at
 * 0 ms) on the production topology (`up --cluster`: temporal-server on PostgreSQL, 4 history
 * shards) with 1, 2 and 3 worker processes, beside the embedded dev server with the same worker
 * processes. CPU by party from /proc. Writes the "6c" section of bench/RESULTS.md (between
 * markers that `npm run bench` keeps) and bench/cluster-results.json.
 *
 * Sizes: BENCH_CLUSTER_SIZES (default `10x30,100x30`: conversations x rounds) for every setup,
 * BENCH_CLUSTER_LARGE (default `500x10`) for the dev server and the cluster with the most workers.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { payloadCodecsFor } from '../src/infra/codec';
import { connectPostgres } from '../src/infra/postgres';
import { connectTemporal } from '../src/infra/temporal';
import { bundleWorkflows } from '../src/worker';
import { spawnWorker, workerStarted } from '../test/support/cli-process';
import { startClusterProcess } from '../test/support/cluster-process';
import { isSummaryRequest, startFakeOpenAI, step, type FakeOpenAI } from '../test/support/fake-openai';
import { words } from '../test/support/histories';
import { CLAIM, messageBody, sendMessageUpdate, type AgentConversationInput } from '../workflows/definitions';
import { cpuShares, descendantCpu, machineCpu, ownCpu } from './process-stats';
import {
  CLUSTER_SECTION_END as END,
  CLUSTER_SECTION_START as START,
  renderTable,
  withClusterSection,
} from './report';
import { fmt, summarize, type LoadFigures } from './stats';

const API_KEY = 'sk-bench';
const WINDOW = 3_000;
const TASK_QUEUE = 'durable-compaction';
const MAX_WORKERS = 3;

interface Size {
  conversations: number;
  rounds: number;
}

function sizes(text: string): Size[] {
  return text
    .split(',')
    .filter(Boolean)
    .map((s) => {
      const [c, r] = s.split('x').map(Number);
      return { conversations: c ?? 0, rounds: r ?? 0 };
    });
}

interface Row extends LoadFigures {
  server: 'dev server' | 'cluster';
  workers: number;
  failures: number;
  compactions: number;
  /** Cores used on average by each party. */
  cpu: Record<string, number>;
  steal: number | null;
  load: string;
}

interface Setup {
  server: Row['server'];
  client: Client;
  pool: pg.Pool;
  /** Worker processes beyond those the setup runs itself. */
  addWorker(): Promise<() => Promise<void>>;
  /** Worker processes the setup runs itself. */
  ownWorkers: number;
  close(): Promise<void>;
}

const load = (): string =>
  loadavg()
    .map((v) => v.toFixed(2))
    .join(' / ');

function partyOf(kind: string): string {
  if (kind === 'node') return 'workers';
  if (kind === 'temporal') return 'Temporal dev server';
  if (kind === 'temporal-server') return 'Temporal server';
  return kind;
}

async function runLoad(setup: Setup, workers: number, size: Size): Promise<Row> {
  const stamp = `c${setup.server === 'cluster' ? 'c' : 'd'}${workers}w${size.conversations}n${Date.now().toString(36)}`;
  const cpu0 = { driver: ownCpu(), ...descendantCpu() };
  const machine0 = machineCpu();
  const loadBefore = load();
  const latencies: number[] = [];
  let failures = 0;
  const t0 = Date.now();
  const convs = await Promise.all(
    Array.from({ length: size.conversations }, async (_, i) => {
      const id = `${stamp}-${i}`;
      const input: AgentConversationInput = {
        conversationId: id,
        systemPrompt: 'You are a benchmark agent.',
        tools: [],
        model: { provider: 'openai', model: 'fake-model', summaryModel: 'fake-summarizer' },
        config: { maxContextTokens: WINDOW },
      };
      const handle = await setup.client.workflow.start('agentConversation', {
        workflowId: id,
        taskQueue: TASK_QUEUE,
        args: [{ ...CLAIM, ...input }],
      });
      return handle;
    }),
  );
  await Promise.all(
    convs.map(async (handle, i) => {
      for (let r = 0; r < size.rounds; r++) {
        const t = Date.now();
        try {
          await handle.executeUpdate(sendMessageUpdate, { args: [messageBody(words(400, `c${i}r${r}w`))] });
          latencies.push(Date.now() - t);
        } catch {
          failures++;
        }
      }
    }),
  );
  const seconds = (Date.now() - t0) / 1000;
  const cpu1 = { driver: ownCpu(), ...descendantCpu() };
  const shares = cpuShares(machine0, machineCpu());
  const cpu: Record<string, number> = {};
  for (const [k, v] of Object.entries(cpu1)) {
    const used = (v - ((cpu0 as Record<string, number>)[k] ?? 0)) / seconds;
    if (used >= 0.005) cpu[partyOf(k)] = (cpu[partyOf(k)] ?? 0) + used;
  }
  const compactions = Number(
    (
      await setup.pool.query<{ n: string }>(
        "select count(*) as n from compactions where conversation_id like $1 and status = 'committed'",
        [`${stamp}-%`],
      )
    ).rows[0]?.n ?? 0,
  );
  const s = summarize(latencies);
  return {
    server: setup.server,
    workers,
    conversations: size.conversations,
    rounds: size.rounds,
    seconds,
    roundsPerSecond: latencies.length / seconds,
    p50: s.p50,
    p99: s.p99,
    failures,
    compactions,
    cpu,
    steal: shares?.steal ?? null,
    load: `${loadBefore} → ${load()}`,
  };
}

function workerSpawner(llm: FakeOpenAI, address: string, databaseUrl: string, bundlePath: string) {
  return async (): Promise<() => Promise<void>> => {
    const worker = spawnWorker(
      TASK_QUEUE,
      {
        TEMPORAL_ADDRESS: address,
        DATABASE_URL: databaseUrl,
        OPENAI_API_KEY: API_KEY,
        OPENAI_BASE_URL: llm.url,
      },
      { workflowBundle: bundlePath, grace: '1s' },
    );
    await workerStarted(worker);
    return async () => {
      if (worker.child.exitCode !== null) return;
      const exited = new Promise((r) => worker.child.once('exit', r));
      worker.child.kill('SIGTERM');
      await exited;
    };
  };
}

async function devServerSetup(llm: FakeOpenAI, bundlePath: string): Promise<Setup> {
  const postgres = await connectPostgres({ poolSize: 4 });
  const temporal = await connectTemporal({ ui: false, payloadCodecs: payloadCodecsFor(postgres.pool) });
  return {
    server: 'dev server',
    client: temporal.client,
    pool: postgres.pool,
    ownWorkers: 0,
    addWorker: workerSpawner(llm, temporal.address, postgres.url, bundlePath),
    async close() {
      await temporal.shutdown();
      await postgres.shutdown();
    },
  };
}

async function clusterSetup(llm: FakeOpenAI, bundlePath: string): Promise<Setup> {
  const cluster = await startClusterProcess({
    workers: 1,
    env: { OPENAI_API_KEY: API_KEY, OPENAI_BASE_URL: llm.url },
  });
  const pool = new pg.Pool({ connectionString: cluster.databaseUrl, max: 4 });
  pool.on('error', () => undefined);
  const connection = await Connection.connect({ address: cluster.address });
  return {
    server: 'cluster',
    client: new Client({ connection, dataConverter: { payloadCodecs: payloadCodecsFor(pool) } }),
    pool,
    ownWorkers: 1,
    addWorker: workerSpawner(llm, cluster.address, cluster.databaseUrl, bundlePath),
    async close() {
      await connection.close();
      await pool.end();
      await cluster.stop();
      cluster.remove();
    },
  };
}

async function measure(setup: Setup, plan: { workers: number; sizes: Size[] }[], rows: Row[]): Promise<void> {
  const stops: (() => Promise<void>)[] = [];
  try {
    for (const { workers, sizes: list } of plan) {
      while (setup.ownWorkers + stops.length < workers) stops.push(await setup.addWorker());
      for (const size of list) {
        const row = await runLoad(setup, workers, size);
        rows.push(row);
        console.error(
          `  ${row.server}, ${workers} worker(s), ${size.conversations} × ${size.rounds}: ${fmt(row.roundsPerSecond)} rounds/s, ` +
            `p50 ${row.p50} ms, p99 ${row.p99} ms, ${row.compactions} compactions, ${row.failures} failed; load ${row.load}`,
        );
      }
    }
  } finally {
    for (const stop of stops) await stop();
  }
}

function render(rows: Row[], date: string): string {
  const parties = [...new Set(rows.flatMap((r) => Object.keys(r.cpu)))];
  return [
    START,
    '## 6c. Throughput on a Temporal cluster (`up --cluster`) beside the dev server',
    '',
    `Measured by \`npm run bench:cluster\` on ${date.slice(0, 10)} (${date}). Figure 6's load: N conversations at once, R rounds each ` +
      `(user message of 400 characters, reply of 600), fake LLM at 0 ms in the benchmark's process, window ${WINDOW.toLocaleString('en-US')} ` +
      '(a compaction every few rounds), the defaults otherwise. Every worker is a process of its own (`durable-compaction worker`, ' +
      'the command the cluster and the Dockerfile run), on one task queue. Cluster: `up --cluster` (temporal-server v1.29.1 built ' +
      'from source, PostgreSQL persistence for history and visibility, 4 history shards, docker/dynamicconfig.yaml), its own embedded ' +
      'PostgreSQL; its first worker is its own, the others are started beside it. Dev server: the `temporal` CLI v1.5.1 (SQLite in ' +
      'memory, 1 shard, the same dynamic config) and an embedded PostgreSQL for the store. CPU: cores used on average by each party ' +
      '(workers = every worker process, plus the idle `up` process on the cluster; driver = this process: the Updates and the fake ' +
      'LLM). The machine has 2 cores, shared with other engineers running tests: the load average before → after each run and the ' +
      'CPU stolen are given; figures move by ±15 % or more between runs.',
    '',
    renderTable({
      columns: [
        'server',
        'workers',
        'conversations × rounds',
        'rounds/s',
        'p50 round',
        'p99 round',
        'compactions',
        'failed',
        'wall',
        'CPU cores used',
        'stolen',
        'load average',
      ],
      rows: rows.map((r) => [
        r.server,
        r.workers,
        `${r.conversations} × ${r.rounds}`,
        fmt(r.roundsPerSecond),
        `${fmt(r.p50)} ms`,
        `${fmt(r.p99)} ms`,
        r.compactions,
        r.failures,
        `${fmt(r.seconds)} s`,
        parties
          .filter((p) => r.cpu[p] !== undefined)
          .map((p) => `${p} ${fmt(r.cpu[p] ?? 0, 2)}`)
          .join(', '),
        r.steal === null ? '–' : `${(r.steal * 100).toFixed(0)} %`,
        r.load,
      ]),
    }),
    END,
  ].join('\n');
}

async function main(): Promise<void> {
  const small = sizes(process.env.BENCH_CLUSTER_SIZES ?? '10x30,100x30');
  const large = sizes(process.env.BENCH_CLUSTER_LARGE ?? '500x10');
  const llm = await startFakeOpenAI({ apiKey: API_KEY, maxRecorded: 100 });
  llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('the conversation so far, in short'));
  llm.setDefault(step.text(words(600, 'reply')));
  const bundlePath = join(__dirname, '..', 'test-output', 'bench-cluster-bundle.js');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(join(__dirname, '..', 'test-output'), { recursive: true });
  writeFileSync(bundlePath, (await bundleWorkflows()).code);
  const rows: Row[] = [];
  try {
    console.error(`bench:cluster: dev server (load ${load()})`);
    const dev = await devServerSetup(llm, bundlePath);
    try {
      await measure(dev, [{ workers: 1, sizes: [...small, ...large] }], rows);
    } finally {
      await dev.close();
    }
    console.error(`bench:cluster: cluster (load ${load()})`);
    const cluster = await clusterSetup(llm, bundlePath);
    try {
      await measure(
        cluster,
        Array.from({ length: MAX_WORKERS }, (_, i) => ({
          workers: i + 1,
          sizes: i + 1 === MAX_WORKERS ? [...small, ...large] : small,
        })),
        rows,
      );
    } finally {
      await cluster.close();
    }
  } finally {
    await llm.close();
  }
  const date = new Date().toISOString();
  const file = join(__dirname, 'RESULTS.md');
  const results = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmark results\n';
  writeFileSync(file, withClusterSection(results, render(rows, date)));
  writeFileSync(join(__dirname, 'cluster-results.json'), `${JSON.stringify({ date, rows }, null, 2)}\n`);
  console.error(`wrote ${file} (section 6c) and bench/cluster-results.json`);
}

if (require.main === module) {
  main()
    .then(() => process.exit(0))
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
