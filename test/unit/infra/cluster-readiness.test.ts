/**
 * When `up --cluster` says "Ready." (src/infra/cluster-readiness.ts): only once the frontend
 * reaches history (a missing workflow is NOT_FOUND) and matching (the task queue is described),
 * against a fake frontend that answers as Temporal's does while its membership ring forms.
 */
import { describe, expect, it } from 'vitest';
import { waitForServices, type ServiceProbe } from '../../../src/infra/cluster-readiness';
import { InfraError } from '../../../src/infra/errors';

/** A gRPC error as @temporalio/client raises it. */
function grpcError(code: number, details: string): Error {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });
}
const NOT_ENOUGH_HOSTS = grpcError(14, 'UNAVAILABLE: Not enough hosts to serve the request');
const WORKFLOW_NOT_FOUND = grpcError(5, 'NOT_FOUND: workflow not found');

/** A frontend answering each call from its script (the last answer repeats); it records the calls. */
function fakeFrontend(script: { history: Error[]; matching: (Error | 'ok')[] }) {
  const calls: string[] = [];
  const next = <T>(answers: T[]): T => (answers.length > 1 ? answers.shift()! : answers[0]!);
  const service = {
    describeWorkflowExecution: async () => {
      calls.push('history');
      throw next(script.history);
    },
    describeTaskQueue: async () => {
      calls.push('matching');
      const answer = next(script.matching);
      if (answer !== 'ok') throw answer;
      return {};
    },
  } as unknown as ServiceProbe;
  return { service, calls };
}

const options = {
  namespace: 'default',
  taskQueue: 'tq',
  intervalMs: 1,
  logFile: '/logs/temporal-server.log',
};

describe('waitForServices', () => {
  it('waits while history, then matching, are not in the ring, and says why once', async () => {
    const { service, calls } = fakeFrontend({
      history: [NOT_ENOUGH_HOSTS, NOT_ENOUGH_HOSTS, WORKFLOW_NOT_FOUND],
      matching: [NOT_ENOUGH_HOSTS, 'ok'],
    });
    const waits: string[] = [];
    await waitForServices(service, { ...options, timeoutMs: 5_000, onWait: (why) => waits.push(why) });
    expect(calls).toEqual(['history', 'history', 'history', 'matching', 'history', 'matching']);
    expect(waits).toEqual(['history: 14 UNAVAILABLE: Not enough hosts to serve the request']);
  });

  it('is ready at once when both answer', async () => {
    const { service, calls } = fakeFrontend({ history: [WORKFLOW_NOT_FOUND], matching: ['ok'] });
    const waits: string[] = [];
    await waitForServices(service, { ...options, timeoutMs: 5_000, onWait: (why) => waits.push(why) });
    expect(calls).toEqual(['history', 'matching']);
    expect(waits).toEqual([]);
  });

  it('gives up past its timeout, naming the service that did not answer and the log', async () => {
    const { service } = fakeFrontend({ history: [WORKFLOW_NOT_FOUND], matching: [NOT_ENOUGH_HOSTS] });
    const failure = await waitForServices(service, { ...options, timeoutMs: 50 }).catch(
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(InfraError);
    expect((failure as InfraError).message).toBe(
      "the Temporal server's history and matching services did not join its membership ring within 0.05 s " +
        '(matching: 14 UNAVAILABLE: Not enough hosts to serve the request)',
    );
    expect((failure as InfraError).hint).toBe('see its log, /logs/temporal-server.log');
  });
});
