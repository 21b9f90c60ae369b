/**
 * The benchmark report: each figure is a title, a few lines of notes and one or more tables,
 * written as bench/RESULTS.md, with the raw numbers in bench/results.json.
 */
import { cpus, totalmem } from 'node:os';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export interface Table {
  caption?: string;
  columns: string[];
  rows: (string | number)[][];
}

export interface Figure {
  id: string;
  title: string;
  /** What was measured and how, and what it shows (Markdown paragraphs or list lines). */
  notes: string[];
  tables: Table[];
  /** Raw numbers for results.json. */
  data: unknown;
  /** Seconds the figure took to measure. */
  seconds?: number;
}

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  platform: string;
  date: string;
  command: string;
  mode: string;
}

export function machineInfo(mode: string): Machine {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    date: new Date().toISOString(),
    command:
      mode === 'quick'
        ? 'npm run bench:quick'
        : mode === 'full'
          ? 'BENCH_FULL=1 npm run bench'
          : 'npm run bench',
    mode,
  };
}

function cell(value: string | number): string {
  return String(value).replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function renderTable(table: Table): string {
  const lines: string[] = [];
  if (table.caption) lines.push(`*${table.caption}*`, '');
  lines.push(`| ${table.columns.map(cell).join(' | ')} |`);
  lines.push(`|${table.columns.map(() => '---').join('|')}|`);
  for (const row of table.rows) lines.push(`| ${row.map(cell).join(' | ')} |`);
  return lines.join('\n');
}

/** The whole RESULTS.md. */
export function renderReport(machine: Machine, figures: Figure[], preamble: string[]): string {
  const out: string[] = [
    '# Benchmark results',
    '',
    `Measured by \`${machine.command}\` on ${machine.date.slice(0, 10)} (${machine.date}).`,
    '',
    renderTable({
      columns: ['machine', 'value'],
      rows: [
        ['cpu', machine.cpu],
        ['cores', machine.cores],
        ['memory', `${machine.memoryGiB} GiB`],
        ['node', machine.node],
        ['platform', machine.platform],
        ['mode', machine.mode],
      ],
    }),
    '',
    ...preamble,
    '',
  ];
  for (const figure of figures) {
    out.push(`## ${figure.id}. ${figure.title}`, '');
    for (const note of figure.notes) out.push(note, '');
    for (const table of figure.tables) out.push(renderTable(table), '');
    if (figure.seconds !== undefined) out.push(`<sub>measured in ${Math.round(figure.seconds)} s</sub>`, '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

/** Markers of the section `npm run bench:cluster` writes (bench/cluster.ts): kept by {@link writeResults}. */
export const CLUSTER_SECTION_START = '<!-- cluster-figure:start -->';
export const CLUSTER_SECTION_END = '<!-- cluster-figure:end -->';

/** The cluster section of a RESULTS.md, or null. */
export function clusterSection(results: string): string | null {
  const start = results.indexOf(CLUSTER_SECTION_START);
  const end = results.indexOf(CLUSTER_SECTION_END);
  return start >= 0 && end > start ? results.slice(start, end + CLUSTER_SECTION_END.length) : null;
}

/** `results` with its cluster section replaced by `section` (or added at the end). */
export function withClusterSection(results: string, section: string): string {
  const start = results.indexOf(CLUSTER_SECTION_START);
  const end = results.indexOf(CLUSTER_SECTION_END);
  if (start >= 0 && end > start)
    return `${results.slice(0, start)}${section}${results.slice(end + CLUSTER_SECTION_END.length)}`;
  return `${results.trimEnd()}\n\n${section}\n`;
}

export function writeResults(dir: string, machine: Machine, figures: Figure[], preamble: string[]): void {
  const file = `${dir}/RESULTS.md`;
  // The cluster figure is measured by another command (bench/cluster.ts): kept as it is.
  const kept = existsSync(file) ? clusterSection(readFileSync(file, 'utf8')) : null;
  const report = renderReport(machine, figures, preamble);
  writeFileSync(file, kept ? withClusterSection(report, kept) : report);
  const json = {
    machine,
    // Whole figures, so that a later `--only` run can keep the ones it does not measure again.
    figures: Object.fromEntries(figures.map((f) => [f.id, f])),
  };
  writeFileSync(`${dir}/results.json`, `${JSON.stringify(json, null, 2)}\n`);
}

/** Figures of an earlier results.json (for `--only`: the figures not measured again are kept). */
export function previousFigures(dir: string): Figure[] {
  const file = `${dir}/results.json`;
  if (!existsSync(file)) return [];
  try {
    const json = JSON.parse(readFileSync(file, 'utf8')) as { figures?: Record<string, Figure> };
    return Object.values(json.figures ?? {}).filter((f) => Array.isArray(f.notes) && Array.isArray(f.tables));
  } catch {
    return [];
  }
}
