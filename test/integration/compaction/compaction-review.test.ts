/**
 * Review before commit (issue 23 item 4), on the real dev server, PostgreSQL and the fake LLM: with
 * `reviewSummary` the compaction child stops after its summary and the parent reports
 * `awaiting_review` with the proposal; approved, approved with an edit (by the CLI), an edit refused
 * (empty, over the budget: nothing changed), rejected (compensation, then `onReject`), timed out
 * (the default applies), and a worker SIGKILLed while the review waits.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideCompaction } from '../../../src/cli/commands/control';
import { ConversationClient } from '../../../src/client';
import { SUMMARY_MESSAGE_PREFIX } from '../../../src/context/post-compaction';
import { payloadCodecsFor } from '../../../src/infra/codec';
import { ConversationStore } from '../../../src/store';
import {
  compactionProgressQuery,
  compactUpdate,
  sendMessageUpdate,
  statusQuery,
  type AgentConversationInput,
  type ConversationStatus,
  type PendingReview,
} from '../../../workflows/definitions';
import { runCli, spawnWorker, workerStarted } from '../../support/cli-process';
import { isSummaryRequest, startFakeOpenAI, step } from '../../support/fake-openai';
import {
  activityNames,
  allHistories,
  encodeHistory,
  startConversationEnv,
  TEST_API_KEY,
  waitFor,
  words,
  type Conversation,
  type ConversationEnv,
} from '../../support/conversation-env';
import { startTestWorker, testDatabaseUrl, testTemporalAddress, uniqueId } from '../../support/harness';

const SUMMARY = 'The user talked about three topics; nothing is pending.';
const CLI_ENV = () => ({ TEMPORAL_ADDRESS: testTemporalAddress(), DATABASE_URL: testDatabaseUrl() });

let env: ConversationEnv;
beforeAll(async () => {
  env = await startConversationEnv();
});
afterAll(async () => {
  await env?.close();
});

/** Long agent replies (so a summary saves tokens) and a short summary. */
function resetLlm(): void {
  env.llm.reset();
  env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary(SUMMARY));
  env.llm.setDefault(step.text(words(1500, 'reply')));
}

/** A conversation with review on and three rounds of history. */
async function conversationWithHistory(config: Record<string, unknown> = {}): Promise<Conversation> {
  resetLlm();
  const conv = await env.startConversation({
    config: { maxContextTokens: 20_000, reviewSummary: true, ...config },
  });
  for (let i = 0; i < 3; i++) await conv.send(words(300, `r${i}w`));
  return conv;
}

async function awaitingReview(conv: Conversation): Promise<ConversationStatus & { review: PendingReview }> {
  const status = await conv.waitForStatus((s) => s.phase === 'awaiting_review' && Boolean(s.review));
  return status as ConversationStatus & { review: PendingReview };
}

/** What a review must not have changed yet: the active context, the compaction still running. */
async function storeSnapshot(conv: Conversation) {
  const [record] = await conv.compactions();
  return {
    active: (await conv.activeContext()).items.map((i) => i.id),
    archived: (await conv.archive()).length,
    status: record?.status,
    stagedVersion: record?.stagedVersion,
  };
}

