/**
 * `npm run quality`: `eval` on every shared session (../shared/data/sessions) at 4k, 8k, 16k, 32k
 * and 64k windows with the extractive summarizer and the peers beside ours, written to
 * bench/QUALITY.md, bench/quality.json and bench/quality.svg. What it measures is what CI checks
 * (test/unit/eval/eval.test.ts); this writes the figures down.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { evaluate } from '../src/cli/commands/eval';
import { evalJson, evalSvg, markdownTable } from '../src/eval/report';
import type { EvalRow } from '../src/eval/run';
import { runMain } from '../src/infra/errors';
import { machineInfo } from './report';

const SESSIONS = resolve(__dirname, '../../shared/data/sessions');
const WINDOWS = [4000, 8000, 16000, 32000, 64000];

function pct(v: number): string {
  return Number.isFinite(v) ? `${(v * 100).toFixed(0)} %` : 'n/a';
}

function notes(rows: readonly EvalRow[]): string[] {
  const committed = rows.reduce((n, r) => n + r.compactions, 0);
  const paths = rows.reduce((n, r) => n + r.pathsChecked, 0);
  const missing = rows.reduce((n, r) => n + r.pathsMissing, 0);
  const violations = rows.flatMap((r) => r.violations.map((v) => `${r.session} @ ${r.window}: ${v}`));
  return [
    `**${committed} compactions; every invariant held: ${violations.length === 0 ? 'yes' : `no (${violations.length})`}.** ` +
      `Touched files still in the context after each compaction: ${paths - missing} of ${paths} checks ` +
      `(${pct(paths === 0 ? Number.NaN : (paths - missing) / paths)}).`,
    ...violations.map((v) => `- ${v}`),
    '',
    'The most the peers kept at one compaction point, as a share of the window (pi keeps whole turns, so ' +
      'it can keep more than its budget): ' +
      rows
        .filter((r) => Number.isFinite(r.peers.pi.max))
        .map(
          (r) =>
            `${r.session} @ ${r.window / 1000}k: pi ${pct(r.peers.pi.max)}, trimMessages ${pct(r.peers.trimMessages.max)}`,
        )
        .join('; ') +
      '.',
  ];
}

runMain(async () => {
  const files = readdirSync(SESSIONS)
    .filter((name) => /\.(jsonl|traj|json)$/.test(name))
    .map((name) => join(SESSIONS, name));
  const rows = await evaluate({
    files,
    windows: WINDOWS,
    summarizer: 'extractive',
    model: 'gpt-4o',
    peers: true,
    // recall@3 (issue 24): PostgreSQL from DATABASE_URL, else an embedded one for the run.
    recall: true,
    log: (line) => console.error(line),
  });
  const machine = machineInfo('quality');
  const text = [
    '# What survives a compaction: `eval` on the shared sessions',
    '',
    `Measured by \`npm run quality\` (\`durable-compaction eval ../shared/data/sessions/* --window ${WINDOWS.join(',')} --summarizer extractive\`) ` +
      `on ${machine.date.slice(0, 10)}, ${machine.cpu}, node ${machine.node}. Raw rows in [quality.json](quality.json), ` +
      'the context across each replay in [quality.svg](quality.svg).',
    '',
    ...notes(rows),
    '',
    markdownTable(rows),
    '',
    '## How to read it',
    '',
    "- Each session is replayed item by item through the workflow's own planning (`src/context/compaction-plan.ts`): every assistant message is one model call, with the triggers checked before and after it; a request over the window is refused as the model would (overflow). The summarizer is the extractive one (no model call), so the figures are reproducible.",
    '- **after**: the context right after each committed compaction, as a share of the window (the target is 50 %). **target met**: compactions that ended at or under the target. **filled ≥ 70 %**: compactions from over the target that ended at 70 % of it or more, out of those where the header and the protected items left room for that.',
    '- **requests over window**, **results orphaned** (a tool result that did not reach the next request with its call), **header items lost**: each must be 0, and CI fails otherwise (`test/unit/eval/eval.test.ts`).',
    '- **touched files kept**: every path a read, write or edit tool call of the session named so far, looked up in the compacted context after each compaction (read off the raw tool calls, not from the artifact trail). **carried state kept**: the latest task list, every pin, the last 10 memories and every open error, looked up the same way.',
    "- **pi after**, **trimMessages after**: pi-coding-agent's `prepareCompaction` (its summary counted at 600 tokens) and LangChain's `trimMessages` (no summary) on the same contexts at the same points, with the same budget; pi keeps whole turns, so it can keep more than the target (or the window).",
    '- The small SWE-agent sessions stay under the trigger at 16k and more: no compaction runs there.',
    '- At 4k a few compactions end over the target where the header and what no step may remove (a call waiting for its result, the current message) leave no room for it: counted apart as excused, not as broken.',
    '- Sessions outside `../shared` (65 public files of pi and SWE-agent): [QUALITY-OUTSIDE.md](QUALITY-OUTSIDE.md).',
    '',
  ].join('\n');
  writeFileSync(join(__dirname, 'QUALITY.md'), text);
  writeFileSync(join(__dirname, 'quality.json'), `${JSON.stringify(evalJson(rows), null, 2)}\n`);
  writeFileSync(join(__dirname, 'quality.svg'), evalSvg(rows));
  console.error('wrote bench/QUALITY.md, bench/quality.json, bench/quality.svg');
});
