/**
 * One stack per data directory and per port (issue 22): `up` claims its data directory with a lock
 * file naming its process and the servers it started, checks every port it needs before starting
 * anything, and recognises what a killed stack left behind (its PostgreSQL and dev server, now
 * children of init) and stops them. Process facts come from `/proc`; where it is missing (not
 * Linux) the checks fall back to "is that pid alive".
 */
import {
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
  closeSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { InfraError } from './errors';

/** What `/proc` says of a process, or null when it is gone. */
export interface ProcessInfo {
  pid: number;
  /** Its parent (1, or a subreaper, once its parent died). */
  ppid: number;
  /** Its command line, arguments joined by spaces. */
  command: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, owned by another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The process `pid`, or null when it is gone (a zombie counts as gone). */
export function processInfo(pid: number): ProcessInfo | null {
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') return null;
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    return { pid, ppid: Number(fields[1]), command };
  } catch {
    return existsSync('/proc/self') ? null : { pid, ppid: 0, command: '' };
  }
}

/** "pid 123 (postgres -D /data -p 5433)", cut to a readable length. */
export function describeProcess(info: ProcessInfo): string {
  const command = info.command.length > 120 ? `${info.command.slice(0, 117)}...` : info.command;
  return command ? `pid ${info.pid} (${command})` : `pid ${info.pid}`;
}

/** The inodes of sockets listening on `port` (IPv4 and IPv6), from `/proc/net`. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is "ADDR:PORT"; state 0A is LISTEN; the inode is the tenth column.
      if (cols[1]?.endsWith(`:${hex}`) && cols[3] === '0A' && cols[9]) inodes.add(cols[9]);
    }
  }
  return inodes;
}

/** The process listening on `port`, when `/proc` can tell. */
export function portHolder(port: number): ProcessInfo | null {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return null;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (inode && inodes.has(inode)) return processInfo(Number(pid));
    }
  }
  return null;
}

/** A port `up` needs, with the setting that chooses it. */
export interface NeededPort {
  port: number;
  what: string;
  setting: string;
}

/**
 * Refuses to start when a port is taken, naming it and what holds it. `inUse` tells whether a
 * port can be bound (injected: `postgres.ts` has it).
 */
export async function assertPortsFree(
  ports: readonly NeededPort[],
  inUse: (port: number) => Promise<boolean>,
): Promise<void> {
  const taken: string[] = [];
  for (const need of ports) {
    if (!(await inUse(need.port))) continue;
    const holder = portHolder(need.port);
    taken.push(
      `port ${need.port} (${need.what}) is in use${holder ? ` by ${describeProcess(holder)}` : ''}; choose another with ${need.setting}`,
    );
  }
  if (taken.length > 0)
    throw new InfraError(
      `cannot start: ${taken.join('; ')}`,
      'another `npm start` may be running: stop it, or give this one other ports and its own DC_DATA_DIR',
    );
}

/** What the lock file holds. */
interface LockContent {
  pid: number;
  command: string;
  startedAt: string;
  /** The dev server (or, with `--cluster`, the Temporal server) this stack started, once known. */
  temporalPid?: number;
  /** The worker processes `up --cluster` runs, once known. */
  workerPids?: number[];
}

/** Where `up`'s lock file is. */
export function lockFile(dataDir: string): string {
  return join(dataDir, 'up.pid');
}

/** The postmaster's pid from PostgreSQL's own lock file, when there is one. */
export function postmasterPid(pgDataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(pgDataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Stops a process: each signal in turn, waiting up to `waitMs` for it to go. Returns whether it
 * went.
 */
export async function stopProcess(
  pid: number,
  signals: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGKILL'],
  waitMs = 5_000,
): Promise<boolean> {
  for (const signal of signals) {
    try {
      process.kill(pid, signal);
    } catch {
      return true;
    }
    for (let waited = 0; waited < waitMs; waited += 50) {
      if (processInfo(pid) === null) return true;
      await sleep(50);
    }
  }
  return processInfo(pid) === null;
}

export interface DataDirClaim {
  /** Records the dev server's pid, so that a later start can stop it if this one is killed. */
  recordTemporal(pid: number): void;
  /** Records the worker processes' pids (`up --cluster`), for the same reason. */
  recordWorkers(pids: number[]): void;
  /** Gives the directory up (at a clean stop). */
  release(): void;
}

function readLock(file: string): LockContent | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LockContent;
  } catch {
    return null;
  }
}