describe('review before commit', () => {
  it('approved: the parent reports the proposal, `review` shows it, the proposed summary is committed', async () => {
    const conv = await conversationWithHistory();
    const before = await storeSnapshot(conv);
    const compacting = conv.compact();
    const { review } = await awaitingReview(conv);
    expect(review).toMatchObject({
      workflowId: `${conv.id}/compaction-1`,
      seq: 1,
      trigger: 'manual',
      summaryPreview: expect.stringContaining(SUMMARY),
      onTimeout: 'approve',
      edited: false,
    });
    expect(review.tokensAfter).toBeLessThan(review.tokensBefore);
    expect(review.removes.itemsSummarized).toBeGreaterThan(0);
    expect(review.summaryBudget).toBeGreaterThanOrEqual(review.summaryTokens);
    expect(review.deadline - Date.now()).toBeGreaterThan(3_500_000);
    // Nothing is committed while it waits.
    const during = await storeSnapshot(conv);
    expect(during.active).toEqual(before.active);
    expect(during).toMatchObject({ status: 'running', stagedVersion: expect.any(Number) });
    const child = env.client.workflow.getHandle(review.workflowId);
    expect(await child.query(compactionProgressQuery)).toMatchObject({ phase: 'review', review });
    expect((await conv.events()).filter((e) => e.type === 'awaiting_review')).toHaveLength(1);

    const shown = await runCli(['review', conv.id], CLI_ENV());
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(
      /^compaction #1 \(manual.*\) of \S+ awaits review · approve by default in \d+ min$/m,
    );
    expect(shown.stdout).toMatch(/^ {2}tokens {5}[\d,]+ → [\d,]+ \(saved \d+%/m);
    // The whole text, from the store, without the summary item's prefix line.
    expect(shown.stdout).toContain(SUMMARY);
    expect(shown.stdout).not.toContain(SUMMARY_MESSAGE_PREFIX);

    const answer = await decideCompaction(env.conversations, { id: conv.id, approve: true });
    expect(answer.review).toMatchObject({ decision: 'approved', edited: false, status: 'committed' });
    const brief = await compacting;
    expect(brief).toMatchObject({ status: 'committed', review: { decision: 'approved', timedOut: false } });
    const { items } = await conv.activeContext();
    expect(items.filter((i) => i.type === 'COMPACTION_SUMMARY').map((i) => i.id)).toEqual([
      review.summaryItemId,
    ]);
    const status = await conv.status();
    expect(status).toMatchObject({ phase: 'idle', review: null, compaction: null });
    expect((await conv.events()).find((e) => e.type === 'review')).toMatchObject({
      decision: 'approved',
      edited: false,
      action: 'commit',
    });
    // Nothing awaits review any more: `review` says so, exit 2.
    const after = await runCli(['review', conv.id], CLI_ENV());
    expect(after.code).toBe(2);
    expect(after.stderr).toMatch(/no compaction of \S+ awaits review/);
  }, 120_000);

  it('a message sent while the review waits is queued, not waited on, and answered after the decision', async () => {
    const conv = await conversationWithHistory();
    const compacting = conv.compact();
    await awaitingReview(conv);
    const queued = await runCli(['send', conv.id, 'sent during the review'], CLI_ENV());
    expect(queued.stderr).toBe('');
    expect(queued.code).toBe(0);
    expect(queued.stdout.trim()).toBe(
      `queued: a manual compaction of ${conv.id} awaits review; the message is answered once it is ` +
        `approved or rejected (\`durable-compaction review ${conv.id}\`, then \`approve ${conv.id}\` or \`reject ${conv.id}\`)`,
    );
    expect((await conv.status()).queued).toBe(1);
    await decideCompaction(env.conversations, { id: conv.id, approve: true });
    expect(await compacting).toMatchObject({ status: 'committed' });
    await conv.waitForStatus((s) => s.queued === 0 && s.phase === 'idle');
    expect(JSON.stringify(env.llm.chatRequests().at(-1)?.body)).toContain('sent during the review');
  }, 120_000);

  it('approved with an edit (`approve --summary-file`): the edited summary is committed, the proposal stays archived', async () => {
    const conv = await conversationWithHistory();
    const compacting = conv.compact();
    const { review } = await awaitingReview(conv);
    const dir = mkdtempSync(join(tmpdir(), 'review-'));
    const file = join(dir, 'summary.md');
    const edited = 'Edited by the reviewer: the user discussed r0, r1 and r2; keep the file paths.';
    writeFileSync(file, `${edited}\n`);
    const run = await runCli(['approve', conv.id, '--summary-file', file], CLI_ENV());
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^approved \(edited summary\): committed, [\d,]+ → [\d,]+ tokens$/m);

    const brief = await compacting;
    expect(brief).toMatchObject({ status: 'committed', review: { decision: 'approved', edited: true } });
    const summaries = (await conv.activeContext()).items.filter((i) => i.type === 'COMPACTION_SUMMARY');
    expect(summaries).toHaveLength(1);
    expect(summaries[0]!.id).toMatch(/:summary:edit:/);
    expect(summaries[0]!.message).toMatchObject({ content: `${SUMMARY_MESSAGE_PREFIX}\n${edited}` });
    expect(brief.tokensAfter).toBe((await conv.activeContext()).items.reduce((n, i) => n + i.tokens, 0));
    // Append-only: the proposal is still in the archive, and the store records the edit.
    expect((await conv.archive()).some((i) => i.id === review.summaryItemId)).toBe(true);
    const [record] = await conv.compactions();
    expect(record).toMatchObject({ status: 'committed', summaryItemId: summaries[0]!.id });
    expect((await conv.compactionEvents(record!.id)).map((e) => e.phase)).toContain('review_edit');
    expect((await conv.events()).find((e) => e.type === 'review')).toMatchObject({ edited: true });
    // The edit, the proposal's preview and the summary travel by reference: in no history (issue 22).
    const full = await conv.fullHistory();
    const bytes = allHistories(full)
      .map((h) => Buffer.from(encodeHistory(h)).toString('latin1'))
      .join('\n');
    expect(bytes).toContain('binary/claim-check');
    expect(bytes).not.toContain('Edited by the reviewer');
  }, 120_000);

  it('an edit refused (empty, over the budget) says why and changes nothing; the review goes on', async () => {
    const conv = await conversationWithHistory();
    const compacting = conv.compact();
    const { review } = await awaitingReview(conv);
    const before = await storeSnapshot(conv);

    await expect(
      decideCompaction(env.conversations, { id: conv.id, approve: true, summary: ' \n ' }),
    ).rejects.toThrow('the edited summary is empty; nothing changed');
    const dir = mkdtempSync(join(tmpdir(), 'review-'));
    const big = join(dir, 'big.md');
    writeFileSync(big, words(3000, 'long'));
    const refused = await runCli(['approve', conv.id, '--summary-file', big], CLI_ENV());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      new RegExp(
        `^error: the edited summary is [\\d]+ tokens, over the summary budget of ${review.summaryBudget} .*; nothing changed$`,
        'm',
      ),
    );

    // Nothing changed: no item, no version, the same proposal still waiting.
    expect(await storeSnapshot(conv)).toEqual(before);
    const still = await conv.status();
    expect(still).toMatchObject({ phase: 'awaiting_review', review: { ...review } });
    const child = (await conv.fullHistory()).children.at(-1)!.history;
    // The refused edit ran its check (nothing written); the empty one never reached an activity.
    expect(activityNames(child).filter((a) => a === 'reviseSummary')).toHaveLength(1);

    expect((await decideCompaction(env.conversations, { id: conv.id, approve: true })).review).toMatchObject({
      status: 'committed',
      edited: false,
    });
    expect((await compacting).status).toBe('committed');
    const summaries = (await conv.activeContext()).items.filter((i) => i.type === 'COMPACTION_SUMMARY');
    expect(summaries.map((i) => i.id)).toEqual([review.summaryItemId]);
  }, 120_000);

  it('rejected: the compensation runs, then the configured rejection choice (drop the oldest rounds)', async () => {
    resetLlm();
    // Rounds of about 2,000 tokens: dropping the oldest gets under the target.
    env.llm.setDefault(step.text(words(8000, 'reply')));
    const conv = await env.startConversation({
      config: {
        maxContextTokens: 20_000,
        roundsThreshold: 3,
        targetRatio: 0.1,
        reviewSummary: true,
        onReject: 'drop_oldest',
      },
    });
    for (let i = 0; i < 2; i++) await conv.send(words(300, `j${i}w`));
    const activeBefore = (await conv.activeContext()).version;
    const third = conv.send('third');
    const { review } = await awaitingReview(conv);
    expect(review.trigger).toBe('rounds');

    const run = await runCli(['reject', conv.id], CLI_ENV());
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe('rejected: rolled back (rejected in review)');
    const result = await third;
    expect(result.compactions).toMatchObject([
      {
        seq: 1,
        trigger: 'rounds',
        status: 'rolled_back',
        reason: 'rejected in review',
        review: { decision: 'rejected' },
      },
      { seq: 2, trigger: 'rounds', status: 'committed', strategy: 'drop_oldest' },
    ]);
    // The compensation discarded the staged versions: the first compaction changed nothing.
    const [first, second] = await conv.compactions();
    expect(first).toMatchObject({ status: 'rolled_back', reason: 'rejected in review' });
    expect(second).toMatchObject({ status: 'committed', strategy: 'drop_oldest' });
    const children = (await conv.fullHistory()).children;
    expect(activityNames(children[0]!.history)).toContain('discardStaged');
    const { items, version } = await conv.activeContext();
    expect(version).toBeGreaterThan(activeBefore);
    expect(items.filter((i) => i.type === 'COMPACTION_SUMMARY')).toHaveLength(0);
    const events = await conv.events();
    expect(events.find((e) => e.type === 'review')).toMatchObject({
      seq: 1,
      decision: 'rejected',
      action: 'drop_oldest',
    });
  }, 120_000);

  it('timed out: the configured default applies (reject, then go on uncompacted; approve commits)', async () => {
    resetLlm();
    const conv = await env.startConversation({
      config: {
        maxContextTokens: 20_000,
        roundsThreshold: 3,
        reviewSummary: true,
        reviewTimeoutMs: 1500,
        reviewDefault: 'reject',
        onReject: 'continue',
      },
    });
    for (let i = 0; i < 2; i++) await conv.send(words(300, `t${i}w`));
    const { version: activeBefore } = await conv.activeContext();
    const result = await conv.send('third');
    expect(result.compactions).toMatchObject([
      {
        status: 'rolled_back',
        reason: 'review timed out: rejected (reviewDefault)',
        review: { decision: 'rejected', timedOut: true },
      },
    ]);
    expect((await conv.activeContext()).version).toBe(activeBefore);
    expect((await conv.events()).find((e) => e.type === 'review')).toMatchObject({
      decision: 'timed_out',
      action: 'continue',
    });

    // The other default: a manual compaction whose review times out is committed.
    const approving = await conversationWithHistory({ reviewTimeoutMs: 1500 });
    const brief = await approving.compact();
    expect(brief).toMatchObject({ status: 'committed', review: { decision: 'approved', timedOut: true } });
  }, 120_000);
});

