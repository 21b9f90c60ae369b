/**
 * What the client-side commands share: the connection settings (TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, TEMPORAL_UI_URL, DATABASE_URL), one Temporal client per command, the store,
 * the checks that a conversation exists and is running, and the exit codes: 0 ok, 1 a runtime
 * failure, 2 bad input (a {@link UsageError}, a bad config file, a malformed session file).
 */
import { randomBytes } from 'node:crypto';
import {
  Client,
  Connection,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, type PayloadCodec } from '@temporalio/common';
import { ConfigError } from '../context/config';
import { ImportError } from '../importers';
import { describeError, InfraError } from '../infra/errors';
import { BAD_REQUEST_FAILURE_TYPES, causeChain, innermostCause } from '../failures';
import { parseTemporalAddress } from '../infra/temporal';
import type { ConversationStore } from '../store';
import { statusQuery, type ConversationStatus } from '../../workflows/definitions';

/** Bad input from the user: one line, exit code 2, nothing changed. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The workflow type every conversation runs. */
export const CONVERSATION_WORKFLOW = 'agentConversation';

/** Store failure kinds that mean the user named something that is not there (exit 2). */
const BAD_INPUT_FAILURES: ReadonlySet<string> = new Set(BAD_REQUEST_FAILURE_TYPES);

export interface ClientSettings {
  /** `host:port` of the Temporal frontend (TEMPORAL_ADDRESS, default localhost:7233). */
  address: string;
  /** TEMPORAL_NAMESPACE, default `default`. */
  namespace: string;
  /** Base of the Web UI (TEMPORAL_UI_URL, default http://localhost:8233), no trailing slash. */
  uiBase: string;
}

/** The connection settings from the environment; a malformed TEMPORAL_ADDRESS is refused. */
export function clientSettings(env: NodeJS.ProcessEnv = process.env): ClientSettings {
  const address = parseTemporalAddress(env.TEMPORAL_ADDRESS || 'localhost:7233');
  return {
    address,
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    uiBase: (env.TEMPORAL_UI_URL || 'http://localhost:8233').replace(/\/+$/, ''),
  };
}

/** The Web UI page of a conversation's workflow. */
export function workflowUiUrl(settings: Pick<ClientSettings, 'namespace' | 'uiBase'>, id: string): string {
  return `${settings.uiBase}/namespaces/${encodeURIComponent(settings.namespace)}/workflows/${encodeURIComponent(id)}`;
}

