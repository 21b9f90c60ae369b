/**
 * Activity option profiles shared by the workflows. Pure: imported by workflow code.
 */
import {
  proxyActivities,
  proxyLocalActivities,
  type ActivityInterfaceFor,
  type ActivityOptions,
  type LocalActivityInterfaceFor,
  type LocalActivityOptions,
} from '@temporalio/workflow';

/** Activities called as such, and the options their calls pass to `executeWithOptions`. */
export interface ActivityCalls<A> {
  call: ActivityInterfaceFor<A>;
  options: ActivityOptions;
}

/** Activities called as local activities, and the options their calls pass. */
export interface LocalActivityCalls<A> {
  call: LocalActivityInterfaceFor<A>;
  options: LocalActivityOptions;
}

/**
 * A profile as a local activity: the same timeout and retries. Local activities cannot heartbeat;
 * their workflow task's timeout watches the worker instead.
 */
function asLocal(options: ActivityOptions): LocalActivityOptions {
  return { startToCloseTimeout: options.startToCloseTimeout, retry: options.retry };
}

/**
 * A profile both ways: as activities, and as local activities with the same timeout and retries
 * (run inside the workflow task that reaches them). Each call site picks one and passes its
 * options to `executeWithOptions`.
 */
export function bothWays<A>(options: ActivityOptions): {
  activity: ActivityCalls<A>;
  local: LocalActivityCalls<A>;
} {
  const local = asLocal(options);
  return {
    activity: { call: proxyActivities<A>(options), options },
    local: { call: proxyLocalActivities<A>(local), options: local },
  };
}
