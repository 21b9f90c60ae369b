/**
 * What `up` and `up --cluster` share: claiming the data directory, checking every port before
 * anything starts, PostgreSQL (embedded, or DATABASE_URL's), the shutdown grace, the line that
 * connects other shells, and stopping the embedded PostgreSQL at once.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InfraError } from '../../infra/errors';
import type { PostgresHandle } from '../../infra/postgres';
import {
  assertPortsFree,
  claimDataDir,
  postmasterPid,
  type DataDirClaim,
  type NeededPort,
} from '../../infra/stack-lock';
import { UsageError } from '../client';

/** The first Ctrl-C stops everything within this (`DC_SHUTDOWN_GRACE`, seconds). */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/** `DC_SHUTDOWN_GRACE` (seconds, may be fractional) in ms. */
export function shutdownGraceFromEnv(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_SHUTDOWN_GRACE_MS;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600)
    throw new UsageError(
      `DC_SHUTDOWN_GRACE must be a number of seconds between 0 and 3600 (got ${JSON.stringify(value)})`,
    );
  return Math.round(seconds * 1000);
}

/**
 * The line that points another shell at what `up` runs. The embedded PostgreSQL's URL is printed
 * whole: its password is the fixed local default in `src/infra/postgres.ts` and the server listens
 * on localhost only. A DATABASE_URL from the environment is not repeated (it may hold a secret).
 */
export function connectLine(options: {
  temporalAddress: string;
  uiUrl: string | null;
  databaseUrl: string | null;
}): string {
  const vars = [
    `TEMPORAL_ADDRESS=${options.temporalAddress}`,
    ...(options.databaseUrl ? [`DATABASE_URL=${options.databaseUrl}`] : []),
    ...(options.uiUrl ? [`TEMPORAL_UI_URL=${options.uiUrl}`] : []),
  ];
  return `export ${vars.join(' ')}`;
}

/** Prints how other shells (the CLI, more workers) connect to the stack. */
export function logConnectLine(
  log: (line: string) => void,
  stack: { temporalAddress: string; uiUrl: string | null; postgres: PostgresHandle },
): void {
  const { temporalAddress, uiUrl, postgres } = stack;
  log('\nOther shells (the CLI, more workers) connect with:');
  log(`  ${connectLine({ temporalAddress, uiUrl, databaseUrl: postgres.embedded ? postgres.url : null })}`);
  if (!postgres.embedded) log('  (and the DATABASE_URL of this shell)');
}

/** A stack's data directory, claimed, with its PostgreSQL running. */
export interface OpenedStack {
  dataDir: string;
  /** The embedded PostgreSQL's data directory; null with DATABASE_URL. */
  pgDataDir: string | null;
  claim: DataDirClaim;
  postgres: PostgresHandle;
}

/**
 * Creates and claims the data directory (one stack per directory: a killed stack's servers are
 * stopped here), refuses when a port it needs is taken, then starts or connects PostgreSQL. Nothing
 * is left claimed or running when it fails.
 */
export async function openStack(options: {
  dataDir: string;
  /** The folder of the data directory the Temporal server keeps its data in. */
  temporalDir: string;
  /** What starts, for the first line (`starting (data in …)`). */
  starting: string;
  /** The Temporal ports (the embedded PostgreSQL's is added when it has one). */
  ports: NeededPort[];
  pgPort: number | undefined;
  log: (line: string) => void;
}): Promise<OpenedStack> {
  const { log, pgPort } = options;
  const dataDir = resolve(options.dataDir);
  try {
    mkdirSync(join(dataDir, options.temporalDir), { recursive: true });
  } catch (err) {
    throw new InfraError(
      `cannot write the data directory ${dataDir} (${(err as Error).message})`,
      'choose a writable directory with DC_DATA_DIR or --data-dir',
    );
  }
  log(`durable-compaction: ${options.starting} (data in ${dataDir})`);
  const embeddedPg = !process.env.DATABASE_URL;
  const pgDataDir = embeddedPg ? join(dataDir, 'postgres') : null;
  const claim = await claimDataDir(dataDir, pgDataDir, log);
  const { connectPostgres, portInUse } = await import('../../infra/postgres');
  let postgres;
  try {
    await assertPortsFree(
      [
        ...options.ports,
        ...(embeddedPg && pgPort !== undefined
          ? [{ port: pgPort, what: 'PostgreSQL', setting: 'DC_PG_PORT' }]
          : []),
      ],
      portInUse,
    );
    postgres = await connectPostgres({ dataDir: pgDataDir ?? undefined, port: pgPort });
  } catch (err) {
    claim.release();
    throw err;
  }
  log(
    `  PostgreSQL   ${postgres.displayUrl}${postgres.embedded ? ` (embedded, data ${postgres.dataDir})` : ''}`,
  );
  return { dataDir, pgDataDir, claim, postgres };
}

/** Sends `sig` to a process that may be gone already. */
export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/**
 * Stops the embedded PostgreSQL at once (its immediate shutdown loses nothing committed) and gives
 * the data directory up: the second Ctrl-C, or a grace spent.
 */
export function abandonStack(stack: OpenedStack): void {
  const postmaster = stack.pgDataDir && stack.postgres.embedded ? postmasterPid(stack.pgDataDir) : null;
  if (postmaster !== null) signal(postmaster, 'SIGQUIT');
  stack.claim.release();
}
