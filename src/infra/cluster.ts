/**
 * The production topology on this machine (`up --cluster`, issue 27): the Temporal server built
 * from source with PostgreSQL persistence and several history shards, its schema set up and
 * updated with `temporal-sql-tool`, the Web UI server when it can be built, and N worker processes,
 * each process supervised (restarted when it dies). The same topology as docker-compose.yml,
 * without Docker: cluster-config.ts holds what both must agree on.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import pg from 'pg';
import { stringify } from 'yaml';
import {
  SCHEMA_STEPS,
  TEMPORAL_DATABASES,
  WORKER_COMMAND,
  clusterPorts,
  serverConfig,
  sqlToolEnv,
  uiConfig,
  type ClusterPorts,
  type SqlEndpoint,
} from './cluster-config';
import { waitForServices } from './cluster-readiness';
import { InfraError } from './errors';
import { Supervised } from './supervisor';
import { ensureTemporalServer, ensureTemporalUi, type ServerBinaries } from './temporal-server';

export interface ClusterOptions {
  /** The repository (the worker command and the dynamic config file are relative to it). */
  root: string;
  /** Where the cluster keeps its config and logs (`<data dir>/temporal-cluster`). */
  dir: string;
  /** The project's database: Temporal's two databases are created on the same server. */
  databaseUrl: string;
  /** The frontend's port; the other services' follow it (cluster-config.ts). */
  frontendPort: number;
  shards: number;
  workers: number;
  taskQueue: string;
  /** The Web UI's port, or null for none. */
  uiPort: number | null;
  /** The codec endpoint the Web UI reads payloads through (message bodies by reference). */
  codecEndpoint: string | null;
  /** The absolute path of the dynamic config file. */
  dynamicConfigPath: string;
  /** A prebuilt workflow bundle the workers load instead of bundling at each (re)start. */
  workflowBundle: string | null;
  /** In-flight activities' grace when a worker stops (`--grace`). */
  workerGrace: string;
  /** Environment of the workers beyond Temporal's address, the database and the task queue. */
  workerEnv: NodeJS.ProcessEnv;
  /** Called whenever a supervised process (re)starts, with all current pids. */
  onPids?: (pids: ClusterPids) => void;
  log: (line: string) => void;
}

export interface ClusterPids {
  server: number | null;
  ui: number | null;
  workers: (number | null)[];
}

export interface ClusterHandle {
  address: string;
  uiUrl: string | null;
  ports: ClusterPorts;
  server: Supervised;
  ui: Supervised | null;
  workers: Supervised[];
  pids(): ClusterPids;
  /** Stops the workers (SIGKILL past `graceMs`), the UI and the server (SIGKILL past 3 s). */
  stop(graceMs: number): Promise<void>;
  /** Kills everything at once. */
  killNow(): void;
}

/** Host, port, user and password of a postgres:// URL (for the Temporal server and its tool). */
export function sqlEndpoint(databaseUrl: string): SqlEndpoint {
  const u = new URL(databaseUrl);
  return {
    host: u.hostname === 'localhost' ? '127.0.0.1' : u.hostname,
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
  };
}

/** Creates Temporal's databases on the project database's server, when missing. */
export async function createTemporalDatabases(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const created: string[] = [];
  try {
    for (const name of Object.values(TEMPORAL_DATABASES)) {
      const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
      if (exists.rowCount !== 0) continue;
      try {
        // `create database` takes no parameter: a constant name, quoted as an identifier.
        await client.query(`create database ${pg.escapeIdentifier(name)}`);
        created.push(name);
      } catch (err) {
        throw new InfraError(
          `cannot create the database ${name} for Temporal (${(err as Error).message})`,
          "create it (and give DATABASE_URL's user access), as docker/postgres-init.sql does, or let `up --cluster` use its embedded PostgreSQL (unset DATABASE_URL)",
          { cause: err },
        );
      }
    }
  } finally {
    await client.end();
  }
  return created;
}

/** Runs the schema steps with the SQL tool; throws with the tool's output when one fails. */
export async function setupSchemas(
  sqlTool: string,
  sql: SqlEndpoint,
  log: (line: string) => void,
): Promise<void> {
  for (const step of SCHEMA_STEPS) {
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(sqlTool, [...step], {
        env: { ...process.env, ...sqlToolEnv(sql) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      child.on('error', reject);
      child.on('exit', (code) =>
        code === 0
          ? resolve(text)
          : reject(
              new InfraError(
                `temporal-sql-tool ${step.join(' ')} failed (exit ${code}):\n${text.slice(-3_000)}`,
              ),
            ),
      );
    });
    const applied = output.match(/---- Executing updates for version (\S+) ----/g)?.length ?? 0;
    log(
      `  schema       temporal-sql-tool ${step.join(' ')}${applied > 0 ? ` (${applied} versions applied)` : ''}`,
    );
  }
}

/** Waits until the frontend answers, registers the namespace and the search attributes. */
async function waitForServer(address: string, server: Supervised, timeoutMs: number): Promise<Connection> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const connection = await Connection.connect({ address, connectTimeout: '2s' });
      try {
        await connection.workflowService.getSystemInfo({});
        return connection;
      } catch (err) {
        await connection.close();
        throw err;
      }
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  throw new InfraError(
    `the Temporal server did not answer at ${address} within ${timeoutMs / 1000} s (${(last as Error)?.message?.split('\n')[0] ?? '?'})`,
    `see its log, ${server.logFile}`,
  );
}