/** A fresh conversation id: `<prefix>-<UTC time>-<6 hex digits>`, valid as a workflow and store id. */
export function newConversationId(prefix = 'conv', now: Date = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${prefix}-${stamp}-${randomBytes(3).toString('hex')}`;
}

/** Connects a client; an unreachable server is an {@link InfraError} (exit 1). */
export async function connectClient(
  settings: ClientSettings,
): Promise<{ client: Client; close(): Promise<void> }> {
  let connection: Connection;
  try {
    connection = await Connection.connect({ address: settings.address, connectTimeout: '5s' });
  } catch (err) {
    throw new InfraError(
      `cannot reach the Temporal server at ${settings.address} (${(err as Error).message.split('\n')[0]})`,
      'start it with `durable-compaction up`, or set TEMPORAL_ADDRESS',
      { cause: err },
    );
  }
  const codecs = await clientCodecs();
  return {
    client: new Client({
      connection,
      namespace: settings.namespace,
      dataConverter: { payloadCodecs: codecs.payloadCodecs },
    }),
    close: async () => {
      await connection.close();
      await codecs.close();
    },
  };
}

/**
 * A client's payload codecs: with DATABASE_URL the claim check reads and writes the bodies itself
 * (a pool that connects on first use); without it, DC_CODEC_ENDPOINT's codec server does; with
 * neither, a client that says what to set when a body needs the store.
 */
export async function clientCodecs(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ payloadCodecs: PayloadCodec[]; close(): Promise<void> }> {
  const { payloadCodecsFor, RemoteCodec } = await import('../infra/codec');
  if (env.DATABASE_URL) {
    const { lazyPool } = await import('../infra/postgres');
    const pool = lazyPool(env.DATABASE_URL);
    return { payloadCodecs: payloadCodecsFor(pool, env), close: () => pool.end().catch(() => undefined) };
  }
  if (env.DC_CODEC_ENDPOINT) {
    return { payloadCodecs: [new RemoteCodec(env.DC_CODEC_ENDPOINT)], close: async () => undefined };
  }
  return { payloadCodecs: payloadCodecsFor(null, env), close: async () => undefined };
}

/** Runs `fn` with a client from the environment's settings, closing it afterwards. */
export async function withClient<T>(
  fn: (client: Client, settings: ClientSettings) => Promise<T>,
): Promise<T> {
  const settings = clientSettings();
  const { client, close } = await connectClient(settings);
  try {
    return await fn(client, settings);
  } finally {
    await close().catch(() => undefined);
  }
}

/**
 * Runs `fn` with a store on DATABASE_URL (required: the CLI never starts a database of its own).
 * `migrate` applies the migrations first (for commands that write).
 */
export async function withStore<T>(
  fn: (store: ConversationStore) => Promise<T>,
  options: { migrate?: boolean } = {},
): Promise<T> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    throw new UsageError(
      'DATABASE_URL is not set — point it at the PostgreSQL of the workers ' +
        '(`up` prints the line to paste: export TEMPORAL_ADDRESS=… DATABASE_URL=…)',
    );
  }
  const { connectPostgres } = await import('../infra/postgres');
  const { ConversationStore } = await import('../store');
  const pg = await connectPostgres({ url, poolSize: 2, migrate: options.migrate ?? false });
  try {
    return await fn(new ConversationStore(pg.pool));
  } finally {
    await pg.shutdown();
  }
}

/**
 * Checks that `id` names a running conversation before an Update is sent to it.
 * @throws UsageError `no conversation <id>`, or `conversation <id> has ended`
 */
export async function requireRunning(client: Client, id: string): Promise<void> {
  const status = await describeConversation(client, id);
  if (status === 'COMPLETED') throw new UsageError(`conversation ${id} has ended`);
  if (status === 'FAILED') {
    const failure = await workflowFailure(client, id);
    throw new UsageError(`conversation ${id} has ended: it failed${failure ? ` (${failure.message})` : ''}`);
  }
  if (status !== 'RUNNING')
    throw new UsageError(`conversation ${id} has ended (its workflow is ${status.toLowerCase()})`);
}

/**
 * Why a closed workflow failed: the innermost failure's message and, for an ApplicationFailure,
 * its type. Null when it did not fail (completed, or still running).
 */
export async function workflowFailure(
  client: Client,
  id: string,
): Promise<{ message: string; type: string | null } | null> {
  try {
    await client.workflow.getHandle(id).result();
    return null;
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) return null;
    const application = causeChain(err.cause)
      .filter((failure): failure is ApplicationFailure => failure instanceof ApplicationFailure)
      .pop();
    const root = application ?? innermost(err);
    return { message: root?.message.split('\n')[0] ?? err.message, type: application?.type ?? null };
  }
}

/**
 * The status name of the conversation's workflow (`RUNNING`, `COMPLETED`, ...).
 * @throws UsageError `no conversation <id>` when there is no such agent conversation
 */
export async function describeConversation(client: Client, id: string): Promise<string> {
  try {
    const description = await client.workflow.getHandle(id).describe();
    if (description.type !== CONVERSATION_WORKFLOW)
      throw new UsageError(`no conversation ${id} (workflow ${id} is a ${description.type})`);
    return description.status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new UsageError(`no conversation ${id}`);
    throw err;
  }
}

/** How long the `status` Query may take: a worker answers in milliseconds, none never does. */
export const STATUS_QUERY_DEADLINE_MS = 15_000;

/**
 * The `status` Query. A conversation that does not answer (no worker polls its task queue) is a
 * runtime failure with a hint, not a bare "Failed to query Workflow".
 */
export async function queryStatus(client: Client, id: string): Promise<ConversationStatus> {
  try {
    const handle = client.workflow.getHandle(id);
    return await client.withDeadline(Date.now() + STATUS_QUERY_DEADLINE_MS, () => handle.query(statusQuery));
  } catch (err) {
    const reason = innermost(err instanceof Error ? err : undefined)?.message.split('\n')[0] ?? String(err);
    throw new InfraError(
      `conversation ${id} did not answer the status query (${reason})`,
      'is a worker running on its task queue? start one with `durable-compaction worker` or `up`',
      { cause: err },
    );
  }
}

/**
 * An Update's failure as the user should see it: a validator's refusal (empty message, nothing
 * awaiting approval, ended) and a store failure naming something absent become a
 * {@link UsageError}; anything else keeps its message and exits 1.
 */
export function explainUpdateFailure(err: unknown): Error {
  if (!(err instanceof WorkflowUpdateFailedError)) return err instanceof Error ? err : new Error(String(err));
  const cause = err.cause;
  // A validator's plain Error arrives as an ApplicationFailure of type `Error`.
  if (cause instanceof ApplicationFailure && cause.type === 'Error') return new UsageError(cause.message);
  for (const failure of causeChain(cause)) {
    if (failure instanceof ApplicationFailure && BAD_INPUT_FAILURES.has(failure.type ?? ''))
      return new UsageError(failure.message);
    if (!(failure instanceof ActivityFailure) && !(failure instanceof ApplicationFailure)) break;
  }
  const root = innermost(cause);
  return new Error(`${err.message}: ${root?.message ?? 'unknown failure'}`);
}

function innermost(err: Error | undefined): Error | undefined {
  const root = innermostCause(err);
  return root instanceof Error ? root : err;
}

/** 2 for bad input (usage, config file, session file), 1 for everything else. */
export function exitCodeFor(err: unknown): 1 | 2 {
  return err instanceof UsageError || err instanceof ConfigError || err instanceof ImportError ? 2 : 1;
}

/**
 * Wraps a commander action: bad input prints `error: <line>` and exits 2; other failures go to
 * the entry point (`runMain`: one line, exit 1).
 */
export function action<A extends unknown[]>(
  fn: (...args: A) => Promise<void>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      if (exitCodeFor(err) !== 2) throw err;
      const message = err instanceof ImportError ? `cannot import: ${err.message}` : describeError(err);
      console.error(`error: ${message}`);
      if (process.env.DEBUG) console.error(err);
      process.exit(2);
    }
  };
}

/** Parses a whole number option; a bad one is a {@link UsageError} naming the option. */
export function intArgument(name: string, value: string, min = 1): number {
  const n = Number(value);
  if (!/^\s*-?\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < min)
    throw new UsageError(`${name} must be a whole number ≥ ${min} (got ${JSON.stringify(value)})`);
  return n;
}

/** Prints a value as JSON (for `--json`). */
export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}
