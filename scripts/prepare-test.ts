/**
 * Run by `npm test` before vitest: makes sure the Temporal CLI exists (finding it, or building it
 * once into the user cache with Go — minutes, with progress), so that the build happens outside
 * vitest's hook timeouts. Skipped when TEST_TEMPORAL_ADDRESS points at a running server.
 */
import { describeError, runMain } from '../src/infra/errors';
import { ensureTemporalCli, NO_TEMPORAL_CLI_HINT } from '../src/infra/temporal-cli';

runMain(async () => {
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