describe('a worker SIGKILLed while the review waits', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('changes nothing; on a new worker the review is still there and approve commits it', async () => {
    const llm = await startFakeOpenAI({ apiKey: TEST_API_KEY });
    llm.when((r) => isSummaryRequest(r)).setDefault(step.summary(SUMMARY));
    llm.setDefault(step.text(words(1500, 'long')));
    const taskQueue = uniqueId('review-kill');
    const conversationId = uniqueId('review-kill-conv');
    const pool = new (await import('pg')).Pool({ connectionString: testDatabaseUrl(), max: 3 });
    const store = new ConversationStore(pool);
    const connection = await Connection.connect({ address: testTemporalAddress() });
    const client = new Client({ connection, dataConverter: { payloadCodecs: payloadCodecsFor(pool) } });
    let second: Awaited<ReturnType<typeof startTestWorker>> | undefined;
    try {
      const worker = spawnWorker(taskQueue, {
        TEMPORAL_ADDRESS: testTemporalAddress(),
        DATABASE_URL: testDatabaseUrl(),
        OPENAI_API_KEY: TEST_API_KEY,
        OPENAI_BASE_URL: llm.url,
      });
      child = worker.child;
      await workerStarted(worker);
      const input: AgentConversationInput = {
        conversationId,
        systemPrompt: 'You are an agent.',
        model: { provider: 'openai', model: 'fake-model' },
        config: { maxContextTokens: 20_000, reviewSummary: true },
        searchAttributes: false,
      };
      const handle = await client.workflow.start('agentConversation', {
        workflowId: conversationId,
        taskQueue,
        args: [input],
      });
      for (let i = 0; i < 3; i++)
        await handle.executeUpdate(sendMessageUpdate, { args: [words(300, `k${i}w`)] });
      const compacting = handle.executeUpdate(compactUpdate, { args: [{}] });
      const { review } = (await waitFor(
        () => handle.query(statusQuery),
        (s) => s.phase === 'awaiting_review',
        60_000,
        'the review',
      )) as ConversationStatus & { review: PendingReview };
      const active = await store.getActiveContext(conversationId);

      child.kill('SIGKILL');
      await new Promise((resolve) => child?.once('exit', resolve));
      // With no worker, nothing moves: the compaction still runs, the context is what it was.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const [record] = await store.listCompactions(conversationId);
      expect(record).toMatchObject({ status: 'running' });
      expect((await store.getActiveContext(conversationId)).version).toBe(active.version);

      second = await startTestWorker({
        taskQueue,
        llm: { apiKey: TEST_API_KEY, baseURL: llm.url, timeoutMs: 10_000 },
      });
      // The new worker replays the parent and the child: the same review waits.
      const status = await waitFor(
        () => handle.query(statusQuery),
        (s) => s.phase === 'awaiting_review',
        60_000,
        'the review on the new worker',
      );
      expect(status.review).toEqual(review);
      const answer = await decideCompaction(new ConversationClient({ client, pool }), {
        id: conversationId,
        approve: true,
      });
      expect(answer.review).toMatchObject({ decision: 'approved', status: 'committed' });
      expect(await compacting).toMatchObject({ status: 'committed', compactionId: record!.id });
      const records = await store.listCompactions(conversationId);
      expect(records.map((r) => r.status)).toEqual(['committed']);
      const { items } = await store.getActiveContext(conversationId);
      expect(items.filter((i) => i.type === 'COMPACTION_SUMMARY').map((i) => i.id)).toEqual([
        review.summaryItemId,
      ]);
      // The summary was asked for once: the review waited, it did not run the compaction again.
      expect(llm.chatRequests().filter((r) => isSummaryRequest(r))).toHaveLength(1);
    } finally {
      await client.workflow
        .getHandle(conversationId)
        .terminate('test finished')
        .catch(() => undefined);
      await second?.shutdown();
      await connection.close();
      await pool.end();
      await llm.close();
    }
  }, 240_000);
});
