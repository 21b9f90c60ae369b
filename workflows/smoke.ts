import { proxyActivities } from '@temporalio/workflow';
import type { SmokeActivities } from '../activities/smoke';

const { smokeActivity } = proxyActivities<SmokeActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

/** A trivial workflow for the foundation's smoke test: one activity touching PostgreSQL and the LLM. */
export async function smokeWorkflow(input: { key: string; model: string }): Promise<{
  stored: string;
  reply: string;
}> {
  return smokeActivity(input);
}
