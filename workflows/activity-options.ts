/**
 * Activity option profiles shared by the workflows. Pure: imported by workflow code.
 */
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';

/**
 * A profile as a local activity: the same timeout and retries. Local activities cannot heartbeat;
 * their workflow task's timeout watches the worker instead.
 */
export function asLocal(options: ActivityOptions): LocalActivityOptions {
  return { startToCloseTimeout: options.startToCloseTimeout, retry: options.retry };
}
