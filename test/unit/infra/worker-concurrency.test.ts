/**
 * How much a worker takes on at once (issue 27): the environment's settings, the SDK options they
 * become, and the share `up --cluster` gives each of its workers by default.
 */
import { describe, expect, it } from 'vitest';
import { concurrencyFromEnv } from '../../../src/cli/commands/worker';
import { clusterWorkerSlots } from '../../../src/infra/cluster-config';
import { concurrencyOptions } from '../../../src/worker';

describe('worker concurrency', () => {
  it('reads the three settings from the environment; unset or empty ones keep the SDK default', () => {
    expect(concurrencyFromEnv({})).toStrictEqual({});
    expect(
      concurrencyFromEnv({
        DC_WORKER_WORKFLOW_TASKS: '8',
        DC_WORKER_ACTIVITIES: '12',
        DC_WORKER_LOCAL_ACTIVITIES: '',
      }),
    ).toStrictEqual({ workflowTasks: 8, activities: 12 });
    expect(() => concurrencyFromEnv({ DC_WORKER_LOCAL_ACTIVITIES: '2.5' })).toThrow(
      /DC_WORKER_LOCAL_ACTIVITIES must be a whole number from 1 to 10000 \(got "2.5"\)/,
    );
    expect(() => concurrencyFromEnv({ DC_WORKER_WORKFLOW_TASKS: '10001' })).toThrow(
      /DC_WORKER_WORKFLOW_TASKS must be a whole number from 1 to 10000 \(got "10001"\)/,
    );
  });

  it("becomes the SDK's slot options; a value that is not a positive integer is refused by name", () => {
    expect(concurrencyOptions({ workflowTasks: 8, activities: 12, localActivities: 30 })).toStrictEqual({
      maxConcurrentWorkflowTaskExecutions: 8,
      maxConcurrentActivityTaskExecutions: 12,
      maxConcurrentLocalActivityExecutions: 30,
    });
    expect(concurrencyOptions()).toStrictEqual({});
    expect(() => concurrencyOptions({ workflowTasks: 0 })).toThrow(
      /concurrency.workflowTasks must be a positive integer/,
    );
    expect(() => concurrencyOptions({ activities: Number.NaN })).toThrow(/concurrency.activities/);
  });

  it("up --cluster shares 4 workflow tasks and 6 activities a core among its workers, from 2 to the SDK's maximum", () => {
    // 2 cores, 3 workers: the values the cluster attack passed with.
    expect(clusterWorkerSlots(2, 3)).toStrictEqual({ workflowTasks: 3, activities: 4 });
    expect(clusterWorkerSlots(2, 1)).toStrictEqual({ workflowTasks: 8, activities: 12 });
    expect(clusterWorkerSlots(16, 2)).toStrictEqual({ workflowTasks: 32, activities: 48 });
    expect(clusterWorkerSlots(64, 2)).toStrictEqual({ workflowTasks: 40, activities: 100 });
    expect(clusterWorkerSlots(1, 8)).toStrictEqual({ workflowTasks: 2, activities: 2 });
    expect(clusterWorkerSlots(0, 0)).toStrictEqual({ workflowTasks: 4, activities: 6 });
  });
});
