/**
 * The production Temporal server (`temporal-server`), its schema tool (`temporal-sql-tool`) and the
 * Web UI server, built once with Go into the user cache like the CLI (temporal-cli.ts). One pinned
 * version, here: the server the CLI v1.5.1 embeds as its dev server, and the image tag
 * docker-compose.yml runs (test/unit/infra/compose-drift.test.ts checks that file against these).
 */
import { join } from 'node:path';
import { InfraError } from './errors';
import { findGo, goInstallCached, isExecutableFile, userCacheDir } from './go-install';

/** The Temporal server release `up --cluster` builds and docker-compose.yml runs. */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
export const TEMPORAL_SERVER_MODULE = 'go.temporal.io/server';
/** The Web UI server release the CLI v1.5.1 embeds (its assets are in the module). */
export const TEMPORAL_UI_VERSION = 'v2.42.1';
export const TEMPORAL_UI_MODULE = 'github.com/temporalio/ui-server/v2';

/** The Docker image tag of a Go release: `v1.29.1` → `1.29.1`. */
export function imageTag(version: string): string {
  return version.replace(/^v/, '');
}

export interface ServerBinaries {
  server: string;
  sqlTool: string;
}

/** Where the server and its SQL tool are cached. */
export function temporalServerCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return userCacheDir(`temporal-server-${TEMPORAL_SERVER_VERSION}`, env);
}

/** Where the Web UI server is cached. */
export function temporalUiCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return userCacheDir(`temporal-ui-${TEMPORAL_UI_VERSION}`, env);
}

const NO_GO_HINT =
  `install Go ≥ 1.24 so that it can be built (go install ${TEMPORAL_SERVER_MODULE}/cmd/server@${TEMPORAL_SERVER_VERSION}), ` +
  'or run the cluster with docker-compose.yml, or use `up` (the dev server)';

/**
 * The server and its SQL tool, from the cache or built into it (about 2 minutes with the module
 * cache the CLI's build leaves; longer from nothing).
 * @throws InfraError without Go, or when the build fails
 */
export async function ensureTemporalServer(
  env: NodeJS.ProcessEnv = process.env,
  log?: (line: string) => void,
): Promise<ServerBinaries> {
  const dir = temporalServerCacheDir(env);
  const cached = { server: join(dir, 'temporal-server'), sqlTool: join(dir, 'temporal-sql-tool') };
  if (isExecutableFile(cached.server) && isExecutableFile(cached.sqlTool)) return cached;
  const go = findGo(env);
  if (!go)
    throw new InfraError(
      `the Temporal server ${TEMPORAL_SERVER_VERSION} is not built and there is no Go`,
      NO_GO_HINT,
    );
  const built = await goInstallCached(
    go,
    {
      label: 'Temporal server',
      dir,
      packages: [
        `${TEMPORAL_SERVER_MODULE}/cmd/server@${TEMPORAL_SERVER_VERSION}`,
        `${TEMPORAL_SERVER_MODULE}/cmd/tools/sql@${TEMPORAL_SERVER_VERSION}`,
      ],
      binaries: { server: 'temporal-server', sql: 'temporal-sql-tool' },
      expectedTime: '2–20 minutes',
    },
    env,
    log,
  );
  return { server: built['temporal-server'] as string, sqlTool: built['temporal-sql-tool'] as string };
}

/** A failed UI build is remembered here, so that every start does not try again. */
const UI_FAILED_MARK = '.build-failed';

/**
 * The Web UI server, from the cache or built into it; null (with the reason logged) when it
 * cannot be built here: the cluster runs without a UI then. A failed build is tried once per
 * machine (remove `<cache>/.build-failed` to try again).
 */
export async function ensureTemporalUi(
  env: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = (line) => console.error(line),
): Promise<string | null> {
  const dir = temporalUiCacheDir(env);
  const cached = join(dir, 'temporal-ui-server');
  if (isExecutableFile(cached)) return cached;
  if (isExecutableFile(join(dir, UI_FAILED_MARK))) {
    log(`Web UI: its build failed before (${join(dir, UI_FAILED_MARK)}); running without it`);
    return null;
  }
  const go = findGo(env);
  if (!go) return null;
  try {
    const built = await goInstallCached(
      go,
      {
        label: 'Temporal Web UI',
        dir,
        packages: [`${TEMPORAL_UI_MODULE}/cmd/server@${TEMPORAL_UI_VERSION}`],
        binaries: { server: 'temporal-ui-server' },
        expectedTime: 'about a minute',
      },
      env,
      log,
    );
    return built['temporal-ui-server'] as string;
  } catch (err) {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, UI_FAILED_MARK), `${(err as Error).message}\n`);
    log(`Web UI: cannot be built here (${(err as Error).message.split('\n')[0]}); running without it`);
    return null;
  }
}
