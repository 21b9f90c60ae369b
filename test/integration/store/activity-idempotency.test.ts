/**
 * Activities run at least once (DESIGN.md §2): every one of them, run twice with the same input
 * against the real PostgreSQL (and the fake LLM), must leave the store as one run does — no item,
 * version, membership or compaction row duplicated, and the same result returned.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../../activities';
import type {
  CallModelResult,
  ConversationActivities,
  CompactionActivities,
} from '../../../activities/types';
import type { ContextItem } from '../../../src/context/items';
import { TEST_API_KEY, words } from '../../support/conversation-env';
import { isSummaryRequest, startFakeOpenAI, step, type FakeOpenAI } from '../../support/fake-openai';
import { testDatabaseUrl, uniqueId } from '../../support/harness';

let pool: pg.Pool;
let llm: FakeOpenAI;
let acts: ConversationActivities & CompactionActivities;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: testDatabaseUrl(), max: 4 });
  llm = await startFakeOpenAI({ apiKey: TEST_API_KEY });
  acts = createActivities({
    pool,
    llm: { apiKey: TEST_API_KEY, baseURL: llm.url, timeoutMs: 10_000 },
  }) as unknown as ConversationActivities & CompactionActivities;
});
afterAll(async () => {
  await pool?.end();
  await llm?.close();
});

/** Row counts of everything a conversation owns. */
async function snapshot(conversationId: string) {
  const count = async (sql: string) => Number((await pool.query(sql, [conversationId])).rows[0].n);
  return {
    items: await count('select count(*) as n from items where conversation_id = $1'),
    versions: await count('select count(*) as n from context_versions where conversation_id = $1'),
    members: await count('select count(*) as n from context_version_items where conversation_id = $1'),
    compactions: await count('select count(*) as n from compactions where conversation_id = $1'),
    // summary_start is recorded once per attempt on purpose (inspect shows the retries): count
    // events by key without the attempt number.
    events: await count(
      "select count(distinct (e.compaction_id, regexp_replace(e.key, ':[0-9]+$', ''))) as n from compaction_events e join compactions c on c.id = e.compaction_id where c.conversation_id = $1",
    ),
    active: (await pool.query('select active_version from conversations where id = $1', [conversationId]))
      .rows[0]?.active_version as number,
  };
}

/** Runs the activity twice with the same input (as a retry would); returns both results and the store after each. */
async function twice<I, O>(fn: (input: I) => Promise<O>, input: I, conversationId: string) {
  const first = (await new MockActivityEnvironment({ attempt: 1 }).run(fn, input)) as O;
  const afterFirst = await snapshot(conversationId);
  const second = (await new MockActivityEnvironment({ attempt: 2 }).run(fn, input)) as O;
  const afterSecond = await snapshot(conversationId);
  return { first, second, afterFirst, afterSecond };
}

