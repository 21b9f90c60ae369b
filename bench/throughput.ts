/**
 * Figure 6: throughput and scale. N concurrent conversations, each running R rounds with the fake
 * LLM answering at once and a small window so they compact, on one worker and then on two workers
 * polling the same task queue (the second in its own process). Reported: rounds/s, round latency, the
 * process's RSS, PostgreSQL connections, and the CPU each party used, to see what saturates.
 */
import { readFileSync } from 'node:fs';
import { isSummaryRequest, step } from '../test/support/fake-openai';
import { words } from '../test/support/histories';
import type { BenchEnv, BenchWorker } from './bench-env';
import { descendantCpu, ownCpu } from './process-stats';
import type { Figure } from './report';
import { fmt, summarize } from './stats';

export interface ThroughputOptions {
  conversations: number[];
  rounds: number;
  /** Conversation counts also run with two workers. */
  twoWorkers: number[];
}

interface Row {
  workers: number;
  conversations: number;
  rounds: number;
  seconds: number;
  roundsPerSecond: number;
  p50: number;
  p99: number;
  maxRssMiB: number;
  /** RSS of the second worker's process (0 with one worker). */
  secondRssMiB: number;
  maxPgConnections: number;
  compactions: number;
  cpu: Record<string, number>;
  failures: number;
}

const CONFIG = { maxContextTokens: 3_000 };

async function runLoad(env: BenchEnv, workers: number, n: number, rounds: number): Promise<Row> {
  const stamp = `load${workers}w${n}t${Date.now()}`;
  const taskQueue = `bench-${stamp}`;
  const first: BenchWorker = await env.startWorker(taskQueue, { poolSize: 10 });
  const second =
    workers > 1
      ? await env.spawnWorker(taskQueue).catch(async (err: unknown) => {
          await first.stop();
          throw err;
        })
      : null;
  const rssOf = (pid: number): number => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return Number(m?.[1] ?? 0) * 1024;
    } catch {
      return 0;
    }
  };
  let maxRss = 0;
  let maxRss2 = 0;
  let maxConnections = 0;
  const sampler = setInterval(() => {
    maxRss = Math.max(maxRss, process.memoryUsage().rss);
    if (second) maxRss2 = Math.max(maxRss2, rssOf(second.pid));
    env.postgres.pool
      .query<{ n: string }>('select count(*) as n from pg_stat_activity')
      .then((r) => (maxConnections = Math.max(maxConnections, Number(r.rows[0]?.n ?? 0))))
      .catch(() => undefined);
  }, 250);
  const cpu0 = { own: ownCpu(), ...descendantCpu() };
  const latencies: number[] = [];
  let failures = 0;
  let cpu1: Record<string, number> = {};
  const t0 = Date.now();
  try {
    const convs = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        env.startConversation(taskQueue, { name: `${stamp}-${i}`, config: CONFIG }),
      ),
    );
    await Promise.all(
      convs.map(async (conv, i) => {
        for (let r = 0; r < rounds; r++) {
          const t = Date.now();
          try {
            await conv.send(words(400, `c${i}r${r}w`));
            latencies.push(Date.now() - t);
          } catch {
            failures++;
          }
        }
      }),
    );
    cpu1 = { own: ownCpu(), ...descendantCpu() };
  } finally {
    clearInterval(sampler);
    await first.stop();
    await second?.stop();
  }
  const seconds = (Date.now() - t0) / 1000;
  const cpu: Record<string, number> = {};
  for (const [k, v] of Object.entries(cpu1)) cpu[k] = v - ((cpu0 as Record<string, number>)[k] ?? 0);
  const compactions = Number(
    (
      await env.postgres.pool.query<{ n: string }>(
        "select count(*) as n from compactions where conversation_id like $1 and status = 'committed'",
        [`${stamp}-%`],
      )
    ).rows[0]?.n ?? 0,
  );
  const s = summarize(latencies);
  return {
    workers,
    conversations: n,
    rounds,
    seconds,
    roundsPerSecond: latencies.length / seconds,
    p50: s.p50,
    p99: s.p99,
    maxRssMiB: maxRss / 1024 ** 2,
    secondRssMiB: maxRss2 / 1024 ** 2,
    maxPgConnections: maxConnections,
    compactions,
    cpu,
    failures,
  };
}

export async function throughputFigure(env: BenchEnv, options: ThroughputOptions): Promise<Figure> {
  env.llm.reset();
  env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('the conversation so far, in short'));
  env.llm.setDefault(step.text(words(600, 'reply')));
  const rows: Row[] = [];
  const plan = [
    ...options.conversations.map((n) => ({ workers: 1, n })),
    ...options.twoWorkers.map((n) => ({ workers: 2, n })),
  ];
  for (const { workers, n } of plan) {
    const row = await runLoad(env, workers, n, options.rounds);
    rows.push(row);
    console.error(
      `  load ${workers} worker(s) × ${n}: ${fmt(row.roundsPerSecond)} rounds/s, p50 ${row.p50} ms, p99 ${row.p99} ms`,
    );
  }
  const best = rows.reduce((a, b) => (b.roundsPerSecond > a.roundsPerSecond ? b : a), rows[0] as Row);
  const cpuText = (r: Row) =>
    Object.entries(r.cpu)
      .filter(([, v]) => v > 0.5)
      .map(
        ([k, v]) =>
          `${k === 'own' ? 'worker+driver' : k === 'node' ? 'second worker' : k} ${fmt(v / r.seconds, 2)}`,
      )
      .join(', ');
  return {
    id: '6',
    title: 'Throughput and scale',
    notes: [
      `N conversations at once, ${options.rounds} rounds each (user message of 400 characters, reply of 600), fake LLM at 0 ms, ` +
        `window ${CONFIG.maxContextTokens.toLocaleString('en-US')} so they compact every few rounds. The worker(s), the driver ` +
        'sending the Updates and the fake LLM share this process; the Temporal dev server and PostgreSQL are its children. ' +
        'Two workers = a second worker process (`durable-compaction worker`, PostgreSQL pool of 10) on the same task queue: ' +
        'the SDK refuses two Workers on one task queue in one process. Max RSS: this process (worker, driver, fake LLM), plus ' +
        "the second worker's process. Latency: one `sendMessage` Update, client side. CPU: cores used on average (CPU seconds / wall " +
        'seconds) by each party; the machine has 2 cores.',
      `Best: ${fmt(best?.roundsPerSecond ?? NaN)} rounds/s (${best?.workers} worker(s), ${best?.conversations} conversations). ` +
        'Where it saturates: when the CPU columns add up to about 2 cores, the machine is the limit, not the worker; a second ' +
        'worker cannot add throughput.',
    ],
    tables: [
      {
        columns: [
          'workers',
          'conversations',
          'rounds/s',
          'p50 round',
          'p99 round',
          'max RSS',
          'max PG connections',
          'compactions',
          'failed rounds',
          'wall',
          'CPU cores used',
        ],
        rows: rows.map((r) => [
          r.workers,
          r.conversations,
          fmt(r.roundsPerSecond),
          `${fmt(r.p50)} ms`,
          `${fmt(r.p99)} ms`,
          r.workers > 1 ? `${fmt(r.maxRssMiB)} + ${fmt(r.secondRssMiB)} MiB` : `${fmt(r.maxRssMiB)} MiB`,
          r.maxPgConnections,
          r.compactions,
          r.failures,
          `${fmt(r.seconds)} s`,
          cpuText(r),
        ]),
      },
    ],
    data: { rows, config: CONFIG },
  };
}
