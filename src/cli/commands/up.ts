/**
 * `durable-compaction up` (what `npm start` runs): the embedded Temporal dev server with its Web
 * UI, embedded PostgreSQL with persistent data, and a worker; then the line that connects other
 * shells to them (`export TEMPORAL_ADDRESS=… DATABASE_URL=…`). With an LLM endpoint
 * (OPENAI_API_KEY / OPENAI_BASE_URL) it opens an interactive chat (the `chat` command) in a
 * conversation it continues on the next start; without one it replays the project's sample session
 * through the workflow with a small window and the extractive summarizer, so that a newcomer sees
 * compactions happen. Ctrl-C (or the end of the chat's input) stops everything cleanly; the next
 * start reuses the data.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_CLUSTER_WORKERS, DEFAULT_HISTORY_SHARDS } from '../../infra/cluster-config';
import { validateEnvironment } from '../../infra/environment';
import { onStopSignal } from '../../infra/signals';
import type { AgentConversationInput } from '../../../workflows/definitions';
import { ConversationClient, ConversationNotFoundError } from '../../client';
import { action, intArgument, UsageError, workflowUiUrl } from '../client';
import { buildStartInput, DEFAULT_MODEL, resolveStartConfig, type StartFlags } from '../start-options';
import { chat } from './chat';
import {
  abandonStack,
  DEFAULT_SHUTDOWN_GRACE_MS,
  logConnectLine,
  openStack,
  shutdownGraceFromEnv,
  signal,
} from './stack';

export { connectLine, DEFAULT_SHUTDOWN_GRACE_MS, shutdownGraceFromEnv } from './stack';

/** The flags of the chat's conversation (used when it is started, not when it is continued). */
export type UpChatFlags = Pick<StartFlags, 'id' | 'model' | 'system' | 'window' | 'config'>;

export interface UpOptions {
  dataDir: string;
  temporalPort: number;
  uiPort: number;
  pgPort?: number;
  /** False: start the services only (no demo, no chat). */
  demo: boolean;
  chat?: UpChatFlags;
  /** A prebuilt workflow bundle (bundleWorkflowCode output) instead of bundling at start. */
  workflowBundle?: string;
  /** How long the first Ctrl-C may take, in ms (default {@link DEFAULT_SHUTDOWN_GRACE_MS}). */
  shutdownGraceMs?: number;
}

/** The flags of `up --cluster`. */
interface UpClusterFlags {
  cluster?: boolean;
  workers: string;
  shards: string;
  ui: boolean;
}

/**
 * How the grace is shared: in-flight activities get half of it, then are cancelled (Temporal
 * retries them at the next start); the worker is stopped regardless at 70 %; the rest is for the
 * dev server and PostgreSQL. Past the grace, everything is stopped at once.
 */
function shutdownTimes(graceMs: number): { activities: string; force: string } {
  return {
    activities: `${Math.max(100, Math.floor(graceMs * 0.5))}ms`,
    force: `${Math.max(200, Math.floor(graceMs * 0.7))}ms`,
  };
}

/** The file in the data directory that names the conversation the chat continues. */
export const CHAT_CONVERSATION_FILE = 'chat-conversation';

function intOption(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535)
    throw new UsageError(`${name} must be a port number (got ${JSON.stringify(value)})`);
  return n;
}

/** Whether an LLM endpoint is configured for the worker. */
export function hasLlmEndpoint(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OPENAI_API_KEY || env.OPENAI_BASE_URL);
}

/**
 * The conversation the chat runs in: `--id` when given, else the one the last start chatted in
 * while it is still running, else a new one. Returns whether it has to be started.
 * @throws UsageError when `--id` names a conversation that has ended
 */
