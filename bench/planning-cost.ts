/**
 * Figure 3: planning cost. The pure engine (`planCompaction`: carried state, prune steps, strategy
 * chain, full summary; and its parts alone) on generated contexts of 1k, 10k and 100k items (about
 * 100k, 1M and 10M tokens), with the growth exponent of each step fitted on a log-log scale. No
 * I/O: this is what a compaction costs in CPU before any store or model call.
 */
import { parseCompactionConfig } from '../src/context/config';
import type { ContextItem } from '../src/context/items';
import { buildCarriedState } from '../src/context/carried-state';
import { planCompaction } from '../src/context/compaction-plan';
import { selectivePrune } from '../src/context/selective-prune';
import { detectTaskType } from '../src/context/task-type';
import { pairToolCalls } from '../src/context/tool-pairs';
import { tokenCounterForModel } from '../src/tokens';
import { generateContext } from './fixtures';
import type { Figure } from './report';
import { fmt, logLogSlope, repeatSync, summarize } from './stats';

export interface PlanningOptions {
  sizes: { items: number; tokens: number }[];
  reps: number;
}

export interface PlanningRow {
  items: number;
  tokens: number;
  /** Median ms of each step. */
  ms: Record<string, number>;
  taskType: string;
  prunedItems: number;
}

export function measurePlanning(options: PlanningOptions): {
  rows: PlanningRow[];
  slopes: Record<string, number>;
} {
  const config = parseCompactionConfig({ maxContextTokens: 128_000 });
  const tokenizer = tokenCounterForModel('gpt-4o');
  const target = Math.floor(config.targetRatio * config.maxContextTokens);
  const rows: PlanningRow[] = [];
  for (const size of options.sizes) {
    const items: ContextItem[] = generateContext(size.items, size.tokens);
    const pruned = selectivePrune(items, config, tokenizer, target);
    const taskType = detectTaskType(items);
    const med = (fn: () => unknown): number => summarize(repeatSync(fn, options.reps)).p50;
    const plan = (trigger: 'precheck' | 'rounds') => () =>
      planCompaction({ items, config, tokenizer, trigger, compactionId: 'bench' });
    const ms: Record<string, number> = {
      'carried state': med(() =>
        buildCarriedState({ items, tokenizer, budgetTokens: 12_800, idPrefix: 'bench' }),
      ),
      prune: med(() => selectivePrune(items, config, tokenizer, target)),
      detect: med(() => detectTaskType(items)),
      // The whole plan: carried state, prune, then the strategies while still over the target.
      total: med(plan('precheck')),
    };
    // A single linear pass over the items, for reference: what plain Map/Set work costs at this size.
    ms['reference: one linear pass (pairToolCalls)'] = med(() => pairToolCalls(items));
    // The full summary straight away (the rounds trigger): every unit is a candidate.
    ms['plan (rounds trigger: full summary)'] = med(plan('rounds'));
    rows.push({ items: items.length, tokens: size.tokens, ms, taskType, prunedItems: pruned.items.length });
    console.error(`  planning ${items.length} items: total ${fmt(ms.total ?? 0)} ms`);
  }
  const slopes: Record<string, number> = {};
  for (const key of Object.keys(rows[0]?.ms ?? {})) {
    slopes[key] = logLogSlope(
      rows.map((r) => r.items),
      rows.map((r) => r.ms[key] ?? Number.NaN),
    );
  }
  return { rows, slopes };
}

export function planningFigure(options: PlanningOptions): Figure {
  const { rows, slopes } = measurePlanning(options);
  const keys = Object.keys(rows[0]?.ms ?? {});
  const million = rows.find((r) => r.tokens === 1_000_000);
  return {
    id: '3',
    title: 'Planning cost (pure engine) against context size',
    notes: [
      `Generated coding-agent contexts (user → tool call → result → answer rounds; ${rows[0]?.taskType ?? ''} task), ` +
        `window 128k, target 64k. Median of ${options.reps} runs after a warm-up. "total" is \`planCompaction\` as ` +
        'the compaction activities run it (carried state, then the prune steps and strategies until the target is ' +
        'reached); the rows above it are its parts alone; the rounds trigger plans the full summary directly.',
      `Growth exponent (log-log slope of time against items; 1 = linear): total **${fmt(slopes.total ?? Number.NaN)}**. ` +
        `1M tokens planned in **${fmt(million?.ms.total ?? Number.NaN)} ms** (goal < 100 ms). See [growth.svg](growth.svg).`,
    ],
    tables: [
      {
        columns: [
          'step (ms, median)',
          ...rows.map(
            (r) => `${r.items.toLocaleString('en-US')} items / ${(r.tokens / 1e6).toFixed(1)}M tokens`,
          ),
          'exponent',
        ],
        rows: keys.map((k) => [
          k,
          ...rows.map((r) => fmt(r.ms[k] ?? Number.NaN, 3)),
          fmt(slopes[k] ?? Number.NaN),
        ]),
      },
    ],
    data: { rows, slopes },
  };
}
