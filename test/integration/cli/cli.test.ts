/**
 * The client commands against the real dev server, the real PostgreSQL and the fake LLM: the
 * command functions (what the commander wiring calls) drive a conversation through start → send →
 * status → compact → export → inspect → restore → end, and every kind of bad input is refused
 * with a UsageError (exit 2) that changes nothing.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer as createHttp2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliError, UsageError } from '../../../src/cli/client';
import { describeError } from '../../../src/infra/errors';
import { chat } from '../../../src/cli/commands/chat';
import {
  compactConversation,
  conversationStatus,
  decideCompaction,
  endConversation,
  restoreConversation,
} from '../../../src/cli/commands/control';
import { exportConversation } from '../../../src/cli/commands/export';
import { importConversation } from '../../../src/cli/commands/import';
import {
  inspectCompaction,
  inspectConversation,
  formatInspection,
  formatOverview,
} from '../../../src/cli/commands/inspect';
import { sendMessage, type SendOutcome } from '../../../src/cli/commands/send';
import { startConversation } from '../../../src/cli/commands/start';
import { SAMPLE_SESSION } from '../../../src/cli/demo';
import { formatSendResult } from '../../../src/cli/format';
import { countRounds } from '../../../src/context/segments';
import { buildStartInput, type StartFlags } from '../../../src/cli/start-options';
import type { ConversationStatus, SendMessageResult } from '../../../workflows/definitions';
import { isSummaryRequest, step } from '../../support/fake-openai';
import { startConversationEnv, waitFor, words, type ConversationEnv } from '../../support/conversation-env';
import { testDatabaseUrl, testTemporalAddress, uniqueId } from '../../support/harness';
import { runCli, spawnCli, type Run } from '../../support/cli-process';

let env: ConversationEnv;
const settings = { namespace: 'default', uiBase: 'http://localhost:8233' };
const dir = mkdtempSync(join(tmpdir(), 'dc-cli-it-'));

beforeAll(async () => {
  env = await startConversationEnv();
});
afterAll(async () => {
  await env?.close();
});

/** `start` as the CLI runs it: flags → checked input → workflow on the env's task queue. */
async function start(flags: StartFlags): Promise<string> {
  const input = buildStartInput({ model: 'fake-model', summaryModel: 'fake-summarizer', ...flags }, {});
  const { started, ready } = await startConversation(env.conversations, input, {
    taskQueue: env.taskQueue,
    settings,
  });
  expect(started.uiUrl).toBe(`http://localhost:8233/namespaces/default/workflows/${input.conversationId}`);
  expect(ready).toBe(true);
  return started.conversationId;
}

function replied(outcome: SendOutcome): SendMessageResult {
  if (outcome.queued) throw new Error('expected an answer, got a queued message');
  return outcome.result;
}

/**
 * A command as a user runs it: its own process, against the run's Temporal server and PostgreSQL,
 * starting conversations on the task queue of this file's worker.
 */
function cli(args: string[], stdin?: string | Buffer): Promise<Run> {
  return runCli(args, cliEnv(), 90_000, stdin);
}

function cliEnv(): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: testTemporalAddress(),
    DATABASE_URL: testDatabaseUrl(),
    TASK_QUEUE: env.taskQueue,
  };
}

/** Expects exit 2 and one line on stderr matching `message`, nothing on stdout. */
function refused(r: { code: number | null; stdout: string; stderr: string }, message: RegExp | string): void {
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  if (typeof message === 'string') expect(lines[0]).toBe(message);
  else expect(lines[0]).toMatch(message);
}

/** Expects the call to fail with what the CLI shows as bad input (exit 2): a UsageError, or the client's `badInput`. */
async function usageError(promise: Promise<unknown>, message: RegExp): Promise<void> {
  const err = await promise.then(
    () => new Error('expected a UsageError'),
    (e: unknown) => e,
  );
  const shown = cliError(err);
  expect(shown).toBeInstanceOf(UsageError);
  expect((shown as Error).message).toMatch(message);
}

