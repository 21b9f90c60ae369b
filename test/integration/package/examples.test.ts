/**
 * The package as a user gets it (issue 26 item 6): `npm pack` builds and packs it, the tarball is
 * installed into a temporary project outside the repository (which cannot see its sources), every
 * example in `examples/` is type-checked there, and each runs against the test's Temporal dev
 * server, PostgreSQL and fake OpenAI server: the policy alone; a worker with a tool of its own
 * driven by the typed client; a workflow of the user's own running our compaction child.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, userEnv, type Run } from '../../support/cli-process';
import {
  isSummaryRequest,
  lastMessageText,
  startFakeOpenAI,
  step,
  type FakeOpenAI,
} from '../../support/fake-openai';
import { testDatabaseUrl, testTemporalAddress, uniqueId } from '../../support/harness';

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  allowScripts: Record<string, boolean>;
};

/** The installed version of a dependency of the repository (the temporary project asks for it). */
function installed(name: string): string {
  return (
    JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }
  ).version;
}

function run(command: string, args: string[], cwd: string, timeout = 300_000): Run {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', timeout, env: userEnv() });
  return {
    code: r.status,
    stdout: r.stdout ?? '',
    stderr: `${r.stderr ?? ''}${r.error ? String(r.error) : ''}`,
  };
}

const work = mkdtempSync(join(tmpdir(), 'dc-examples-'));
/** The user's project: the examples, with the packed package installed. */
const app = join(work, 'app');
let llm: FakeOpenAI;
const children: ChildProcess[] = [];