async function chatConversation(
  conversations: ConversationClient,
  input: AgentConversationInput,
  flags: UpChatFlags,
  markerFile: string,
  log: (line: string) => void,
): Promise<{ id: string; isNew: boolean }> {
  const statusOf = (id: string): Promise<string | null> =>
    conversations.describe(id).then(
      (description) => description.workflowStatus,
      (err: unknown) => {
        if (err instanceof ConversationNotFoundError) return null;
        throw err;
      },
    );
  if (flags.id !== undefined) {
    const status = await statusOf(input.conversationId);
    if (status === 'RUNNING') return { id: input.conversationId, isNew: false };
    if (status !== null) throw new UsageError(`conversation ${input.conversationId} has ended`);
    return { id: input.conversationId, isNew: true };
  }
  const last = existsSync(markerFile) ? readFileSync(markerFile, 'utf8').trim() : '';
  if (last) {
    if ((await statusOf(last)) === 'RUNNING') return { id: last, isNew: false };
    log(`The last chat's conversation ${last} has ended: starting a new one.`);
  }
  return { id: input.conversationId, isNew: true };
}

export async function up(options: UpOptions): Promise<void> {
  validateEnvironment();
  const llm = hasLlmEndpoint();
  const chatting = options.demo && llm;
  // Every flag and the compaction configuration are checked before anything starts.
  const chatInput = chatting ? buildStartInput({ ...options.chat }) : null;
  if (!chatting)
    resolveStartConfig({
      ...(options.chat?.config !== undefined ? { file: options.chat.config } : {}),
      env: process.env,
    });
  const log = (line: string): void => console.log(line);
  const embeddedTemporal = !process.env.TEMPORAL_ADDRESS;
  const stack = await openStack({
    dataDir: options.dataDir,
    temporalDir: 'temporal',
    starting: 'starting',
    ports: embeddedTemporal
      ? [
          { port: options.temporalPort, what: 'Temporal', setting: 'TEMPORAL_PORT' },
          { port: options.uiPort, what: 'Web UI', setting: 'TEMPORAL_UI_PORT' },
        ]
      : [],
    pgPort: options.pgPort,
    log,
  });
  const { dataDir, claim, postgres } = stack;
  const { portHolder } = await import('../../infra/stack-lock');
  const { connectTemporal } = await import('../../infra/temporal');
  const { createWorker, DEFAULT_TASK_QUEUE } = await import('../../worker');
  const { DefaultLogger, Runtime } = await import('@temporalio/worker');
  try {
    // The worker's INFO lines (state changes) would interleave with the chat and the demo.
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // a runtime is already installed: keep its logger
  }
  let temporal;
  try {
    const { payloadCodecsFor } = await import('../../infra/codec');
    temporal = await connectTemporal({
      // The Web UI's codec server reads the bodies sent by reference (and decrypts, with a key).
      payloadCodecs: payloadCodecsFor(postgres.pool),
      dbFilename: join(dataDir, 'temporal', 'temporal.db'),
      port: options.temporalPort,
      uiPort: options.uiPort,
      log,
    });
  } catch (err) {
    await postgres.shutdown();
    claim.release();
    throw err;
  }
  // The dev server is this stack's: a later start stops it if this process is killed.
  const temporalPid = temporal.embedded ? portHolder(options.temporalPort)?.pid : undefined;
  if (temporalPid !== undefined) claim.recordTemporal(temporalPid);
  log(
    `  Temporal     ${temporal.address}${temporal.embedded ? ` (embedded dev server, ${join(dataDir, 'temporal', 'temporal.db')})` : ''}`,
  );
  if (temporal.uiUrl) log(`  Web UI       ${temporal.uiUrl}`);
  if (temporal.codecEndpoint)
    log(`  Codec        ${temporal.codecEndpoint} (the Web UI reads message bodies here)`);
  const graceMs = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
  const shutdown = shutdownTimes(graceMs);
  let worker;
  try {
    worker = await createWorker({
      connection: temporal.nativeConnection,
      pool: postgres.pool,
      taskQueue: DEFAULT_TASK_QUEUE,
      shutdownGraceTime: shutdown.activities,
      shutdownForceTime: shutdown.force,
      ...(options.workflowBundle
        ? { workflowBundle: { code: readFileSync(options.workflowBundle, 'utf8') } }
        : {}),
    });
  } catch (err) {
    await temporal.shutdown().catch(() => undefined);
    await postgres.shutdown().catch(() => undefined);
    claim.release();
    throw err;
  }
  const running = worker.run();
  log(`  Worker       task queue "${DEFAULT_TASK_QUEUE}"`);
  logConnectLine(log, { temporalAddress: temporal.address, uiUrl: temporal.uiUrl, postgres });

  let stopping = false;
  const shutdownAll = async (): Promise<void> => {
    stopping = true;
    worker.shutdown();
    await running.catch(() => undefined);
    await temporal.shutdown().catch(() => undefined);
    await postgres.shutdown().catch(() => undefined);
    claim.release();
  };
  // At once (a second Ctrl-C, or the grace spent): the servers are signalled, not waited for;
  // PostgreSQL's immediate shutdown loses nothing committed. The next start cleans up the rest.
  const stopNow = (why: string): never => {
    log(`\n${why}: stopping Temporal and PostgreSQL at once`);
    if (temporalPid !== undefined) signal(temporalPid, 'SIGKILL');
    abandonStack(stack);
    process.exit(130);
  };
  const stop = async (why: string): Promise<void> => {
    if (stopping) return;
    log(
      `\n${why}: stopping the worker, Temporal and PostgreSQL (at most ${graceMs / 1000} s; Ctrl-C again to stop at once)...`,
    );
    setTimeout(() => stopNow(`not stopped within ${graceMs / 1000} s`), graceMs).unref();
    await shutdownAll();
    log('stopped. Start again with `npm start`; the data is kept.');
    process.exit(0);
  };
  onStopSignal(
    (sig) => void stop(sig),
    (sig) => stopNow(`${sig} again`),
  );

  try {
    if (chatInput) {
      const markerFile = join(dataDir, CHAT_CONVERSATION_FILE);
      const conversations = new ConversationClient({
        client: temporal.client,
        taskQueue: DEFAULT_TASK_QUEUE,
      });
      const { id, isNew } = await chatConversation(
        conversations,
        chatInput,
        options.chat ?? {},
        markerFile,
        log,
      );
      const settings = { namespace: temporal.namespace, uiBase: temporal.uiUrl ?? 'http://localhost:8233' };
      // Waits until the worker has set it up (a bad input fails it at once, and is said so).
      if (isNew) await conversations.start({ ...chatInput, conversationId: id });
      writeFileSync(markerFile, `${id}\n`);
      const endpoint = process.env.OPENAI_BASE_URL || 'https://api.openai.com/v1';
      log(
        isNew
          ? `\nNew conversation ${id}: ${chatInput.model.model} at ${endpoint}`
          : `\nContinuing conversation ${id} (its model and settings are the ones it started with) at ${endpoint}`,
      );
      if (temporal.uiUrl) log(`  watch it: ${workflowUiUrl(settings, id)}`);
      log(
        '  Ctrl-C or the end of the input stops everything; `npm start` again continues this conversation.',
      );
      await chat(conversations, {
        id,
        input: process.stdin,
        output: process.stdout,
        prompt: Boolean(process.stdin.isTTY),
      });
      await stop('chat ended');
      return;
    }
    if (options.demo) {
      log(
        '\nNo OPENAI_API_KEY / OPENAI_BASE_URL: replaying the sample session with the extractive summarizer.',
      );
      const { runDemo } = await import('../demo');
      await runDemo({
        conversations: new ConversationClient({ client: temporal.client, taskQueue: DEFAULT_TASK_QUEUE }),
        uiUrl: temporal.uiUrl,
        log,
        ...(options.chat?.config !== undefined ? { configFile: options.chat.config } : {}),
      });
      log('\nThe worker keeps running: browse the Web UI, or press Ctrl-C to stop.');
    } else {
      log('\nReady. Start a conversation with `npm run cli -- start`, or press Ctrl-C to stop.');
    }
  } catch (err) {
    // Never leave the embedded servers running behind an error.
    if (!stopping) await shutdownAll();
    throw err;
  }
  await running;
}