describe('a conversation from the command functions', () => {
  it('start → send → status → compact → export → inspect → restore → end', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text('ok'));
    env.llm.script(step.text('hello back'));
    // Slow enough for the progress poll (500 ms) to see the compaction phase.
    env.llm
      .when((r) => isSummaryRequest(r))
      .setDefault(step.summary('manual summary of the talk', { delayMs: 1500 }));
    const config = join(dir, 'config.yaml');
    writeFileSync(config, 'context_compaction:\n  max_context_tokens: 8000\n  protected_rounds: 1\n');
    const id = await start({ id: uniqueId('cli'), system: 'You are terse.', config });

    const first = replied(await sendMessage(env.conversations, { id, message: 'hello' }));
    expect(first.reply).toBe('hello back');
    expect(formatSendResult(id, first).join('\n')).toMatch(/^tokens: [\d,]+ \/ 8,000 · \d+%$/m);
    for (let i = 0; i < 3; i++) await sendMessage(env.conversations, { id, message: words(400, `r${i}y`) });

    const status = await conversationStatus(env.conversations, { id });
    expect(status).toMatchObject({ rounds: 4, phase: 'idle', window: 8000, compactions: 0, ended: false });

    const phases: ConversationStatus['phase'][] = [];
    const brief = await compactConversation(env.conversations, {
      id,
      focus: 'keep the file names',
      onStatus: (s) => phases.push(s.phase),
    });
    expect(brief).toMatchObject({ trigger: 'manual', status: 'committed', seq: 1 });
    expect(brief.tokensAfter).toBeLessThan(brief.tokensBefore);
    expect(phases).toContain('compacting');
    const after = await conversationStatus(env.conversations, { id });

    // export: the active context (with the summary), lowered to chat messages; version 1 as it was.
    const active = await exportConversation(env.store, { id });
    expect(active.version).toBe(after.activeVersion);
    expect(active.request.messages[0]).toEqual({ role: 'system', content: 'You are terse.' });
    expect(active.text).toContain('manual summary of the talk');
    // The compacted context offers the recall tool (issue 24): its tool list is exported with it.
    expect(active.request.tools.map((t) => t.function.name)).toEqual(['recall']);
    expect(JSON.parse(active.text)).toEqual({
      messages: active.request.messages,
      tools: active.request.tools,
    });
    const v1 = await exportConversation(env.store, { id, version: 1, format: 'jsonl' });
    const v1Messages = v1.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { role: string; content: string });
    expect(v1Messages.slice(0, 3)).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hello back' },
    ]);
    expect(v1.text).not.toContain('manual summary of the talk');

    // inspect: the versions and the compaction, item by item.
    const overview = await inspectConversation(env.store, { id });
    expect(overview.compactions).toHaveLength(1);
    expect(overview.compactions[0]).toMatchObject({ seq: 1, status: 'committed', trigger: 'manual' });
    expect(overview.versions.find((v) => v.status === 'active')?.version).toBe(after.activeVersion);
    expect(formatOverview(overview).join('\n')).toMatch(/#1 {2}manual {2}committed/);
    const one = await inspectCompaction(env.store, { id, seq: 1 });
    const diff = one.diff!;
    expect(diff.summary?.text).toContain('manual summary of the talk');
    expect(diff.summarized.length).toBeGreaterThan(0);
    expect(diff.kept.map((e) => e.type)).toContain('SYSTEM_PROMPT');
    const base = await env.store.getVersionItems(id, one.versions.base);
    expect(diff.kept.length + diff.dropped.length + diff.truncated.length + diff.summarized.length).toBe(
      base.length,
    );
    expect(diff.tokens.after).toBe(brief.tokensAfter);
    expect(formatInspection(one).join('\n')).toMatch(/^summary \([\d,]+ tokens/m);

    // restore the version before the compaction: its content is active again, as a new version.
    const before = one.versions.base;
    const restored = await restoreConversation(env.conversations, { id, version: before });
    expect(restored).toMatchObject({ version: before, tokens: brief.tokensBefore });
    expect((await exportConversation(env.store, { id })).text).not.toContain('manual summary of the talk');

    expect(await endConversation(env.conversations, { id })).toEqual({ rounds: 4 });
    const ended = await conversationStatus(env.conversations, { id });
    expect(ended.ended).toBe(true);
    await usageError(
      sendMessage(env.conversations, { id, message: 'more' }),
      new RegExp(`conversation ${id} has ended`),
    );
    await usageError(compactConversation(env.conversations, { id }), /has ended/);
  });

  it('chat: lines become rounds; /status, /compact and /quit work', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text('chat reply'));
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('chat summary'));
    const id = await start({ id: uniqueId('chat'), window: '8000' });
    const input = new PassThrough();
    const output = new PassThrough();
    let text = '';
    output.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const done = chat(env.conversations, { id, input, output });
    input.write(`${words(300, 'first')}\n`);
    input.write(`${words(300, 'second')}\n/compact\n/nope\n/status\n/quit\n`);
    await done;
    expect(text).toContain('chat reply');
    expect(text).toMatch(/tokens: [\d,]+ \/ 8,000/);
    expect(text).toMatch(/compaction #1 \(manual/);
    expect(text).toContain('unknown command /nope');
    expect(text).toMatch(new RegExp(`${id} · idle`));
  });
});

