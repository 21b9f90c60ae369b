/**
 * `npx tsx bench/quality-outside.ts <dir> [--manifest <file.tsv>]`: `eval` on recorded sessions
 * that are not in ../shared — any directory of pi, Claude Code or Codex JSONL, OpenHands
 * trajectories, SWE-agent .traj, OpenAI chat or Anthropic message files, or Cline and Roo Code
 * tasks exported as Markdown — at 4k, 8k, 16k, 32k and 64k windows with the extractive summarizer, one file at a time (a file the
 * importers refuse is listed with the reason, not fatal), written to bench/QUALITY-OUTSIDE.md and
 * bench/quality-outside.json. The sessions stay where they are: nothing of them is copied, only
 * figures. `bench/outside-sessions.tsv` names where each file of the last run came from (repository,
 * path, commit), so the run can be repeated; pass it as `--manifest` to show the sources.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { evaluate } from '../src/cli/commands/eval';
import { describeError, runMain } from '../src/infra/errors';
import type { EvalRow } from '../src/eval/run';
import { machineInfo } from './report';

const WINDOWS = [4000, 8000, 16000, 32000, 64000];

interface FileResult {
  file: string;
  source: string;
  rows: EvalRow[];
  refused: string | null;
}

function manifest(path: string | undefined): Map<string, string> {
  const sources = new Map<string, string>();
  if (!path) return sources;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const [file, , , source] = line.split('\t');
    if (file && source) sources.set(file, source);
  }
  return sources;
}

const pct = (part: number, whole: number): string =>
  whole === 0 ? '–' : `${Math.floor((100 * part) / whole)} %`;

/** One table row per file: compactions at each window, then what held. */
function fileRow(result: FileResult): string {
  if (result.refused !== null)
    return `| ${result.file} | ${result.source} | refused: ${result.refused} ||||||||`;
  const at = (w: number) => result.rows.find((r) => r.window === w);
  const first = result.rows[0];
  const compactions = WINDOWS.map((w) => at(w)?.compactions ?? 0).join(' / ');
  const broken = (windows: number[]) => windows.reduce((n, w) => n + (at(w)?.violations.length ?? 0), 0);
  const main = WINDOWS.filter((w) => w >= 8000);
  const rows = result.rows.filter((r) => r.window >= 8000);
  const paths = rows.reduce((n, r) => n + r.pathsChecked, 0);
  const pathsKept = paths - rows.reduce((n, r) => n + r.pathsMissing, 0);
  const probes = rows.reduce((n, r) => n + r.probesChecked, 0);
  const probesKept = probes - rows.reduce((n, r) => n + r.probesMissing, 0);
  const afters = rows.filter((r) => r.compactions > 0).map((r) => `${Math.round(100 * r.after.median)}`);
  return (
    `| ${result.file} | ${result.source} | ${first?.requests ?? 0} | ${compactions} | ` +
    `${broken(main) === 0 ? 'yes' : `no (${broken(main)})`} | ${broken([4000])} | ` +
    `${afters.length > 0 ? afters.join(' / ') : '–'} | ${pct(pathsKept, paths)} | ${pct(probesKept, probes)} |`
  );
}

runMain(async () => {
  const args = process.argv.slice(2);
  const dir = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--manifest');
  if (!dir) throw new Error('usage: npx tsx bench/quality-outside.ts <dir> [--manifest <file.tsv>]');
  const manifestAt = args.indexOf('--manifest');
  const sources = manifest(manifestAt >= 0 ? args[manifestAt + 1] : undefined);
  const files = readdirSync(dir)
    .filter((name) => /\.(jsonl|traj|json|md)$/.test(name))
    .sort();
  const results: FileResult[] = [];
  for (const name of files) {
    const source = sources.get(name) ?? '';
    try {
      const rows = await evaluate({
        files: [join(dir, name)],
        windows: WINDOWS,
        summarizer: 'extractive',
        model: 'gpt-4o',
        peers: false,
      });
      results.push({ file: name, source, rows, refused: null });
      console.error(`${name}: ${rows.reduce((n, r) => n + r.violations.length, 0)} broken invariant(s)`);
    } catch (err) {
      results.push({ file: name, source, rows: [], refused: describeError(err).replace(/\|/g, '/') });
      console.error(`${name}: refused`);
    }
  }
  const read = results.filter((r) => r.refused === null);
  const all = read.flatMap((r) => r.rows);
  const main = all.filter((r) => r.window >= 8000);
  const violations = (rows: EvalRow[]) =>
    rows.flatMap((r) => r.violations.map((v) => `${r.session} @ ${r.window}: ${v}`));
  const machine = machineInfo('quality-outside');
  const text = [
    '# What survives a compaction on sessions outside `../shared`',
    '',
    `Measured by \`npx tsx bench/quality-outside.ts <dir> --manifest bench/outside-sessions.tsv\` on ${machine.date.slice(0, 10)}, ` +
      `${machine.cpu}, node ${machine.node}: \`eval\` at ${WINDOWS.map((w) => `${w / 1000}k`).join(', ')} with the extractive ` +
      'summarizer, one file at a time. Raw rows in [quality-outside.json](quality-outside.json). The sessions are public files ' +
      'recorded by real agents (and a few synthetic fixtures of pi-session-recall), read where they are; ' +
      '[outside-sessions.tsv](outside-sessions.tsv) names the repository, path and commit of each.',
    '',
    `**${files.length} files, ${read.length} read (${files.length - read.length} refused); ` +
      `${main.reduce((n, r) => n + r.compactions, 0)} compactions at 8k–64k, broken invariants there: ${violations(main).length}; ` +
      `at 4k: ${violations(all.filter((r) => r.window === 4000)).length}.**`,
    '',
    ...violations(all).map((v) => `- ${v.length > 240 ? `${v.slice(0, 240)}…` : v}`),
    '',
    '| file | source | requests | compactions at 4k / 8k / 16k / 32k / 64k | invariants held at 8k–64k | broken at 4k | after, median % of the window (8k–64k, where it compacted) | touched files kept (8k–64k) | carried state kept (8k–64k) |',
    '|---|---|---|---|---|---|---|---|---|',
    ...results.map(fileRow),
    '',
    'The invariants are those of `bench/QUALITY.md` and the CI gate: no request over the window, no tool result',
    'orphaned, no header item lost, every touched path and every carried probe in the context after each',
    'compaction, every automatic compaction at or under the target and at 70 % of it or more where the content',
    'allowed. A pi session is replayed whole (its own compactions left out).',
    '',
  ].join('\n');
  writeFileSync(join(__dirname, 'QUALITY-OUTSIDE.md'), text);
  writeFileSync(
    join(__dirname, 'quality-outside.json'),
    `${JSON.stringify(
      results.map((r) => ({
        file: basename(r.file),
        source: r.source,
        refused: r.refused,
        rows: r.rows.map(({ compactionDetails: _details, timeline: _timeline, ...row }) => row),
      })),
      null,
      2,
    )}\n`,
  );
  console.error('wrote bench/QUALITY-OUTSIDE.md, bench/quality-outside.json');
});
