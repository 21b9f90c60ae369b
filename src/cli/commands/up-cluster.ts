/**
 * `durable-compaction up --cluster` (`npm run cluster`): the production topology without Docker.
 * PostgreSQL (embedded, or DATABASE_URL's server) holds the project's store and Temporal's two
 * databases; the Temporal server (built once from source, cached) runs on them with several
 * history shards and the compose file's dynamic config; N worker processes and, when it can be
 * built, the Web UI. Every process is supervised: one that dies is restarted. Ctrl-C stops them
 * all (workers first, with their grace), then PostgreSQL; the next start reuses the data.
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import { clusterWorkerSlots } from '../../infra/cluster-config';
import { validateEnvironment } from '../../infra/environment';
import { onStopSignal } from '../../infra/signals';
import { UsageError } from '../client';
import { CONCURRENCY_ENV } from './worker';
import { abandonStack, DEFAULT_SHUTDOWN_GRACE_MS, logConnectLine, openStack } from './stack';

export interface UpClusterOptions {
  dataDir: string;
  /** The frontend's port (`TEMPORAL_PORT`); the server's other ports follow it. */
  temporalPort: number;
  /** The Web UI's port (`TEMPORAL_UI_PORT`). */
  uiPort: number;
  /** False: no Web UI. */
  ui: boolean;
  pgPort?: number;
  workers: number;
  shards: number;
  taskQueue: string;
  workflowBundle?: string;
  shutdownGraceMs?: number;
  log?: (line: string) => void;
}

/** The repository's root (the worker command and the dynamic config file are relative to it). */
const ROOT = join(__dirname, '..', '..', '..');

/** The workers' concurrency (`clusterWorkerSlots`), where the environment does not set it. */
function workerConcurrencyEnv(workers: number): Record<string, string> {
  const slots = clusterWorkerSlots(availableParallelism(), workers);
  const env: Record<string, string> = {};
  for (const key of ['workflowTasks', 'activities'] as const)
    if (!process.env[CONCURRENCY_ENV[key]]) env[CONCURRENCY_ENV[key]] = String(slots[key]);
  return env;
}

export async function upCluster(options: UpClusterOptions): Promise<void> {
  validateEnvironment();
  const { MAX_CLUSTER_FRONTEND_PORT } = await import('../../infra/cluster-config');
  if (options.temporalPort <= 300 || options.temporalPort > MAX_CLUSTER_FRONTEND_PORT)
    throw new UsageError(
      `TEMPORAL_PORT must be from 301 to ${MAX_CLUSTER_FRONTEND_PORT} with --cluster (got ${options.temporalPort}): ` +
        'the membership ports, 294–300 below it, are kept in a smallint column',
    );
  const log = options.log ?? ((line: string): void => console.log(line));
  const { clusterPorts, listPorts, DYNAMIC_CONFIG_FILE } = await import('../../infra/cluster-config');
  const setting = (what: string) =>
    what.startsWith('Temporal') ? 'TEMPORAL_PORT (the others follow it)' : '';
  const stack = await openStack({
    dataDir: options.dataDir,
    temporalDir: 'temporal-cluster',
    starting: 'starting a Temporal cluster',
    ports: [
      ...listPorts(clusterPorts(options.temporalPort)).map((p) => ({ ...p, setting: setting(p.what) })),
      ...(options.ui ? [{ port: options.uiPort, what: 'Web UI', setting: 'TEMPORAL_UI_PORT' }] : []),
    ],
    pgPort: options.pgPort,
    log,
  });
  const { claim, postgres: pg } = stack;
  const clusterDir = join(stack.dataDir, 'temporal-cluster');
  let codecServer: Server | null = null;
  const graceMs = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
  const { startCluster } = await import('../../infra/cluster');
  let cluster;
  try {
    let workflowBundle = options.workflowBundle ? resolve(options.workflowBundle) : null;
    if (!workflowBundle) {
      // Bundled once here, so that a restarted worker is polling again in seconds.
      const { bundleWorkflows } = await import('../../worker');
      workflowBundle = join(clusterDir, 'workflow-bundle.js');
      writeFileSync(workflowBundle, (await bundleWorkflows()).code);
    }
    // The Web UI reads message bodies (sent by reference) through a codec endpoint of this process.
    let codecEndpoint = process.env.DC_CODEC_ENDPOINT || null;
    if (options.ui && !codecEndpoint) {
      const { chainCodecs, payloadCodecsFor, startCodecServer } = await import('../../infra/codec');
      const codecs = payloadCodecsFor(pg.pool);
      if (codecs.length > 0) {
        const started = await startCodecServer({
          codec: chainCodecs(codecs),
          port: 0,
          origins: [`http://localhost:${options.uiPort}`, `http://127.0.0.1:${options.uiPort}`],
        });
        codecServer = started.server;
        codecEndpoint = started.url;
      }
    }
    cluster = await startCluster({
      root: ROOT,
      dir: clusterDir,
      databaseUrl: pg.url,
      frontendPort: options.temporalPort,
      shards: options.shards,
      workers: options.workers,
      taskQueue: options.taskQueue,
      uiPort: options.ui ? options.uiPort : null,
      codecEndpoint,
      dynamicConfigPath: join(ROOT, DYNAMIC_CONFIG_FILE),
      workflowBundle,
      workerGrace: `${Math.max(100, Math.floor(graceMs * 0.4))}ms`,
      workerEnv: workerConcurrencyEnv(options.workers),
      onPids: (pids) => {
        if (pids.server !== null) claim.recordTemporal(pids.server);
        claim.recordWorkers(pids.workers.filter((p): p is number => p !== null));
      },
      log,
    });
  } catch (err) {
    codecServer?.close();
    await pg.shutdown().catch(() => undefined);
    claim.release();
    throw err;
  }
  const running = cluster;
  log(
    `  Temporal     ${running.address} (temporal-server, ${options.shards} history shards, PostgreSQL persistence; log ${running.server.logFile})`,
  );
  if (running.uiUrl) log(`  Web UI       ${running.uiUrl}`);
  else if (options.ui) log('  Web UI       not available (see above)');
  for (const w of running.workers)
    log(`  ${w.name.padEnd(12)} pid ${w.pid}, task queue "${options.taskQueue}" (log ${w.logFile})`);
  logConnectLine(log, { temporalAddress: running.address, uiUrl: running.uiUrl, postgres: pg });
  log('\nReady. Start a conversation with `npm run cli -- start`, or press Ctrl-C to stop.');

  let stopping = false;
  const stopNow = (why: string): never => {
    log(`\n${why}: stopping everything at once`);
    running.killNow();
    abandonStack(stack);
    process.exit(130);
  };
  const stop = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log(
      `\n${why}: stopping the workers, the Temporal server and PostgreSQL (at most ${graceMs / 1000} s; Ctrl-C again to stop at once)...`,
    );
    setTimeout(() => stopNow(`not stopped within ${graceMs / 1000} s`), graceMs).unref();
    await running.stop(Math.floor(graceMs * 0.5));
    await new Promise((r) => (codecServer ? codecServer.close(r) : r(undefined)));
    await pg.shutdown().catch(() => undefined);
    claim.release();
    log('stopped. Start again with `npm run cluster`; the data is kept.');
    process.exit(0);
  };
  onStopSignal(
    (sig) => void stop(sig),
    (sig) => stopNow(`${sig} again`),
  );
  // Runs until a signal.
  await new Promise<never>(() => undefined);
}
