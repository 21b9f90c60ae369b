/**
 * One stack per data directory and per port, and a bounded stop (issue 22), with real processes:
 * `npm start` (`up`) started as a user would, a second one on the same data directory or the same
 * Temporal port, the first killed with SIGKILL (its PostgreSQL and dev server left running), and
 * Ctrl-C during a model call that never ends, once and twice.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../../src/infra/postgres';
import { postmasterPid, processInfo } from '../../../src/infra/stack-lock';
import { runCli } from '../../support/cli-process';
import { waitFor } from '../../support/conversation-env';
import { startFakeOpenAI, step, type FakeOpenAI } from '../../support/fake-openai';
import { spawnUp, type RunningUp } from '../../support/up-process';

const API_KEY = 'sk-stack-lifecycle';
const root = mkdtempSync(join(tmpdir(), 'dc-stack-'));
const children: ChildProcessWithoutNullStreams[] = [];
let llm: FakeOpenAI;

beforeAll(async () => {
  llm = await startFakeOpenAI({ apiKey: API_KEY });
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  // Whatever a failed test left behind.
  for (const dir of ['a', 'c']) {
    const pg = postmasterPid(join(root, dir, 'postgres'));
    if (pg !== null && processInfo(pg)) process.kill(pg, 'SIGQUIT');
    const lock = lockOf(join(root, dir));
    if (lock?.temporalPid && processInfo(lock.temporalPid)) process.kill(lock.temporalPid, 'SIGKILL');
  }
  await llm?.close();
  rmSync(root, { recursive: true, force: true });
});

function lockOf(dataDir: string): { pid: number; temporalPid?: number } | null {
  try {
    return JSON.parse(readFileSync(join(dataDir, 'up.pid'), 'utf8')) as { pid: number; temporalPid?: number };
  } catch {
    return null;
  }
}

interface Ports {
  TEMPORAL_PORT: string;
  TEMPORAL_UI_PORT: string;
}

async function ports(): Promise<Ports> {
  return { TEMPORAL_PORT: String(await freePort()), TEMPORAL_UI_PORT: String(await freePort()) };
}

function start(dataDir: string, env: Record<string, string>, chat = false): RunningUp {
  const running = spawnUp(
    [
      '--data-dir',
      dataDir,
      '--workflow-bundle',
      inject('workflowBundlePath'),
      ...(chat ? ['--model', 'fake-model'] : ['--no-demo']),
    ],
    env,
  );
  children.push(running.child);
  return running;
}

/** Waits until the process is gone (a server stopping takes a moment after its signal). */
async function gone(pid: number, what: string): Promise<void> {
  await waitFor(
    async () => processInfo(pid),
    (info) => info === null,
    10_000,
    `${what} (pid ${pid}) to be gone`,
  );
}

