/**
 * Per-test access to the run's shared Temporal server and PostgreSQL (started by global-setup.ts),
 * and a worker on a task queue of the test's own.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger, type Worker } from '@temporalio/worker';
import pg from 'pg';
import { inject } from 'vitest';
import { createWorker, type WorkerOptions } from '../../src/worker';
import { payloadCodecsFor } from '../../src/infra/codec';

let runtimeInstalled = false;
function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // already installed by another helper in this process
  }
}

export function testDatabaseUrl(): string {
  return inject('databaseUrl');
}

export function testTemporalAddress(): string {
  return inject('temporalAddress');
}

export function testTemporalUiUrl(): string | null {
  return inject('temporalUiUrl');
}

let bundleCode: string | undefined;
/** The workflow bundle built once by the global setup. */
export function testWorkflowBundle(): { code: string } {
  bundleCode ??= readFileSync(inject('workflowBundlePath'), 'utf8');
  return { code: bundleCode };
}

export function uniqueId(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export interface TestWorker {
  client: Client;
  connection: Connection;
  nativeConnection: NativeConnection;
  pool: pg.Pool;
  taskQueue: string;
  worker: Worker;
  /** Stops the worker and closes the connections. */
  shutdown(): Promise<void>;
}

/** Starts a worker with the project's activities on a fresh task queue; `shutdown()` ends it. */
export async function startTestWorker(
  options: Partial<Omit<WorkerOptions, 'connection' | 'pool' | 'workflowBundle'>> = {},
): Promise<TestWorker> {
  quietRuntime();
  const address = testTemporalAddress();
  const connection = await Connection.connect({ address });
  const nativeConnection = await NativeConnection.connect({ address });
  const pool = new pg.Pool({ connectionString: testDatabaseUrl(), max: 5 });
  pool.on('error', () => undefined);
  // The worker's codecs (bodies by reference in this pool's store, by default).
  const client = new Client({
    connection,
    dataConverter: { payloadCodecs: options.payloadCodecs ?? payloadCodecsFor(pool) },
  });
  const taskQueue = options.taskQueue ?? uniqueId('tq');
  const worker = await createWorker({
    ...options,
    connection: nativeConnection,
    pool,
    taskQueue,
    workflowBundle: testWorkflowBundle(),
    shutdownGraceTime: options.shutdownGraceTime ?? '2s',
  });
  const running = worker.run();
  return {
    client,
    connection,
    nativeConnection,
    pool,
    taskQueue,
    worker,
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await nativeConnection.close();
      await connection.close();
      await pool.end();
    },
  };
}
