/**
 * `eval`'s outputs: a table (plain text for a terminal, Markdown for bench/QUALITY.md), the JSON of
 * every row, and an SVG of the context's tokens across each replay with its compaction points.
 */
import type { EvalRow, Spread } from './run';

const pct = (v: number): string => (Number.isFinite(v) ? `${(v * 100).toFixed(0)}%` : 'n/a');
const spreadPct = (s: Spread): string =>
  Number.isFinite(s.median) ? `${pct(s.min)} / ${pct(s.median)} / ${pct(s.max)}` : '-';
const ratio = (ok: number, of: number): string => (of === 0 ? '-' : `${ok}/${of}`);

/** The table's columns. */
export const EVAL_COLUMNS = [
  'session',
  'window',
  'compactions',
  'before, % of window (min / median / max)',
  'after, % of window (min / median / max)',
  'target met',
  'filled ≥ 70 %',
  'requests over window',
  'results orphaned',
  'header items lost',
  'touched files kept',
  'carried state kept',
  'ms / compaction',
  'recall@3',
  'pi after (median)',
  'trimMessages after (median)',
] as const;

/** One row of the table. */
export function evalCells(row: EvalRow): string[] {
  return [
    row.session,
    `${row.window / 1000}k`,
    String(row.compactions),
    spreadPct(row.before),
    spreadPct(row.after),
    ratio(row.targetMet, row.compactions),
    ratio(row.filled, row.fillChecked),
    `${row.requestsOverWindow}/${row.requests}`,
    String(row.orphanedResults),
    String(row.headerLost),
    row.pathsChecked === 0 ? '-' : pct((row.pathsChecked - row.pathsMissing) / row.pathsChecked),
    row.probesChecked === 0 ? '-' : pct((row.probesChecked - row.probesMissing) / row.probesChecked),
    Number.isFinite(row.msPerCompaction.median) ? row.msPerCompaction.median.toFixed(1) : '-',
    row.recall === null || row.recall.probes === 0
      ? '-'
      : `${pct(row.recall.found / row.recall.probes)} (${row.recall.found}/${row.recall.probes})`,
    pct(row.peers.pi.median),
    pct(row.peers.trimMessages.median),
  ];
}

/** The table as aligned plain text. */
export function textTable(rows: readonly EvalRow[]): string {
  const short = [
    'session',
    'window',
    'comp.',
    'before % (min/med/max)',
    'after % (min/med/max)',
    'target',
    'fill≥70%',
    'over win.',
    'orphans',
    'hdr lost',
    'files',
    'carried',
    'ms',
    'recall@3',
    'pi',
    'trim',
  ];
  const cells = [short, ...rows.map(evalCells)];
  const widths = short.map((_, c) => Math.max(...cells.map((r) => (r[c] ?? '').length)));
  // Why a peer shows n/a: it could not be loaded (development dependencies, not installed with the package).
  const notes = [...new Set(rows.map((row) => row.peers.piNote).filter(Boolean))].map(
    (note) => `peers: ${note}`,
  );
  return [
    ...cells.map((r) =>
      r
        .map((cell, c) => cell.padEnd(widths[c] ?? 0))
        .join('  ')
        .trimEnd(),
    ),
    ...notes,
  ].join('\n');
}

/** The table as Markdown. */
export function markdownTable(rows: readonly EvalRow[]): string {
  const head = `| ${EVAL_COLUMNS.join(' | ')} |`;
  const rule = `|${EVAL_COLUMNS.map(() => '---').join('|')}|`;
  return [head, rule, ...rows.map((r) => `| ${evalCells(r).join(' | ')} |`)].join('\n');
}

/** Every row as plain JSON (the contexts themselves left out). */
export function evalJson(rows: readonly EvalRow[]): unknown {
  return rows.map((row) => ({
    ...row,
    compactionDetails: row.compactionDetails.map((j) => ({ ...j, ms: Math.round(j.ms * 100) / 100 })),
  }));
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];
const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * One chart per session: the context's tokens at each request, one line per window (its window a
 * dotted line of the same colour), a dot at each committed compaction.
 */
export function evalSvg(rows: readonly EvalRow[]): string {
  const sessions = [...new Set(rows.map((r) => r.session))];
  const width = 920;
  const chartHeight = 300;
  const m = { left: 70, right: 210, top: 36, bottom: 40 };
  const charts = sessions.map((session, index) => {
    const mine = rows.filter((r) => r.session === session);
    const top = index * (chartHeight + 20);
    const maxX = Math.max(1, ...mine.map((r) => r.timeline.requests.length));
    const maxY = Math.max(1, ...mine.map((r) => Math.max(r.window, ...r.timeline.requests)));
    const x = (i: number): number => m.left + ((width - m.left - m.right) * i) / maxX;
    const y = (v: number): number =>
      top + chartHeight - m.bottom - ((chartHeight - m.top - m.bottom) * v) / maxY;
    const parts: string[] = [
      `<text x="${m.left}" y="${top + 22}" font-size="14" font-weight="bold">${esc(session)}: context tokens at each request</text>`,
      `<line x1="${m.left}" y1="${y(0)}" x2="${width - m.right}" y2="${y(0)}" stroke="#333"/>`,
      `<line x1="${m.left}" y1="${y(0)}" x2="${m.left}" y2="${y(maxY)}" stroke="#333"/>`,
      `<text x="${m.left - 6}" y="${y(maxY) + 4}" font-size="11" text-anchor="end">${maxY.toLocaleString('en-US')}</text>`,
      `<text x="${m.left - 6}" y="${y(0) + 4}" font-size="11" text-anchor="end">0</text>`,
      `<text x="${(width - m.right + m.left) / 2}" y="${y(0) + 28}" font-size="11" text-anchor="middle">request (model call) number, of ${maxX}</text>`,
    ];
    mine.forEach((row, i) => {
      const color = COLORS[i % COLORS.length] as string;
      const points = row.timeline.requests.map((t, k) => `${x(k).toFixed(1)},${y(t).toFixed(1)}`).join(' ');
      parts.push(`<polyline fill="none" stroke="${color}" stroke-width="1.2" points="${points}"/>`);
      parts.push(
        `<line x1="${m.left}" y1="${y(row.window)}" x2="${width - m.right}" y2="${y(row.window)}" stroke="${color}" stroke-dasharray="2,3"/>`,
      );
      for (const at of row.timeline.compactedAt) {
        const t = row.timeline.requests[Math.min(at, row.timeline.requests.length - 1)] ?? 0;
        parts.push(`<circle cx="${x(at).toFixed(1)}" cy="${y(t).toFixed(1)}" r="2.2" fill="${color}"/>`);
      }
      parts.push(
        `<text x="${width - m.right + 10}" y="${top + m.top + 16 * i}" font-size="12" fill="${color}">window ${(row.window / 1000).toFixed(0)}k (${row.compactions} compactions)</text>`,
      );
    });
    return parts.join('\n');
  });
  const height = sessions.length * (chartHeight + 20);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n${charts.join('\n')}\n</svg>\n`;
}
