/**
 * One child process kept running as compose's `restart: unless-stopped` keeps a container: started,
 * restarted after it dies (Docker's policy: after 100 ms, doubling while it keeps dying within 10 s
 * of its start, here at most 30 s), and stopped on request with SIGTERM and, past the grace,
 * SIGKILL. Its output goes to a log file, appended across restarts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';

export interface SupervisedOptions {
  /** For messages: "worker 2", "Temporal server". */
  name: string;
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Where its stdout and stderr go (appended). */
  logFile: string;
  /** Called with the pid at each start (the first and every restart). */
  onStart?: (pid: number) => void;
  /** Supervisor events: exits and restarts. */
  log: (line: string) => void;
}

/** A run shorter than this counts as a crash loop: the next restart waits twice as long. */
const STABLE_MS = 10_000;
const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 30_000;

export class Supervised {
  private child: ChildProcess | null = null;
  private stopping = false;
  private delayMs = FIRST_DELAY_MS;
  private restartTimer: NodeJS.Timeout | null = null;
  private readonly out: WriteStream;
  private output = '';
  /** How many times it was restarted after dying. */
  restarts = 0;

  constructor(private readonly options: SupervisedOptions) {
    this.out = createWriteStream(options.logFile, { flags: 'a' });
  }

  get name(): string {
    return this.options.name;
  }

  get logFile(): string {
    return this.options.logFile;
  }

  /** The running process's pid, or null between a death and its restart. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** Starts the process (once; later starts are the supervisor's). */
  start(): number {
    const { command, args, env, cwd } = this.options;
    const startedAt = Date.now();
    const child = spawn(command, [...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.output = '';
    const collect = (chunk: Buffer): void => {
      this.out.write(chunk);
      // The last few KB, for waitForOutput and for a message when it dies at once.
      this.output = (this.output + chunk.toString()).slice(-8_192);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.on('error', (err) => this.options.log(`${this.name}: cannot start ${command} (${err.message})`));
    child.on('exit', (code, signal) => {
      if (this.child === child) this.child = null;
      if (this.stopping) return;
      const ran = Date.now() - startedAt;
      if (ran >= STABLE_MS) this.delayMs = FIRST_DELAY_MS;
      const delay = this.delayMs;
      this.delayMs = Math.min(MAX_DELAY_MS, this.delayMs * 2);
      this.options.log(
        `${this.name} (pid ${child.pid}) exited (${signal ?? `code ${code}`}); restarting in ${(delay / 1000).toFixed(1)} s` +
          ` (log: ${this.options.logFile})`,
      );
      this.restartTimer = setTimeout(() => {
        this.restartTimer = null;
        if (this.stopping) return;
        this.restarts++;
        this.start();
      }, delay);
    });
    if (child.pid !== undefined) this.options.onStart?.(child.pid);
    return child.pid ?? 0;
  }

  /**
   * Resolves when its output (since its last start) matches `pattern`.
   * @throws when it exits first or `timeoutMs` passes, with its last output
   */
  async waitForOutput(pattern: RegExp, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const first = this.child;
    while (!pattern.test(this.output)) {
      if (this.child !== first || first === null || first.exitCode !== null || Date.now() > deadline) {
        throw new Error(
          `${this.name} did not get ready${Date.now() > deadline ? ` within ${timeoutMs / 1000} s` : ''}: ${this.output.slice(-2_000)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Stops it for good: SIGTERM, then SIGKILL after `graceMs`. Resolves when it is gone. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await gone;
      clearTimeout(timer);
    }
    await new Promise<void>((resolve) => this.out.end(resolve));
  }

  /** Kills it at once without waiting (a second Ctrl-C). */
  killNow(): void {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.child?.kill('SIGKILL');
  }
}