/** `fn` until it resolves, every 500 ms, for at most `timeoutMs` (then its last error). */
async function retry<T>(fn: () => Promise<T>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** Registers `namespace` when missing and waits until the frontend knows it. */
export async function ensureNamespace(
  connection: Connection,
  namespace: string,
  timeoutMs = 60_000,
): Promise<void> {
  try {
    await connection.workflowService.describeNamespace({ namespace });
    return;
  } catch {
    // not there yet
  }
  try {
    await connection.workflowService.registerNamespace({
      namespace,
      // Three days, as the compose file's `temporal operator namespace create` gives by default.
      workflowExecutionRetentionPeriod: msToTs('3 days'),
    });
  } catch (err) {
    if (!/already exists|already registered/i.test((err as Error).message)) throw err;
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await connection.workflowService.describeNamespace({ namespace });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/**
 * Starts the cluster: binaries (built once), databases, schemas, the server, the namespace and
 * search attributes, the Web UI (if it can be built), the workers. On failure, what was started
 * is stopped before the error is thrown.
 */
export async function startCluster(options: ClusterOptions): Promise<ClusterHandle> {
  const { log } = options;
  const binaries: ServerBinaries = await ensureTemporalServer(process.env, log);
  const sql = sqlEndpoint(options.databaseUrl);
  const created = await createTemporalDatabases(options.databaseUrl);
  if (created.length > 0) log(`  databases    created ${created.join(', ')} on ${sql.host}:${sql.port}`);
  await setupSchemas(binaries.sqlTool, sql, log);

  const ports = clusterPorts(options.frontendPort);
  const address = `127.0.0.1:${ports.frontend}`;
  const configDir = join(options.dir, 'config');
  const logDir = join(options.dir, 'logs');
  mkdirSync(configDir, { recursive: true });
  mkdirSync(logDir, { recursive: true });
  // The config holds the database password: readable by this user only.
  writeFileSync(
    join(configDir, 'cluster.yaml'),
    stringify(
      serverConfig({ ports, sql, shards: options.shards, dynamicConfigPath: options.dynamicConfigPath }),
    ),
    { mode: 0o600 },
  );
  let handle: ClusterHandle | null = null;
  const report = (): void => {
    if (handle) options.onPids?.(handle.pids());
  };
  const server = new Supervised({
    name: 'Temporal server',
    command: binaries.server,
    args: ['--root', options.dir, '--config', 'config', '--env', 'cluster', '--allow-no-auth', 'start'],
    env: process.env,
    logFile: join(logDir, 'temporal-server.log'),
    onStart: report,
    log,
  });
  const workers: Supervised[] = [];
  let ui: Supervised | null = null;
  const stopAll = async (graceMs: number): Promise<void> => {
    await Promise.all(workers.map((w) => w.stop(graceMs)));
    await ui?.stop(2_000);
    await server.stop(3_000);
  };
  try {
    server.start();
    const connection = await waitForServer(address, server, 120_000);
    try {
      await ensureNamespace(connection, 'default');
      const { registerSearchAttributes } = await import('./temporal');
      // The namespace registry of the other services refreshes every few seconds: until it has
      // the new namespace, the search attributes are refused as NOT_FOUND.
      await retry(() => registerSearchAttributes(connection, 'default'), 60_000);
      await waitForServices(connection.workflowService, {
        namespace: 'default',
        taskQueue: options.taskQueue,
        timeoutMs: 120_000,
        logFile: server.logFile,
        onWait: (why) =>
          log(`  Temporal     waiting for history and matching to join the membership ring (${why})`),
      });
    } finally {
      await connection.close();
    }
    if (options.uiPort !== null) {
      const uiBinary = await ensureTemporalUi(process.env, log);
      if (uiBinary) {
        const uiDir = join(options.dir, 'ui');
        mkdirSync(join(uiDir, 'config'), { recursive: true });
        writeFileSync(
          join(uiDir, 'config', 'cluster.yaml'),
          stringify(
            uiConfig({
              port: options.uiPort,
              temporalAddress: address,
              codecEndpoint: options.codecEndpoint,
            }),
          ),
        );
        ui = new Supervised({
          name: 'Web UI',
          command: uiBinary,
          args: ['--root', uiDir, '--config', 'config', '--env', 'cluster', 'start'],
          env: process.env,
          logFile: join(logDir, 'temporal-ui.log'),
          onStart: report,
          log,
        });
        ui.start();
      }
    }
    const [node, ...workerArgs] = WORKER_COMMAND;
    for (let i = 1; i <= options.workers; i++) {
      const worker = new Supervised({
        name: `worker ${i}`,
        command: node === 'node' ? process.execPath : node,
        args: [
          ...workerArgs,
          '--grace',
          options.workerGrace,
          ...(options.workflowBundle ? ['--workflow-bundle', options.workflowBundle] : []),
        ],
        cwd: options.root,
        env: {
          ...process.env,
          ...options.workerEnv,
          TEMPORAL_ADDRESS: address,
          TEMPORAL_NAMESPACE: 'default',
          TASK_QUEUE: options.taskQueue,
          DATABASE_URL: options.databaseUrl,
        },
        logFile: join(logDir, `worker-${i}.log`),
        onStart: report,
        log,
      });
      workers.push(worker);
      worker.start();
    }
    await Promise.all(workers.map((w) => w.waitForOutput(/worker: task queue/, 180_000)));
  } catch (err) {
    await stopAll(2_000);
    throw err;
  }
  handle = {
    address,
    uiUrl: ui && options.uiPort !== null ? `http://localhost:${options.uiPort}` : null,
    ports,
    server,
    ui,
    workers,
    pids: () => ({ server: server.pid, ui: ui?.pid ?? null, workers: workers.map((w) => w.pid) }),
    stop: stopAll,
    killNow() {
      for (const w of workers) w.killNow();
      ui?.killNow();
      server.killNow();
    },
  };
  report();
  return handle;
}