export function registerUp(program: Command): void {
  program
    .command('up')
    .description(
      'start embedded Temporal (with its Web UI), embedded PostgreSQL and a worker; then chat (with an LLM endpoint) or replay the demo',
    )
    .option(
      '--data-dir <dir>',
      'where PostgreSQL and Temporal keep their data',
      process.env.DC_DATA_DIR ?? '.data',
    )
    .option('--no-demo', 'start the services only: no chat, no demo replay')
    .option('--id <id>', "the chat's conversation (default: the last chat's while it runs, else a new one)")
    .option('--model <name>', `the chat's model (default ${DEFAULT_MODEL})`)
    .option('--system <text>', "the chat's system prompt")
    .option('--window <tokens>', "the chat's context window in tokens (config maxContextTokens)")
    .option('--config <file>', 'compaction config (YAML; default $DC_COMPACTION_CONFIG)')
    .option('--workflow-bundle <file>', 'a prebuilt workflow bundle instead of bundling at start')
    .option(
      '--cluster',
      'instead of the dev server: the Temporal server on PostgreSQL with several history shards, worker processes and the Web UI (services only: no chat, no demo)',
    )
    .option('--workers <n>', 'with --cluster: worker processes', String(DEFAULT_CLUSTER_WORKERS))
    .option(
      '--shards <n>',
      'with --cluster: history shards (fixed once the cluster has data)',
      String(DEFAULT_HISTORY_SHARDS),
    )
    .option('--no-ui', 'with --cluster: no Web UI')
    .addHelpText(
      'after',
      '\nWith OPENAI_API_KEY or OPENAI_BASE_URL set: an interactive chat (see `chat --help`); without: the demo.\n' +
        'With --cluster: builds temporal-server and temporal-sql-tool once with Go (cached), creates and migrates\n' +
        "Temporal's databases on the PostgreSQL, and supervises the server and the workers (restarted when they die).\n" +
        'Exit codes: 0 stopped (Ctrl-C, end of the chat input), 1 failure, 2 bad input (nothing started).',
    )
    .action(
      action(
        async (
          opts: UpChatFlags & UpClusterFlags & { dataDir: string; demo: boolean; workflowBundle?: string },
        ) => {
          const { dataDir, demo, workflowBundle, cluster, workers, shards, ui, ...chat } = opts;
          const pgPort = process.env.DC_PG_PORT
            ? intOption('DC_PG_PORT', process.env.DC_PG_PORT, 5433)
            : undefined;
          if (cluster) {
            const { upCluster } = await import('./up-cluster');
            const { DEFAULT_TASK_QUEUE } = await import('../../worker');
            await upCluster({
              dataDir,
              ui,
              workers: intArgument('--workers', workers, 1, 32),
              shards: intArgument('--shards', shards, 1, 16_384),
              taskQueue: process.env.TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
              ...(workflowBundle ? { workflowBundle } : {}),
              shutdownGraceMs: shutdownGraceFromEnv(process.env.DC_SHUTDOWN_GRACE),
              temporalPort: intOption('TEMPORAL_PORT', process.env.TEMPORAL_PORT, 7233),
              uiPort: intOption('TEMPORAL_UI_PORT', process.env.TEMPORAL_UI_PORT, 8233),
              pgPort,
            });
            return;
          }
          await up({
            dataDir,
            demo,
            chat,
            ...(workflowBundle ? { workflowBundle } : {}),
            shutdownGraceMs: shutdownGraceFromEnv(process.env.DC_SHUTDOWN_GRACE),
            temporalPort: intOption('TEMPORAL_PORT', process.env.TEMPORAL_PORT, 7233),
            uiPort: intOption('TEMPORAL_UI_PORT', process.env.TEMPORAL_UI_PORT, 8233),
            pgPort,
          });
        },
      ),
    );
}
