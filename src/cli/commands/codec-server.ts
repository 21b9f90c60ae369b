/**
 * `durable-compaction codec-server`: the codec endpoint of the Temporal Web UI when payloads are
 * encrypted (DC_PAYLOAD_KEY). Point the UI at it (`temporal server start-dev --ui-codec-endpoint`,
 * or DC_CODEC_ENDPOINT for the embedded server; on a cluster, the UI's codec setting).
 */
import type { Command } from 'commander';
import { InfraError } from '../../infra/errors';

export function registerCodecServer(program: Command): void {
  program
    .command('codec-server')
    .description('serve /encode and /decode for the Web UI with the DC_PAYLOAD_KEY codec')
    .option('--port <n>', 'port to listen on', '8081')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--origin <url...>', 'Web UI origins allowed to call it (default: any)')
    .action(async (opts: { port: string; host: string; origin?: string[] }) => {
      const { payloadCodecsFromEnv, startCodecServer } = await import('../../infra/codec');
      const [codec] = payloadCodecsFromEnv();
      if (!codec) {
        throw new InfraError(
          'DC_PAYLOAD_KEY is not set',
          'the codec server needs the key the workers encrypt with',
        );
      }
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new InfraError(`--port ${opts.port} is not a port number`);
      }
      const { url, server } = await startCodecServer({
        codec,
        port,
        host: opts.host,
        ...(opts.origin ? { origins: opts.origin } : {}),
      });
      console.log(`codec server on ${url} (POST /encode, /decode)`);
      const stop = () => server.close(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
