/**
 * Go programs built once per machine into the user cache with `go install` (the Temporal CLI, the
 * Temporal server and its SQL tool, the Web UI server): a lock file keeps two processes from
 * building at the same time, the second waits for the first.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, renameSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { InfraError } from './errors';

/** The user-level cache directory `name` (shared by every checkout on the machine). */
export function userCacheDir(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'durable-compaction', name);
}

export function isExecutableFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** `name` on PATH, or null. */
export function onPath(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/** The `go` binary, if installed (also where the official tarball puts it). */
export function findGo(env: NodeJS.ProcessEnv = process.env): string | null {
  return onPath('go', env) ?? (isExecutableFile('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : null);
}

async function sleepMs(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

export interface GoInstallSpec {
  /** What is built, for the progress lines ("temporal CLI"). */
  label: string;
  /** The cache directory the binaries end up in. */
  dir: string;
  /** `module/path@version` arguments of `go install` (one version for all of them). */
  packages: string[];
  /**
   * The binaries: the name `go install` gives each (the package's last path element) → the name
   * it is kept under in `dir` (two packages named `server` cannot share a directory otherwise).
   */
  binaries: Record<string, string>;
  /** Said in the first progress line ("5–20 minutes"). */
  expectedTime: string;
}

/**
 * Builds `spec.packages` into `spec.dir` once and returns the path of each binary by its kept
 * name. Does nothing when every binary is there already.
 * @throws InfraError when `go install` fails (with its last lines) or another build never ends
 */
export async function goInstallCached(
  go: string,
  spec: GoInstallSpec,
  env: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = (line) => console.error(line),
): Promise<Record<string, string>> {
  const { dir, label } = spec;
  const targets = Object.fromEntries(Object.values(spec.binaries).map((name) => [name, join(dir, name)]));
  const allThere = (): boolean => Object.values(targets).every(isExecutableFile);
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, '.build.lock');
  const scratch = join(dir, `.build-${process.pid}`);
  let fd: number | null = null;
  const deadline = Date.now() + 60 * 60_000;
  while (fd === null) {
    if (allThere()) return targets;
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
        throw new InfraError(`timed out waiting for another build of the ${label} (${lock})`);
      log(`${label}: another process is building it, waiting (${lock})`);
      await sleepMs(10_000);
    }
  }
  try {
    if (allThere()) return targets;
    // go install writes each binary under its package's name: into a scratch directory first,
    // renamed into place only when the whole build succeeded.
    mkdirSync(scratch, { recursive: true });
    log(
      `${label}: not found; building ${spec.packages.join(' ')} with ${go} into ${dir} (once per machine; ${spec.expectedTime})`,
    );
    const started = Date.now();
    await new Promise<void>((resolve, reject) => {
      const child = spawn(go, ['install', ...spec.packages], {
        env: {
          ...env,
          GOBIN: scratch,
          GOFLAGS: env.GOFLAGS ?? '-mod=mod',
          GOTOOLCHAIN: env.GOTOOLCHAIN ?? 'local',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let lastLines: string[] = [];
      const onData = (chunk: Buffer): void => {
        const lines = chunk.toString().split('\n').filter(Boolean);
        lastLines = [...lastLines, ...lines].slice(-20);
        for (const line of lines) if (line.startsWith('go: downloading')) log(`${label}: ${line}`);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      const ticker = setInterval(
        () => log(`${label}: still building (${Math.round((Date.now() - started) / 1000)} s)`),
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
            new InfraError(`go install of the ${label} failed (exit ${code}):\n${lastLines.join('\n')}`),
          );
      });
    });
    for (const [built, kept] of Object.entries(spec.binaries)) {
      const from = join(scratch, built);
      if (!isExecutableFile(from)) throw new InfraError(`go install finished but ${from} is missing`);
      renameSync(from, join(dir, kept));
    }
    log(
      `${label}: built ${Object.values(targets).join(', ')} in ${Math.round((Date.now() - started) / 1000)} s`,
    );
    return targets;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    closeSync(fd);
    try {
      unlinkSync(lock);
    } catch {
      // already gone
    }
  }
}
