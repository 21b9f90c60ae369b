/**
 * When `up --cluster` may say "Ready.": not when the frontend first answers, but when it reaches
 * the services a workflow needs. Temporal's frontend answers (system info, namespaces, search
 * attributes) before its membership ring holds the history and matching services.
 */
import { isGrpcServiceError, type Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { InfraError } from './errors';

/** gRPC's NOT_FOUND status code. */
const GRPC_NOT_FOUND = 5;

/** A workflow id no one uses: describing it asks the history service, which says NOT_FOUND. */
const PROBE_WORKFLOW_ID = 'durable-compaction-readiness-probe';

/** The two frontend calls of the probe; each is forwarded to another service. */
export type ServiceProbe = Pick<
  Connection['workflowService'],
  'describeWorkflowExecution' | 'describeTaskQueue'
>;

export interface WaitForServicesOptions {
  namespace: string;
  taskQueue: string;
  timeoutMs: number;
  /** Between probes (default 500 ms). */
  intervalMs?: number;
  /** The server's log, named when it gives up. */
  logFile: string;
  /** Called once, when the first probe fails: why it waits. */
  onWait?: (reason: string) => void;
}

/** Null when history and matching answered through the frontend; otherwise which did not, and why. */
async function probe(service: ServiceProbe, options: WaitForServicesOptions): Promise<string | null> {
  const { namespace, taskQueue } = options;
  const firstLine = (err: unknown): string => ((err as Error).message ?? String(err)).split('\n')[0] ?? '';
  try {
    await service.describeWorkflowExecution({ namespace, execution: { workflowId: PROBE_WORKFLOW_ID } });
  } catch (err) {
    if (!(isGrpcServiceError(err) && err.code === GRPC_NOT_FOUND)) return `history: ${firstLine(err)}`;
  }
  try {
    await service.describeTaskQueue({
      namespace,
      taskQueue: { name: taskQueue },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
  } catch (err) {
    return `matching: ${firstLine(err)}`;
  }
  return null;
}

/**
 * Resolves once the frontend reaches the history service (a workflow that does not exist is
 * NOT_FOUND) and the matching service (the task queue is described). Until the ring holds them,
 * every workflow call fails with UNAVAILABLE "Not enough hosts to serve the request": for ~40 s
 * when the server restarts on other ports within 20 s of a stop, since Temporal tries every
 * member that sent a heartbeat in the last 20 s as a seed, the old ports first.
 * @throws InfraError past `timeoutMs`, naming the service that did not answer and the server's log
 */
export async function waitForServices(service: ServiceProbe, options: WaitForServicesOptions): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let waiting = false;
  for (;;) {
    const failure = await probe(service, options);
    if (failure === null) return;
    if (Date.now() > deadline)
      throw new InfraError(
        `the Temporal server's history and matching services did not join its membership ring within ${options.timeoutMs / 1000} s (${failure})`,
        `see its log, ${options.logFile}`,
      );
    if (!waiting) options.onWait?.(failure);
    waiting = true;
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 500));
  }
}
