/**
 * Files of the workspace, opened so that what is read or written is what was checked (issue 22).
 *
 * A path the model gives is first checked by its text (not absolute, no NUL byte, no `..` that
 * leaves the workspace), then opened one directory at a time from the workspace's root: each
 * component is opened relative to the directory already opened (through `/proc/self/fd/N/name`, the
 * way `openat` works), with `O_NOFOLLOW`, so a symlink is never followed unchecked, and a link
 * swapped in between a check and its use is refused. A symlink is followed only when its target,
 * resolved, is inside the workspace, and what it opened is checked again after the open. Anything
 * that is not a regular file or a directory (FIFO, socket, device) is refused at once; files are
 * opened with `O_NONBLOCK`, so a FIFO cannot hang a worker thread. Writes create the file
 * relative to the checked directory, never truncating before the check.
 *
 * Where `/proc/self/fd` is missing (not Linux), components are opened by path and every open is
 * checked afterwards with `realpath`: a swap between that check and the use is then possible.
 */
import { constants, existsSync, type Dirent } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { ToolError } from './registry';

const { O_RDONLY, O_WRONLY, O_CREAT, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
const PROC_FD = '/proc/self/fd';
let procFd: boolean | undefined;

function hasProcFd(): boolean {
  procFd ??= existsSync(PROC_FD);
  return procFd;
}

/**
 * Text that may come from a file name, safe to put on a line of a tool's output: control
 * characters, line and paragraph separators and bidirectional overrides are written as escapes,
 * so a name cannot forge a line of output.
 */
export function escapeControl(text: string): string {
  return text.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (c) => {
      const code = c.charCodeAt(0);
      if (c === '\n') return '\\n';
      if (c === '\r') return '\\r';
      if (c === '\t') return '\\t';
      return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`;
    },
  );
}

/** A path the model gave, quoted for a message: `"src/a.ts"`, control characters escaped. */
export function quoted(path: unknown): string {
  return `"${escapeControl(String(path))}"`;
}

function inside(root: string, target: string): boolean {
  const rel = relative(root, target);
  // A `..` segment leaves the root; a name that merely starts with dots (`..notes`, `....`) does not.
  return rel === '' || (!isAbsolute(rel) && !rel.split(sep).includes('..'));
}

/** The path as the model should see it: relative to the workspace, with forward slashes. */
export function displayPath(workspaceRoot: string, target: string): string {
  return escapeControl(relative(workspaceRoot, target).split(sep).join('/') || '.');
}

/** A directory of the workspace, open. */
export interface OpenDir {
  handle: FileHandle;
  /** Where it is (checked to be inside the workspace). */
  path: string;
  /** The workspace's real path. */
  root: string;
}

/** A path through which to reach `name` inside an open directory without resolving the directory again. */
function at(dir: OpenDir, name: string): string {
  return hasProcFd() ? `${PROC_FD}/${dir.handle.fd}/${name}` : join(dir.path, name);
}

/** Where an open file or directory really is. */
async function whereIs(handle: FileHandle, path: string): Promise<string> {
  return hasProcFd() ? readlink(`${PROC_FD}/${handle.fd}`) : realpath(path);
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

interface Checked {
  root: string;
  /** The path's components below the root (none: the root itself). */
  parts: string[];
  /** The path as the model gave it, quoted for messages. */
  shown: string;
  what: string;
  /** What to say when a directory on the way, or the path itself, is not there. */
  missing: string;
}

/**
 * Checks a path's text and finds the workspace (see the module comment). `missing` names the
 * path in "does not exist" (`directory`, `file`; empty: the path alone).
 */
async function check(workspace: string | null, path: unknown, missing = 'path'): Promise<Checked> {
  const what = 'path';
  if (!workspace) throw new ToolError('this conversation has no workspace, so file tools are not available');
  if (typeof path !== 'string' || path.length === 0)
    throw new ToolError(`${what} must be a non-empty string`);
  if (path.includes('\0')) throw new ToolError(`${what} contains a NUL byte`);
  const shown = quoted(path);
  if (isAbsolute(path))
    throw new ToolError(`${what} ${shown} is absolute; use a path relative to the workspace`);
  const root = await realpath(workspace).catch(() => {
    throw new ToolError(`the workspace ${workspace} does not exist`);
  });
  const target = resolve(root, path);
  if (!inside(root, target)) throw new ToolError(`${what} ${shown} is outside the workspace`);
  const rel = relative(root, target);
  const noun = missing ? `${missing} ` : '';
  return {
    root,
    parts: rel === '' ? [] : rel.split(sep),
    shown,
    what,
    missing: `${noun}${shown} does not exist`,
  };
}

function throughLink(c: Checked): ToolError {
  return new ToolError(`${c.what} ${c.shown} leads outside the workspace (through a symlink)`);
}

/** Refuses what is open when it is not where it was checked to be: inside the workspace. */
async function confirmInside(c: Checked, handle: FileHandle, path: string): Promise<string> {
  const real = await whereIs(handle, path).catch(() => null);
  if (real === null || !inside(c.root, real)) {
    await handle.close();
    throw throughLink(c);
  }
  return real;
}

/**
 * Opens `name` in `dir` with `flags` (always `O_NOFOLLOW`). A symlink is followed only to a target
 * inside the workspace, and only to something that exists; the open is checked afterwards.
 * Returns null when nothing is there.
 */
async function openIn(
  c: Checked,
  dir: OpenDir,
  name: string,
  flags: number,
): Promise<{ handle: FileHandle; path: string } | null> {
  const path = at(dir, name);
  try {
    const handle = await open(path, flags | O_NOFOLLOW);
    return { handle, path: await confirmInside(c, handle, join(dir.path, name)) };
  } catch (err) {
    if (err instanceof ToolError) throw err;
    const why = code(err);
    if (why === 'ENOENT') return null;
    // A FIFO without a writer, a socket, a device (ENXIO, ENODEV...): say what it is.
    const stats = await lstat(path).catch(() => null);
    if (stats && !stats.isFile() && !stats.isDirectory() && !stats.isSymbolicLink())
      throw new ToolError(`${c.shown} is ${kindOf(stats)}, not a regular file; refused`);
    if (why === 'EACCES' || why === 'EPERM')
      throw new ToolError(`${c.what} ${c.shown} cannot be opened: permission denied`);
    // ELOOP: a symlink (ENOTDIR too when a directory was asked for and the name is a link).
    if (why !== 'ELOOP' && why !== 'ENOTDIR') throw err;
    const real = await realpath(path).catch(() => null);
    if (real === null) {
      if (why === 'ENOTDIR') throw new ToolError(`${c.what} ${c.shown} is not a directory`);
      // A link to nothing: following it could create a file wherever it points.
      throw new ToolError(`${c.what} ${c.shown} is a symlink to a missing file; refused`);
    }
    if (!inside(c.root, real)) throw throughLink(c);
    let handle: FileHandle;
    try {
      handle = await open(real, (flags & ~O_CREAT) | O_NOFOLLOW);
    } catch (again) {
      if (code(again) === 'ENOTDIR') throw new ToolError(`${c.what} ${c.shown} is not a directory`);
      // The link changed between the check and the open.
      throw new ToolError(`${c.what} ${c.shown} changed while it was being opened; refused`);
    }
    return { handle, path: await confirmInside(c, handle, real) };
  }
}

/** Opens the workspace's root. */
async function openRoot(c: Checked): Promise<OpenDir> {
  const handle = await open(c.root, O_RDONLY | O_DIRECTORY);
  return { handle, path: c.root, root: c.root };
}

/**
 * Opens the directories of `parts` one by one from the root (creating them when `create`), and
 * returns the last, open. The caller closes it.
 */
async function walkDirs(c: Checked, parts: readonly string[], create: boolean): Promise<OpenDir> {
  let dir = await openRoot(c);
  try {
    for (const name of parts) {
      if (create)
        await mkdir(at(dir, name)).catch((err) => (code(err) === 'EEXIST' ? undefined : Promise.reject(err)));
      const next = await openIn(c, dir, name, O_RDONLY | O_DIRECTORY);
      if (next === null) throw new ToolError(c.missing);
      await dir.handle.close();
      dir = { handle: next.handle, path: next.path, root: c.root };
    }
    return dir;
  } catch (err) {
    await dir.handle.close().catch(() => undefined);
    throw code(err) === 'ENOTDIR' ? new ToolError(`${c.what} ${c.shown} is not a directory`) : err;
  }
}

/**
 * A directory of the workspace, open (the caller closes it). `missing` names it in "does not
 * exist" (default `path`; empty: the path alone).
 */
export async function openWorkspaceDir(
  workspace: string | null,
  path: unknown,
  missing = 'path',
): Promise<OpenDir> {
  const c = await check(workspace, path, missing);
  return walkDirs(c, c.parts, false);
}

/** A regular file of the workspace, open. */
export interface OpenFile {
  handle: FileHandle;
  size: number;
  /** Where it is (inside the workspace). */
  path: string;
  root: string;
}

function kindOf(stats: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  return 'a device or special file';
}

/**
 * Opens a regular file of the workspace for reading, or for writing (`write`: created when
 * missing, with its directories). Refuses anything else at once, with what it is.
 */
export async function openWorkspaceFile(
  workspace: string | null,
  path: unknown,
  options: { write?: boolean; directoryHint?: string } = {},
): Promise<OpenFile> {
  // A read names the file as missing; a write creates its directories (only a race loses one).
  const c = await check(workspace, path, options.write ? 'path' : 'file');
  const name = c.parts.at(-1);
  if (name === undefined) throw new ToolError(`${c.shown} is a directory${options.directoryHint ?? ''}`);
  const dir = await walkDirs(c, c.parts.slice(0, -1), options.write === true);
  try {
    const flags = (options.write ? O_WRONLY | O_CREAT : O_RDONLY) | O_NONBLOCK;
    const file = await openIn(c, dir, name, flags).catch((err) => {
      if (code(err) === 'EISDIR')
        throw new ToolError(`${c.shown} is a directory${options.directoryHint ?? ''}`);
      throw err;
    });
    if (file === null) throw new ToolError(`file ${c.shown} does not exist`);
    const stats = await file.handle.stat();
    if (!stats.isFile()) {
      await file.handle.close();
      const kind = kindOf(stats);
      throw new ToolError(
        `${c.shown} is ${kind}${stats.isDirectory() ? (options.directoryHint ?? '') : ', not a regular file; refused'}`,
      );
    }
    return { handle: file.handle, size: stats.size, path: file.path, root: c.root };
  } finally {
    await dir.handle.close();
  }
}

/** Names in an open directory, with their kinds (symlinks are neither files nor directories). */
export async function listDir(dir: OpenDir): Promise<Dirent[]> {
  return readdir(hasProcFd() ? `${PROC_FD}/${dir.handle.fd}` : dir.path, { withFileTypes: true });
}

/**
 * An entry of an open directory, opened without following a link (search walks the tree this
 * way). Null when it is gone, a link, or not of the kind asked.
 */
export async function openEntry(dir: OpenDir, name: string, kind: 'file'): Promise<OpenFile | null>;
export async function openEntry(dir: OpenDir, name: string, kind: 'dir'): Promise<OpenDir | null>;
export async function openEntry(
  dir: OpenDir,
  name: string,
  kind: 'file' | 'dir',
): Promise<OpenDir | OpenFile | null> {
  const flags = kind === 'dir' ? O_RDONLY | O_DIRECTORY | O_NONBLOCK : O_RDONLY | O_NONBLOCK;
  let handle: FileHandle;
  try {
    handle = await open(at(dir, name), flags | O_NOFOLLOW);
  } catch {
    return null;
  }
  const path = join(dir.path, name);
  const real = await whereIs(handle, path).catch(() => null);
  const stats = await handle.stat();
  if (
    real === null ||
    !inside(dir.root, real) ||
    (kind === 'file' ? !stats.isFile() : !stats.isDirectory())
  ) {
    await handle.close();
    return null;
  }
  return kind === 'dir'
    ? { handle, path: real, root: dir.root }
    : { handle, size: stats.size, path: real, root: dir.root };
}

const CHUNK_BYTES = 64 * 1024;

/** Whether the start of a file says it is binary (a NUL byte in its first 8,000 bytes). */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8000).includes(0);
}

/**
 * Reads an open file as UTF-8 text in chunks, handing each decoded piece to `take`, which returns
 * false to stop. Never holds more than a chunk. Throws a ToolError for a binary file.
 */
export async function readTextChunks(
  file: OpenFile,
  take: (text: string) => boolean,
  binaryMessage: string,
): Promise<void> {
  const decoder = new StringDecoder('utf8');
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let position = 0;
  for (;;) {
    const { bytesRead } = await file.handle.read(buffer, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    const bytes = buffer.subarray(0, bytesRead);
    if (position === 0 && looksBinary(bytes)) throw new ToolError(binaryMessage);
    position += bytesRead;
    if (!take(decoder.write(bytes))) return;
  }
  const rest = decoder.end();
  if (rest) take(rest);
}
