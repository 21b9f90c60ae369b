/**
 * The CLI as a user runs it: `node --import tsx src/cli/main.ts …` in a process of its own (node
 * itself, so signals reach it, not a wrapper), with this process's environment minus the project's
 * variables plus what the caller gives. No vitest here: `bench/` uses it too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { inspect } from 'node:util';

export const ROOT = join(__dirname, '..', '..');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** This process's environment without the project's variables, plus `extra`. */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (/^(DC_|OPENAI_|TEMPORAL_|DATABASE_URL$|TASK_QUEUE$|DEBUG$)/.test(key)) delete env[key];
  }
  return { ...env, ...extra };
}

/** Starts a CLI command; `output` fills as it prints (and gets the exit code at the end). */
export function spawnCli(
  args: string[],
  env: Record<string, string>,
  stdin?: string | Buffer,
): { child: ChildProcess; output: Run } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: ROOT,
    env: userEnv(env),
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (stdin !== undefined) child.stdin?.end(stdin);
  const output: Run = { code: null, stdout: '', stderr: '' };
  child.stdout?.on('data', (d: Buffer) => (output.stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output.stderr += d.toString()));
  child.on('close', (code) => (output.code = code));
  return { child, output };
}

/** Runs a CLI command to its end (killed, and an error, after `timeoutMs`). */
export function runCli(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 90_000,
  stdin?: string | Buffer,
): Promise<Run> {
  const { child, output } = spawnCli(args, env, stdin);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} did not finish in ${timeoutMs} ms: ${inspect(output)}`));
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ ...output, code });
    });
  });
}

/** A `durable-compaction worker` process on `taskQueue` (the environment gives it Temporal, PostgreSQL, the LLM). */
export function spawnWorker(
  taskQueue: string,
  env: Record<string, string>,
  options: { workflowBundle?: string; grace?: string } = {},
): { child: ChildProcess; output: Run } {
  return spawnCli(
    [
      'worker',
      '--task-queue',
      taskQueue,
      ...(options.grace ? ['--grace', options.grace] : []),
      ...(options.workflowBundle ? ['--workflow-bundle', options.workflowBundle] : []),
    ],
    env,
  );
}

/** Waits until the worker says it polls (throws with its output when it exits or takes too long). */
export async function workerStarted(
  worker: { child: ChildProcess; output: Run },
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!worker.output.stdout.includes('worker: task queue')) {
    if (worker.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`the worker did not start: ${worker.output.stdout}${worker.output.stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
