/**
 * Run by `npm test` before vitest: makes sure what the tests need is on the machine.
 * - The Temporal CLI (found, or built once into the user cache with Go — minutes, with progress),
 *   outside vitest's hook timeouts. Skipped when TEST_TEMPORAL_ADDRESS points at a running server.
 * - Chromium for the Web UI test (Debian's `chromium`, installed with apt-get when missing and
 *   running as root; CHROMIUM_PATH points at another one).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describeError, runMain } from '../src/infra/errors';
import { ensureTemporalCli, NO_TEMPORAL_CLI_HINT } from '../src/infra/temporal-cli';

function ensureChromium(): void {
  const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (existsSync(path)) return;
  if (process.env.CHROMIUM_PATH) throw new Error(`CHROMIUM_PATH=${path} does not exist`);
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) {
    throw new Error(
      'the Web UI test needs Chromium: install Debian\'s "chromium" package, or set CHROMIUM_PATH',
    );
  }
  console.error('prepare-test: installing Chromium (apt-get install chromium) for the Web UI test');
  const run = (args: string[]): void => {
    const result = spawnSync('apt-get', args, {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (result.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (exit ${result.status})`);
  };
  run(['update']);
  run(['install', '-y', '--no-install-recommends', 'chromium']);
  if (!existsSync(path)) throw new Error(`apt-get installed chromium but ${path} is missing`);
}

runMain(async () => {
  ensureChromium();
  if (process.env.TEST_TEMPORAL_ADDRESS) return;
  const started = Date.now();
  try {
    const path = await ensureTemporalCli();
    if (!path) {
      console.error(
        `prepare-test: no temporal CLI and no Go; the SDK download will be tried (${NO_TEMPORAL_CLI_HINT})`,
      );
      return;
    }
    console.error(`prepare-test: temporal CLI ${path} (${Date.now() - started} ms)`);
  } catch (err) {
    throw new Error(`could not prepare the temporal CLI: ${describeError(err)}`);
  }
});