/**
 * Claims the data directory for this process. Refuses when a live `up` holds it (naming it), or a
 * live PostgreSQL on it belongs to another live process; stops what a killed stack left behind
 * (its PostgreSQL and dev server, recognised by their data paths) and takes the directory over.
 */
export async function claimDataDir(
  dataDir: string,
  pgDataDir: string | null,
  log: (line: string) => void,
): Promise<DataDirClaim> {
  const file = lockFile(dataDir);
  const previous = readLock(file);
  const holder = previous && previous.pid !== process.pid ? processInfo(previous.pid) : null;
  if (previous && holder && (holder.command === previous.command || previous.command === '')) {
    throw new InfraError(
      `the data directory ${dataDir} is in use by ${describeProcess(holder)}, started ${previous.startedAt}`,
      `stop that one first (Ctrl-C in its terminal, or kill ${holder.pid}), or choose another data directory with DC_DATA_DIR`,
    );
  }
  // A stack that was killed leaves its servers running, children of init: recognised, stopped.
  if (previous?.temporalPid) {
    const temporal = processInfo(previous.temporalPid);
    if (temporal && temporal.command.includes(join(dataDir, 'temporal'))) {
      log(`  stopping the Temporal dev server a stopped stack left running (${describeProcess(temporal)})`);
      await stopProcess(temporal.pid);
    }
  }
  // Its workers (`up --cluster`), orphaned: recognised by their command and a parent that is gone.
  for (const pid of previous?.workerPids ?? []) {
    const worker = processInfo(pid);
    if (!worker || !/\bworker\b/.test(worker.command)) continue;
    const parent = worker.ppid > 1 ? processInfo(worker.ppid) : null;
    if (parent && !/\binit\b|systemd/.test(parent.command)) continue; // someone else's process now
    log(`  stopping a worker a stopped stack left running (${describeProcess(worker)})`);
    await stopProcess(worker.pid);
  }
  const pg = pgDataDir ? postmasterPid(pgDataDir) : null;
  const postmaster = pg !== null ? processInfo(pg) : null;
  if (postmaster && pgDataDir && postmaster.command.includes(pgDataDir)) {
    const parent = processInfo(postmaster.ppid);
    if (
      postmaster.ppid > 1 &&
      parent &&
      parent.pid !== process.pid &&
      !/\binit\b|systemd/.test(parent.command)
    ) {
      throw new InfraError(
        `the PostgreSQL data in ${pgDataDir} is in use by ${describeProcess(postmaster)}, started by ${describeProcess(parent)}`,
        `stop that process first, or choose another data directory with DC_DATA_DIR`,
      );
    }
    log(`  stopping the PostgreSQL a stopped stack left running (${describeProcess(postmaster)})`);
    // Fast shutdown (SIGINT) first: what was committed stays; immediate (SIGQUIT) if it hangs.
    await stopProcess(postmaster.pid, ['SIGINT', 'SIGQUIT', 'SIGKILL']);
  }
  const content: LockContent = {
    pid: process.pid,
    command: processInfo(process.pid)?.command ?? '',
    startedAt: new Date().toISOString(),
  };
  // A stale or unreadable lock is replaced; none at all is created exclusively.
  if (existsSync(file)) rmSync(file, { force: true });
  try {
    // Exclusive create: of two starts at the same moment, one gets the directory.
    const fd = openSync(file, 'wx');
    writeFileSync(fd, `${JSON.stringify(content)}\n`);
    closeSync(fd);
  } catch (err) {
    const other = readLock(file);
    throw new InfraError(
      `the data directory ${dataDir} was claimed at the same moment by pid ${other?.pid ?? '?'}`,
      'start one stack per data directory',
      { cause: err },
    );
  }
  let state: LockContent = content;
  const write = (next: LockContent): void => {
    state = next;
    writeFileSync(file, `${JSON.stringify(state)}\n`);
  };
  return {
    recordTemporal(pid) {
      write({ ...state, temporalPid: pid });
    },
    recordWorkers(pids) {
      write({ ...state, workerPids: pids });
    },
    release() {
      if (readLock(file)?.pid === process.pid) rmSync(file, { force: true });
    },
  };
}