describe('bad input: a UsageError, nothing changed', () => {
  it('an unknown conversation', async () => {
    await usageError(
      sendMessage(env.conversations, { id: 'no-such-conv', message: 'hi' }),
      /^no conversation no-such-conv$/,
    );
    await usageError(
      conversationStatus(env.conversations, { id: 'no-such-conv' }),
      /^no conversation no-such-conv$/,
    );
    await usageError(
      compactConversation(env.conversations, { id: 'no-such-conv' }),
      /^no conversation no-such-conv$/,
    );
    await usageError(exportConversation(env.store, { id: 'no-such-conv' }), /^no conversation no-such-conv$/);
    await usageError(
      inspectConversation(env.store, { id: 'no-such-conv' }),
      /^no conversation no-such-conv$/,
    );
  });

  it('an id already taken, an empty message, a version or compaction that does not exist, nothing to approve', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text('ok'));
    const id = await start({ id: uniqueId('bad') });
    await usageError(start({ id }), new RegExp(`conversation ${id} already exists`));
    await usageError(sendMessage(env.conversations, { id, message: '  ' }), /message is empty/);
    replied(await sendMessage(env.conversations, { id, message: 'one' }));
    const status = await conversationStatus(env.conversations, { id });
    await usageError(restoreConversation(env.conversations, { id, version: 99 }), /has no version 99/);
    await usageError(
      decideCompaction(env.conversations, { id, approve: true }),
      /no compaction is awaiting approval/,
    );
    await usageError(exportConversation(env.store, { id, version: 99 }), /has no version 99/);
    await usageError(
      inspectCompaction(env.store, { id, seq: 5 }),
      /has no compaction #5 \(compactions: none yet\)/,
    );
    const unchanged = await conversationStatus(env.conversations, { id });
    expect(unchanged).toMatchObject({ activeVersion: status.activeVersion, rounds: 1, compactions: 0 });
  });

  it('sending while a compaction awaits approval: the message is queued, and answered once approved', async () => {
    env.llm.reset();
    // Long replies, so that the summary replaces more than it adds.
    env.llm.setDefault(step.text(words(2000, 'reply')));
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('approved summary'));
    const config = join(dir, 'confirm.yaml');
    writeFileSync(config, 'max_context_tokens: 20000\nrounds_threshold: 3\nrequire_confirmation: true\n');
    const id = await start({ id: uniqueId('approve'), config });
    for (const m of ['one', 'two']) await sendMessage(env.conversations, { id, message: m });
    const third = sendMessage(env.conversations, { id, message: 'three' });
    const waiting = await waitFor(
      () => conversationStatus(env.conversations, { id }),
      (s) => s.awaitingApproval !== null,
    );
    // Through the command line, as a user would: queued, and the CLI says so (exit 0).
    const queued = await cli(['send', id, 'four']);
    expect(queued).toMatchObject({ code: 0, stderr: '' });
    expect(queued.stdout.trim()).toBe(
      `queued: a rounds compaction of ${id} awaits approval; the message is answered once it is ` +
        `approved or rejected (\`durable-compaction approve ${id}\` or \`reject ${id}\`)`,
    );
    // Nothing ran yet: the compaction waits, the message is in the queue.
    expect(await conversationStatus(env.conversations, { id })).toMatchObject({
      rounds: 3,
      queued: 1,
      compactions: waiting.compactions,
      activeVersion: waiting.activeVersion,
    });
    expect(await cli(['approve', id])).toMatchObject({ code: 0, stdout: 'approved\n' });
    const r3 = replied(await third);
    expect(r3.compactions[0]).toMatchObject({ trigger: 'rounds', status: 'committed' });
    await waitFor(
      () => conversationStatus(env.conversations, { id }),
      (s) => s.rounds === 4 && s.phase === 'idle',
    );
  });
});

