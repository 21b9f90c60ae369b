/**
 * `durable-compaction up --cluster` as a user runs it, in a process of its own, on free ports and a
 * data directory of its own: the cluster tests and the cluster benchmark drive it. No vitest here.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterPorts, listPorts } from '../../src/infra/cluster-config';
import { portInUse } from '../../src/infra/postgres';
import { spawnCli, type Run } from './cli-process';

export interface ClusterProcess {
  child: ChildProcess;
  output: Run;
  dataDir: string;
  address: string;
  /** The frontend's port (`TEMPORAL_PORT`; the Web UI's is 1000 above it). */
  port: number;
  /** The project's database: the embedded PostgreSQL's URL it printed, or the DATABASE_URL it was given. */
  databaseUrl: string;
  uiUrl: string | null;
  /** The workflow bundle its workers load. */
  bundlePath: string;
  /** The server's and workers' pids, as the stack's lock file records them. */
  pids(): { server: number | null; workers: number[] };
  /** Ctrl-C: resolves with the exit code once it stopped. */
  stop(timeoutMs?: number): Promise<number | null>;
  /** Removes the data directory (after stop). */
  remove(): void;
}

/** A frontend port whose whole layout (cluster-config.ts) and UI port are free. */
export async function freeClusterPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    // Temporal stores membership ports (frontend - 300) as smallint: at most 32767.
    const base = 20_000 + Math.floor(Math.random() * 12_000);
    const ports = [...listPorts(clusterPorts(base)).map((p) => p.port), base + 1000];
    let free = true;
    for (const port of ports) if (await portInUse(port)) free = false;
    if (free) return base;
  }
  throw new Error('no free port layout for a cluster');
}

/**
 * Starts `up --cluster` and waits for "Ready." (the server built or found, schemas migrated, the
 * workers polling). `env` reaches `up` and the workers: the LLM endpoint, say, or a DATABASE_URL
 * for the project's store and Temporal's databases instead of the embedded PostgreSQL.
 */
export async function startClusterProcess(options: {
  workers: number;
  ui?: boolean;
  env?: Record<string, string>;
  /** More arguments of `up` (`--workflow-bundle <file>`, say). */
  args?: string[];
  /** The frontend's port (a restart on the same one, as a user's); default a free layout. */
  port?: number;
  /** Default 600 s: the server's first build on a machine takes minutes. */
  timeoutMs?: number;
  dataDir?: string;
}): Promise<ClusterProcess> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'dc-cluster-'));
  const port = options.port ?? (await freeClusterPort());
  const { child, output } = spawnCli(
    [
      'up',
      '--cluster',
      '--workers',
      String(options.workers),
      ...(options.ui ? [] : ['--no-ui']),
      ...(options.args ?? []),
    ],
    {
      DC_DATA_DIR: dataDir,
      TEMPORAL_PORT: String(port),
      TEMPORAL_UI_PORT: String(port + 1000),
      ...options.env,
    },
  );
  const deadline = Date.now() + (options.timeoutMs ?? 600_000);
  while (!output.stdout.includes('\nReady.')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGINT');
      throw new Error(`up --cluster did not get ready:\n${output.stdout}\n${output.stderr}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const line = /export (TEMPORAL_ADDRESS=.*)$/m.exec(output.stdout)?.[1] ?? '';
  const vars = Object.fromEntries(line.split(' ').map((kv) => kv.split('=', 2) as [string, string]));
  const lockFile = join(dataDir, 'up.pid');
  return {
    child,
    output,
    dataDir,
    address: vars.TEMPORAL_ADDRESS ?? '',
    port,
    // With DATABASE_URL, `up` does not repeat it (it may hold a secret).
    databaseUrl: line.match(/DATABASE_URL=(\S+)/)?.[1] ?? options.env?.DATABASE_URL ?? '',
    uiUrl: vars.TEMPORAL_UI_URL ?? null,
    bundlePath: join(dataDir, 'temporal-cluster', 'workflow-bundle.js'),
    pids() {
      const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as {
        temporalPid?: number;
        workerPids?: number[];
      };
      return { server: lock.temporalPid ?? null, workers: lock.workerPids ?? [] };
    },
    async stop(timeoutMs = 30_000) {
      if (child.exitCode !== null) return child.exitCode;
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    remove() {
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
