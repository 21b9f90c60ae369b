/**
 * A hand-written log-log line chart as SVG (no chart dependency): one line per series, a dashed
 * linear reference, labelled axes.
 */

export interface Series {
  name: string;
  points: { x: number; y: number }[];
  color: string;
  dashed?: boolean;
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  width?: number;
  height?: number;
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function decades(min: number, max: number): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) out.push(10 ** e);
  return out;
}

function label(v: number): string {
  if (v >= 1e6) return `${v / 1e6}M`;
  if (v >= 1e3) return `${v / 1e3}k`;
  return String(v);
}

export function logLogChart(series: Series[], options: ChartOptions): string {
  const width = options.width ?? 720;
  const height = options.height ?? 440;
  const m = { left: 70, right: 230, top: 40, bottom: 55 };
  const all = series.flatMap((s) => s.points).filter((p) => p.x > 0 && p.y > 0);
  const xs = decades(Math.min(...all.map((p) => p.x)), Math.max(...all.map((p) => p.x)));
  const ys = decades(Math.min(...all.map((p) => p.y)), Math.max(...all.map((p) => p.y)));
  const [x0, x1] = [Math.log10(xs[0] ?? 1), Math.log10(xs[xs.length - 1] ?? 10)];
  const [y0, y1] = [Math.log10(ys[0] ?? 1), Math.log10(ys[ys.length - 1] ?? 10)];
  const px = (x: number) => m.left + ((Math.log10(x) - x0) / (x1 - x0 || 1)) * (width - m.left - m.right);
  const py = (y: number) =>
    height - m.bottom - ((Math.log10(y) - y0) / (y1 - y0 || 1)) * (height - m.top - m.bottom);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2 - m.right / 2}" y="22" text-anchor="middle" font-size="15">${esc(options.title)}</text>`,
  ];
  for (const x of xs) {
    parts.push(`<line x1="${px(x)}" y1="${m.top}" x2="${px(x)}" y2="${height - m.bottom}" stroke="#ddd"/>`);
    parts.push(`<text x="${px(x)}" y="${height - m.bottom + 18}" text-anchor="middle">${label(x)}</text>`);
  }
  for (const y of ys) {
    parts.push(`<line x1="${m.left}" y1="${py(y)}" x2="${width - m.right}" y2="${py(y)}" stroke="#ddd"/>`);
    parts.push(`<text x="${m.left - 8}" y="${py(y) + 4}" text-anchor="end">${label(y)}</text>`);
  }
  parts.push(
    `<text x="${(m.left + width - m.right) / 2}" y="${height - 12}" text-anchor="middle">${esc(options.xLabel)}</text>`,
    `<text transform="translate(18 ${(m.top + height - m.bottom) / 2}) rotate(-90)" text-anchor="middle">${esc(options.yLabel)}</text>`,
  );
  series.forEach((s, i) => {
    const pts = s.points.filter((p) => p.x > 0 && p.y > 0);
    const d = pts
      .map((p, j) => `${j === 0 ? 'M' : 'L'}${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`)
      .join(' ');
    parts.push(
      `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
    for (const p of pts)
      parts.push(`<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="3" fill="${s.color}"/>`);
    const ly = m.top + 10 + i * 20;
    const lx = width - m.right + 15;
    parts.push(
      `<line x1="${lx}" y1="${ly}" x2="${lx + 24}" y2="${ly}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
    parts.push(`<text x="${lx + 30}" y="${ly + 4}">${esc(s.name)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
