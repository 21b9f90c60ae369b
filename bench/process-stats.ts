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
