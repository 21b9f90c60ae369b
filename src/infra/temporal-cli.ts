/**
 * Finds the `temporal` CLI (which embeds the dev server and its Web UI), or builds it once with Go.
 *
 * Order: TEMPORAL_CLI_PATH → `temporal` on PATH → the user cache → `go install` into the cache.
 * v1.5.1 is pinned: later tags carry a `replace` directive that `go install` refuses.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { InfraError } from './errors';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';

/** The user-level cache directory for the built CLI (shared by every checkout on the machine). */
export function temporalCliCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'durable-compaction', `temporal-cli-${TEMPORAL_CLI_VERSION}`);
}

function isExecutableFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
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

/** The `go` binary, if installed (also where the official tarball puts it). */
export function findGo(env: NodeJS.ProcessEnv = process.env): string | null {
  return onPath('go', env) ?? (isExecutableFile('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : null);
}

async function sleepMs(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Builds the CLI into the cache with `go install`, once: a lock file keeps two processes from
 * building at the same time (the second waits for the first). Prints progress to stderr.
 */
export async function buildTemporalCli(
  go: string,
  env: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = (line) => console.error(line),
): Promise<string> {
  const dir = temporalCliCacheDir(env);
  const target = join(dir, 'temporal');
  await mkdir(dir, { recursive: true });
  const lock = join(dir, '.build.lock');
  let fd: number | null = null;
  const deadline = Date.now() + 60 * 60_000;
  while (fd === null) {
    if (isExecutableFile(target)) return target;
    try {
      fd = openSync(lock, 'wx');
      writeSync(fd, String(process.pid));
    } catch {
      // Another process is building; a lock older than 45 minutes is from a build that died.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 45 * 60_000) unlinkSync(lock);
      } catch {
        // the lock went away meanwhile
      }
      if (Date.now() > deadline)
        throw new InfraError(`timed out waiting for another build of the temporal CLI (${lock})`);
      log(`temporal CLI: another process is building it, waiting (${lock})`);
      await sleepMs(10_000);
    }
  }
  try {
    if (isExecutableFile(target)) return target;
    log(
      `temporal CLI: not found; building ${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION} with ${go} into ${dir} ` +
        '(once per machine; 5–20 minutes)',
    );
    const started = Date.now();
    await new Promise<void>((resolve, reject) => {
      const child = spawn(go, ['install', `${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`], {
        env: {
          ...env,
          GOBIN: dir,
          GOFLAGS: env.GOFLAGS ?? '-mod=mod',
          GOTOOLCHAIN: env.GOTOOLCHAIN ?? 'local',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let lastLines: string[] = [];
      const onData = (chunk: Buffer): void => {
        const lines = chunk.toString().split('\n').filter(Boolean);
        lastLines = [...lastLines, ...lines].slice(-20);
        for (const line of lines) if (line.startsWith('go: downloading')) log(`temporal CLI: ${line}`);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      const ticker = setInterval(
        () => log(`temporal CLI: still building (${Math.round((Date.now() - started) / 1000)} s)`),
        30_000,
      );
      child.on('error', (err) => {
        clearInterval(ticker);
        reject(err);
      });
      child.on('exit', (code) => {
        clearInterval(ticker);
        if (code === 0) resolve();
        else
          reject(
            new InfraError(`go install of the temporal CLI failed (exit ${code}):\n${lastLines.join('\n')}`),
          );
      });
    });
    if (!isExecutableFile(target)) throw new InfraError(`go install finished but ${target} is missing`);
    log(`temporal CLI: built ${target} in ${Math.round((Date.now() - started) / 1000)} s`);
    return target;
  } finally {
    closeSync(fd);
    try {
      unlinkSync(lock);
    } catch {
      // already gone
    }
  }
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
