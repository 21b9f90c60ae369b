/**
 * `npm start` (`durable-compaction up`) in a process of its own, as a user runs it: node itself,
 * so that signals reach it, not a wrapper; stdin, stdout and stderr piped.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { waitFor } from './conversation-env';
import { ROOT, userEnv } from './cli-process';

export interface RunningUp {
  child: ChildProcessWithoutNullStreams;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Waits until the output matches; returns the match. Fails at once if it exits first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Its exit code (null: killed by a signal). */
  exited: Promise<number | null>;
}

/** Starts `up` with `args` in a user's environment plus `env`. */
export function spawnUp(args: string[], env: Record<string, string>): RunningUp {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'up', ...args], {
    cwd: ROOT,
    env: userEnv(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    waitFor: async (pattern, timeoutMs = 30_000) => {
      const text = await waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`up exited (${child.exitCode}):\n${output}`);
          return output;
        },
        (o) => pattern.test(o),
        timeoutMs,
        `${pattern} in the output of up:\n${output}`,
      );
      return text.match(pattern) as RegExpMatchArray;
    },
    exited,
  };
}
