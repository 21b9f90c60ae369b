/**
 * `durable-compaction codec-server`: the codec endpoint of the Temporal Web UI and of clients
 * without database access. It reads and writes the message bodies sent by reference (DATABASE_URL,
 * the workers' store) and decrypts and encrypts with DC_PAYLOAD_KEY when set. Point the UI at it
 * (`temporal server start-dev --ui-codec-endpoint`, or DC_CODEC_ENDPOINT for the embedded server;
 * on a cluster, the UI's codec setting), and clients with DC_CODEC_ENDPOINT.
 */
import type { Command } from 'commander';
import { InfraError } from '../../infra/errors';

/**
 * The Web UI origins a codec server answers by default: TEMPORAL_UI_URL's, else the embedded dev
 * server's UI (`http://localhost:8233`, also as 127.0.0.1). A browser page from any other origin is
 * refused; clients that send no Origin (curl, the `temporal` CLI) are served.
 */
export function defaultCodecOrigins(env: NodeJS.ProcessEnv = process.env): string[] {
  const ui = new URL(env.TEMPORAL_UI_URL || 'http://localhost:8233');
  const origins = [ui.origin];
  if (ui.hostname === 'localhost') origins.push(`${ui.protocol}//127.0.0.1${ui.port ? `:${ui.port}` : ''}`);
  return origins;
}

export function registerCodecServer(program: Command): void {
  program
    .command('codec-server')
    .description(
      'serve /encode and /decode for the Web UI and store-less clients (bodies in DATABASE_URL, DC_PAYLOAD_KEY)',
    )
    .option('--port <n>', 'port to listen on (0: a free one)', '8081')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option(
      '--origin <url...>',
      "Web UI origins allowed to call it ('*': any; default: TEMPORAL_UI_URL's, else http://localhost:8233)",
    )
    .action(async (opts: { port: string; host: string; origin?: string[] }) => {
      const { chainCodecs, payloadCodecsFor, startCodecServer } = await import('../../infra/codec');
      const databaseUrl = process.env.DATABASE_URL;
      if (!databaseUrl && !process.env.DC_PAYLOAD_KEY) {
        throw new InfraError(
          'neither DATABASE_URL nor DC_PAYLOAD_KEY is set',
          "the codec server reads message bodies from the workers' PostgreSQL (DATABASE_URL) and decrypts with their key (DC_PAYLOAD_KEY)",
        );
      }
      const { lazyPool } = await import('../../infra/postgres');
      const pool = databaseUrl ? lazyPool(databaseUrl) : null;
      const codec = chainCodecs(payloadCodecsFor(pool));
      const port = Number(opts.port);
      if (!/^\d+$/.test(opts.port) || port > 65535) {
        throw new InfraError(`--port ${opts.port} is not a port number`);
      }
      const origins = opts.origin ?? defaultCodecOrigins();
      const { url, server } = await startCodecServer({
        codec,
        port,
        host: opts.host,
        ...(origins.includes('*') ? {} : { origins }),
      });
      console.log(
        `codec server on ${url} (POST /encode, /decode) for ${origins.includes('*') ? 'any origin' : origins.join(', ')}`,
      );
      const stop = () =>
        server.close(() => void (pool?.end() ?? Promise.resolve()).then(() => process.exit(0)));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
