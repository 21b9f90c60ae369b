/**
 * Finds the `temporal` CLI (which embeds the dev server and its Web UI), or builds it once with Go.
 *
 * Order: TEMPORAL_CLI_PATH → `temporal` on PATH → the user cache → `go install` into the cache.
 * v1.5.1 is pinned: later tags carry a `replace` directive that `go install` refuses.
 */
import { join } from 'node:path';
import { InfraError } from './errors';
import { findGo, goInstallCached, isExecutableFile, onPath, userCacheDir } from './go-install';

export { findGo } from './go-install';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';

/** The user-level cache directory for the built CLI (shared by every checkout on the machine). */
export function temporalCliCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return userCacheDir(`temporal-cli-${TEMPORAL_CLI_VERSION}`, env);
}

/** The CLI if it is already on this machine, or null. */
export function findTemporalCli(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.TEMPORAL_CLI_PATH) {
    if (!isExecutableFile(env.TEMPORAL_CLI_PATH)) {
      throw new InfraError(
        `TEMPORAL_CLI_PATH=${env.TEMPORAL_CLI_PATH} is not a file`,
        'point it at a temporal CLI binary, or unset it',
      );
    }
    return env.TEMPORAL_CLI_PATH;
  }
  const cached = join(temporalCliCacheDir(env), 'temporal');
  if (isExecutableFile(cached)) return cached;
  return onPath('temporal', env);
}

/**
 * Builds the CLI into the cache with `go install`, once (see {@link goInstallCached}). Prints
 * progress to stderr.
 */
export async function buildTemporalCli(
  go: string,
  env: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = (line) => console.error(line),
): Promise<string> {
  const built = await goInstallCached(
    go,
    {
      label: 'temporal CLI',
      dir: temporalCliCacheDir(env),
      packages: [`${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`],
      binaries: { temporal: 'temporal' },
      expectedTime: '5–20 minutes',
    },
    env,
    log,
  );
  return built.temporal as string;
}

/** What to do when there is neither a CLI nor Go and the SDK's download failed. */
export const NO_TEMPORAL_CLI_HINT =
  `install the Temporal CLI (https://docs.temporal.io/cli) and put it on PATH or set TEMPORAL_CLI_PATH, ` +
  `or install Go ≥ 1.22 so that it can be built (go install ${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}), ` +
  'or set TEMPORAL_ADDRESS to a running Temporal server';

/** Finds the CLI or builds it; null when neither is possible (the caller may try the SDK download). */
export async function ensureTemporalCli(env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  const found = findTemporalCli(env);
  if (found) return found;
  const go = findGo(env);
  if (!go) return null;
  return buildTemporalCli(go, env);
}