describe('bad input through the command line: exit 2, one clear line, nothing changed', () => {
  it('an unknown workflow id', async () => {
    const results = await Promise.all([
      cli(['status', 'no-such-conv']),
      cli(['send', 'no-such-conv', 'hi']),
      cli(['inspect', 'no-such-conv']),
    ]);
    for (const r of results) refused(r, 'error: no conversation no-such-conv');
  });

  it('a conversation that has ended', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text('ok'));
    const id = await start({ id: uniqueId('ended') });
    await sendMessage(env.conversations, { id, message: 'one' });
    await endConversation(env.conversations, { id });
    const before = await env.store.totals(id);
    const [send, compact] = await Promise.all([cli(['send', id, 'more']), cli(['compact', id])]);
    refused(send, `error: conversation ${id} has ended`);
    refused(compact, `error: conversation ${id} has ended`);
    expect(await env.store.totals(id)).toEqual(before);
  });

  it('a malformed session file (line and field named) or history file (field named)', async () => {
    const badJson = join(dir, 'bad.jsonl');
    writeFileSync(badJson, '{"role":"system","content":"s"}\n{"role":"user","content":"x"\n');
    const badField = join(dir, 'bad-field.jsonl');
    writeFileSync(
      badField,
      '{"role":"user","content":"x"}\n' +
        '{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":5,"arguments":"{}"}}]}\n',
    );
    const badHistory = join(dir, 'history.json');
    writeFileSync(badHistory, '{"events": {"0": "not a list"}}');
    const ids = [uniqueId('bad-import'), uniqueId('bad-import')];
    const [json, field, history] = await Promise.all([
      cli(['import', badJson, '--id', ids[0]!]),
      cli(['import', badField, '--id', ids[1]!]),
      cli(['replay', badHistory]),
    ]);
    refused(json, /^error: cannot import .*bad\.jsonl: line 2: not valid JSON/);
    refused(
      field,
      /^error: cannot import .*bad-field\.jsonl: line 2, message\.tool_calls\[0\]\.function\.name: expected a string/,
    );
    refused(
      history,
      `error: ${badHistory}: no "events" array (expected the output of temporal workflow show --output json)`,
    );
    for (const id of ids) expect(await env.store.exists(id)).toBe(false);
  });

  it('a config file with an unknown key or an out-of-range value: nothing started', async () => {
    const config = join(dir, 'bad-config.yaml');
    writeFileSync(config, 'context_compaction:\n  max_context_tokens: 100\n  keep_recnt_rounds: 2\n');
    const id = uniqueId('bad-config');
    refused(
      await cli(['start', '--id', id, '--config', config]),
      `error: invalid compaction config: ${config}: context_compaction.max_context_tokens: ` +
        `maxContextTokens must be at least 256 (got 100); ${config}: context_compaction.keep_recnt_rounds: unknown key`,
    );
    await expect(env.client.workflow.getHandle(id).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(await env.store.exists(id)).toBe(false);
  });

  it('restore to a version that does not exist', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text('ok'));
    const id = await start({ id: uniqueId('restore') });
    await sendMessage(env.conversations, { id, message: 'one' });
    const before = await conversationStatus(env.conversations, { id });
    const versions = (await inspectConversation(env.store, { id })).versions;
    refused(
      await cli(['restore', id, '--version', '99']),
      new RegExp(`^error: conversation ${id} has no version 99`),
    );
    const after = await conversationStatus(env.conversations, { id });
    expect(after).toMatchObject({ activeVersion: before.activeVersion, contextTokens: before.contextTokens });
    expect((await inspectConversation(env.store, { id })).versions).toEqual(versions);
  });

  it('a tool the worker does not have: the conversation fails at once, and says why', async () => {
    const id = uniqueId('bad-tool');
    const started = Date.now();
    const r = await cli(['start', '--id', id, '--tools', 'read_file,nosuch_tool', '--allow-unknown-tools']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(
      new RegExp(
        `^error: conversation ${id} failed to start: unknown tool "nosuch_tool": the worker's tools are read_file, .*list_directory`,
      ),
    );
    // Not retried: one attempt, failed well before the store activity's retries would end.
    expect(Date.now() - started).toBeLessThan(60_000);
    const description = await env.client.workflow.getHandle(id).describe();
    expect(description.status.name).toBe('FAILED');
    expect(await env.store.exists(id)).toBe(false);
    refused(
      await cli(['send', id, 'hi']),
      new RegExp(`^error: conversation ${id} has ended: it failed \\(unknown tool "nosuch_tool"`),
    );
    // It wrote nothing: the same id starts again with the tools corrected, and answers.
    env.llm.reset();
    env.llm.setDefault(step.text('ready'));
    expect(await start({ id, tools: 'read_file' })).toBe(id);
    expect(replied(await sendMessage(env.conversations, { id, message: 'hi' })).reply).toBe('ready');
    expect(await env.store.exists(id)).toBe(true);
    // A conversation that ran (this one now) is never started over.
    await usageError(start({ id, tools: 'read_file' }), new RegExp(`conversation ${id} already exists`));
  });
});

