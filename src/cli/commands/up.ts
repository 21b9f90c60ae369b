/**
 * `durable-compaction up` (what `npm start` runs): the embedded Temporal dev server with its Web
 * UI, embedded PostgreSQL with persistent data, and a worker. Then, without an LLM endpoint, a
 * replay of the project's sample session through the workflow with a small window and the
 * extractive summarizer, so that a newcomer sees compactions happen; with one, it waits for
 * conversations started from the CLI. Ctrl-C stops everything cleanly; the next start reuses the data.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { validateEnvironment } from '../../infra/environment';
import { InfraError } from '../../infra/errors';

export interface UpOptions {
  dataDir: string;
  temporalPort: number;
  uiPort: number;
  pgPort?: number;
  demo: boolean;
}

function intOption(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535)
    throw new Error(`${name} must be a port number (got ${JSON.stringify(value)})`);
  return n;
}

export async function up(options: UpOptions): Promise<void> {
  validateEnvironment();
  const dataDir = resolve(options.dataDir);
  try {
    mkdirSync(join(dataDir, 'temporal'), { recursive: true });
  } catch (err) {
    throw new InfraError(
      `cannot write the data directory ${dataDir} (${(err as Error).message})`,
      'choose a writable directory with DC_DATA_DIR or --data-dir',
    );
  }
  const log = (line: string): void => console.log(line);
  log(`durable-compaction: starting (data in ${dataDir})`);
  const { connectPostgres } = await import('../../infra/postgres');
  const { connectTemporal } = await import('../../infra/temporal');
  const { createWorker, DEFAULT_TASK_QUEUE } = await import('../../worker');
  const postgres = await connectPostgres({
    dataDir: process.env.DATABASE_URL ? undefined : join(dataDir, 'postgres'),
    port: options.pgPort,
  });
  log(
    `  PostgreSQL   ${postgres.displayUrl}${postgres.embedded ? ` (embedded, data ${postgres.dataDir})` : ''}`,
  );
  let temporal;
  try {
    temporal = await connectTemporal({
      dbFilename: join(dataDir, 'temporal', 'temporal.db'),
      port: options.temporalPort,
      uiPort: options.uiPort,
      log,
    });
  } catch (err) {
    await postgres.shutdown();
    throw err;
  }
  log(
    `  Temporal     ${temporal.address}${temporal.embedded ? ` (embedded dev server, ${join(dataDir, 'temporal', 'temporal.db')})` : ''}`,
  );
  if (temporal.uiUrl) log(`  Web UI       ${temporal.uiUrl}`);
  const worker = await createWorker({
    connection: temporal.nativeConnection,
    pool: postgres.pool,
    taskQueue: DEFAULT_TASK_QUEUE,
  });
  const running = worker.run();
  log(`  Worker       task queue "${DEFAULT_TASK_QUEUE}"`);

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log(`\n${signal}: stopping the worker, Temporal and PostgreSQL...`);
    worker.shutdown();
    await running.catch(() => undefined);
    await temporal.shutdown().catch(() => undefined);
    await postgres.shutdown().catch(() => undefined);
    log('stopped. Start again with `npm start`; the data is kept.');
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));

  const hasLlm = Boolean(process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL);
  if (options.demo && !hasLlm) {
    log(
      '\nNo OPENAI_API_KEY / OPENAI_BASE_URL: replaying the sample session with the extractive summarizer.',
    );
    const { runDemo } = await import('../demo');
    await runDemo({ client: temporal.client, taskQueue: DEFAULT_TASK_QUEUE, uiUrl: temporal.uiUrl, log });
    log('\nThe worker keeps running: browse the Web UI, or press Ctrl-C to stop.');
  } else {
    log('\nReady. Start a conversation with `npm run cli -- start`, or press Ctrl-C to stop.');
  }
  await running;
}

export function registerUp(program: Command): void {
  program
    .command('up')
    .description(
      'start embedded Temporal (with its Web UI), embedded PostgreSQL and a worker; replay the demo without an LLM',
    )
    .option(
      '--data-dir <dir>',
      'where PostgreSQL and Temporal keep their data',
      process.env.DC_DATA_DIR ?? '.data',
    )
    .option('--no-demo', 'do not replay the sample session')
    .action(async (opts: { dataDir: string; demo: boolean }) => {
      await up({
        dataDir: opts.dataDir,
        demo: opts.demo,
        temporalPort: intOption('TEMPORAL_PORT', process.env.TEMPORAL_PORT, 7233),
        uiPort: intOption('TEMPORAL_UI_PORT', process.env.TEMPORAL_UI_PORT, 8233),
        pgPort: process.env.DC_PG_PORT ? intOption('DC_PG_PORT', process.env.DC_PG_PORT, 5433) : undefined,
      });
    });
}
