/**
 * Security (issue 8, item 4) with real processes on the real dev server and PostgreSQL:
 *
 * - No secret leaks. A `worker` process and CLI processes get an API key and a database password
 *   of their own; a conversation runs with compactions, a model call the provider refuses (its
 *   401 echoes the key), a summary refused the same way, the worker's database password changed
 *   under it, and processes started with a wrong password. Everything a person or the server
 *   could see is then searched for both secrets: every history (parent and compaction children),
 *   search attributes, memo, static and current details, the status and events queries, the
 *   store's compaction rows, every process's stdout and stderr, and every error message.
 * - The remote-PostgreSQL TLS rule, through the real `worker` command.
 * - Conversation ids, through the real `start` command.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sendMessageUpdate, eventsQuery, statusQuery } from '../../../workflows/definitions';
import {
  allHistories,
  encodeHistory,
  fetchFullHistory,
  waitFor,
  words,
} from '../../support/conversation-env';
import { isSummaryRequest, startFakeOpenAI, step, type FakeOpenAI } from '../../support/fake-openai';
import { testDatabaseUrl, testTemporalAddress, uniqueId } from '../../support/harness';
import { ROOT, runCli, spawnCli, type Run } from '../../support/cli-process';
import { payloadCodecsFor } from '../../../src/infra/codec';
import { CLAIM_CHECK_ENCODING } from '../../../src/infra/claim-check';

/** A key that does not look like an OpenAI key: only the configured-secret redaction can catch it. */
const API_KEY = `dc-sec-key-${randomBytes(16).toString('hex')}`;
const DB_USER = `dc_sec_${randomBytes(4).toString('hex')}`;
const DB_PASSWORD = `dc-sec-pw-${randomBytes(12).toString('hex')}`;
/** What the worker's password is changed to while the database "fails", and the wrong one given at start. */
const OTHER_PASSWORD = `dc-sec-other-${randomBytes(12).toString('hex')}`;
const WRONG_PASSWORD = `dc-sec-wrong-${randomBytes(12).toString('hex')}`;
const SECRETS: Record<string, string> = {
  'API key': API_KEY,
  'database password': DB_PASSWORD,
  'changed database password': OTHER_PASSWORD,
  'wrong database password': WRONG_PASSWORD,
};

/** The places where each secret occurs in the captured texts, with a little context. */
function leaks(captured: { source: string; text: string }[]): string[] {
  const found: string[] = [];
  for (const { source, text } of captured) {
    for (const [name, secret] of Object.entries(SECRETS)) {
      const at = text.indexOf(secret);
      if (at >= 0) found.push(`${name} in ${source}: …${text.slice(Math.max(0, at - 80), at + 20)}…`);
    }
  }
  return found;
}

