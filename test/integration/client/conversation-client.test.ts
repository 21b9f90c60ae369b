/**
 * ConversationClient against the real dev server, the real PostgreSQL and the fake LLM: each
 * method's typed answer (start, send, queue, status, events, compact, restore, export, end, approve,
 * reject, review), and each typed error with what it carries (its class, `type`, conversation id,
 * `badInput`, message) — and that a refused request changed nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BadInputError,
  CompactionRejectedError,
  ConversationClient,
  ConversationEndedError,
  ConversationError,
  ConversationExistsError,
  ConversationNotFoundError,
  NoApprovalPendingError,
  NoReviewPendingError,
  NotRespondingError,
  StoreRequiredError,
  type StartInput,
} from '../../../src/client';
import { rejectionOf } from '../../support/bad-input';
import { isSummaryRequest, step } from '../../support/fake-openai';
import {
  encodeHistory,
  startConversationEnv,
  waitFor,
  words,
  type ConversationEnv,
} from '../../support/conversation-env';
import { testDatabaseUrl, testTemporalAddress, uniqueId } from '../../support/harness';

let env: ConversationEnv;
/** Built as a user builds it: connected by address, bodies by reference in the workers' PostgreSQL. */
let conversations: ConversationClient;
const started: string[] = [];

beforeAll(async () => {
  env = await startConversationEnv();
  conversations = await ConversationClient.connect({
    address: testTemporalAddress(),
    databaseUrl: testDatabaseUrl(),
    taskQueue: env.taskQueue,
  });
});
afterAll(async () => {
  // Conversations still running would keep the server's timers busy: stop them.
  await Promise.allSettled(
    started.map(async (id) => {
      const handle = env.client.workflow.getHandle(id);
      if ((await handle.describe()).status.name === 'RUNNING') await handle.terminate('test finished');
    }),
  );
  await conversations?.close();
  await env?.close();
});

/** A conversation's start input on the fake model. */
function input(config: Record<string, unknown> = {}, extra: Partial<StartInput> = {}): StartInput {
  return {
    conversationId: uniqueId('client'),
    systemPrompt: 'You are terse.',
    model: { provider: 'openai', model: 'fake-model', summaryModel: 'fake-summarizer' },
    config: { maxContextTokens: 8000, ...config },
    searchAttributes: false,
    ...extra,
  };
}

/** Starts a conversation through the client and checks a worker set it up. */
async function start(config: Record<string, unknown> = {}, extra: Partial<StartInput> = {}): Promise<string> {
  const result = await conversations.start(input(config, extra));
  started.push(result.conversationId);
  expect(result).toMatchObject({ taskQueue: env.taskQueue, ready: true });
  return result.conversationId;
}

/** Expects `promise` to reject with an error of `kind` that has `fields`; returns it. */
async function refused<E extends ConversationError>(
  promise: Promise<unknown>,
  kind: abstract new (...args: never[]) => E,
  fields: Partial<Omit<E, 'message'>> & { message?: string | RegExp },
): Promise<E> {
  const err = await rejectionOf(promise);
  expect(err).toBeInstanceOf(kind);
  const { message, ...rest } = fields;
  expect(err).toMatchObject(rest);
  if (message !== undefined) expect((err as Error).message).toMatch(message);
  return err as E;
}