describe('one stack per data directory and per port', () => {
  const dirA = join(root, 'a');
  let first: RunningUp;
  let firstPorts: Ports;

  it('a second start on the same data directory, or the same Temporal port, is refused naming the holder', async () => {
    firstPorts = await ports();
    first = start(dirA, { ...firstPorts });
    await first.waitFor(/^Ready\./m, 150_000);
    const lock = lockOf(dirA);
    expect(lock?.pid).toBe(first.child.pid);
    expect(lock?.temporalPid).toBeGreaterThan(0);

    const sameDir = await runCli(['up', '--no-demo', '--data-dir', dirA], { ...(await ports()) });
    expect(sameDir.code).toBe(1);
    expect(sameDir.stderr).toContain(
      `error: the data directory ${dirA} is in use by pid ${first.child.pid} (`,
    );
    expect(sameDir.stderr).toMatch(/stop that one first \(Ctrl-C in its terminal, or kill \d+\)/);

    const dirB = join(root, 'b');
    const samePort = await runCli(['up', '--no-demo', '--data-dir', dirB], {
      TEMPORAL_PORT: firstPorts.TEMPORAL_PORT,
      TEMPORAL_UI_PORT: String(await freePort()),
    });
    expect(samePort.code).toBe(1);
    expect(samePort.stderr).toContain(
      `port ${firstPorts.TEMPORAL_PORT} (Temporal) is in use by pid ${lock?.temporalPid} (`,
    );
    expect(samePort.stderr).toContain('choose another with TEMPORAL_PORT');
    // Nothing was started for it: no PostgreSQL data, no worker on the first stack's server.
    expect(existsSync(join(dirB, 'postgres'))).toBe(false);
    expect(samePort.stdout).not.toMatch(/Worker|Ready/);
  }, 200_000);

  it('after SIGKILL, the servers left running are recognised and stopped by the next start', async () => {
    const lock = lockOf(dirA);
    const pg = postmasterPid(join(dirA, 'postgres'));
    expect(pg).not.toBeNull();
    first.child.kill('SIGKILL');
    await first.exited;
    // The killed stack's servers are still there, now children of init: what a user finds.
    expect(processInfo(pg as number)).not.toBeNull();
    expect(processInfo(lock?.temporalPid as number)).not.toBeNull();

    const again = start(dirA, { ...firstPorts });
    await again.waitFor(/^Ready\./m, 150_000);
    expect(again.output()).toContain(`stopping the PostgreSQL a stopped stack left running (pid ${pg} (`);
    expect(again.output()).toContain(
      `stopping the Temporal dev server a stopped stack left running (pid ${lock?.temporalPid} (`,
    );
    expect(processInfo(pg as number)).toBeNull();
    expect(processInfo(lock?.temporalPid as number)).toBeNull();
    again.child.kill('SIGINT');
    expect(await again.exited).toBe(0);
    expect(existsSync(join(dirA, 'up.pid'))).toBe(false);
  }, 200_000);
});

describe('stopping is bounded', () => {
  const dirC = join(root, 'c');

  /** `up` chatting, with a model call in flight that never ends. Returns its servers' pids. */
  async function stuckInModelCall(): Promise<{ up: RunningUp; pg: number; temporal: number }> {
    llm.reset();
    llm.setDefault(step.text('too late', { delayMs: 600_000 }));
    const up = start(
      dirC,
      { ...(await ports()), OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: API_KEY, DC_SHUTDOWN_GRACE: '3' },
      true,
    );
    await up.waitFor(/^chat with \S+ · \/help for commands$/m, 150_000);
    up.child.stdin.write('a question the model takes ten minutes to answer\n');
    await waitFor(
      async () => llm.chatRequests().length,
      (n) => n > 0,
      30_000,
      'the model call to start',
    );
    const pg = postmasterPid(join(dirC, 'postgres'));
    const temporal = lockOf(dirC)?.temporalPid;
    expect(pg).not.toBeNull();
    expect(temporal).toBeGreaterThan(0);
    return { up, pg: pg as number, temporal: temporal as number };
  }

  it('Ctrl-C during a model call that never ends stops within the grace (DC_SHUTDOWN_GRACE=3)', async () => {
    const { up, pg, temporal } = await stuckInModelCall();
    const started = performance.now();
    up.child.kill('SIGINT');
    await up.exited;
    const took = performance.now() - started;
    expect(took).toBeLessThan(3_000 + 1_500);
    expect(up.output()).toContain('SIGINT: stopping the worker, Temporal and PostgreSQL (at most 3 s');
    await gone(pg, 'PostgreSQL');
    await gone(temporal, 'the dev server');
  }, 200_000);

  it('a second Ctrl-C stops at once, and still stops PostgreSQL and the dev server', async () => {
    const { up, pg, temporal } = await stuckInModelCall();
    up.child.kill('SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = performance.now();
    up.child.kill('SIGINT');
    expect(await up.exited).toBe(130);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(up.output()).toContain('SIGINT again: stopping Temporal and PostgreSQL at once');
    await gone(pg, 'PostgreSQL');
    await gone(temporal, 'the dev server');
    // And the next start finds a clean directory: it starts, with nothing to clean up.
    const next = start(dirC, { ...(await ports()) });
    await next.waitFor(/^Ready\./m, 150_000);
    expect(next.output()).not.toContain('left running');
    next.child.kill('SIGINT');
    expect(await next.exited).toBe(0);
  }, 300_000);
});
