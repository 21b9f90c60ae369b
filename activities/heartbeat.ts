/**
 * Heartbeats for long activities (LLM calls, tools): while `work` runs, the activity reports it is
 * alive every few seconds, so when its worker dies the server hands the task to another worker
 * after the profile's `heartbeatTimeout` instead of its whole `startToCloseTimeout`.
 */
import { Context } from '@temporalio/activity';

/** How often a running activity heartbeats. Keep well under the workflows' heartbeatTimeout (20 s). */
export const HEARTBEAT_INTERVAL_MS = 5_000;

/** Runs `work`, heartbeating meanwhile (outside an activity it just runs `work`). */
export async function withHeartbeat<T>(work: () => Promise<T>): Promise<T> {
  let ctx: Context | null = null;
  try {
    ctx = Context.current();
  } catch {
    return work();
  }
  // Local activities cannot heartbeat: their workflow task's timeout watches the worker instead.
  if (ctx.info.isLocal) return work();
  const activity = ctx;
  activity.heartbeat();
  const timer = setInterval(() => activity.heartbeat(), HEARTBEAT_INTERVAL_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