describe('a conversation through the client', () => {
  it('start → send → status → compact → events → export → restore → end: each answer typed', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text('ok'));
    env.llm.script(step.text('hello back'));
    // Slow enough for the progress poll (500 ms) to see the compaction.
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('client summary', { delayMs: 1500 }));
    const begun = await conversations.start(input({ protectedRounds: 1 }));
    started.push(begun.conversationId);
    expect(begun).toMatchObject({ taskQueue: env.taskQueue, ready: true });
    expect(begun.runId).toMatch(/^[0-9a-f-]{36}$/);
    const id = begun.conversationId;

    const marker = `marker-${Math.random().toString(36).slice(2)}`;
    const first = await conversations.send(id, `hello ${marker}`);
    expect(first).toMatchObject({ round: 1, reply: 'hello back', window: 8000 });
    expect(env.llm.chatRequests().at(-1)?.body.messages?.at(-1)?.content).toBe(`hello ${marker}`);
    // The client's codecs sent the message by reference: history holds its key, not its text.
    const history = Buffer.from(encodeHistory(await env.client.workflow.getHandle(id).fetchHistory()));
    expect(history.toString('latin1')).toContain('binary/claim-check');
    expect(history.toString('latin1')).not.toContain(marker);
    for (let i = 0; i < 3; i++) await conversations.send(id, words(400, `r${i}y`));

    const before = await conversations.status(id);
    expect(before).toMatchObject({
      conversationId: id,
      rounds: 4,
      phase: 'idle',
      compactions: 0,
      ended: false,
    });
    expect(await conversations.describe(id)).toEqual({
      conversationId: id,
      workflowStatus: 'RUNNING',
      running: true,
    });

    const phases: string[] = [];
    const brief = await conversations.compact(id, {
      focus: 'keep the file names',
      onStatus: (s) => phases.push(s.phase),
    });
    expect(brief).toMatchObject({ trigger: 'manual', status: 'committed', seq: 1 });
    expect(brief.tokensAfter).toBeLessThan(brief.tokensBefore);
    expect(phases).toContain('compacting');
    const summaryRequest = env.llm.chatRequests().find((r) => isSummaryRequest(r));
    expect(JSON.stringify(summaryRequest?.body)).toContain('keep the file names');

    const page = await conversations.events(id);
    expect(page).toMatchObject({ from: 0, next: page.events.length, running: true });
    expect(page.events.map((e) => e.type)).toContain('context_compacted');
    expect(await conversations.events(id, { since: page.next })).toEqual({
      from: page.next,
      events: [],
      next: page.next,
      running: true,
    });

    const after = await conversations.status(id);
    expect(after.activeVersion).toBeGreaterThan(before.activeVersion);
    const exported = await conversations.export(id);
    expect(exported.version).toBe(after.activeVersion);
    expect(exported.request.messages[0]).toEqual({ role: 'system', content: 'You are terse.' });
    expect(exported.text).toContain('client summary');
    expect(JSON.parse(exported.text)).toMatchObject({ messages: exported.request.messages });
    const v1 = await conversations.export(id, { version: 1, format: 'jsonl' });
    expect(v1.version).toBe(1);
    expect(
      v1.text
        .trimEnd()
        .split('\n')
        .slice(0, 3)
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: `hello ${marker}` },
      { role: 'assistant', content: 'hello back' },
    ]);

    const restored = await conversations.restore(id, before.activeVersion);
    expect(restored).toMatchObject({ version: before.activeVersion, tokens: brief.tokensBefore });
    expect(restored.activeVersion).toBeGreaterThan(after.activeVersion);
    expect((await conversations.export(id)).text).not.toContain('client summary');
    expect((await conversations.events(id, { since: page.next })).events.map((e) => e.type)).toEqual([
      'restored',
    ]);

    expect(await conversations.end(id)).toEqual({ rounds: 4 });
    expect(await conversations.status(id)).toMatchObject({ ended: true, rounds: 4 });
    // The workflow completes just after `end` answers: then no more events can come.
    await waitFor(
      () => conversations.describe(id),
      (d) => d.workflowStatus === 'COMPLETED',
      30_000,
      'the workflow to complete',
    );
    expect((await conversations.events(id)).running).toBe(false);
  });
});