describe('every activity twice with the same input', () => {
  it('changes the store once and returns the same result', async () => {
    const conversationId = uniqueId('idem');
    const model = { provider: 'openai' as const, model: 'fake-model' };
    llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('idempotent summary'));
    llm.setDefault(step.text(words(800, 'answer')));

    const check = async <I, O>(name: string, fn: (input: I) => Promise<O>, input: I, sameResult = true) => {
      const r = await twice(fn, input, conversationId);
      expect(r.afterSecond, `${name}: the second run changed the store`).toEqual(r.afterFirst);
      if (sameResult) expect(r.second, `${name}: the second run returned something else`).toEqual(r.first);
      return r.first;
    };

    await check('initConversation', acts.initConversation, {
      conversationId,
      systemPrompt: 'You are an agent.',
      tools: ['remember'],
      model: 'fake-model',
    });
    for (let round = 1; round <= 4; round++) {
      await check('appendUserMessage', acts.appendUserMessage, {
        conversationId,
        itemId: `${conversationId}-u${round}`,
        text: words(600, `q${round}x`),
        round,
        model: 'fake-model',
      });
      const call = {
        conversationId,
        itemId: `${conversationId}-a${round}`,
        round,
        step: 0,
        model,
        replyPreviewChars: 100,
        marker: '!!!SUMMARY!!!',
      };
      // The second call finds the stored answer: no second LLM request, same item.
      const before = llm.chatRequests().length;
      await check('callModel', acts.callModel, call, false);
      expect(llm.chatRequests().length).toBe(before + 1);
    }

    // A local call that appends the round's user message first (agentCalls: 'local'), then asks.
    {
      const before = llm.chatRequests().length;
      await check(
        'callModel (with the user message)',
        acts.callModel,
        {
          conversationId,
          itemId: `${conversationId}-a-local`,
          round: 5,
          step: 0,
          model,
          replyPreviewChars: 100,
          marker: '!!!SUMMARY!!!',
          userMessage: { itemId: `${conversationId}-u-local`, text: 'one user message, stored once' },
        },
        false,
      );
      expect(llm.chatRequests().length).toBe(before + 1);
    }

    // A tool result written twice.
    llm.script(step.toolCalls([{ id: 'call_idem', name: 'remember', arguments: { note: 'idempotent' } }]));
    await check(
      'callModel (tool call)',
      acts.callModel,
      {
        conversationId,
        itemId: `${conversationId}-a5`,
        round: 4,
        step: 1,
        model,
        replyPreviewChars: 100,
        marker: '!!!SUMMARY!!!',
      },
      false,
    );
    await check('runTool', acts.runTool, {
      conversationId,
      round: 4,
      callItemId: `${conversationId}-a5`,
      toolCallId: 'call_idem',
      name: 'remember',
      resultItemId: `${conversationId}-t5`,
      workspace: null,
      model,
    });

    // The compaction's activities.
    const compactionId = `${conversationId}-c1`;
    const config = { maxContextTokens: 4000, protectedRounds: 1 };
    const pruned = await check('selectivePrune', acts.selectivePrune, {
      conversationId,
      compactionId,
      seq: 1,
      trigger: 'manual',
      focus: null,
      config,
      model: 'fake-model',
    });
    const summarized = await check(
      'summarize',
      acts.summarize,
      {
        conversationId,
        compactionId,
        prunedVersion: pruned.stagedVersion,
        strategy: 'full',
        keepRecentRounds: 1,
        focus: null,
        config,
        summaryModel: 'fake-model',
        workspace: null,
      },
      false, // `attempts` reports the attempt number
    );
    expect(summarized.itemsCompacted).toBeGreaterThan(0);
    const committed = await check('commitCompaction', acts.commitCompaction, {
      compactionId,
      stagedVersion: summarized.stagedVersion,
    });
    expect(committed.version).toBe(summarized.stagedVersion);
    await check('discardStaged after commit', acts.discardStaged, {
      compactionId,
      reason: 'late compensation',
    });
    const active = await snapshot(conversationId);
    expect(active.active).toBe(summarized.stagedVersion);

    await check('restoreVersion', acts.restoreVersion, {
      conversationId,
      version: 1,
      idemKey: `${conversationId}-r1`,
    });
  });
});

describe('callModel and ephemeral items (seed 002: for one model call)', () => {
  it('sends them once, then drops them from the active context; without any, the totals are the append’s', async () => {
    const { ConversationStore } = await import('../../../src/store');
    const store = new ConversationStore(pool);
    const conversationId = uniqueId('eph');
    const model = { provider: 'openai' as const, model: 'fake-model' };
    llm.reset();
    llm.setDefault(step.text('noted'));
    await new MockActivityEnvironment().run(acts.initConversation, {
      conversationId,
      systemPrompt: 'You are an agent.',
      tools: [],
      model: 'fake-model',
    });
    const call = async (n: number): Promise<CallModelResult> =>
      new MockActivityEnvironment().run(acts.callModel, {
        conversationId,
        itemId: `${conversationId}-a${n}`,
        round: n,
        step: 0,
        model,
        replyPreviewChars: 100,
        marker: '!!!SUMMARY!!!',
        userMessage: { itemId: `${conversationId}-u${n}`, text: `message ${n}` },
      });
    const hint: ContextItem = {
      id: `${conversationId}-hint`,
      type: 'USER_MESSAGE',
      message: { role: 'user', content: 'a one-shot hint' },
      tokens: 5,
      round: 1,
      isMeta: true,
      pinned: false,
      ephemeral: true,
    };
    await store.appendItems(conversationId, [hint]);

    const first = await call(1);
    expect(JSON.stringify(llm.chatRequests().at(-1)?.body.messages)).toContain('a one-shot hint');
    const afterFirst = await store.getActiveContext(conversationId);
    expect(afterFirst.items.map((i) => i.id)).not.toContain(hint.id);
    expect(first.totals).toMatchObject({
      tokens: afterFirst.items.reduce((n, i) => n + i.tokens, 0),
      itemCount: afterFirst.items.length,
    });
    // Still in the archive: nothing is lost.
    expect((await store.getArchive(conversationId)).map((i) => i.id)).toContain(hint.id);

    const second = await call(2);
    expect(JSON.stringify(llm.chatRequests().at(-1)?.body.messages)).not.toContain('a one-shot hint');
    const afterSecond = await store.getActiveContext(conversationId);
    expect(second.totals).toMatchObject({
      version: afterSecond.version,
      tokens: afterSecond.items.reduce((n, i) => n + i.tokens, 0),
      itemCount: afterSecond.items.length,
    });
  });
});
