/**
 * What the client-side commands share: the connection settings (TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, TEMPORAL_UI_URL, DATABASE_URL, DC_CODEC_ENDPOINT), one
 * {@link ConversationClient} per command, the store, and the exit codes: 0 ok, 1 a runtime failure,
 * 2 bad input (a {@link UsageError}, a client error with `badInput`, a bad config file, a malformed
 * session file). {@link cliError} is the one place the client's errors become what the CLI prints.
 */
import type { PayloadCodec } from '@temporalio/common';
import {
  ConversationClient,
  ConversationError,
  ConversationExistsError,
  NoReviewPendingError,
  NotRespondingError,
  TemporalUnreachableError,
  clientPayloadCodecs,
} from '../client';
import { ConfigError } from '../context/config';
import { ImportError } from '../importers';
import { describeError, InfraError } from '../infra/errors';
import { parseTemporalAddress } from '../infra/temporal';
import type { ConversationStore } from '../store';

/** Bad input from the user: one line, exit code 2, nothing changed. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

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

/**
 * The conversation client of a command: connected to the settings' server, its codecs from the
 * environment (DATABASE_URL: the claim check on the workers' PostgreSQL; else DC_CODEC_ENDPOINT:
 * their codec server). An unreachable server is a {@link TemporalUnreachableError}.
 */
export async function connectConversations(
  settings: ClientSettings,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ConversationClient> {
  return ConversationClient.connect({
    address: settings.address,
    namespace: settings.namespace,
    env,
    ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
    ...(env.DC_CODEC_ENDPOINT ? { codecEndpoint: env.DC_CODEC_ENDPOINT } : {}),
  });
}

/**
 * A client's payload codecs: with DATABASE_URL the claim check reads and writes the bodies itself
 * (a pool that connects on first use); without it, DC_CODEC_ENDPOINT's codec server does; with
 * neither, a client that says what to set when a body needs the store.
 */
export async function clientCodecs(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ payloadCodecs: PayloadCodec[]; close(): Promise<void> }> {
  if (env.DATABASE_URL) {
    const { lazyPool } = await import('../infra/postgres');
    const pool = lazyPool(env.DATABASE_URL);
    return {
      payloadCodecs: clientPayloadCodecs({ pool, env }),
      close: () => pool.end().catch(() => undefined),
    };
  }
  const codecEndpoint = env.DC_CODEC_ENDPOINT;
  return {
    payloadCodecs: clientPayloadCodecs({ env, ...(codecEndpoint ? { codecEndpoint } : {}) }),
    close: async () => undefined,
  };
}

/** Runs `fn` with a conversation client from the environment's settings, closing it afterwards. */
export async function withConversations<T>(
  fn: (conversations: ConversationClient, settings: ClientSettings) => Promise<T>,
): Promise<T> {
  const settings = clientSettings();
  const conversations = await connectConversations(settings);
  try {
    return await fn(conversations, settings);
  } finally {
    await conversations.close();
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

/** What the CLI suggests where the client's error leaves the next step to the user. */
const HINTS = {
  notResponding: 'is a worker running on its task queue? start one with `durable-compaction worker` or `up`',
  unreachable: 'start it with `durable-compaction up`, or set TEMPORAL_ADDRESS',
} as const;

/**
 * The client's error as the CLI shows it. Bad input (`badInput`: nothing changed) becomes a
 * {@link UsageError} in the client's words, with the command or flag to use where the CLI has one;
 * a server that cannot be reached, or a conversation that no worker answers, an {@link InfraError}
 * with what to do; anything else stays as it is (exit 1, its message and cause).
 */
export function cliError(err: unknown): unknown {
  if (!(err instanceof ConversationError)) return err;
  if (err instanceof ConversationExistsError) return new UsageError(`${err.message}: choose another --id`);
  if (err instanceof NoReviewPendingError && err.decidedMeanwhile)
    return new UsageError(`${err.message} (\`durable-compaction status ${err.conversationId}\`)`);
  if (err.badInput) return new UsageError(err.message);
  if (err instanceof NotRespondingError)
    return new InfraError(err.message, HINTS.notResponding, { cause: err.cause });
  if (err instanceof TemporalUnreachableError)
    return new InfraError(err.message, HINTS.unreachable, { cause: err.cause });
  return err;
}

/** 2 for bad input (usage, config file, session file), 1 for everything else. */
export function exitCodeFor(err: unknown): 1 | 2 {
  const shown = cliError(err);
  return shown instanceof UsageError || shown instanceof ConfigError || shown instanceof ImportError ? 2 : 1;
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
    } catch (caught) {
      const err = cliError(caught);
      if (exitCodeFor(err) !== 2) throw err;
      const message = err instanceof ImportError ? `cannot import: ${err.message}` : describeError(err);
      console.error(`error: ${message}`);
      if (process.env.DEBUG) console.error(err);
      process.exit(2);
    }
  };
}

/** Parses a whole number option (`min` to `max`); a bad one is a {@link UsageError} naming the option. */
export function intArgument(name: string, value: string, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (!/^\s*-?\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`${name} must be a whole number ${range} (got ${JSON.stringify(value)})`);
  }
  return n;
}

/** Prints a value as JSON (for `--json`). */
export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}
