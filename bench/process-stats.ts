/**
 * CPU and memory of this process and of the servers it started (the Temporal dev server and the
 * embedded PostgreSQL are its descendants), read from /proc, to say where a load saturates.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  cpuSeconds: number;
}

function readStat(pid: number): ProcStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = text.lastIndexOf(')');
    const comm = text.slice(text.indexOf('(') + 1, close);
    const fields = text.slice(close + 2).split(' ');
    // fields[0] is state (field 3); utime and stime are fields 14 and 15.
    const ppid = Number(fields[1]);
    const cpu = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
    return { pid, ppid, comm, cpuSeconds: cpu };
  } catch {
    return null;
  }
}

/** CPU seconds used so far by each kind of descendant of this process (by command name). */
export function descendantCpu(): Record<string, number> {
  if (process.platform !== 'linux') return {};
  const stats = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => readStat(Number(d)))
    .filter((s): s is ProcStat => s !== null);
  const children = new Map<number, ProcStat[]>();
  for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
  const out: Record<string, number> = {};
  const visit = (pid: number): void => {
    for (const child of children.get(pid) ?? []) {
      const kind = child.comm.startsWith('postgres') ? 'postgres' : child.comm;
      out[kind] = (out[kind] ?? 0) + child.cpuSeconds;
      visit(child.pid);
    }
  };
  visit(process.pid);
  return out;
}

/** CPU seconds of this process (worker, driver and fake LLM). */
export function ownCpu(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** CPU time of all cores together, in clock ticks. */
export interface MachineCpu {
  total: number;
  /** Idle and waiting for I/O. */
  idle: number;
  /** Given by the hypervisor to other guests while this one had work. */
  steal: number;
}

/** The machine's CPU time so far, from the first line of /proc/stat, or null elsewhere. */
export function machineCpu(): MachineCpu | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    // cpu user nice system idle iowait irq softirq steal (guest time is inside user)
    const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
    if (ticks.length < 8 || ticks.some((v) => Number.isNaN(v))) return null;
    const at = (k: number): number => ticks[k] ?? 0;
    return { total: ticks.reduce((a, b) => a + b, 0), idle: at(3) + at(4), steal: at(7) };
  } catch {
    return null;
  }
}

/**
 * Between two readings: the share of the machine's CPU time that was busy, and the share stolen
 * by the hypervisor for other guests (a VM's noise: work that waited for a core it had).
 */
export function cpuShares(
  before: MachineCpu | null,
  after: MachineCpu | null,
): { busy: number; steal: number } | null {
  if (!before || !after || after.total <= before.total) return null;
  const total = after.total - before.total;
  return {
    busy: (total - (after.idle - before.idle) - (after.steal - before.steal)) / total,
    steal: (after.steal - before.steal) / total,
  };
}