describe('import', () => {
  it('a session file into a new conversation, which a workflow then continues', async () => {
    const id = uniqueId('imported');
    const result = await importConversation(env.store, { file: SAMPLE_SESSION, id });
    expect(result).toMatchObject({ conversationId: id, format: 'openai', version: 1 });
    expect(result.items).toBeGreaterThan(3);
    await usageError(importConversation(env.store, { file: SAMPLE_SESSION, id }), /already exists/);
    const exported = await exportConversation(env.store, { id });
    expect(exported.request.messages.length).toBe(result.items);

    const importedRounds = countRounds((await env.store.getActiveContext(id)).items);
    expect(importedRounds).toBeGreaterThan(3);

    env.llm.reset();
    env.llm.setDefault(step.text('continuing'));
    await start({ id, window: '128000' });
    const round = replied(await sendMessage(env.conversations, { id, message: 'carry on' }));
    expect(round.reply).toBe('continuing');
    // Its rounds are numbered after the imported ones, in the workflow and in the store.
    expect(round.round).toBe(importedRounds + 1);
    expect(await conversationStatus(env.conversations, { id })).toMatchObject({ rounds: importedRounds + 1 });
    const [reply] = await env.store.getItems([round.replyItemId!]);
    expect(reply).toMatchObject({ type: 'ASSISTANT_MESSAGE', round: importedRounds + 1 });
    const { items } = await env.store.getActiveContext(id);
    expect(items.length).toBe(result.items + 2);
    // The model saw the imported conversation.
    const request = env.llm.chatRequests().find((r) => r.body.messages?.at(-1)?.content === 'carry on');
    expect(request?.body.messages?.length).toBe(exported.request.messages.length + 1);
  });
});

