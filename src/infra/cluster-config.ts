/**
 * What `up --cluster` runs, as data: the ports of the Temporal server's services, its config file,
 * the schema steps of `temporal-sql-tool`, the Web UI's config and the worker command. Pure (no
 * I/O): test/unit/infra/compose-drift.test.ts checks docker-compose.yml against the same values.
 */

/** History shards of the cluster (`--shards`); the compose file's `NUM_HISTORY_SHARDS`. */
export const DEFAULT_HISTORY_SHARDS = 4;
/** Worker processes `up --cluster` runs (`--workers`). */
export const DEFAULT_CLUSTER_WORKERS = 2;
/**
 * Workflow tasks and activities each of `up --cluster`'s workers runs at once, unless
 * DC_WORKER_WORKFLOW_TASKS / DC_WORKER_ACTIVITIES say otherwise: 4 workflow tasks and 6 activities
 * (compaction steps, which mostly wait on the model and the store) per core, shared among the
 * workers, from 2 to the SDK's 40 and 100. With the SDK's 40 on each of three workers on 2 cores,
 * workers took on more than they finished within the 10 s workflow task timeout and the cluster
 * attack failed; with 3 and 4 (these values there) it passed (bench/RELIABILITY.md).
 */
export function clusterWorkerSlots(
  cpus: number,
  workers: number,
): { workflowTasks: number; activities: number } {
  const share = (perCore: number, max: number): number =>
    Math.min(max, Math.max(2, Math.ceil((perCore * Math.max(1, cpus)) / Math.max(1, workers))));
  return { workflowTasks: share(4, 40), activities: share(6, 100) };
}
/** The SQL plugin of both stores (Temporal's name for PostgreSQL ≥ 12). */
export const SQL_PLUGIN = 'postgres12';
/** Temporal's two databases, beside the project's own (`durable_compaction`). */
export const TEMPORAL_DATABASES = { default: 'temporal', visibility: 'temporal_visibility' } as const;
/**
 * The dynamic config file, relative to the repository: the compose file mounts it into its server,
 * `up --cluster` points its server at it. One file for both.
 */
export const DYNAMIC_CONFIG_FILE = 'docker/dynamicconfig.yaml';
/**
 * The worker's command, relative to the repository: the Dockerfile's CMD (the compose file's
 * worker) and the processes `up --cluster` starts. Node runs the CLI itself (tsx as a loader), so
 * SIGTERM reaches the worker and it stops gracefully.
 */
export const WORKER_COMMAND = ['node', '--import', 'tsx', 'src/cli/main.ts', 'worker'] as const;

/** The ports of one Temporal server with all its services in one process. */
export interface ClusterPorts {
  /** The frontend (what clients and workers dial): `TEMPORAL_PORT`, 7233. */
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  /** Membership (ringpop) ports of the four services. */
  membership: { frontend: number; history: number; matching: number; worker: number };
}

/** Temporal keeps membership ports in a smallint column: the frontend's must stay below this. */
export const MAX_CLUSTER_FRONTEND_PORT = 32_767 + 300 - 6;

/**
 * Temporal's default layout shifted to `frontend`: 7233 → history 7234, matching 7235, worker
 * 7239, HTTP 7243, membership 6933–6939. `frontend` must be from 301 to
 * {@link MAX_CLUSTER_FRONTEND_PORT} (see `up --cluster`'s check).
 */
export function clusterPorts(frontend: number): ClusterPorts {
  const m = frontend - 300;
  return {
    frontend,
    frontendHttp: frontend + 10,
    history: frontend + 1,
    matching: frontend + 2,
    worker: frontend + 6,
    membership: { frontend: m, history: m + 1, matching: m + 2, worker: m + 6 },
  };
}

/** Every port of `ports`, named for messages. */
export function listPorts(ports: ClusterPorts): { port: number; what: string }[] {
  return [
    { port: ports.frontend, what: 'Temporal frontend' },
    { port: ports.frontendHttp, what: 'Temporal frontend HTTP' },
    { port: ports.history, what: 'Temporal history' },
    { port: ports.matching, what: 'Temporal matching' },
    { port: ports.worker, what: 'Temporal worker service' },
    { port: ports.membership.frontend, what: 'Temporal membership (frontend)' },
    { port: ports.membership.history, what: 'Temporal membership (history)' },
    { port: ports.membership.matching, what: 'Temporal membership (matching)' },
    { port: ports.membership.worker, what: 'Temporal membership (worker)' },
  ];
}

