/**
 * Temporal, found or started (DESIGN.md §8). With TEMPORAL_ADDRESS: connect there. Otherwise start
 * a dev server with its Web UI through `TestWorkflowEnvironment.createLocal`, using a `temporal`
 * binary found on the machine or built once with Go; where neither exists, the SDK's own download
 * is tried (it needs the internet) before giving up with a message that says what to install.
 */
import { Client, Connection } from '@temporalio/client';
import { SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { CONVERSATION_SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import { InfraError } from './errors';
import { ensureTemporalCli, NO_TEMPORAL_CLI_HINT } from './temporal-cli';
import { dataConverterFromEnv } from './codec';

/** The search attributes the project sets; registered at start. */
export const SEARCH_ATTRIBUTE_KEYS = Object.values(CONVERSATION_SEARCH_ATTRIBUTES);

export interface TemporalOptions {
  /** Connect here instead of starting a dev server (default: TEMPORAL_ADDRESS). */
  address?: string;
  namespace?: string;
  /** Dev server: SQLite file to persist to (default: in memory, gone at shutdown). */
  dbFilename?: string;
  /** Dev server: frontend port (default: a free port). */
  port?: number;
  /** Dev server: Web UI port (default: port + 1000). */
  uiPort?: number;
  /** Dev server: serve the Web UI (default true). */
  ui?: boolean;
  /** Dev server: extra CLI arguments (e.g. `--dynamic-config-value`). */
  extraArgs?: string[];
  log?: (line: string) => void;
}

export interface TemporalHandle {
  client: Client;
  connection: Connection;
  /** For workers. */
  nativeConnection: NativeConnection;
  address: string;
  namespace: string;
  /** The Web UI, when this process started the dev server with it. */
  uiUrl: string | null;
  /** True when this process started the server (and stops it at shutdown). */
  embedded: boolean;
  shutdown(): Promise<void>;
}

const ADDRESS_PATTERN = /^[A-Za-z0-9.-]+:\d{1,5}$|^\[[0-9a-fA-F:]+\]:\d{1,5}$/;

/** Checks `host:port` and returns it; a clear error otherwise. */
export function parseTemporalAddress(address: string): string {
  if (!ADDRESS_PATTERN.test(address)) {
    throw new InfraError(
      `TEMPORAL_ADDRESS ${JSON.stringify(address)} is not host:port`,
      'use e.g. localhost:7233 (no scheme), or unset it to start an embedded dev server',
    );
  }
  const port = Number(address.slice(address.lastIndexOf(':') + 1));
  if (port < 1 || port > 65535) throw new InfraError(`TEMPORAL_ADDRESS ${address} has an invalid port`);
  return address;
}

async function registerSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  // Static imports: a dynamic import of these CommonJS packages under tsx loses the named exports.
  const types: Record<string, number> = {
    [SearchAttributeType.KEYWORD]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    [SearchAttributeType.INT]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
  };
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing: Record<string, number> = {};
  for (const key of SEARCH_ATTRIBUTE_KEYS) {
    if (existing.customAttributes?.[key.name] === undefined) missing[key.name] = types[key.type] ?? 0;
  }
  if (Object.keys(missing).length === 0) return;
  try {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
  } catch (err) {
    if (!/already exists/i.test((err as Error).message)) throw err;
  }
}

async function connectExisting(address: string, namespace: string): Promise<TemporalHandle> {
  parseTemporalAddress(address);
  let connection: Connection;
  let nativeConnection: NativeConnection;
  try {
    connection = await Connection.connect({ address, connectTimeout: '5s' });
    await connection.workflowService.getSystemInfo({});
    nativeConnection = await NativeConnection.connect({ address });
  } catch (err) {
    throw new InfraError(
      `cannot reach the Temporal server at ${address} (${(err as Error).message.split('\n')[0]})`,
      'start it, fix TEMPORAL_ADDRESS, or unset TEMPORAL_ADDRESS to start an embedded dev server',
      { cause: err },
    );
  }
  await registerSearchAttributes(connection, namespace);
  const client = new Client({ connection, namespace, dataConverter: dataConverterFromEnv() });
  return {
    client,
    connection,
    nativeConnection,
    address,
    namespace,
    uiUrl: null,
    embedded: false,
    async shutdown() {
      await nativeConnection.close();
      await connection.close();
    },
  };
}

async function startDevServer(options: TemporalOptions, namespace: string): Promise<TemporalHandle> {
  const log = options.log ?? ((line: string) => console.error(line));
  const path = await ensureTemporalCli();
  const ui = options.ui ?? true;
  const server = {
    namespace,
    ui,
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.uiPort !== undefined ? { uiPort: options.uiPort } : {}),
    ...(options.dbFilename ? { dbFilename: options.dbFilename } : {}),
    searchAttributes: SEARCH_ATTRIBUTE_KEYS,
    extraArgs: [
      ...(options.extraArgs ?? []),
      // The Web UI decodes encrypted payloads through the codec server (`durable-compaction codec-server`).
      ...(process.env.DC_CODEC_ENDPOINT ? ['--ui-codec-endpoint', process.env.DC_CODEC_ENDPOINT] : []),
    ],
    log: { format: 'pretty', level: 'error' },
  };
  let env: TestWorkflowEnvironment;
  try {
    if (path) {
      env = await TestWorkflowEnvironment.createLocal({
        server: { ...server, executable: { type: 'existing-path', path } },
      });
    } else {
      log('temporal CLI: not found and no Go to build it; trying the SDK download (needs the internet)');
      env = await TestWorkflowEnvironment.createLocal({ server });
    }
  } catch (err) {
    const message = (err as Error).message.split('\n')[0] ?? String(err);
    if (!path)
      throw new InfraError(`cannot start a Temporal dev server: ${message}`, NO_TEMPORAL_CLI_HINT, {
        cause: err,
      });
    if (/address already in use|bind/i.test(message)) {
      throw new InfraError(
        `cannot start the Temporal dev server: port ${options.port ?? '(chosen)'} or its UI port is in use`,
        'free the port, choose another with TEMPORAL_PORT / TEMPORAL_UI_PORT, or set TEMPORAL_ADDRESS',
        { cause: err },
      );
    }
    throw new InfraError(`cannot start the Temporal dev server (${path}): ${message}`, undefined, {
      cause: err,
    });
  }
  const address = env.address;
  const port = Number(address.slice(address.lastIndexOf(':') + 1));
  const uiPort = options.uiPort ?? port + 1000;
  return {
    client: new Client({ connection: env.connection, namespace, dataConverter: dataConverterFromEnv() }),
    connection: env.connection,
    nativeConnection: env.nativeConnection,
    address,
    namespace,
    uiUrl: ui ? `http://localhost:${uiPort}` : null,
    embedded: true,
    async shutdown() {
      await env.teardown();
    },
  };
}

/** Connects to TEMPORAL_ADDRESS, or starts an embedded dev server with its Web UI. */
export async function connectTemporal(options: TemporalOptions = {}): Promise<TemporalHandle> {
  const namespace = options.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default';
  const address = options.address ?? process.env.TEMPORAL_ADDRESS;
  if (address) return connectExisting(address, namespace);
  return startDevServer(options, namespace);
}