describe('typed errors', () => {
  it('an unknown id: ConversationNotFoundError from every method', async () => {
    const id = uniqueId('no-such');
    const calls: [string, () => Promise<unknown>][] = [
      ['send', () => conversations.send(id, 'hi')],
      ['queue', () => conversations.queue(id, 'hi')],
      ['compact', () => conversations.compact(id)],
      ['approve', () => conversations.approve(id)],
      ['reject', () => conversations.reject(id)],
      ['review', () => conversations.review(id, { decision: 'approve' })],
      ['status', () => conversations.status(id)],
      ['restore', () => conversations.restore(id, 1)],
      ['events', () => conversations.events(id)],
      ['end', () => conversations.end(id)],
      ['export', () => conversations.export(id)],
      ['describe', () => conversations.describe(id)],
    ];
    for (const [name, call] of calls) {
      const err = await refused(call(), ConversationNotFoundError, {
        type: 'CONVERSATION_NOT_FOUND',
        conversationId: id,
        badInput: true,
        message: `no conversation ${id}`,
      });
      expect(err.message, name).toBe(`no conversation ${id}`);
    }
  });

  it('a workflow that is not a conversation is not found either, and says what it is', async () => {
    const id = uniqueId('smoke');
    const handle = await env.client.workflow.start('smokeWorkflow', {
      workflowId: id,
      taskQueue: uniqueId('nobody'),
      args: [{ key: 'k', model: 'm' }],
    });
    try {
      await refused(conversations.send(id, 'hi'), ConversationNotFoundError, {
        message: `no conversation ${id} (workflow ${id} is a smokeWorkflow)`,
      });
    } finally {
      await handle.terminate('test finished');
    }
  });

  it('bad input: BadInputError with the check that refused it, nothing sent or changed', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text('ok'));
    const id = await start({ maxInputChars: 1000 });
    await conversations.send(id, 'one');
    const status = await conversations.status(id);
    const asked = env.llm.chatRequests().length;

    const bad = { conversationId: id, badInput: true };
    await refused(conversations.send(id, '  \n '), BadInputError, {
      ...bad,
      type: 'BAD_INPUT',
      message: 'message is empty: send some text',
    });
    await refused(conversations.queue(id, 'x'.repeat(1001)), BadInputError, {
      ...bad,
      type: 'BAD_INPUT',
      message: 'message is too long: 1001 characters, the limit is 1000 (maxInputChars)',
    });
    // The conversation's own validator refuses it: the same class, in its words.
    await refused(conversations.compact(id, { focus: 'f'.repeat(4001) }), BadInputError, {
      ...bad,
      type: 'BAD_INPUT',
      message: 'focus is too long (over 4000 characters)',
    });
    await refused(conversations.restore(id, 0), BadInputError, {
      ...bad,
      type: 'BAD_INPUT',
      message: 'version must be a positive integer',
    });
    await refused(conversations.restore(id, 99), BadInputError, {
      ...bad,
      type: 'VERSION_NOT_FOUND',
      message: /has no version 99/,
    });
    await refused(conversations.export(id, { version: 99 }), BadInputError, {
      ...bad,
      type: 'VERSION_NOT_FOUND',
      message: /has no version 99/,
    });
    await refused(conversations.events(id, { since: -1 }), BadInputError, { ...bad, type: 'BAD_INPUT' });

    expect(env.llm.chatRequests()).toHaveLength(asked);
    expect(await conversations.status(id)).toMatchObject({
      rounds: 1,
      activeVersion: status.activeVersion,
      compactions: 0,
      queued: 0,
    });
  });

  it('a start refused: a bad config or id (nothing started), an id taken, a tool the worker does not have', async () => {
    const badConfig = input({ maxContextTokens: 100 });
    await refused(conversations.start(badConfig), BadInputError, {
      type: 'CONFIG_INVALID',
      conversationId: badConfig.conversationId,
      badInput: true,
      message: /^invalid compaction config: maxContextTokens: maxContextTokens must be at least 256/,
    });
    await refused(conversations.describe(badConfig.conversationId!), ConversationNotFoundError, {});
    await refused(conversations.start(input({}, { conversationId: 'no/slash' })), BadInputError, {
      type: 'INVALID_CONVERSATION_ID',
      message: /invalid conversation id "no\/slash"/,
    });

    env.llm.reset();
    env.llm.setDefault(step.text('ok'));
    const id = await start();
    await refused(conversations.start(input({}, { conversationId: id })), ConversationExistsError, {
      type: 'CONVERSATION_EXISTS',
      conversationId: id,
      badInput: true,
      message: `conversation ${id} already exists`,
    });

    const tool = input({}, { tools: ['read_file', 'nosuch_tool'] });
    started.push(tool.conversationId!);
    await refused(conversations.start(tool), BadInputError, {
      type: 'TOOL_UNKNOWN',
      conversationId: tool.conversationId,
      message: new RegExp(`^conversation ${tool.conversationId} failed to start: unknown tool "nosuch_tool"`),
    });
    // It failed, and says how when asked to do anything.
    const ended = await refused(conversations.send(tool.conversationId!, 'hi'), ConversationEndedError, {
      type: 'CONVERSATION_ENDED',
      workflowStatus: 'FAILED',
      message: /has ended: it failed \(unknown tool "nosuch_tool"/,
    });
    expect(ended.failure).toMatchObject({ type: 'TOOL_UNKNOWN' });
  });

  it('an ended conversation: ConversationEndedError saying how it closed', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text('ok'));
    const id = await start();
    await conversations.send(id, 'one');
    await conversations.end(id);
    // Ending (the workflow not yet closed) or ended, a message is refused the same way.
    await refused(conversations.send(id, 'right after'), ConversationEndedError, {
      message: `conversation ${id} has ended`,
    });
    // `end` answers once the last round is done; the workflow completes just after.
    await waitFor(
      () => conversations.describe(id),
      (d) => !d.running,
      30_000,
      'the workflow to complete',
    );
    const asked = env.llm.chatRequests().length;
    for (const call of [
      () => conversations.send(id, 'more'),
      () => conversations.compact(id),
      () => conversations.restore(id, 1),
      () => conversations.approve(id),
      () => conversations.end(id),
    ]) {
      await refused(call(), ConversationEndedError, {
        type: 'CONVERSATION_ENDED',
        conversationId: id,
        badInput: true,
        workflowStatus: 'COMPLETED',
        message: `conversation ${id} has ended`,
      });
    }
    expect(env.llm.chatRequests()).toHaveLength(asked);

    const terminated = await start();
    await env.client.workflow.getHandle(terminated).terminate('test');
    await refused(conversations.send(terminated, 'hi'), ConversationEndedError, {
      workflowStatus: 'TERMINATED',
      message: `conversation ${terminated} has ended (its workflow is terminated)`,
    });
  });

  it('export without a store: StoreRequiredError says what to give the client', async () => {
    const storeless = new ConversationClient({ client: env.client, taskQueue: env.taskQueue });
    await refused(storeless.export('any-conversation'), StoreRequiredError, {
      type: 'STORE_REQUIRED',
      conversationId: 'any-conversation',
      badInput: true,
      message: /^export reads the conversation store, and this client has none: .*`pool`.*`databaseUrl`/,
    });
  });

  it('no worker on the task queue: the start is not ready, and a query is NotRespondingError', async () => {
    const queue = uniqueId('no-worker');
    const lonely = new ConversationClient({ client: env.client, taskQueue: queue, queryTimeoutMs: 1000 });
    const result = await lonely.start(input(), { waitMs: 0 });
    started.push(result.conversationId);
    expect(result).toMatchObject({ taskQueue: queue, ready: false });
    await refused(lonely.status(result.conversationId), NotRespondingError, {
      type: 'NOT_RESPONDING',
      conversationId: result.conversationId,
      badInput: false,
      message: new RegExp(`^conversation ${result.conversationId} did not answer the status query`),
    });
  });
});

