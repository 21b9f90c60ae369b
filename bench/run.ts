/**
 * `npm run bench` (and `bench:quick`, `BENCH_FULL=1 npm run bench`): measures the seven figures of
 * the benchmarks issue and figure 8, recall (issue 24), on this machine and writes bench/RESULTS.md, bench/results.json and
 * bench/growth.svg (quick mode writes to test-output/bench-quick/ so it never replaces the real
 * results). Benchmarks print figures; they never pass or fail. `--only=3,4` runs some figures.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { startBenchEnv, type BenchEnv } from './bench-env';
import { durabilityFigure } from './durability-cost';
import { footprintFigure } from './history-footprint';
import { planningFigure, type PlanningRow } from './planning-cost';
import { peersFigure } from './peers';
import { realSessionFigure } from './real-session';
import { recallFigure } from './recall-latency';
import { onStopSignal } from '../src/infra/signals';
import { cpuShares, machineCpu } from './process-stats';
import { machineInfo, previousFigures, writeResults, type Figure } from './report';
import { logLogChart, type Series } from './svg-chart';
import { throughputFigure } from './throughput';
import { tokenFigure } from './token-counting';

const quick = process.argv.includes('--quick');
const full = !quick && process.env.BENCH_FULL === '1';
const mode = quick ? 'quick' : full ? 'full' : 'default';
const only = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const outDir = quick ? join(__dirname, '..', 'test-output', 'bench-quick') : __dirname;

const sizes = {
  durabilityReps: quick ? 5 : 20,
  footprintRounds: quick ? 20 : full ? 500 : 100,
  planning: {
    sizes: [
      { items: 1_000, tokens: 100_000 },
      { items: 10_000, tokens: 1_000_000 },
      { items: 100_000, tokens: 10_000_000 },
    ],
    reps: quick ? 3 : 7,
  },
  tokens: { budgetSeconds: quick ? 10 : 20, minMs: quick ? 200 : 500 },
  peerReps: quick ? 3 : 101,
  throughput: {
    conversations: quick ? [5, 20] : full ? [10, 100, 500] : [10, 100],
    rounds: quick ? 10 : 30,
    twoWorkers: quick ? [20] : full ? [100, 500] : [100],
    rates: { conversations: quick ? 20 : 100, windows: quick ? [12_000] : [6_000, 12_000] },
    localSummary: quick ? [20] : [100],
  },
  replayRounds: quick ? 20 : null,
  recall: { tokens: quick ? 200_000 : 1_000_000, queries: quick ? 100 : 300 },
};

const wanted = (id: string): boolean => !only || only.includes(id);
const load = (): string =>
  loadavg()
    .map((v) => v.toFixed(2))
    .join(' / ');

async function measure(figures: Figure[], id: string, fn: () => Figure | Promise<Figure>): Promise<void> {
  if (!wanted(id)) return;
  console.error(`figure ${id}: start (load average ${load()})`);
  const started = Date.now();
  const loadBefore = load();
  const cpuBefore = machineCpu();
  let figure: Figure;
  try {
    figure = await fn();
  } catch (err) {
    // A figure that cannot be measured is reported as such; the others still are.
    console.error(`figure ${id} failed:`, err);
    figure = {
      id,
      title: `(failed to measure)`,
      notes: [`**Not measured: ${(err as Error).message}**`],
      tables: [],
      data: null,
    };
  }
  figure.seconds = (Date.now() - started) / 1000;
  const shares = cpuShares(cpuBefore, machineCpu());
  const cpuText = shares
    ? `; machine CPU busy ${(shares.busy * 100).toFixed(0)} %, stolen by the hypervisor ${(shares.steal * 100).toFixed(1)} %`
    : '';
  figure.notes.push(
    `<sub>measured ${new Date().toISOString()} in ${mode} mode; load average (1/5/15 min) before: ${loadBefore}, after: ${load()}${cpuText}</sub>`,
  );
  figures.push(figure);
  console.error(`figure ${id}: done in ${Math.round(figure.seconds)} s`);
}

function growthChart(rows: PlanningRow[]): string {
  const colors = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b'];
  const keys = [
    'total',
    'prune',
    'detect',
    'plan sliding_window (unpruned)',
    'plan importance (unpruned)',
    'reference: one linear pass (pairToolCalls)',
  ];
  const series: Series[] = keys.map((k, i) => ({
    name: k
      .replace(' (unpruned)', ', unpruned')
      .replace('reference: one linear pass (pairToolCalls)', 'one linear pass (ref.)'),
    color: colors[i] ?? '#333',
    points: rows.map((r) => ({ x: r.tokens, y: r.ms[k] ?? NaN })),
  }));
  const first = rows[0];
  if (first) {
    const base = first.ms.total ?? 1;
    series.push({
      name: 'linear (slope 1)',
      color: '#999',
      dashed: true,
      points: rows.map((r) => ({ x: r.tokens, y: (base * r.tokens) / first.tokens })),
    });
  }
  return logLogChart(series, {
    title: 'Planning cost against context size (log-log)',
    xLabel: 'context tokens',
    yLabel: 'ms (median)',
  });
}

async function main(): Promise<void> {
  const machine = machineInfo(mode);
  console.error(`bench (${mode}) on ${machine.cpu}, ${machine.cores} cores; results in ${outDir}`);
  mkdirSync(outDir, { recursive: true });
  const figures: Figure[] = [];
  // Pure figures first, before any server runs on the machine.
  await measure(figures, '3', () => planningFigure(sizes.planning));
  await measure(figures, '4', () => tokenFigure(sizes.tokens));
  await measure(figures, '5', () => peersFigure(sizes.peerReps));
  // PostgreSQL only (its own embedded one unless DATABASE_URL is set), before the dev server starts.
  await measure(figures, '8', () => recallFigure(sizes.recall));
  let env: BenchEnv | undefined;
  if (['1', '2', '6', '7'].some(wanted)) {
    console.error('starting Temporal dev server and PostgreSQL');
    env = await startBenchEnv();
    // Interrupted: stop the dev server and PostgreSQL too (they are this process's children).
    const started = env;
    onStopSignal((signal) => {
      console.error(`${signal}: stopping the servers; no results written`);
      void started.close().finally(() => process.exit(130));
    });
  }
  try {
    if (env) {
      const e = env;
      await measure(figures, '1', () => durabilityFigure(e, sizes.durabilityReps));
      await measure(figures, '2', () => footprintFigure(e, sizes.footprintRounds));
      await measure(figures, '6', () => throughputFigure(e, sizes.throughput));
      await measure(figures, '7', () => realSessionFigure(e, sizes.replayRounds));
    }
  } finally {
    await env?.close();
  }
  if (only) {
    // Re-measuring some figures keeps the others of the last run (each says when it was measured).
    for (const old of previousFigures(outDir)) if (!figures.some((f) => f.id === old.id)) figures.push(old);
  }
  figures.sort((a, b) => a.id.localeCompare(b.id));
  const planning = figures.find((f) => f.id === '3');
  if (planning)
    writeFileSync(join(outDir, 'growth.svg'), growthChart((planning.data as { rows: PlanningRow[] }).rows));
  const preamble = [
    'Benchmarks print figures; they never pass or fail. Every comparison is measured side by side in the same run. ' +
      `Sizes: ${mode} mode (\`bench:quick\` is smaller, \`BENCH_FULL=1\` larger)${only ? `, figures ${only.join(', ')} only; the others are kept from an earlier run (each figure says when and in which mode it was measured)` : ''}. The machine is shared (other engineers' ` +
      'test runs may overlap): each figure gives the load average before and after it, and the share of CPU time ' +
      'the hypervisor gave other guests while it ran (steal).',
  ];
  writeResults(outDir, machine, figures, preamble);
  console.error(`wrote ${join(outDir, 'RESULTS.md')}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
