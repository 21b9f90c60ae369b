/**
 * Figure 6: throughput and scale. N concurrent conversations, each running R rounds with the fake
 * LLM answering at once and a small window so they compact, on one worker and then on two workers
 * polling the same task queue (the second in its own process). Reported: rounds/s, round latency, the
 * process's RSS, PostgreSQL connections, and the CPU each party used, to see what saturates. The
 * same load with larger windows (fewer compactions) separates what a round costs from what a
 * compaction costs.
 */
import { readFileSync } from 'node:fs';
import { isSummaryRequest, step } from '../test/support/fake-openai';
import { words } from '../test/support/histories';
import type { AgentConversationInput } from '../workflows/definitions';
import type { BenchEnv, BenchWorker } from './bench-env';
import { cpuShares, descendantCpu, machineCpu, ownCpu } from './process-stats';
import type { Figure } from './report';
import { fitLine, fmt, summarize, type LoadFigures } from './stats';

export interface ThroughputOptions {
  conversations: number[];
  rounds: number;
  /** Conversation counts also run with two workers. */
  twoWorkers: number[];
  /** The load at other compaction rates: `conversations` on one worker with each larger window. */
  rates: { conversations: number; windows: number[] };
  /** Conversation counts (of `conversations`) also run on one worker with the summary as a local activity. */
  localSummary?: number[];
}

type SummaryCalls = NonNullable<AgentConversationInput['summaryCalls']>;

export interface Row extends LoadFigures {
  workers: number;
  /** The conversations' context window (tokens): the smaller, the more often they compact. */
  window: number;
  /** Where the compactions' summary calls ran (rows measured before this field: the default). */
  summaryCalls?: SummaryCalls;
  maxRssMiB: number;
  /** RSS of the second worker's process (0 with one worker). */
  secondRssMiB: number;
  maxPgConnections: number;
  compactions: number;
  cpu: Record<string, number>;
  failures: number;
  /** Share of the machine's CPU time the hypervisor gave other guests during the run (absent in older rows). */
  steal?: number;
}

/** The window of the scale runs: a compaction every few rounds, the stress case. */
const WINDOW = 3_000;
const CORES = 2;
/** The goal for 100 conversations on one worker. */
const GOAL_ROUNDS_PER_SECOND = 50;

async function runLoad(
  env: BenchEnv,
  workers: number,
  n: number,
  rounds: number,
  window: number,
  summaryCalls: SummaryCalls,
): Promise<Row> {
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
  const machine0 = machineCpu();
  const latencies: number[] = [];
  let failures = 0;
  let cpu1: Record<string, number> = {};
  let machine1 = machine0;
  const t0 = Date.now();
  try {
    const convs = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        env.startConversation(taskQueue, {
          name: `${stamp}-${i}`,
          config: { maxContextTokens: window },
          ...(summaryCalls === 'local' ? { summaryCalls } : {}),
        }),
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
    machine1 = machineCpu();
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
  const shares = cpuShares(machine0, machine1);
  return {
    workers,
    window,
    summaryCalls,
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
    ...(shares ? { steal: shares.steal } : {}),
  };
}

/** Rounds a run asked for: every conversation's. */
function roundsOf(r: Row): number {
  return r.conversations * r.rounds;
}

/** Whether a party used a noticeable share of a core during a run. */
function busy(r: Row, party: string): boolean {
  return (r.cpu[party] ?? 0) / r.seconds >= 0.005;
}

/** Which party a CPU column of a row is, in the report's words. */
function partyName(key: string): string {
  return key === 'own' ? 'worker+driver' : key === 'node' ? 'second worker' : key;
}

/**
 * CPU per round without compaction and per compaction, by party: a least-squares line through the
 * one-worker runs of one size at several compaction rates (CPU ms per round against compactions per
 * round). Larger windows also mean larger contexts per round, so the per-round figure is a little
 * high and the per-compaction one a little low.
 */
function costModel(rows: readonly Row[]): { party: string; perRound: number; perCompaction: number }[] {
  if (rows.length < 2) return [];
  const rate = rows.map((r) => r.compactions / roundsOf(r));
  const parties = [...new Set(rows.flatMap((r) => Object.keys(r.cpu)))].filter((k) =>
    rows.some((r) => busy(r, k)),
  );
  const msPerRound = (r: Row, keys: readonly string[]) =>
    (keys.reduce((n, k) => n + (r.cpu[k] ?? 0), 0) * 1000) / roundsOf(r);
  return [...parties.map((k) => [k]), parties].map((keys) => {
    const line = fitLine(
      rate,
      rows.map((r) => msPerRound(r, keys)),
    );
    return {
      party: keys.length === 1 ? partyName(keys[0] ?? '') : 'all',
      perRound: line.intercept,
      perCompaction: line.slope,
    };
  });
}

export async function throughputFigure(env: BenchEnv, options: ThroughputOptions): Promise<Figure> {
  env.llm.reset();
  env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('the conversation so far, in short'));
  env.llm.setDefault(step.text(words(600, 'reply')));
  const rows: Row[] = [];
  const byDefault: SummaryCalls = 'task_queue';
  const plan = [
    // A local-summary run comes right after the default run of the same load: the two are compared.
    ...options.conversations.flatMap((n) => [
      { workers: 1, n, window: WINDOW, summaryCalls: byDefault },
      ...(options.localSummary?.includes(n)
        ? [{ workers: 1, n, window: WINDOW, summaryCalls: 'local' as const }]
        : []),
    ]),
    ...options.rates.windows.map((window) => ({
      workers: 1,
      n: options.rates.conversations,
      window,
      summaryCalls: byDefault,
    })),
    ...options.twoWorkers.map((n) => ({ workers: 2, n, window: WINDOW, summaryCalls: byDefault })),
  ];
  for (const { workers, n, window, summaryCalls } of plan) {
    const row = await runLoad(env, workers, n, options.rounds, window, summaryCalls);
    rows.push(row);
    console.error(
      `  load ${workers} worker(s) × ${n}, window ${window}, summary ${summaryCalls}: ${fmt(row.roundsPerSecond)} rounds/s, ` +
        `${row.compactions} compactions, p50 ${row.p50} ms, p99 ${row.p99} ms`,
    );
  }
  return throughputReport(rows, options);
}

