/**
 * `npm start` (`durable-compaction up`) as a user runs it: a real process starting the embedded
 * Temporal dev server, the embedded PostgreSQL and a worker, with OPENAI_BASE_URL pointing at the
 * fake OpenAI server. It opens an interactive chat on stdin/stdout (replies, the token usage line,
 * a manual compaction with its progress line), prints the line that lets `status` and `inspect`
 * reach it from another shell, stops cleanly at the end of its input and on SIGINT, and a second
 * start on the same data continues the same conversation.
 */
import { randomUUID } from 'node:crypto';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { freePort } from '../../../src/infra/postgres';
import { isSummaryRequest, startFakeOpenAI, step, type FakeOpenAI } from '../../support/fake-openai';
import { words } from '../../support/conversation-env';
import { spawnUp, type RunningUp } from '../../support/up-process';
import { runCli, type Run } from '../../support/cli-process';

const dataDir = mkdtempSync(join(tmpdir(), 'dc-up-'));
let llm: FakeOpenAI;
const children: ChildProcessWithoutNullStreams[] = [];

/** The environment of a user's shell: no settings of the test run, the fake as the endpoint. */
/** The key `up` is given: it must reach the LLM and nothing the user sees (issue 8). */
const UP_API_KEY = `sk-up-${randomUUID().replace(/-/g, '')}`;

/**
 * `up` in a process of its own, chatting with the fake (node itself, so that SIGINT reaches it),
 * once it is ready. Its ports are free when chosen; another test's server can take one before the
 * dev server binds it (the run's files start servers in parallel): that start is tried again on
 * other ports, at most twice.
 */
async function startUp(): Promise<RunningUp> {
  for (let attempt = 1; ; attempt++) {
    const running = await spawnOnFreePorts();
    children.push(running.child);
    try {
      await running.waitFor(/^chat with (\S+) · \/help for commands$/m, 150_000);
      return running;
    } catch (err) {
      if (attempt >= 3 || !/address already in use/.test(running.output())) throw err;
      await running.exited;
    }
  }
}

async function spawnOnFreePorts(): Promise<RunningUp> {
  return spawnUp(
    [
      '--data-dir',
      dataDir,
      '--workflow-bundle',
      inject('workflowBundlePath'),
      '--model',
      'fake-model',
      '--window',
      '8000',
    ],
    {
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: UP_API_KEY,
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
    },
  );
}

/** Another shell's CLI command, with the variables `up` printed. */
function cli(args: string[], env: Record<string, string>): Promise<Run> {
  return runCli(args, env);
}