describe('a compaction that awaits a person', () => {
  it('approval: nothing awaits → NoApprovalPendingError; queued behind it; rejected → CompactionRejectedError; approved → committed', async () => {
    env.llm.reset();
    // Long replies, so that the summary replaces more than it adds.
    env.llm.setDefault(step.text(words(2000, 'reply')));
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('approved summary'));
    const id = await start({
      maxContextTokens: 20_000,
      roundsThreshold: 3,
      requireConfirmation: true,
      onReject: 'fail',
    });
    for (const decide of [() => conversations.approve(id), () => conversations.reject(id)]) {
      await refused(decide(), NoApprovalPendingError, {
        type: 'NO_APPROVAL_PENDING',
        conversationId: id,
        badInput: true,
        message: 'no compaction is awaiting approval',
      });
    }
    for (const m of ['one', 'two']) await conversations.send(id, m);
    const third = rejectionOf(conversations.send(id, 'three'));
    const waiting = await waitFor(
      () => conversations.status(id),
      (s) => s.awaitingApproval !== null,
      60_000,
      'the approval',
    );
    const fourth = await conversations.queue(id, 'four');
    expect(fourth.awaiting).toEqual({ trigger: waiting.awaitingApproval!.trigger, awaits: 'approval' });
    expect(await conversations.status(id)).toMatchObject({ queued: 1, compactions: waiting.compactions });

    expect(await conversations.reject(id)).toEqual({ decision: 'rejected' });
    const declined = await third;
    expect(declined).toBeInstanceOf(CompactionRejectedError);
    expect(declined).toMatchObject({ type: 'COMPACTION_REJECTED', conversationId: id, badInput: false });
    expect((declined as Error).message).toMatch(/it was declined/);

    // The queued round needs the compaction too: asked again, approved, it runs.
    await waitFor(
      () => conversations.status(id),
      (s) => s.awaitingApproval !== null,
      60_000,
      'the second approval',
    );
    expect(await conversations.approve(id)).toEqual({ decision: 'approved' });
    const answered = await fourth.result();
    expect(answered.compactions.map((c) => c.status)).toContain('committed');
    expect(JSON.stringify(env.llm.chatRequests().at(-1)?.body)).toContain('four');
  });

  it('review: nothing awaits → NoReviewPendingError; a refused edit changes nothing; approved → committed', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text(words(1500, 'reply')));
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('the reviewed summary'));
    const id = await start({ maxContextTokens: 20_000, reviewSummary: true });
    for (let i = 0; i < 3; i++) await conversations.send(id, words(300, `v${i}w`));
    await refused(conversations.review(id, { decision: 'approve' }), NoReviewPendingError, {
      type: 'NO_REVIEW_PENDING',
      conversationId: id,
      badInput: true,
      decidedMeanwhile: false,
      message: `no compaction of ${id} awaits review`,
    });

    const compacting = conversations.compact(id);
    const { review } = await waitFor(
      () => conversations.status(id),
      (s) => Boolean(s.review),
      60_000,
      'the review',
    );
    expect(review).toMatchObject({ workflowId: `${id}/compaction-1`, seq: 1, trigger: 'manual' });
    await refused(conversations.review(id, { decision: 'approve', summary: ' \n ' }), BadInputError, {
      type: 'BAD_INPUT',
      message: 'the edited summary is empty; nothing changed',
    });
    await refused(conversations.review(id, { decision: 'reject', summary: 'mine' }), BadInputError, {
      type: 'BAD_INPUT',
      message: 'an edited summary goes with approve, not reject',
    });
    expect((await conversations.status(id)).review).toEqual(review);

    const result = await conversations.review(id, { decision: 'approve' });
    expect(result).toMatchObject({ decision: 'approved', edited: false, status: 'committed' });
    expect(await compacting).toMatchObject({ status: 'committed', review: { decision: 'approved' } });
    await refused(conversations.review(id, { decision: 'approve' }), NoReviewPendingError, {
      decidedMeanwhile: false,
    });
  });
});