/** The figure from measured rows (also re-renders the rows kept in results.json). */
export function throughputReport(allRows: readonly Row[], options: ThroughputOptions): Figure {
  const isLocal = (r: Row) => r.summaryCalls === 'local';
  // The default configuration's rows; those with local summary calls are compared in a note.
  const rows = allRows.filter((r) => !isLocal(r));
  const localRows = allRows.filter(isLocal);
  const scale = rows.filter((r) => r.window === WINDOW);
  const best = scale.reduce((a, b) => (b.roundsPerSecond > a.roundsPerSecond ? b : a), scale[0] as Row);
  const byRate = rows
    .filter((r) => r.workers === 1 && r.conversations === options.rates.conversations)
    .sort((a, b) => a.window - b.window);
  const model = costModel(byRate);
  const all = model.find((m) => m.party === 'all');
  const roundsPerCompaction = (r: Row) => (r.compactions > 0 ? fmt(roundsOf(r) / r.compactions, 1) : '–');
  const howOften = (r: Row) =>
    r.compactions > 0 ? `a compaction every ${roundsPerCompaction(r)} rounds` : 'no compaction';
  const cpuText = (r: Row) =>
    Object.entries(r.cpu)
      .filter(([k]) => busy(r, k))
      .map(([k, v]) => `${partyName(k)} ${fmt(v / r.seconds, 2)}`)
      .join(', ');
  const rateText = byRate
    .map(
      (r) =>
        `${fmt(r.roundsPerSecond)} rounds/s with window ${r.window.toLocaleString('en-US')} (${howOften(r)})`,
    )
    .join(', ');
  const describe = (list: readonly Row[]) =>
    list
      .map((r) => `window ${r.window.toLocaleString('en-US')}, ${howOften(r)}: ${fmt(r.roundsPerSecond)}`)
      .join('; ');
  const met = byRate.filter((r) => r.roundsPerSecond >= GOAL_ROUNDS_PER_SECOND);
  const missed = byRate.filter((r) => r.roundsPerSecond < GOAL_ROUNDS_PER_SECOND);
  const goalText =
    `Goal: at least ${GOAL_ROUNDS_PER_SECOND} rounds/s with ${options.rates.conversations} conversations on one worker. ` +
    `Met: ${met.length > 0 ? describe(met) : 'none'}. Not met: ${missed.length > 0 ? describe(missed) : 'none'}.`;
  return {
    id: '6',
    title: 'Throughput and scale',
    notes: [
      `N conversations at once, ${options.rounds} rounds each (user message of 400 characters, reply of 600), fake LLM at 0 ms, ` +
        `window ${WINDOW.toLocaleString('en-US')} so they compact every few rounds (the stress case: a real agent's window ` +
        'fills far less often); otherwise the defaults (model calls as local activities, the summary as an activity, ' +
        'search attributes upserted once a round). The worker(s), the driver ' +
        'sending the Updates and the fake LLM share this process; the Temporal dev server and PostgreSQL are its children. ' +
        'Two workers = a second worker process (`durable-compaction worker`, PostgreSQL pool of 10) on the same task queue: ' +
        'the SDK refuses two Workers on one task queue in one process. Max RSS: this process (worker, driver, fake LLM), plus ' +
        "the second worker's process. Latency: one `sendMessage` Update, client side. CPU: cores used on average (CPU seconds / wall " +
        `seconds) by each party; the machine has ${CORES} cores. CPU stolen: the share of the machine's CPU time the ` +
        "hypervisor gave other guests during the run (this VM's noise: with 10 % stolen, 10 % of the run's CPU was not there).",
      `Best at window ${WINDOW.toLocaleString('en-US')}: ${fmt(best?.roundsPerSecond ?? NaN)} rounds/s (${best?.workers} worker(s), ${best?.conversations} conversations). ` +
        'Where it saturates: when the CPU columns add up to about 2 cores, the machine is the limit, not the worker; a second ' +
        'worker cannot add throughput.',
      `Compaction rate, ${options.rates.conversations} conversations on one worker: ${rateText}. ` +
        'A compaction is a child workflow with its own workflow tasks, activities and history, so what a round costs ' +
        'depends mostly on how often the conversations compact' +
        (all
          ? `: about ${fmt(all.perRound, 2)} ms of CPU a round plus ${fmt(all.perCompaction, 2)} ms a compaction (all ` +
            `parties, second table), i.e. at most ${fmt((CORES * 1000) / all.perRound, 2)} rounds/s on ${CORES} cores ` +
            'without compactions (a larger window also means larger contexts each round, so the first figure is a ' +
            'little high and the second a little low).'
          : '.'),
      goalText,
      ...(localRows.length > 0 ? [localText(localRows, rows)] : []),
    ],
    tables: [
      {
        columns: [
          'workers',
          'conversations',
          'window',
          'summary runs as',
          'rounds/s',
          'p50 round',
          'p99 round',
          'max RSS',
          'max PG connections',
          'compactions',
          'rounds per compaction',
          'failed rounds',
          'wall',
          'CPU cores used',
          'CPU stolen',
        ],
        rows: allRows.map((r) => [
          r.workers,
          r.conversations,
          r.window.toLocaleString('en-US'),
          isLocal(r) ? 'local activity' : 'activity (default)',
          fmt(r.roundsPerSecond),
          `${fmt(r.p50)} ms`,
          `${fmt(r.p99)} ms`,
          r.workers > 1 ? `${fmt(r.maxRssMiB)} + ${fmt(r.secondRssMiB)} MiB` : `${fmt(r.maxRssMiB)} MiB`,
          r.maxPgConnections,
          r.compactions,
          roundsPerCompaction(r),
          r.failures,
          `${fmt(r.seconds)} s`,
          cpuText(r),
          r.steal === undefined ? '–' : `${(r.steal * 100).toFixed(0)} %`,
        ]),
      },
      {
        caption: `Where the CPU goes: least-squares fit over the ${options.rates.conversations}-conversation, one-worker runs (CPU ms per round against compactions per round)`,
        columns: ['party', 'CPU ms per round (no compaction)', 'CPU ms per compaction'],
        rows: model.map((m) => [m.party, fmt(m.perRound, 2), fmt(m.perCompaction, 2)]),
      },
    ],
    data: { rows: allRows, window: WINDOW, options, costModel: model },
  };
}

/** The local-summary runs beside the default runs of the same load. */
function localText(localRows: readonly Row[], rows: readonly Row[]): string {
  const perRound = (r: Row, party: string) => ((r.cpu[party] ?? 0) * 1000) / roundsOf(r);
  const parts = localRows.map((l) => {
    const d = rows.find(
      (r) => r.workers === l.workers && r.conversations === l.conversations && r.window === l.window,
    );
    const base = `${l.conversations} conversations: ${fmt(l.roundsPerSecond)} rounds/s`;
    if (!d) return base;
    return (
      `${base} against ${fmt(d.roundsPerSecond)} (×${(l.roundsPerSecond / d.roundsPerSecond).toFixed(2)}); ` +
      `the Temporal server's CPU ${fmt(perRound(l, 'temporal'), 2)} against ${fmt(perRound(d, 'temporal'), 2)} ms a round`
    );
  });
  return (
    `With the summary as a local activity (\`summaryCalls: 'local'\`: the compaction child is one workflow task), ` +
    `window ${WINDOW.toLocaleString('en-US')}, one worker: ${parts.join('; ')}. The default keeps it an activity ` +
    '(heartbeat, attempts and pending state in the Web UI, other workers); see figure 1.'
  );
}