/** The variables of `export A=1 B=2`. */
function exported(line: string): Record<string, string> {
  return Object.fromEntries(
    line
      .replace(/^export /, '')
      .split(' ')
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

beforeAll(async () => {
  llm = await startFakeOpenAI({ apiKey: UP_API_KEY });
  // Slow enough for the progress poll (500 ms) to see the compaction phase.
  llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('what was said so far', { delayMs: 1500 }));
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await llm?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start with an LLM endpoint', () => {
  it('chats on stdin/stdout, is reachable from other shells, stops cleanly, and continues on the same data', async () => {
    // ---- first start: three messages and a compaction, then the end of the input ----
    const first = await startUp();
    const [, id] = await first.waitFor(/^chat with (\S+) · \/help for commands$/m, 150_000);
    expect(first.output()).toMatch(new RegExp(`^New conversation ${id}: fake-model at ${llm.url}$`, 'm'));
    const [connect] = await first.waitFor(/^ {2}export TEMPORAL_ADDRESS=\S+ DATABASE_URL=postgres:\S+.*$/m);
    const vars = exported(connect.trim());
    // The embedded PostgreSQL's real port, password included: the URL works as printed.
    expect(vars.DATABASE_URL).toMatch(
      /^postgres:\/\/postgres:durable-compaction@127\.0\.0\.1:\d+\/durable_compaction$/,
    );

    llm.script(
      step.text('first answer'),
      step.text('second answer'),
      step.text('third answer'),
      step.text('fourth answer'),
    );
    first.child.stdin.write('hello there\n');
    await first.waitFor(/^first answer\ntokens: [\d,]+ \/ 8,000 · \d+%$/m);
    // A long second round for the compaction to summarize (the first message is the task, kept;
    // so are the last two rounds).
    first.child.stdin.write(`${words(3000, 'a')}\n`);
    await first.waitFor(/^second answer$/m);
    first.child.stdin.write('more\n');
    await first.waitFor(/^third answer$/m);
    first.child.stdin.write('and more\n');
    await first.waitFor(/^fourth answer$/m);
    first.child.stdin.write('/compact\n');
    await first.waitFor(/^compaction #1 \(manual, .+\): [\d,]+ → [\d,]+ tokens, saved \d+%$/m, 60_000);
    expect(first.output()).toMatch(/^… compaction #1 \(manual\): prune [\d,]+ → [\d,]+ · summary/m);

    // Another shell, with what `up` printed: status (Temporal) and inspect (PostgreSQL).
    const [status, inspect] = await Promise.all([cli(['status', id!], vars), cli(['inspect', id!], vars)]);
    expect(status.stderr).toBe('');
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^ {2}rounds {7}4$/m);
    expect(status.stdout).toMatch(/^ {2}compactions {2}1/m);
    expect(inspect.code).toBe(0);
    expect(inspect.stdout).toMatch(new RegExp(`^${id} · open · active version \\d+$`, 'm'));
    expect(inspect.stdout).toMatch(/#1 {2}manual/);

    first.child.stdin.end();
    expect(await first.exited).toBe(0);
    expect(first.output()).toMatch(
      /chat ended: stopping the worker, Temporal and PostgreSQL \(at most 10 s; Ctrl-C again to stop at once\)\.\.\.\nstopped\./,
    );
    expect(first.output()).not.toMatch(/\[INFO\]/);

    // ---- second start on the same data: the same conversation, then SIGINT ----
    const second = await startUp();
    await second.waitFor(/^chat with \S+ · \/help for commands$/m, 150_000);
    expect(second.output()).toMatch(new RegExp(`^Continuing conversation ${id} `, 'm'));
    // PostgreSQL came back on its port: a DATABASE_URL exported from the first start still works.
    const [connectAgain] = await second.waitFor(
      /^ {2}export TEMPORAL_ADDRESS=\S+ DATABASE_URL=postgres:\S+.*$/m,
    );
    expect(exported(connectAgain.trim()).DATABASE_URL).toBe(vars.DATABASE_URL);
    llm.script(step.text('fifth answer'));
    second.child.stdin.write('and one more\n');
    await second.waitFor(/^fifth answer\ntokens: [\d,]+ \/ 8,000 · \d+%$/m);
    // The model saw the conversation so far: the summary and the kept round came back with it.
    const last = llm.chatRequests().at(-1)!;
    expect(last.body.messages?.at(-1)).toMatchObject({ role: 'user', content: 'and one more' });
    expect(JSON.stringify(last.body.messages)).toContain('what was said so far');
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
    expect(second.output()).toMatch(
      /SIGINT: stopping the worker, Temporal and PostgreSQL \(at most 10 s; Ctrl-C again to stop at once\)\.\.\.\nstopped\./,
    );
    // Everything both processes printed (chat, logs, errors) is free of the API key.
    for (const run of [first, second]) expect(run.output()).not.toContain(UP_API_KEY);
  });

  it.each([
    ['--config, with an LLM endpoint', { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' }, true],
    ['DC_COMPACTION_CONFIG, for the demo', {}, false],
  ])('a bad config file (%s) is refused before anything starts', async (_name, env, flag) => {
    const config = join(mkdtempSync(join(tmpdir(), 'dc-up-config-')), 'bad.yaml');
    writeFileSync(config, 'context_compaction:\n  trigger_ratio: 1.5\n  trigger_ration: 0.8\n');
    const never = join(dataDir, 'never');
    const r = await cli(['up', '--data-dir', never, ...(flag ? ['--config', config] : [])], {
      ...env,
      ...(flag ? {} : { DC_COMPACTION_CONFIG: config }),
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      `error: invalid compaction config: ${config}: context_compaction.trigger_ratio: triggerRatio must be ` +
        `greater than 0 and at most 1 (got 1.5); ${config}: context_compaction.trigger_ration: unknown key`,
    );
    expect(r.stdout).toBe('');
    expect(existsSync(never)).toBe(false);
  });
});