describe('long messages, stdin, bytes that are not UTF-8, a closed pipe (issue 22)', () => {
  it("send --file and send - carry a 150,000-character message past the shell's argument limit", async () => {
    env.llm.reset();
    env.llm.setDefault(step.text('read it all'));
    const id = await start({ id: uniqueId('long'), window: 128_000 });
    const long = `${'lorem ipsum '.repeat(12_500)}MARK-END`;
    expect(long.length).toBeGreaterThan(131_072);
    const file = join(dir, 'long-message.txt');
    writeFileSync(file, long);
    const viaFile = await cli(['send', id, '--file', file]);
    expect(viaFile.stderr).toBe('');
    expect(viaFile.code).toBe(0);
    expect(viaFile.stdout).toMatch(/^read it all$/m);
    const viaStdin = await cli(['send', id, '-'], long);
    expect(viaStdin.code).toBe(0);
    const asked = env.llm.chatRequests().map((r) => r.body.messages?.at(-1)?.content);
    expect(asked).toEqual([long, long]);
    refused(
      await cli(['send', id, 'text', '--file', file]),
      'error: give the message as an argument or with --file, not both',
    );
    refused(
      await cli(['send', id]),
      'error: missing message: give it as an argument, with --file <path>, or - for standard input',
    );
    const bad = join(dir, 'latin1.txt');
    writeFileSync(bad, Buffer.from([0x68, 0x69, 0x20, 0xe9, 0x74, 0xe9]));
    refused(
      await cli(['send', id, '--file', bad]),
      /^error: .*latin1\.txt is not valid UTF-8: byte 0xe9 at offset 3 /,
    );
  });

  it('import refuses bytes that are not UTF-8 with their offset, or takes them with --lossy', async () => {
    const file = join(dir, 'not-utf8.json');
    const before = '{"messages":[{"role":"user","content":"caf';
    const json = Buffer.concat([Buffer.from(before), Buffer.from([0xc3, 0x28]), Buffer.from('"}]}')]);
    writeFileSync(file, json);
    refused(
      await cli(['import', file]),
      `error: ${file} is not valid UTF-8: byte 0xc3 at offset ${before.length} (convert it to UTF-8, or pass --lossy to replace invalid bytes with U+FFFD)`,
    );
    const lossy = await cli(['import', file, '--lossy', '--json']);
    expect(lossy.code).toBe(0);
    expect(JSON.parse(lossy.stdout)).toMatchObject({ items: 1 });
  });

  it('output piped into a reader that goes away ends quietly', async () => {
    const id = await start({ id: uniqueId('pipe') });
    env.llm.reset();
    env.llm.script(step.text('x'.repeat(2_000_000)));
    expect((await cli(['send', id, 'a big answer please'])).code).toBe(0);
    // `export … | head -c 100`: the reader closes after its first chunk.
    const { child, output } = spawnCli(['export', id], cliEnv());
    child.stdout?.once('data', () => child.stdout?.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(output.stderr).toBe('');
    expect(code).toBe(0);
  });
});

describe('errors keep their cause (issue 22)', () => {
  it('a Temporal address that answers HTTP 404: the gRPC status is named', async () => {
    const server = createHttp2Server((_req, res) => {
      res.writeHead(404);
      res.end('not here');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const r = await runCli(['status', 'some-conversation'], { TEMPORAL_ADDRESS: `127.0.0.1:${port}` });
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(
        'error: Failed to describe workflow: 12 UNIMPLEMENTED: Received HTTP status code 404',
      );
    } finally {
      server.close();
    }
  });

  it('a 3 MB message is refused before anything is sent, naming the limit', async () => {
    env.llm.reset();
    const id = await start({ id: uniqueId('huge') });
    const file = join(dir, 'three-mb.txt');
    writeFileSync(file, 'abc '.repeat(750_000));
    // Refused before anything is sent, by the conversation's limit (the workflow's own words).
    refused(
      await cli(['send', id, '--file', file]),
      'error: message is too long: 3000000 characters, the limit is 200000 (maxInputChars)',
    );
    // Under a raised limit it travels by reference: test/integration/bad-input/message-bodies.test.ts.
    expect(env.llm.chatRequests()).toHaveLength(0);
  });

  it('an Update the server fails: its reason is named, not only "Workflow Update failed"', () => {
    const err = new Error('Workflow Update failed', {
      cause: new Error(
        '9 FAILED_PRECONDITION: Unable to perform workflow execution update due to unexpected workflow task failure.',
      ),
    });
    expect(describeError(err)).toBe(
      'Workflow Update failed: 9 FAILED_PRECONDITION: Unable to perform workflow execution update due to unexpected workflow task failure.',
    );
  });
});
