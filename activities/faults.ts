/**
 * Fault points for the reliability suite (test/chaos): a worker started with
 * `DC_FAULT_KILL_AT=<point>` (and optionally `DC_FAULT_KILL_AFTER=<n>`, default 1) sends itself
 * SIGKILL the n-th time it reaches that point — a real crash at an exact place, such as after
 * commit's transaction but before the activity reports back. Unset (always, outside the suite),
 * a fault point does nothing.
 */

/** Where a worker can be killed. */
export const FAULT_POINTS = ['prune_staged', 'summary_call', 'commit_done', 'compensation'] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

const reached = new Map<FaultPoint, number>();

/** SIGKILLs this process when the environment asks for a crash at `point` (see the module comment). */
export function faultPoint(point: FaultPoint): void {
  if (process.env.DC_FAULT_KILL_AT !== point) return;
  const count = (reached.get(point) ?? 0) + 1;
  reached.set(point, count);
  if (count >= Number(process.env.DC_FAULT_KILL_AFTER ?? '1')) {
    console.error(`fault injection: SIGKILL at ${point} (hit ${count})`);
    process.kill(process.pid, 'SIGKILL');
  }
}
