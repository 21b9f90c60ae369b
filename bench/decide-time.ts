/**
 * `npx tsx bench/decide-time.ts [runs]`: the time to decide a compaction, ours (`planCompaction`)
 * and pi's `prepareCompaction`, the two approaches alternating call by call in one process (figure
 * 5 times each approach's runs in a row), so both see the same machine state. Two inputs:
 *
 * 1. pi-large-session taken whole at 16k, 32k and 64k (figure 5's input): a first compaction of a
 *    session 2–8 times the window. Median and fastest of the runs after the first 100.
 * 2. The contexts pi-large's own replay compacts (`eval`'s replay with the extractive summarizer)
 *    at 8k, 16k, 32k and 64k, each decided by both with the same trigger: what the workflow
 *    decides on, at the trigger and carrying what earlier compactions left. The median over the
 *    points of each point's median (`runs` / 4 after 50), and the slowest point's.
 * 3. At the same points, what counting alone costs: every text the plan counts (it has no stored
 *    count for it: the trail's new lines and commands, the open errors, notes read off calls),
 *    recorded once and counted again on its own. Counts are exact by design (DESIGN.md §6: an
 *    item's tokens are the tokenizer's), so this is a floor under our decide time that no
 *    faster planning removes; pi estimates (characters / 4) and counts nothing.
 *
 * A figure, not a test.
 */
import { parseCompactionConfig, targetTokens } from '../src/context/config';
import { planCompaction } from '../src/context/compaction-plan';
import { loadPrepareCompaction, toPiEntries } from '../src/eval/peer-adapters';
import { replaySession } from '../src/eval/replay';
import { extractiveSummarizer } from '../src/eval/run';
import type { Tokenizer } from '../src/context/tokenizer';
import { runMain } from '../src/infra/errors';
import { tokenCounterForModel } from '../src/tokens';
import { loadSession } from './fixtures';
import { now } from './stats';

const WARM_UP = 100;
const SUMMARY_TOKENS = 600;

runMain(async () => {
  const runs = Number(process.argv[2] ?? 600);
  const tokenizer = tokenCounterForModel('gpt-4o');
  const items = loadSession('pi-large-session.jsonl');
  const prepare = await loadPrepareCompaction();
  const entries = toPiEntries(items);
  const median = (values: number[]): number =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
  console.log('window  ours median / fastest (ms)  pi median / fastest (ms)  ours ÷ pi');
  for (const window of [16_000, 32_000, 64_000]) {
    const config = parseCompactionConfig({ maxContextTokens: window });
    const budget = Math.floor(config.targetRatio * window);
    const ours: number[] = [];
    const pi: number[] = [];
    for (let r = 0; r < runs + WARM_UP; r++) {
      let started = now();
      planCompaction({ items, config, tokenizer, trigger: 'precheck', compactionId: 'bench' });
      if (r >= WARM_UP) ours.push(now() - started);
      started = now();
      prepare(entries, {
        enabled: true,
        reserveTokens: window - budget,
        keepRecentTokens: budget - SUMMARY_TOKENS,
      });
      if (r >= WARM_UP) pi.push(now() - started);
    }
    const [o, p] = [median(ours), median(pi)];
    console.log(
      `${String(window / 1000).padStart(4)}k   ${o.toFixed(3)} / ${Math.min(...ours).toFixed(3)}              ` +
        `${p.toFixed(3)} / ${Math.min(...pi).toFixed(3)}            ×${(o / p).toFixed(1)}`,
    );
  }

  console.log('\nat the compaction points of its replay (median of the points / slowest point, ms)');
  console.log('window  points  items (median)  ours            pi              ours ÷ pi');
  const pointRuns = Math.max(20, Math.floor(runs / 4));
  const floors: {
    window: number;
    points: Awaited<ReturnType<typeof replaySession>>['compactions'];
    config: ReturnType<typeof parseCompactionConfig>;
    pi: number;
    ours: number;
  }[] = [];
  for (const window of [8_000, 16_000, 32_000, 64_000]) {
    const config = parseCompactionConfig({ maxContextTokens: window });
    const target = targetTokens(config);
    const replay = await replaySession({
      items,
      config,
      tokenizer,
      summarize: extractiveSummarizer(tokenizer),
    });
    const points = replay.compactions.filter((c) => c.status === 'committed');
    const ours: number[] = [];
    const pi: number[] = [];
    for (const point of points) {
      const pointEntries = toPiEntries(point.before);
      const o: number[] = [];
      const p: number[] = [];
      for (let r = 0; r < pointRuns + 50; r++) {
        let started = now();
        planCompaction({
          items: point.before,
          config,
          tokenizer,
          trigger: point.trigger,
          compactionId: 'bench',
        });
        if (r >= 50) o.push(now() - started);
        started = now();
        prepare(pointEntries, {
          enabled: true,
          reserveTokens: window - target,
          keepRecentTokens: target - SUMMARY_TOKENS,
        });
        if (r >= 50) p.push(now() - started);
      }
      ours.push(median(o));
      pi.push(median(p));
    }
    const [o, p] = [median(ours), median(pi)];
    const itemsMedian = median(points.map((c) => c.before.length));
    floors.push({ window, points: points.map((c) => c), config, pi: p, ours: o });
    console.log(
      `${String(window / 1000).padStart(4)}k   ${String(points.length).padStart(6)}  ${String(itemsMedian).padStart(14)}  ` +
        `${o.toFixed(3)} / ${Math.max(...ours).toFixed(3)}   ${p.toFixed(3)} / ${Math.max(...pi).toFixed(3)}   ×${(o / p).toFixed(1)}`,
    );
  }
  console.log('\nat the same points, counting what the plan counts, alone (median of the points, µs)');
  console.log('window  counted (bytes, median)  counting  ours (whole plan)  pi (whole decide)');
  // One recording tokenizer for every plan: the policy's fixed texts (trail headings) are counted
  // once per tokenizer, as with the real one.
  let texts: string[] = [];
  const recording: Tokenizer = {
    ...tokenizer,
    countText: (text) => {
      texts.push(text);
      return tokenizer.countText(text);
    },
  };
  for (const { window, points, config, pi: p, ours: o } of floors) {
    const counting: number[] = [];
    const bytes: number[] = [];
    for (const point of points) {
      const plan = (): void =>
        void planCompaction({
          items: point.before,
          config,
          tokenizer: recording,
          trigger: point.trigger,
          compactionId: 'bench',
        });
      plan();
      texts = [];
      plan();
      bytes.push(texts.reduce((n, text) => n + Buffer.byteLength(text), 0));
      const c: number[] = [];
      for (let r = 0; r < pointRuns + 50; r++) {
        const started = now();
        for (const text of texts) tokenizer.countText(text);
        if (r >= 50) c.push(now() - started);
      }
      counting.push(median(c));
    }
    console.log(
      `${String(window / 1000).padStart(4)}k   ${String(median(bytes)).padStart(23)}  ${(median(counting) * 1000).toFixed(1).padStart(8)}  ` +
        `${(o * 1000).toFixed(1).padStart(17)}  ${(p * 1000).toFixed(1).padStart(17)}`,
    );
  }
});