describe('no secret in histories, search attributes, memo, logs or error messages', () => {
  let admin: pg.Pool;
  let llm: FakeOpenAI;
  let connection: Connection;
  let client: Client;
  let worker: { child: ChildProcess; output: Run } | undefined;
  const taskQueue = uniqueId('security');
  const databaseUrl = (password: string): string => {
    const url = new URL(testDatabaseUrl());
    url.username = DB_USER;
    url.password = password;
    return url.toString();
  };
  /** What every process of the project gets: the secrets included. */
  const projectEnv = (password = DB_PASSWORD): Record<string, string> => ({
    TEMPORAL_ADDRESS: testTemporalAddress(),
    DATABASE_URL: databaseUrl(password),
    OPENAI_API_KEY: API_KEY,
    OPENAI_BASE_URL: llm.url,
    TASK_QUEUE: taskQueue,
  });

  /** Terminates the sessions of the test's database user (its pool must reconnect). */
  const dropSessions = () =>
    admin.query('select pg_terminate_backend(pid) from pg_stat_activity where usename = $1', [DB_USER]);
  const setPassword = (password: string) =>
    // Utility statements take no parameters: the literal is quoted by pg (test code, fixed values).
    admin.query(`alter role ${pg.escapeIdentifier(DB_USER)} password ${pg.escapeLiteral(password)}`);

  beforeAll(async () => {
    admin = new pg.Pool({ connectionString: testDatabaseUrl(), max: 2 });
    admin.on('error', () => undefined);
    // A user of its own, so that its password is a secret no other test uses.
    await admin.query(`create role ${pg.escapeIdentifier(DB_USER)} login superuser`);
    await setPassword(DB_PASSWORD);
    llm = await startFakeOpenAI({ apiKey: API_KEY });
    connection = await Connection.connect({ address: testTemporalAddress() });
    client = new Client({ connection, dataConverter: { payloadCodecs: payloadCodecsFor(admin) } });
    worker = spawnCli(
      [
        'worker',
        '--task-queue',
        taskQueue,
        '--workflow-bundle',
        inject('workflowBundlePath'),
        '--grace',
        '1s',
      ],
      // OPENAI_LOG=debug: the SDK logs every request and response (the provider's 401 body too).
      { ...projectEnv(), OPENAI_LOG: 'debug' },
    );
    await waitFor(
      async () => worker!.output,
      (o) => o.stdout.includes('worker: task queue') || o.code !== null,
      120_000,
      'the worker to start',
    );
    expect(worker.output.code, worker.output.stderr).toBeNull();
  });

  afterAll(async () => {
    if (worker) {
      mkdirSync(join(ROOT, 'test-output'), { recursive: true });
      writeFileSync(
        join(ROOT, 'test-output', 'security-worker.log'),
        `${worker.output.stdout}\n--- stderr ---\n${worker.output.stderr}`,
      );
    }
    if (worker?.child.exitCode === null) {
      worker.child.kill('SIGTERM');
      await new Promise((resolve) => worker?.child.once('close', resolve));
    }
    await connection?.close();
    await llm?.close();
    await dropSessions().catch(() => undefined);
    await admin?.query(`drop role if exists ${pg.escapeIdentifier(DB_USER)}`).catch(() => undefined);
    await admin?.end();
  });

  it('a provider that echoes the key really does put it in the SDK error (the leak this guards against)', async () => {
    llm.script(step.authError());
    const raw = new OpenAI({ apiKey: API_KEY, baseURL: llm.url, maxRetries: 0 });
    const err = await raw.chat.completions
      .create({ model: 'fake-model', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(inspect(err)).toContain(API_KEY);
    llm.reset();
  });

  it('finds neither the API key nor the database password anywhere after failures of both', async () => {
    const captured: { source: string; text: string }[] = [];
    const record = (source: string, value: unknown) =>
      captured.push({ source, text: typeof value === 'string' ? value : inspect(value, { depth: 12 }) });
    const cli = async (args: string[], env: Record<string, string> = projectEnv()): Promise<Run> => {
      const run = await runCli(args, env);
      record(`${args[0]} stdout`, run.stdout);
      record(`${args[0]} stderr`, run.stderr);
      return run;
    };
    llm.reset();
    llm.setDefault(step.text(words(1200, 'reply')));
    const summaries = llm
      .when((r) => isSummaryRequest(r))
      .setDefault(step.summary('the conversation so far, compacted'));

    // Started by the CLI (search attributes on, as for users), driven by the CLI and a client.
    const id = uniqueId('sec-conv');
    const started = await cli(['start', '--id', id, '--model', 'fake-model', '--window', '3000', '--json']);
    expect(started.code, started.stderr).toBe(0);
    const handle = client.workflow.getHandle(id);
    for (let i = 0; i < 4; i++) {
      await handle.executeUpdate(sendMessageUpdate, { args: [words(600, `user${i}-`)] });
    }
    const sent = await cli(['send', id, 'one more round from the command line']);
    expect(sent.code, sent.stderr).toBe(0);

    // The summarizer's provider refuses the key (echoing it): the manual compaction rolls back.
    summaries.script(step.authError(), step.authError(), step.authError(), step.authError());
    const compacted = await cli(['compact', id, '--json']);
    expect(compacted.stdout + compacted.stderr).toMatch(/rolled_back/);
    expect(compacted.stdout + compacted.stderr).toMatch(/authentication failed/i);

    // The agent's own call is refused the same way: the round fails with a clear message.
    llm.script(step.authError());
    const refused = await cli(['send', id, 'this round meets a revoked key']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/LLM authentication failed \(HTTP 401\)/);
    llm.script(step.authError());
    const roundError = await handle
      .executeUpdate(sendMessageUpdate, { args: ['and again, through a client'] })
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(inspect(roundError, { depth: 12 })).toMatch(/LLM authentication failed/);
    record('client round error', roundError);

    // The database fails under the running worker: its password changes and its sessions end.
    const logBefore = worker!.output.stderr.length + worker!.output.stdout.length;
    await setPassword(OTHER_PASSWORD);
    await dropSessions();
    const during = handle
      .executeUpdate(sendMessageUpdate, { args: ['a round while the database refuses us'] })
      .then(
        (value) => ({ value }),
        (error: unknown) => ({ value: error }),
      );
    await Promise.race([
      during,
      waitFor(
        async () => (worker!.output.stderr + worker!.output.stdout).slice(logBefore),
        (log) => /password authentication failed/.test(log),
        60_000,
        'the worker to fail on the database',
      ),
    ]);
    await setPassword(DB_PASSWORD);
    const duringOutcome = await during;
    record('round while the database failed', duringOutcome.value);
    expect(inspect(duringOutcome.value) + worker!.output.stderr).toMatch(/password authentication failed/);
    // And the conversation goes on once the database is back.
    const after = await handle.executeUpdate(sendMessageUpdate, { args: ['the database is back'] });
    expect(after.reply.length).toBeGreaterThan(0);

    // Processes started with a wrong password fail at once, naming the server, not the password.
    const badWorker = await cli(['worker', '--task-queue', uniqueId('bad-pw')], {
      ...projectEnv(WRONG_PASSWORD),
      DEBUG: '1',
    });
    expect(badWorker.code).toBe(1);
    expect(badWorker.stderr).toMatch(
      new RegExp(`cannot connect to PostgreSQL at postgres://${DB_USER}:\\*\\*\\*@127\\.0\\.0\\.1:\\d+/`),
    );
    const badInspect = await cli(['inspect', id], { ...projectEnv(WRONG_PASSWORD), DEBUG: '1' });
    expect(badInspect.code).toBe(1);
    expect(badInspect.stderr).toMatch(/password authentication failed/);

    // What users read back: status, the store's record of each compaction (reasons included).
    expect((await cli(['status', id, '--json'])).code).toBe(0);
    const inspected = await cli(['inspect', id, '--json']);
    expect(inspected.code, inspected.stderr).toBe(0);
    expect(inspected.stdout).toMatch(/authentication failed/i);
    record('status query', await handle.query(statusQuery));
    record('events query', await handle.query(eventsQuery, {}));
    const rows = await admin.query(
      'select c.*, e.data as event_data from compactions c left join compaction_events e on e.compaction_id = c.id where c.conversation_id = $1',
      [id],
    );
    record('compaction rows', rows.rows);

    // What the server keeps and shows: every history, search attributes, memo, details.
    const described = await handle.describe();
    const firstRunId = described.raw.workflowExecutionInfo?.firstRunId ?? described.runId;
    const full = await fetchFullHistory(client, id, firstRunId);
    expect(full.children.length).toBeGreaterThanOrEqual(2);
    for (const [i, history] of allHistories(full).entries()) {
      record(`history ${i}`, Buffer.from(encodeHistory(history)).toString('latin1'));
    }
    for (const workflowId of [id, ...full.children.map((c) => c.workflowId)]) {
      const d = await client.workflow.getHandle(workflowId).describe();
      record(`${workflowId} search attributes`, d.typedSearchAttributes);
      record(`${workflowId} memo`, d.memo ?? {});
      record(`${workflowId} details`, [await d.staticSummary(), await d.staticDetails()]);
    }
    record('current details', await handle.query('__temporal_workflow_metadata'));
    await handle.terminate('test finished');

    // Stop the worker, so that its whole output is in.
    worker!.child.kill('SIGTERM');
    await new Promise((resolve) => worker!.child.once('close', resolve));
    record('worker stdout', worker!.output.stdout);
    record('worker stderr', worker!.output.stderr);

    // The search saw what it should (a search of nothing proves nothing).
    const all = captured.map((c) => c.text).join('\n');
    expect(llm.requests.some((r) => r.headers.authorization === `Bearer ${API_KEY}`)).toBe(true);
    expect(all).toMatch(/LLM authentication failed/);
    expect(worker!.output.stderr + worker!.output.stdout).toMatch(/password authentication failed/);
    expect(worker!.output.stderr + worker!.output.stdout).toMatch(/Incorrect API key provided/);
    // The histories were searched (the references of the bodies are in them), and the CLI's message
    // is not: it travels by reference (issue 22).
    expect(all).toContain(CLAIM_CHECK_ENCODING);
    const histories = captured.filter((c) => c.source.startsWith('history ')).map((c) => c.text);
    expect(histories.length).toBeGreaterThanOrEqual(3);
    expect(histories.join('\n')).not.toContain('one more round from the command line');
    expect(all).toContain(id);
    console.error(
      `security scan: ${captured.length} sources, ${all.length} characters, ` +
        `${full.runs.length} run(s) + ${full.children.length} compaction children, ${llm.requests.length} LLM requests`,
    );
    expect(leaks(captured)).toEqual([]);
  }, 400_000);
});

describe('the worker and a remote PostgreSQL', () => {
  const remote = 'postgres://dc:tls-test-secret@db.invalid:5432/dc';
  const worker = (env: Record<string, string>) =>
    runCli(['worker', '--task-queue', uniqueId('tls'), '--workflow-bundle', inject('workflowBundlePath')], {
      TEMPORAL_ADDRESS: testTemporalAddress(),
      ...env,
    });

  it('refuses a remote server without TLS, with a message that says what to do', async () => {
    const r = await worker({ DATABASE_URL: remote });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      'error: refusing to use the remote PostgreSQL at db.invalid without TLS — add ?sslmode=require ' +
        '(or verify-full) to DATABASE_URL, or set DC_ALLOW_INSECURE_DB=1 to accept plaintext',
    );
  });

  it.each([
    ['DC_ALLOW_INSECURE_DB=1', { DATABASE_URL: remote, DC_ALLOW_INSECURE_DB: '1' }, ''],
    ['sslmode=require', { DATABASE_URL: `${remote}?sslmode=require` }, '?sslmode=require'],
  ])('with %s gets past the check and fails only on connecting', async (_case, env, query) => {
    const r = await worker(env);
    expect(r.code).toBe(1);
    // Temporal was reached (it is real), the check passed, the connection itself failed.
    expect(r.stderr).toContain(
      `error: cannot connect to PostgreSQL at postgres://dc:***@db.invalid:5432/dc${query}`,
    );
    expect(r.stderr).not.toMatch(/without TLS/);
    expect(r.stderr).not.toContain('tls-test-secret');
  });
});

describe('conversation ids at the command line', () => {
  it('`start --id "x\'; drop table items; --"` is refused (exit 2) and nothing starts', async () => {
    const id = "x'; drop table items; --";
    const r = await runCli(['start', '--id', id, '--model', 'fake-model'], {
      TEMPORAL_ADDRESS: testTemporalAddress(),
      TASK_QUEUE: uniqueId('bad-id'),
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      `error: invalid conversation id ${JSON.stringify(id)}: use 1–128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit`,
    );
    const connection = await Connection.connect({ address: testTemporalAddress() });
    try {
      const described = await new Client({ connection }).workflow
        .getHandle(id)
        .describe()
        .then(
          () => 'exists',
          (err: Error) => err.name,
        );
      expect(described).toBe('WorkflowNotFoundError');
    } finally {
      await connection.close();
    }
  });
});
