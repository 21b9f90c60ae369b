/**
 * `npx tsx bench/decide-time.ts [runs]`: the time to decide a compaction of pi-large-session taken
 * whole, ours (`planCompaction`, as figure 5 calls it) and pi's `prepareCompaction`, at 16k, 32k and
 * 64k, the two approaches alternating call by call in one process (figure 5 times each approach's
 * runs in a row), so both see the same machine state. Prints the median and the fastest of the
 * runs after the first 100 of each. A figure, not a test.
 */
import { parseCompactionConfig } from '../src/context/config';
import { planCompaction } from '../src/context/compaction-plan';
import { loadPrepareCompaction, toPiEntries } from '../src/eval/peer-adapters';
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
});
