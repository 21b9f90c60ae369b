/**
 * A hostile workspace for the built-in file tools (issue 22): dangling symlinks, links swapped in
 * while a tool runs, FIFOs and sockets, a 2 GB sparse file, file names that try to forge output
 * lines; and a fuzz test over random paths and link layouts asserting that nothing outside the
 * workspace is ever read or written. Real files, real processes, no Temporal.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  openSync,
  closeSync,
  ftruncateSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from '../../../activities/tools/builtin';
import { ToolError, type AgentTool } from '../../../activities/tools/registry';

const SECRET = 'the-secret-outside-the-workspace';

const tool = (name: string): AgentTool => {
  const found = BUILTIN_TOOLS.find((t) => t.name === name);
  if (!found) throw new Error(`no built-in tool ${name}`);
  return found;
};
const runIn = (workspace: string, name: string, args: Record<string, unknown>) =>
  tool(name).run(args, { conversationId: 'hostile', round: 1, workspace });

/** Every file under `dir` (not following links) with its content or kind. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, entry.name);
      const key = relative(dir, full);
      if (entry.isDirectory()) {
        out[key] = '<dir>';
        walk(full);
      } else if (entry.isFile()) out[key] = readFileSync(full, 'utf8');
      else out[key] = '<other>';
    }
  };
  walk(dir);
  return out;
}

async function outcome(p: Promise<{ content: string }>): Promise<string> {
  try {
    return (await p).content;
  } catch (err) {
    if (!(err instanceof ToolError)) throw err;
    return `Error: ${err.message}`;
  }
}

let root: string;
let workspace: string;
let outside: string;
let fifoServer: Server | undefined;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'dc-hostile-'));
  workspace = join(root, 'workspace');
  outside = join(root, 'outside');
  mkdirSync(workspace);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), SECRET);
  writeFileSync(join(workspace, 'inside.txt'), 'inside\n');
});
afterAll(() => {
  fifoServer?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('links that point nowhere or change', () => {
  it('write_file refuses a dangling symlink to a path outside, and creates nothing there', async () => {
    symlinkSync(join(outside, 'new.txt'), join(workspace, 'dangling'));
    symlinkSync('../outside/rel-new.txt', join(workspace, 'dangling-rel'));
    for (const path of ['dangling', 'dangling-rel']) {
      const out = await outcome(runIn(workspace, 'write_file', { path, content: 'planted by the model' }));
      expect(out).toBe(`Error: path "${path}" is a symlink to a missing file; refused`);
    }
    expect(readdirSync(outside)).toEqual(['secret.txt']);
  });

  it('write_file refuses a dangling symlink inside too (it would create what the link names)', async () => {
    symlinkSync('inside-later.txt', join(workspace, 'dangling-in'));
    expect(await outcome(runIn(workspace, 'write_file', { path: 'dangling-in', content: 'x' }))).toMatch(
      /symlink to a missing file; refused/,
    );
  });

  it('a symlink inside to a file inside is followed for reading and writing', async () => {
    symlinkSync('inside.txt', join(workspace, 'link-in'));
    await runIn(workspace, 'write_file', { path: 'link-in', content: 'rewritten\n' });
    expect(readFileSync(join(workspace, 'inside.txt'), 'utf8')).toBe('rewritten\n');
    expect(await outcome(runIn(workspace, 'read_file', { path: 'link-in' }))).toBe('rewritten\n');
  });

  it('a link swapped in between check and use is never followed outside (race)', async () => {
    const race = join(workspace, 'race');
    mkdirSync(race);
    writeFileSync(join(outside, 'victim.txt'), 'original');
    mkdirSync(join(outside, 'victim-dir'));
    const before = snapshot(outside);
    // Another process swaps, atomically and as fast as it can, a file for a link to a file
    // outside, and a directory for a link to a directory outside.
    const script = `
      const fs = require('fs'); const p = require('path');
      const race = ${JSON.stringify(race)}, out = ${JSON.stringify(outside)};
      for (let i = 0; ; i++) {
        try {
          const tmp = p.join(race, '.tmp' + (i % 2));
          fs.rmSync(tmp, { recursive: true, force: true });
          if (i % 2) fs.symlinkSync(p.join(out, 'victim.txt'), tmp); else fs.writeFileSync(tmp, 'in');
          fs.renameSync(tmp, p.join(race, 'target'));
          const tmpd = p.join(race, '.tmpd');
          fs.rmSync(tmpd, { recursive: true, force: true });
          if (i % 2) fs.symlinkSync(p.join(out, 'victim-dir'), tmpd); else fs.mkdirSync(tmpd);
          fs.rmSync(p.join(race, 'd'), { recursive: true, force: true });
          fs.renameSync(tmpd, p.join(race, 'd'));
        } catch {}
      }`;
    const swapper: ChildProcess = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    try {
      let written = 0;
      let refused = 0;
      for (let i = 0; i < 400; i++) {
        const outputs = await Promise.all([
          outcome(runIn(workspace, 'write_file', { path: 'race/target', content: 'planted' })),
          outcome(runIn(workspace, 'write_file', { path: 'race/d/planted.txt', content: 'planted' })),
          outcome(runIn(workspace, 'read_file', { path: 'race/target' })),
          outcome(runIn(workspace, 'list_directory', { path: 'race/d' })),
        ]);
        for (const out of outputs) {
          expect(out).not.toContain(SECRET);
          expect(out).not.toContain('original');
          if (out.startsWith('wrote')) written++;
          else if (out.startsWith('Error')) refused++;
        }
      }
      // Both outcomes happened: the race was real.
      expect(written).toBeGreaterThan(0);
      expect(refused).toBeGreaterThan(0);
    } finally {
      swapper.kill('SIGKILL');
    }
    expect(snapshot(outside)).toEqual(before);
  }, 60_000);
});

describe('what is not a regular file', () => {
  it('read_file refuses a FIFO at once, and many of them block nothing else', async () => {
    execFileSync('mkfifo', [join(workspace, 'pipe')]);
    const started = Date.now();
    const outs = await Promise.all(
      Array.from({ length: 8 }, () => outcome(runIn(workspace, 'read_file', { path: 'pipe' }))),
    );
    for (const out of outs) expect(out).toBe('Error: "pipe" is a FIFO, not a regular file; refused');
    expect(await outcome(runIn(workspace, 'read_file', { path: 'inside.txt' }))).not.toMatch(/^Error/);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await outcome(runIn(workspace, 'write_file', { path: 'pipe', content: 'x' }))).toBe(
      'Error: "pipe" is a FIFO, not a regular file; refused',
    );
    // search passes over it without waiting.
    expect(await outcome(runIn(workspace, 'search_text', { pattern: 'zzz-nothing' }))).toBe(
      'no match for "zzz-nothing"',
    );
  });

  it('read_file refuses a socket', async () => {
    const path = join(workspace, 'sock');
    fifoServer = createServer();
    await new Promise<void>((resolve) => fifoServer?.listen(path, resolve));
    expect(await outcome(runIn(workspace, 'read_file', { path: 'sock' }))).toBe(
      'Error: "sock" is a socket, not a regular file; refused',
    );
  });

  it('a directory is named as one', async () => {
    mkdirSync(join(workspace, 'a-dir'));
    expect(await outcome(runIn(workspace, 'read_file', { path: 'a-dir' }))).toBe(
      'Error: "a-dir" is a directory; use list_directory',
    );
    expect(await outcome(runIn(workspace, 'write_file', { path: 'a-dir', content: 'x' }))).toBe(
      'Error: "a-dir" is a directory',
    );
  });
});

describe('big files are read in chunks, no further than returned', () => {
  const TWO_GB = 2 * 1024 * 1024 * 1024;

  it('a 2 GB sparse file answers in under a second with bounded memory', async () => {
    const zeros = join(workspace, 'zeros.bin');
    const text = join(workspace, 'sparse-text.log');
    for (const [path, head] of [
      [zeros, ''],
      [text, 'a line of text\n'.repeat(20_000)],
    ] as const) {
      const fd = openSync(path, 'w');
      if (head) writeSync(fd, head);
      ftruncateSync(fd, TWO_GB);
      closeSync(fd);
    }
    expect(statSync(zeros).size).toBe(TWO_GB);
    const rssBefore = process.memoryUsage().rss;
    let started = performance.now();
    expect(await outcome(runIn(workspace, 'read_file', { path: 'zeros.bin' }))).toBe(
      'Error: "zeros.bin" is a binary file',
    );
    expect(performance.now() - started).toBeLessThan(1_000);
    started = performance.now();
    const out = await outcome(runIn(workspace, 'read_file', { path: 'sparse-text.log' }));
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(out).toMatch(/\n\[cut at 200000 characters: the file has 2147483648 bytes; use offset\/limit\]$/);
    expect(out.startsWith('a line of text\na line of text\n')).toBe(true);
    // Lines by offset are found by reading on, still in chunks.
    expect(
      await outcome(runIn(workspace, 'read_file', { path: 'sparse-text.log', offset: 19_999, limit: 2 })),
    ).toBe('a line of text\na line of text');
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(100 * 1024 * 1024);
    rmSync(zeros);
    rmSync(text);
  });
});

describe('file names cannot forge output lines', () => {
  it('search_text, list_directory and write_file escape control characters in names', async () => {
    const dir = join(workspace, 'names');
    mkdirSync(dir);
    const evil = 'evil\ninside.txt\nfake:1: needle forged';
    writeFileSync(join(dir, evil), 'a real needle here\n');
    const search = await outcome(runIn(workspace, 'search_text', { pattern: 'needle', path: 'names' }));
    expect(search.split('\n')).toEqual([
      'names/evil\\ninside.txt\\nfake:1: needle forged:1: a real needle here',
    ]);
    const list = await outcome(runIn(workspace, 'list_directory', { path: 'names' }));
    expect(list.split('\n')).toEqual(['evil\\ninside.txt\\nfake:1: needle forged']);
    const wrote = await outcome(runIn(workspace, 'write_file', { path: 'names/x\ry\u202ez', content: 'k' }));
    expect(wrote).toBe('wrote 1 characters to names/x\\ry\\u202ez');
    expect(wrote.split(/[\n\r\u2028\u2029]/)).toHaveLength(1);
  });
});

describe('fuzz: random paths over random link layouts', () => {
  /** What an entry of the workspace can be. */
  const KINDS = [
    'file',
    'dir',
    'link-out-file',
    'link-out-dir',
    'link-in',
    'dangling-out',
    'dangling-in',
    'fifo',
  ] as const;
  const NAMES = ['a', 'b', 'c', 'sub'];
  const COMPONENTS = [
    'a',
    'b',
    'c',
    'sub',
    '..',
    '.',
    '',
    'new',
    'x\ny',
    '..outside',
    'outside',
    'secret.txt',
  ];

  it('nothing outside the workspace is ever read or written', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...KINDS), { minLength: NAMES.length, maxLength: NAMES.length }),
        fc.constantFrom(...KINDS),
        fc.array(
          fc.record({
            tool: fc.constantFrom('read_file', 'write_file', 'list_directory', 'search_text'),
            path: fc
              .array(fc.constantFrom(...COMPONENTS), { minLength: 1, maxLength: 5 })
              .map((parts) => parts.join('/')),
            lead: fc.constantFrom('', '', '', '/', './'),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        async (layout, nested, calls) => {
          const base = join(root, `fuzz-${n++}`);
          const ws = join(base, 'ws');
          const out = join(base, 'outside');
          mkdirSync(join(out, 'dir'), { recursive: true });
          writeFileSync(join(out, 'secret.txt'), SECRET);
          writeFileSync(join(out, 'dir', 'secret.txt'), SECRET);
          mkdirSync(ws);
          const make = (path: string, kind: (typeof KINDS)[number]): void => {
            if (kind === 'file') writeFileSync(path, 'inside content\n');
            else if (kind === 'dir') mkdirSync(path);
            else if (kind === 'link-out-file') symlinkSync(join(out, 'secret.txt'), path);
            else if (kind === 'link-out-dir') symlinkSync(join(out, 'dir'), path);
            else if (kind === 'link-in') symlinkSync('.', path);
            else if (kind === 'dangling-out') symlinkSync(join(out, 'created-through-link'), path);
            else if (kind === 'dangling-in') symlinkSync('not-there-yet', path);
            else execFileSync('mkfifo', [path]);
          };
          layout.forEach((kind, i) => make(join(ws, NAMES[i] as string), kind));
          if (layout[3] === 'dir') make(join(ws, 'sub', 'a'), nested);
          const before = snapshot(out);
          try {
            for (const call of calls) {
              const path = `${call.lead}${call.path}`;
              const args =
                call.tool === 'write_file'
                  ? { path, content: 'planted' }
                  : call.tool === 'search_text'
                    ? { pattern: 'secret', path }
                    : { path };
              const result = await outcome(runIn(ws, call.tool, args));
              expect(result).not.toContain(SECRET);
            }
            expect(snapshot(out)).toEqual(before);
          } finally {
            rmSync(base, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 150, seed: 22 },
    );
  }, 120_000);
});