/** Runs an example's script with tsx in the user's project, with the test's servers in its environment. */
function example(script: string, env: Record<string, string>): { child: ChildProcess; output: Run } {
  const child = spawn(join(app, 'node_modules', '.bin', 'tsx'), [script], {
    cwd: app,
    env: userEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const output: Run = { code: null, stdout: '', stderr: '' };
  child.stdout?.on('data', (d: Buffer) => (output.stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output.stderr += d.toString()));
  child.on('close', (code) => (output.code = code));
  return { child, output };
}

async function until(what: string, ready: () => boolean, output: Run, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (output.code !== null || Date.now() > deadline)
      throw new Error(`${what}: exit ${output.code}\n${output.stdout}\n${output.stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function finished(p: { child: ChildProcess; output: Run }, timeoutMs = 180_000): Promise<Run> {
  const deadline = Date.now() + timeoutMs;
  while (p.output.code === null) {
    if (Date.now() > deadline) {
      p.child.kill('SIGKILL');
      throw new Error(`did not finish in ${timeoutMs} ms\n${p.output.stdout}\n${p.output.stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return p.output;
}

function envFor(taskQueue: string): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: testTemporalAddress(),
    DATABASE_URL: testDatabaseUrl(),
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: 'sk-examples',
    MODEL: 'fake-model',
    TASK_QUEUE: taskQueue,
  };
}

describe('the packed package, installed and used as the examples use it', () => {
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    const pack = run('npm', ['pack', '--json', '--pack-destination', work], ROOT, 600_000);
    expect(pack.code, pack.stderr).toBe(0);
    const tarball = (JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as { filename: string }[])[0]
      ?.filename;
    expect(tarball).toBe(`${manifest.name}-${manifest.version}.tgz`);
    cpSync(join(ROOT, 'examples'), app, { recursive: true });
    const examples = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    // The examples' dependencies at the versions this repository has (npm's cache holds them), the
    // package itself from the tarball.
    const pin = (deps: Record<string, string>) =>
      Object.fromEntries(
        Object.keys(deps)
          .filter((name) => name !== manifest.name)
          .map((name) => [name, installed(name)]),
      );
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({
        name: 'examples-app',
        private: true,
        dependencies: { ...pin(examples.dependencies), [manifest.name]: `file:../${tarball}` },
        devDependencies: { ...pin(examples.devDependencies), '@types/node': installed('@types/node') },
        allowScripts: manifest.allowScripts,
      }),
    );
    const install = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], app, 600_000);
    expect(install.code, install.stderr).toBe(0);
  }, 1_200_000);

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await llm?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('installs the package, not the repository: no TypeScript source of ours in it', () => {
    const pkg = join(app, 'node_modules', manifest.name);
    expect(readdirSync(pkg).sort()).toEqual(expect.arrayContaining(['bin', 'dist', 'package.json']));
    expect(readdirSync(pkg)).not.toContain('src');
    const found = run('find', [pkg, '-name', '*.ts', '!', '-name', '*.d.ts'], app);
    expect(found.stdout.trim()).toBe('');
  });

  it('type-checks every example against the installed package', () => {
    const tsc = run(join(app, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], app);
    expect(`${tsc.stdout}${tsc.stderr}`).toBe('');
    expect(tsc.code).toBe(0);
  });

  it('context-only: plans and applies a compaction of OpenAI messages without Temporal', async () => {
    const out = await finished(example('context-only/plan.ts', {}));
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const before = Number(/(\d+) tokens before/.exec(out.stdout)?.[1]);
    const after = Number(/compacted: \d+ messages, (\d+) tokens/.exec(out.stdout)?.[1]);
    expect(out.stdout).toMatch(/^due: true/m);
    expect(after).toBeGreaterThan(0);
    expect(after).toBeLessThan(before);
    expect(after).toBeLessThanOrEqual(4_000);
  });

  it('worker-with-tool and client: the agent calls the tool of its own; the client drives and ends the conversation', async () => {
    llm.reset();
    llm
      .when((r) => isSummaryRequest(r))
      .setDefault(step.summary('The user asked for a word count: 3 words.'));
    llm.script(
      step.toolCalls([{ name: 'word_count', arguments: { text: 'durable context compaction' } }]),
      step.text('It has 3 words.'),
      step.text('Compaction keeps what the agent needs.'),
      step.text('You are welcome.'),
    );
    const env = envFor(uniqueId('examples-tool'));
    const worker = example('worker-with-tool/worker.ts', env);
    await until(
      'the worker did not start',
      () => worker.output.stdout.includes('worker ready'),
      worker.output,
    );
    const client = await finished(example('client/chat.ts', env));
    expect(client.code, client.stderr).toBe(0);
    expect(client.stdout).toMatch(/^started \S+/m);
    expect(client.stdout).toMatch(/^reply: It has 3 words\.$/m);
    expect(client.stdout).toMatch(/^compaction #1: committed, \d+ -> \d+ tokens$/m);
    expect(client.stdout).toMatch(/^status: 3 rounds, \d+ of 16000 tokens, 1 compactions$/m);
    expect(client.stdout).toMatch(/^events: .*context_compacted/m);
    expect(client.stdout).toMatch(/^ended after 3 rounds$/m);
    expect(client.stdout).toMatch(/^typed error: ConversationNotFoundError \(CONVERSATION_NOT_FOUND\)$/m);
    // The model's second request carried what the user's tool returned.
    const agentRequests = llm.chatRequests().filter((r) => !isSummaryRequest(r));
    expect(agentRequests).toHaveLength(4);
    expect(lastMessageText(agentRequests[1]!)).toBe('3 words');
    worker.child.kill('SIGTERM');
    expect((await finished(worker)).code).toBe(0);
  });

  it("user-workflow: a workflow of the user's own compacts its stored messages with our child", async () => {
    llm.reset();
    llm
      .when((r) => isSummaryRequest(r))
      .setDefault(step.summary('Pages a and b were read; compare them next.'));
    llm.script(
      step.toolCalls([
        { name: 'fetch_page', arguments: { url: 'https://example.com/a' } },
        { name: 'fetch_page', arguments: { url: 'https://example.com/b' } },
      ]),
      step.text('Page a and page b say the same thing.'),
    );
    const env = envFor(uniqueId('examples-research'));
    const worker = example('user-workflow/worker.ts', env);
    await until(
      'the worker did not start',
      () => worker.output.stdout.includes('worker ready'),
      worker.output,
    );
    const out = await finished(example('user-workflow/run.ts', env));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^model calls: 2$/m);
    const compaction = /^compaction: (\w+), (\d+) -> (\d+) tokens$/m.exec(out.stdout);
    expect(compaction?.[1]).toBe('committed');
    expect(Number(compaction?.[3])).toBeLessThan(Number(compaction?.[2]));
    // The model's next request held the compacted context: the two pages (200 phrases each) cut.
    const agentRequests = llm.chatRequests().filter((r) => !isSummaryRequest(r));
    expect(agentRequests).toHaveLength(2);
    const phrases = (text: string) => text.split('lorem ipsum dolor sit amet').length - 1;
    expect(phrases(JSON.stringify(agentRequests[1]?.body.messages))).toBeLessThan(400);
    expect((agentRequests[1]?.body.messages ?? []).some((m) => m.role === 'tool')).toBe(true);
    worker.child.kill('SIGTERM');
    expect((await finished(worker)).code).toBe(0);
  });
});
