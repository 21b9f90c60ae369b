import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from '../../../activities/tools/builtin';
import { ToolError, type AgentTool } from '../../../activities/tools/registry';

let base: string;
let ws: string;
const tool = (name: string): AgentTool => {
  const t = BUILTIN_TOOLS.find((x) => x.name === name);
  if (!t) throw new Error(`no tool ${name}`);
  return t;
};
const run = (name: string, args: Record<string, unknown>, workspace: string | null = ws) =>
  tool(name).run(args, { conversationId: 'c', round: 1, workspace });

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'dc-tools-'));
  ws = join(base, 'ws');
  mkdirSync(join(ws, 'src'), { recursive: true });
  writeFileSync(join(ws, 'src', 'a.ts'), 'const a = 1;\nconst b = 2;\n// TODO fix\n');
  writeFileSync(join(ws, 'bin.dat'), Buffer.from([1, 2, 0, 3]));
  writeFileSync(join(base, 'secret.txt'), 'top secret');
  symlinkSync(join(base, 'secret.txt'), join(ws, 'link-out'));
  symlinkSync(base, join(ws, 'dir-out'));
  symlinkSync(join(ws, 'src', 'a.ts'), join(ws, 'link-in'));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('file tools stay inside the workspace', () => {
  it.each([
    ['absolute path', '/etc/passwd', /absolute/],
    ['parent escape', '../secret.txt', /outside the workspace/],
    ['nested escape', 'src/../../secret.txt', /outside the workspace/],
    ['symlink to a file outside', 'link-out', /through a symlink/],
    ['symlinked directory outside', 'dir-out/secret.txt', /through a symlink/],
    ['NUL byte', 'src/a.ts\0.png', /NUL byte/],
  ])('read_file refuses %s', async (_case, path, message) => {
    await expect(run('read_file', { path })).rejects.toThrow(message);
    await expect(run('read_file', { path })).rejects.toBeInstanceOf(ToolError);
  });

  it('write_file refuses to write through a symlinked directory', async () => {
    await expect(run('write_file', { path: 'dir-out/new.txt', content: 'x' })).rejects.toThrow(/symlink/);
    expect(() => readFileSync(join(base, 'new.txt'))).toThrow();
  });

  it('refuses file tools without a workspace', async () => {
    await expect(run('read_file', { path: 'a' }, null)).rejects.toThrow(/no workspace/);
  });

  it('follows a symlink that stays inside', async () => {
    expect((await run('read_file', { path: 'link-in' })).content).toContain('const a = 1;');
  });
});

describe('file tools', () => {
  it('reads a file, and lines by offset/limit', async () => {
    expect((await run('read_file', { path: 'src/a.ts' })).content).toBe(
      'const a = 1;\nconst b = 2;\n// TODO fix\n',
    );
    expect((await run('read_file', { path: 'src/a.ts', offset: 2, limit: 1 })).content).toBe('const b = 2;');
  });

  it('refuses binary files and missing files clearly', async () => {
    await expect(run('read_file', { path: 'bin.dat' })).rejects.toThrow(/binary/);
    await expect(run('read_file', { path: 'nope.txt' })).rejects.toThrow(/does not exist/);
  });

  it('caps big files and says so', async () => {
    writeFileSync(join(ws, 'big.txt'), 'x'.repeat(300_000));
    const out = await run('read_file', { path: 'big.txt' });
    expect(out.content.length).toBeLessThan(201_000);
    expect(out.content).toMatch(/\[cut at 200000 characters: the file has 300000 bytes; use offset\/limit\]/);
  });

  it('lists a directory with a slash on directories', async () => {
    const out = (await run('list_directory', {})).content.split('\n');
    expect(out).toContain('src/');
    expect(out).toContain('bin.dat');
  });

  it('searches literally and by regex; a bad regex is a clear error', async () => {
    expect((await run('search_text', { pattern: 'TODO' })).content).toBe('src/a.ts:3: // TODO fix');
    expect(
      (await run('search_text', { pattern: 'const [ab]', regex: true })).content.split('\n'),
    ).toHaveLength(2);
    await expect(run('search_text', { pattern: '(', regex: true })).rejects.toThrow(
      /invalid regular expression/,
    );
  });

  it('writes files, creating directories', async () => {
    await run('write_file', { path: 'out/new/file.txt', content: 'hello' });
    expect(readFileSync(join(ws, 'out', 'new', 'file.txt'), 'utf8')).toBe('hello');
  });

  it.each([
    ['read_file', {}, /missing argument "path"/],
    ['read_file', { path: 3 }, /must be a string/],
    ['read_file', { path: 'src/a.ts', offset: -1 }, /non-negative integer/],
    ['write_file', { path: 'x.txt' }, /missing argument "content"/],
    ['search_text', { pattern: '' }, /must not be empty/],
  ])('%s validates its arguments (%j)', async (name, args, message) => {
    await expect(run(name, args)).rejects.toThrow(message);
  });
});

describe('note tools', () => {
  it('remember, update_tasks and pin return header notes', async () => {
    expect((await run('remember', { note: 'use integer cents' })).notes).toEqual([
      { kind: 'memory', text: 'use integer cents' },
    ]);
    const tasks = await run('update_tasks', {
      tasks: [
        { title: 'fix rounding', status: 'done' },
        { title: 'changelog', status: 'pending' },
      ],
    });
    expect(tasks.notes).toEqual([{ kind: 'task_list', text: '[x] fix rounding\n[ ] changelog' }]);
    expect((await run('pin', { text: 'never drop this' })).notes).toEqual([
      { kind: 'pin', text: 'never drop this' },
    ]);
    await expect(run('update_tasks', { tasks: [{ title: 'x', status: 'later' }] })).rejects.toThrow(
      /status "later"/,
    );
  });
});
