/**
 * Temporal, found or started (DESIGN.md §8). With TEMPORAL_ADDRESS: connect there. Otherwise start
 * a dev server with its Web UI through `TestWorkflowEnvironment.createLocal`, using a `temporal`
 * binary found on the machine or built once with Go; where neither exists, the SDK's own download
 * is tried (it needs the internet) before giving up with a message that says what to install.
 */
import type { Server } from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { SearchAttributeType, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { CONVERSATION_SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import { InfraError } from './errors';
import { ensureTemporalCli, NO_TEMPORAL_CLI_HINT } from './temporal-cli';
import { chainCodecs, payloadCodecsFor, startCodecServer } from './codec';
import { freePort } from './postgres';

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
  /**
   * Payload codecs of the client (default: AES-GCM when DC_PAYLOAD_KEY is set, see codec.ts). With
   * one, a dev server's Web UI decodes payloads through DC_CODEC_ENDPOINT or, when that is unset, a
   * codec endpoint this process serves on 127.0.0.1 for the UI's origin only.
   */
  payloadCodecs?: PayloadCodec[];
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
  /** The codec endpoint the Web UI decodes payloads with, when payloads are encrypted. */
  codecEndpoint: string | null;
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

/** Registers the project's search attributes on `namespace` (those missing). */
export async function registerSearchAttributes(connection: Connection, namespace: string): Promise<void> {
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

async function connectExisting(
  address: string,
  namespace: string,
  payloadCodecs: PayloadCodec[],
): Promise<TemporalHandle> {
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
  const client = new Client({ connection, namespace, dataConverter: { payloadCodecs } });
  return {
    client,
    connection,
    nativeConnection,
    address,
    namespace,
    uiUrl: null,
    codecEndpoint: null,
    embedded: false,
    async shutdown() {
      await nativeConnection.close();
      await connection.close();
    },
  };
}

/**
 * Dynamic configuration of the embedded dev server (docker/dynamicconfig.yaml gives the compose
 * file's server the same; a production cluster sets these in its own dynamic config):
 *
 * - Eager activity execution hands an activity scheduled by a workflow task straight back to the
 *   worker that completed the task, inline in the response, instead of through the task queue.
 * - The transfer queue, which hands new workflow tasks (a child's first task, the task after an
 *   activity or a child completes) from history to matching, is read at most 20 times a second per
 *   history shard by default, and the dev server has one shard: past a short burst every such task
 *   waited up to 50 ms. A compaction child crosses that queue about five times (bench figure 1,
 *   one compaction after another: 89 → 44 ms at p50; figure 6: ~10 % more rounds a second).
 */
export const DEV_SERVER_DYNAMIC_CONFIG = [
  'system.enableActivityEagerExecution=true',
  'history.transferProcessorMaxPollRPS=1000',
];

/** How many times a dev server that was slow to answer is started again before giving up. */
export const DEV_SERVER_START_ATTEMPTS = 3;

/**
 * The SDK waits a fixed 5 s for a dev server it started to answer, then kills it. On a loaded
 * machine (two cores, a test suite starting servers side by side) a healthy server can take longer,
 * so a start that failed only for that reason is tried again; every other failure is final.
 */
export async function retryingSlowStart<T>(
  start: () => Promise<T>,
  log: (line: string) => void,
  attempts = DEV_SERVER_START_ATTEMPTS,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      const slow = /did not start within/.test((err as Error)?.message ?? '');
      if (!slow || attempt >= attempts) throw err;
      log(
        `temporal dev server: no answer within the SDK's wait; starting it again (attempt ${attempt + 1} of ${attempts})`,
      );
    }
  }
}

async function startDevServer(
  options: TemporalOptions,
  namespace: string,
  payloadCodecs: PayloadCodec[],
): Promise<TemporalHandle> {
  const log = options.log ?? ((line: string) => console.error(line));
  const path = await ensureTemporalCli();
  const ui = options.ui ?? true;
  // With encrypted payloads the UI needs a codec endpoint, named when the server starts; an own one
  // is served for exactly the UI's origin, so the ports are fixed first.
  let codecEndpoint = ui ? process.env.DC_CODEC_ENDPOINT || null : null;
  let codecServer: Server | null = null;
  let port = options.port;
  let uiPort = options.uiPort;
  if (ui && payloadCodecs.length > 0 && !codecEndpoint) {
    port ??= await freePort();
    uiPort ??= port + 1000;
    const started = await startCodecServer({
      codec: chainCodecs(payloadCodecs),
      port: 0,
      origins: [`http://localhost:${uiPort}`, `http://127.0.0.1:${uiPort}`],
    });
    codecServer = started.server;
    codecEndpoint = started.url;
  }
  const server = {
    namespace,
    ui,
    ...(port !== undefined ? { port } : {}),
    ...(uiPort !== undefined ? { uiPort } : {}),
    ...(options.dbFilename ? { dbFilename: options.dbFilename } : {}),
    searchAttributes: SEARCH_ATTRIBUTE_KEYS,
    extraArgs: [
      ...DEV_SERVER_DYNAMIC_CONFIG.flatMap((value) => ['--dynamic-config-value', value]),
      ...(options.extraArgs ?? []),
      // The Web UI decodes encrypted payloads through the codec endpoint.
      ...(codecEndpoint ? ['--ui-codec-endpoint', codecEndpoint] : []),
    ],
    log: { format: 'pretty', level: 'error' },
  };
  let env: TestWorkflowEnvironment;
  try {
    if (path) {
      env = await retryingSlowStart(
        () =>
          TestWorkflowEnvironment.createLocal({
            server: { ...server, executable: { type: 'existing-path', path } },
          }),
        log,
      );
    } else {
      log('temporal CLI: not found and no Go to build it; trying the SDK download (needs the internet)');
      env = await TestWorkflowEnvironment.createLocal({ server });
    }
  } catch (err) {
    codecServer?.close();
    const message = (err as Error).message.split('\n')[0] ?? String(err);
    if (!path)
      throw new InfraError(`cannot start a Temporal dev server: ${message}`, NO_TEMPORAL_CLI_HINT, {
        cause: err,
      });
    if (/address already in use|bind/i.test(message)) {
      throw new InfraError(
        `cannot start the Temporal dev server: port ${port ?? '(chosen)'} or its UI port is in use`,
        'free the port, choose another with TEMPORAL_PORT / TEMPORAL_UI_PORT, or set TEMPORAL_ADDRESS',
        { cause: err },
      );
    }
    throw new InfraError(`cannot start the Temporal dev server (${path}): ${message}`, undefined, {
      cause: err,
    });
  }
  const address = env.address;
  const actualUiPort = uiPort ?? Number(address.slice(address.lastIndexOf(':') + 1)) + 1000;
  return {
    client: new Client({ connection: env.connection, namespace, dataConverter: { payloadCodecs } }),
    connection: env.connection,
    nativeConnection: env.nativeConnection,
    address,
    namespace,
    uiUrl: ui ? `http://localhost:${actualUiPort}` : null,
    codecEndpoint,
    embedded: true,
    async shutdown() {
      await env.teardown();
      await new Promise((resolve) => (codecServer ? codecServer.close(resolve) : resolve(undefined)));
    },
  };
}

/** Connects to TEMPORAL_ADDRESS, or starts an embedded dev server with its Web UI. */
export async function connectTemporal(options: TemporalOptions = {}): Promise<TemporalHandle> {
  const namespace = options.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default';
  const address = options.address ?? process.env.TEMPORAL_ADDRESS;
  const payloadCodecs = options.payloadCodecs ?? payloadCodecsFor(null);
  if (address) return connectExisting(address, namespace, payloadCodecs);
  return startDevServer(options, namespace, payloadCodecs);
}