/** Where Temporal's databases are and who connects to them. */
export interface SqlEndpoint {
  host: string;
  port: number;
  user: string;
  password: string;
}

export interface ServerConfigOptions {
  ports: ClusterPorts;
  sql: SqlEndpoint;
  shards: number;
  /** Absolute path of the dynamic config file. */
  dynamicConfigPath: string;
  /** Log level of the server (default `warn`). */
  logLevel?: string;
}

/** The server's config file (`config/<env>.yaml`), as an object to write as YAML. */
export function serverConfig(options: ServerConfigOptions): Record<string, unknown> {
  const { ports, sql } = options;
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: SQL_PLUGIN,
      databaseName,
      connectAddr: `${sql.host}:${sql.port}`,
      connectProtocol: 'tcp',
      user: sql.user,
      password: sql.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const service = (grpcPort: number, membershipPort: number, extra: Record<string, unknown> = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnLocalHost: true, ...extra },
  });
  return {
    log: { stdout: true, level: options.logLevel ?? 'warn' },
    persistence: {
      numHistoryShards: options.shards,
      defaultStore: 'default',
      visibilityStore: 'visibility',
      datastores: {
        default: store(TEMPORAL_DATABASES.default, 20),
        visibility: store(TEMPORAL_DATABASES.visibility, 10),
      },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      pprof: { port: 0 },
    },
    services: {
      frontend: service(ports.frontend, ports.membership.frontend, { httpPort: ports.frontendHttp }),
      matching: service(ports.matching, ports.membership.matching),
      history: service(ports.history, ports.membership.history),
      worker: service(ports.worker, ports.membership.worker),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `127.0.0.1:${ports.frontend}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: options.dynamicConfigPath, pollInterval: '10s' },
  };
}

/**
 * The schema steps, in order: `temporal-sql-tool` arguments after the connection, which comes from
 * SQL_PLUGIN, SQL_HOST, SQL_PORT, SQL_USER, SQL_PASSWORD in the environment ({@link sqlToolEnv}; the
 * compose file runs the same four commands with the same variables). `setup-schema -v 0.0`
 * creates the version table (nothing when it exists); `update-schema --schema-name` applies the
 * schema files embedded in the tool past the database's version, so a second start changes
 * nothing and a newer tool brings its own files.
 */
export const SCHEMA_STEPS: readonly (readonly string[])[] = [
  ['--db', TEMPORAL_DATABASES.default, 'setup-schema', '-v', '0.0'],
  ['--db', TEMPORAL_DATABASES.default, 'update-schema', '--schema-name', 'postgresql/v12/temporal'],
  ['--db', TEMPORAL_DATABASES.visibility, 'setup-schema', '-v', '0.0'],
  ['--db', TEMPORAL_DATABASES.visibility, 'update-schema', '--schema-name', 'postgresql/v12/visibility'],
];

/** The environment that gives `temporal-sql-tool` its connection (the compose file sets the same). */
export function sqlToolEnv(sql: SqlEndpoint): Record<string, string> {
  return {
    SQL_PLUGIN,
    SQL_HOST: sql.host,
    SQL_PORT: String(sql.port),
    SQL_USER: sql.user,
    SQL_PASSWORD: sql.password,
  };
}

/** The Web UI server's config file (`config/<env>.yaml`). */
export function uiConfig(options: {
  port: number;
  temporalAddress: string;
  codecEndpoint: string | null;
}): Record<string, unknown> {
  return {
    temporalGrpcAddress: options.temporalAddress,
    host: '127.0.0.1',
    port: options.port,
    enableUi: true,
    defaultNamespace: 'default',
    cors: { allowOrigins: [`http://localhost:${options.port}`, `http://127.0.0.1:${options.port}`] },
    codec: { endpoint: options.codecEndpoint ?? '' },
    notifyOnNewVersion: false,
    hideLogs: true,
  };
}
