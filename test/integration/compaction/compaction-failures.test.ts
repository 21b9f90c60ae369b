/**
 * Every trigger of DESIGN.md §3 and the failure paths of the compaction child workflow (§4), on
 * the real dev server, real PostgreSQL and the fake LLM: retries of the summary, rollback with
 * the context unchanged, the cooldown timer and the skips it causes, a failing commit, a hanging
 * LLM, overflow, and the optional confirmation.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localActivityType } from '../../../src/replay/timeline';
import type { ChatMessage, ToolDefinition } from '../../../src/context/items';
import { tokenCounterForModel } from '../../../src/tokens';
import { isSummaryRequest, step, type FakeLane } from '../../support/fake-openai';
import {
  activityAttempts,
  activityNames,
  eventSummary,
  eventsOf,
  startConversationEnv,
  words,
  type Conversation,
  type ConversationEnv,
} from '../../support/conversation-env';

/** Long enough replies that summarizing a round saves tokens. */
const LONG_REPLY = words(1500, 'reply');

let env: ConversationEnv;
let commitFailures = 0;

beforeAll(async () => {
  env = await startConversationEnv({
    llmTimeoutMs: 1500,
    activityOverrides: {
      // Conversations whose id starts with `commitfail` cannot commit (fault injection).
      commitCompaction: async (input: never) => {
        const { compactionId } = input as { compactionId: string };
        const record = await env.store.getCompaction(compactionId);
        if (record?.conversationId.startsWith('commitfail')) {
          commitFailures++;
          throw ApplicationFailure.nonRetryable('injected: the commit transaction failed', 'INJECTED');
        }
        const { compactionActivities } = await import('../../../activities/compaction');
        const { tokenService } = await import('../../../activities');
        return compactionActivities({ store: env.store, tokens: tokenService } as never).commitCompaction(
          input as never,
        );
      },
    },
  });
});
afterAll(async () => {
  await env?.close();
});

let summaries: FakeLane;
/** The summarizer's lane (lanes match in creation order, so there is one per reset). */
function summaryLane(): FakeLane {
  return summaries;
}

/** Fresh fake: long agent replies on the main queue, good summaries on their lane. */
function resetLlm(): void {
  env.llm.reset();
  summaries = env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('a good summary'));
  env.llm.setDefault(step.text(LONG_REPLY));
}

/** The model calls (local activities) in a history. */
function modelCallMarkers(history: Parameters<typeof eventsOf>[0]): number {
  return eventsOf(history, 'MARKER_RECORDED').filter((e) => localActivityType(e) === 'callModel').length;
}

async function talk(conv: Conversation, rounds: number, prefix = 'q'): Promise<void> {
  for (let i = 0; i < rounds; i++) await conv.send(words(300, `${prefix}${i}w`));
}

/** What the model was sent after the first `from` requests (summaries aside), counted as the conversation counts it. */
function agentRequestSizes(from: number): number[] {
  const counter = tokenCounterForModel('fake-model');
  return env.llm
    .chatRequests()
    .slice(from)
    .filter((r) => !isSummaryRequest(r))
    .map((r) =>
      counter.countRequest({
        messages: (r.body.messages ?? []) as ChatMessage[],
        tools: (r.body.tools ?? []) as ToolDefinition[],
      }),
    );
}

async function activeIds(conv: Conversation): Promise<string[]> {
  return (await conv.activeContext()).items.map((i) => i.id);
}

describe('triggers after the model call and on counts', () => {
  it('check: the reported usage crosses 80% of the window', async () => {
    resetLlm();
    const conv = await env.startConversation({ config: { maxContextTokens: 20_000 } });
    await talk(conv, 2);
    env.llm.script(step.text(LONG_REPLY, { usage: { prompt_tokens: 16_500, completion_tokens: 100 } }));
    const result = await conv.send('one more');
    expect(result.compactions.map((c) => c.trigger)).toContain('check');
    const pre = (await conv.events()).find((e) => e.type === 'pre_compact');
    expect(pre).toMatchObject({ trigger: 'check' });
    expect(pre && 'detail' in pre ? pre.detail : '').toContain('reported usage 16600');
  });

  it('marker: the model writes !!!SUMMARY!!!', async () => {
    resetLlm();
    const conv = await env.startConversation({ config: { maxContextTokens: 20_000 } });
    await talk(conv, 3);
    env.llm.script(step.text('I am losing track. !!!SUMMARY!!!'));
    const result = await conv.send('go on');
    expect(result.compactions[0]).toMatchObject({ trigger: 'marker', status: 'committed' });
  });

  it('rounds: the configured number of real rounds since the last compaction', async () => {
    resetLlm();
    const conv = await env.startConversation({ config: { maxContextTokens: 20_000, roundsThreshold: 4 } });
    await talk(conv, 3);
    expect((await conv.status()).compactions).toBe(0);
    const result = await conv.send('fourth');
    expect(result.compactions[0]).toMatchObject({ trigger: 'rounds', status: 'committed' });
  });

  it('events: the number of items in the context', async () => {
    resetLlm();
    const conv = await env.startConversation({ config: { maxContextTokens: 20_000, eventsThreshold: 8 } });
    await talk(conv, 3);
    const result = await conv.send('more');
    expect(result.compactions[0]).toMatchObject({ trigger: 'events', status: 'committed' });
  });

  it('overflow: a context-length error compacts and retries the model call once', async () => {
    resetLlm();
    const conv = await env.startConversation({ config: { maxContextTokens: 20_000 } });
    await talk(conv, 3);
    const before = env.llm.chatRequests().length;
    env.llm.script(step.contextLengthExceeded(), step.text('after the emergency compaction'));
    const result = await conv.send('big question');
    expect(result.reply).toBe('after the emergency compaction');
    expect(result.compactions[0]).toMatchObject({ trigger: 'overflow', status: 'committed' });
    const agentCalls = env.llm
      .chatRequests()
      .slice(before)
      .filter((r) => !isSummaryRequest(r));
    expect(agentCalls).toHaveLength(2);
  });
});

describe('loop guard', () => {
  /** A system prompt (~2,400 tokens) over the target of a 4,000-token window: no automatic compaction can help. */
  const BIG_PROMPT = words(9000, 'rule');

  it('pauses automatic compaction that makes no progress, records the skips, and arms it again after loopGuardPauseRounds', async () => {
    resetLlm();
    env.llm.setDefault(step.text('ok'));
    const conv = await env.startConversation({
      systemPrompt: BIG_PROMPT,
      config: { maxContextTokens: 4000, roundsThreshold: 2, loopGuardPauseRounds: 2 },
    });
    await conv.send('first');
    // Round 2: the rounds trigger fires; the header alone fills the target: skipped, no progress, paused.
    const second = await conv.send('second');
    expect(second.compactions.map((c) => c.status)).toEqual(['skipped']);
    expect(second.compactions[0]?.reason).toMatch(/^header_exceeds_target: /);
    expect((await conv.status()).pausedReason).toMatch(/saved 0\.0%, under 10%/);
    expect((await conv.events()).some((e) => e.type === 'loop_guard')).toBe(true);
    // Rounds 3 and 4: the trigger fires and is skipped by the pause, recorded once a round.
    for (const text of ['third', 'fourth']) {
      const r = await conv.send(text);
      expect(r.compactions).toHaveLength(1);
      expect(r.compactions[0]).toMatchObject({ trigger: 'rounds', status: 'skipped' });
      expect(r.compactions[0]?.reason).toMatch(/^loop_guard: /);
    }
    // Round 5: two paused rounds are over, so the trigger runs again (and pauses again).
    const fifth = await conv.send('fifth');
    expect(fifth.compactions[0]).toMatchObject({ trigger: 'rounds', status: 'skipped' });
    expect(fifth.compactions[0]?.reason).toMatch(/^header_exceeds_target: /);
    expect((await conv.events()).filter((e) => e.type === 'loop_guard_lifted')).toEqual([
      { type: 'loop_guard_lifted', pausedRounds: 2 },
    ]);
    const markers = eventsOf(await conv.history(), 'MARKER_RECORDED').filter(
      (e) => e.markerRecordedEventAttributes?.markerName === 'core_patch',
    );
    expect(markers).toHaveLength(1);
  });

  it('never pauses healthy compactions, however many run in a round', async () => {
    resetLlm();
    // Each round brings ~1,300 tokens to a 6,000-token window: a compaction every other round, each
    // saving much, and a loop guard that would pause at the first one if it counted them all.
    const conv = await env.startConversation({
      config: { maxContextTokens: 6000, loopGuardMaxCompactions: 1, loopGuardWithinRounds: 1 },
    });
    const statuses: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await conv.send(words(1800, `h${i}w`));
      statuses.push(...r.compactions.map((c) => c.status));
    }
    expect(statuses.length).toBeGreaterThanOrEqual(3);
    expect(new Set(statuses)).toEqual(new Set(['committed']));
    expect((await conv.status()).pausedReason).toBeNull();
    expect((await conv.events()).some((e) => e.type === 'loop_guard')).toBe(false);
  });

  it('while paused, a request over the window is never sent: the emergency compaction runs first', async () => {
    resetLlm();
    env.llm.setDefault(step.text('ok'));
    const conv = await env.startConversation({
      systemPrompt: BIG_PROMPT,
      config: { maxContextTokens: 4000, roundsThreshold: 2, loopGuardPauseRounds: 50 },
    });
    const before = env.llm.chatRequests().length;
    const briefs = [];
    for (let i = 0; i < 8; i++) briefs.push(...(await conv.send(words(1200, `g${i}w`))).compactions);
    // The header fills the target: the automatic compaction was skipped and paused automatic
    // compaction; when the context then went over the window, the emergency compaction ran first.
    expect(briefs[0]).toMatchObject({ trigger: 'precheck', status: 'skipped' });
    expect(briefs.some((c) => c.trigger === 'overflow' && c.status === 'committed')).toBe(true);
    const events = await conv.events();
    const paused = events.findIndex((e) => e.type === 'loop_guard');
    const emergency = events.findIndex((e) => e.type === 'pre_compact' && e.detail.startsWith('emergency: '));
    expect(paused).toBeGreaterThanOrEqual(0);
    expect(emergency).toBeGreaterThan(paused);
    const sizes = agentRequestSizes(before);
    expect(sizes.length).toBe(8);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(4000);
  });
});

describe('summary failures', () => {
  it('fails twice, then succeeds: 3 attempts, committed', async () => {
    resetLlm();
    summaryLane().script(step.contentNull(), step.emptyContent(), step.summary('third time lucky'));
    const conv = await env.startConversation({ config: { maxContextTokens: 20_000 } });
    await talk(conv, 3);
    const brief = await conv.compact();
    expect(brief).toMatchObject({ status: 'committed' });
    const record = (await conv.compactions()).at(-1);
    expect(record).toMatchObject({ status: 'committed', attempts: 3 });
    const child = (await conv.fullHistory()).children.at(-1)!.history;
    // Strategies with nothing to summarize make no call; the one that did took 3 attempts.
    const attempts = activityAttempts(child, 'summarize');
    expect(attempts.map((a) => a.attempt)).toContain(3);
    expect(attempts.find((a) => a.attempt === 3)?.lastFailure).toMatch(/empty_summary/);
  });

  it('fails every time: rolled back, context unchanged, cooldown, automatic triggers skipped, manual still runs', async () => {
    resetLlm();
    summaryLane().setDefault(step.contentNull());
    const conv = await env.startConversation({
      config: { maxContextTokens: 20_000, roundsThreshold: 3, cooldownMs: 60_000 },
    });
    await talk(conv, 2);
    const before = await activeIds(conv);
    const third = await conv.send('third');
    const failed = third.compactions[0];
    expect(failed).toMatchObject({ trigger: 'rounds', status: 'rolled_back' });
    expect(failed?.reason).toContain('content_none');
    // The context is exactly what it was, plus this round's own messages.
    const after = await activeIds(conv);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after).toHaveLength(before.length + 2);
    const record = (await conv.compactions()).find((c) => c.seq === failed?.seq);
    expect(record).toMatchObject({ status: 'rolled_back', stagedVersion: expect.any(Number) });

    const status = await conv.status();
    expect(status.cooldownActive).toBe(true);
    const timers = eventsOf(await conv.history(), 'TIMER_STARTED').map(eventSummary);
    expect(timers.some((t) => /cooldown/i.test(t ?? ''))).toBe(true);

    // The next automatic trigger is skipped and recorded.
    const fourth = await conv.send('fourth');
    expect(fourth.compactions[0]).toMatchObject({ trigger: 'rounds', status: 'skipped' });
    expect(fourth.compactions[0]?.reason).toMatch(/^cooldown/);

    // A manual compaction ignores the cooldown.
    summaryLane().setDefault(step.summary('manual works'));
    const manual = await conv.compact();
    expect(manual).toMatchObject({ trigger: 'manual', status: 'committed' });
  });

  it('during the cooldown a trigger that fires at every check is recorded once a round, without an extra model call', async () => {
    resetLlm();
    summaryLane().setDefault(step.contentNull());
    const conv = await env.startConversation({
      config: { maxContextTokens: 20_000, eventsThreshold: 4, cooldownMs: 60_000 },
    });
    await conv.send('first');
    await conv.send('second');
    expect((await conv.compactions()).at(-1)).toMatchObject({ trigger: 'events', status: 'rolled_back' });
    expect((await conv.status()).cooldownActive).toBe(true);

    // A round with a tool call: the events trigger fires before both model calls, the usage check
    // after both. Recorded: one skip.
    const usage = { prompt_tokens: 17_000, completion_tokens: 50 };
    env.llm.script(
      step.toolCalls([{ id: 'call_skip', name: 'remember', arguments: { note: 'n' } }], { usage }),
      step.text('done', { usage }),
    );
    const since = env.llm.chatRequests().length;
    const callsBefore = modelCallMarkers(await conv.history());
    const result = await conv.send('third');
    expect(result.reply).toBe('done');
    expect(result.compactions).toEqual([
      expect.objectContaining({
        trigger: 'events',
        status: 'skipped',
        reason: expect.stringMatching(/^cooldown/),
      }),
    ]);
    expect((await conv.compactions()).filter((c) => c.status === 'skipped')).toHaveLength(1);
    expect(env.llm.chatRequests().slice(since)).toHaveLength(2);
    // Two model calls in the history, not a third that stopped at the precheck.
    expect(modelCallMarkers(await conv.history()) - callsBefore).toBe(2);

    // The next round records its own skip.
    const fourth = await conv.send('fourth');
    expect(fourth.compactions.map((c) => c.status)).toEqual(['skipped']);
  });

  it('an emergency compaction whose summary call fails every time commits with the extractive summary: the model is asked again, the cooldown starts', async () => {
    resetLlm();
    summaryLane().setDefault(step.serverError());
    const conv = await env.startConversation({ config: { maxContextTokens: 20_000, cooldownMs: 60_000 } });
    await talk(conv, 3);
    const before = env.llm.chatRequests().length;
    env.llm.script(step.contextLengthExceeded(), step.text('after the emergency compaction'));
    const result = await conv.send('big question');
    expect(result.reply).toBe('after the emergency compaction');
    expect(result.compactions[0]).toMatchObject({
      trigger: 'overflow',
      status: 'committed',
      summaryFallback: expect.stringContaining('LLM_SERVER_ERROR'),
    });
    // Every attempt of the summary call was made before the extractive summary stood in.
    const summaryCalls = env.llm
      .chatRequests()
      .slice(before)
      .filter((r) => isSummaryRequest(r));
    expect(summaryCalls).toHaveLength(3);
    const record = (await conv.compactions()).find((c) => c.seq === result.compactions[0]?.seq);
    expect(record).toMatchObject({ status: 'committed', attempts: 3 });
    const summary = (await conv.activeContext()).items.find((i) => i.type === 'COMPACTION_SUMMARY');
    expect(JSON.stringify(summary?.message)).toContain('Extractive summary');
    const events = await conv.events();
    expect(events.find((e) => e.type === 'summary_fallback')).toMatchObject({
      seq: result.compactions[0]?.seq,
      reason: expect.stringContaining('LLM_SERVER_ERROR'),
    });
    expect((await conv.status()).cooldownActive).toBe(true);
    // An automatic compaction is not an emergency: its failure still rolls back (the test above).
  });

  it('a failing commit is compensated: rolled back, the staged version discarded, context unchanged', async () => {
    resetLlm();
    const conv = await env.startConversation({ name: 'commitfail', config: { maxContextTokens: 20_000 } });
    await talk(conv, 3);
    const before = await activeIds(conv);
    const failuresBefore = commitFailures;
    const brief = await conv.compact();
    expect(brief.status).toBe('rolled_back');
    expect(brief.reason).toContain('injected: the commit transaction failed');
    expect(commitFailures).toBe(failuresBefore + 1);
    expect(await activeIds(conv)).toEqual(before);
    const versions = await env.store.listVersions(conv.id);
    expect(versions.find((v) => v.status === 'discarded')).toBeTruthy();
  });

  it('a hanging LLM times out and the retry succeeds', async () => {
    resetLlm();
    summaryLane().script(step.hang(), step.summary('after the hang'));
    const conv = await env.startConversation({ config: { maxContextTokens: 20_000 } });
    await talk(conv, 3);
    const brief = await conv.compact();
    expect(brief).toMatchObject({ status: 'committed' });
    expect((await conv.compactions()).at(-1)).toMatchObject({ attempts: 2 });
  });
});

describe('the summary as a local activity (summaryCalls: local)', () => {
  it('commits in one workflow task: prune, summary and commit are markers, no activity task', async () => {
    resetLlm();
    summaryLane().setDefault(step.summary('summarized locally'));
    const conv = await env.startConversation({ config: { maxContextTokens: 20_000 }, summaryCalls: 'local' });
    await talk(conv, 3);
    const brief = await conv.compact();
    expect(brief).toMatchObject({ status: 'committed' });
    expect((await conv.activeContext()).items.some((i) => i.type === 'COMPACTION_SUMMARY')).toBe(true);
    const child = (await conv.fullHistory()).children.at(-1)!.history;
    expect(activityNames(child)).toEqual([]);
    const local = eventsOf(child, 'MARKER_RECORDED').map(localActivityType).filter(Boolean);
    expect(local).toEqual(['selectivePrune', 'summarize', 'commitCompaction']);
    expect(eventsOf(child, 'WORKFLOW_TASK_COMPLETED')).toHaveLength(1);
  });

  it('retried locally, then rolled back by the compensation activity: 3 attempts, context unchanged', async () => {
    resetLlm();
    summaryLane().setDefault(step.contentNull());
    const conv = await env.startConversation({ config: { maxContextTokens: 20_000 }, summaryCalls: 'local' });
    await talk(conv, 3);
    const before = await activeIds(conv);
    const brief = await conv.compact();
    expect(brief).toMatchObject({ status: 'rolled_back' });
    expect(brief.reason).toContain('content_none');
    expect(await activeIds(conv)).toEqual(before);
    const record = (await conv.compactions()).at(-1);
    expect(record).toMatchObject({ status: 'rolled_back', attempts: 3 });
    const summaryCalls = env.llm.chatRequests().filter((r) => isSummaryRequest(r));
    expect(summaryCalls).toHaveLength(3);
    const child = (await conv.fullHistory()).children.at(-1)!.history;
    expect(activityNames(child)).toEqual(['discardStaged']);
  });
});

describe('confirmation', () => {
  const confirmConfig = { maxContextTokens: 20_000, roundsThreshold: 3, requireConfirmation: true };

  it('approved: the compaction runs', async () => {
    resetLlm();
    const conv = await env.startConversation({ config: confirmConfig });
    await talk(conv, 2);
    const pending = conv.send('third');
    await conv.waitForStatus((s) => s.awaitingApproval !== null);
    await conv.approve(true);
    const result = await pending;
    expect(result.compactions[0]).toMatchObject({ trigger: 'rounds', status: 'committed' });
    expect((await conv.events()).find((e) => e.type === 'approval')).toMatchObject({ decision: 'approved' });
  });

  it('rejected: the configured choice (drop the oldest rounds) runs instead, without a summary', async () => {
    resetLlm();
    // A low target, so that dropping rounds is needed.
    const conv = await env.startConversation({
      config: { ...confirmConfig, maxContextTokens: 4000, targetRatio: 0.1, onReject: 'drop_oldest' },
    });
    await talk(conv, 2);
    const summariesBefore = env.llm.chatRequests().filter((r) => isSummaryRequest(r)).length;
    const pending = conv.send('third');
    await conv.waitForStatus((s) => s.awaitingApproval !== null);
    await conv.approve(false);
    const result = await pending;
    expect(result.compactions[0]).toMatchObject({ strategy: 'drop_oldest', status: 'committed' });
    expect(env.llm.chatRequests().filter((r) => isSummaryRequest(r))).toHaveLength(summariesBefore);
    expect((await conv.archive()).filter((i) => i.type === 'USER_MESSAGE' && !i.sourceId)).toHaveLength(3);
  });

  it('timed out: the default decision applies (reject, then go on uncompacted)', async () => {
    resetLlm();
    const conv = await env.startConversation({
      config: {
        ...confirmConfig,
        confirmationTimeoutMs: 1000,
        confirmationDefault: 'reject',
        onReject: 'continue',
      },
    });
    await talk(conv, 2);
    const result = await conv.send('third');
    expect(result.compactions.filter((c) => c.status === 'committed')).toHaveLength(0);
    expect((await conv.events()).find((e) => e.type === 'approval')).toMatchObject({
      decision: 'timed_out',
      action: 'continue',
    });
  });

  it('declined with onReject "continue": a request over the window is still never sent, the emergency compaction runs first', async () => {
    resetLlm();
    env.llm.setDefault(step.text('ok'));
    const conv = await env.startConversation({
      config: {
        maxContextTokens: 4000,
        requireConfirmation: true,
        confirmationTimeoutMs: 200,
        confirmationDefault: 'reject',
        onReject: 'continue',
      },
    });
    const before = env.llm.chatRequests().length;
    const briefs = [];
    for (let i = 0; i < 6; i++) briefs.push(...(await conv.send(words(1200, `d${i}w`))).compactions);
    const events = await conv.events();
    // Declined while the requests fit; once one would not, the emergency compaction ran anyway.
    expect(events.some((e) => e.type === 'approval' && e.action === 'continue')).toBe(true);
    expect(briefs.some((c) => c.trigger === 'overflow' && c.status === 'committed')).toBe(true);
    expect(
      events.some(
        (e) => e.type === 'pre_compact' && e.trigger === 'overflow' && e.detail.includes('declined'),
      ),
    ).toBe(true);
    const sizes = agentRequestSizes(before);
    expect(sizes.length).toBe(6);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(4000);
  });
});

describe('meta events (seed 003)', () => {
  it('are always stored with the compaction, and streamed to clients only with emitCompactionMetaEvents', async () => {
    resetLlm();
    const quiet = await env.startConversation({ config: { maxContextTokens: 20_000 } });
    const loud = await env.startConversation({
      config: { maxContextTokens: 20_000, emitCompactionMetaEvents: true },
    });
    for (const conv of [quiet, loud]) {
      await talk(conv, 3);
      expect((await conv.compact()).status).toBe('committed');
    }
    const phases = (events: { type: string; phase?: string }[]) =>
      events.filter((e) => e.type === 'compaction_meta').map((e) => e.phase);
    expect(phases(await quiet.events())).toEqual([]);
    expect(phases(await loud.events())).toEqual(
      expect.arrayContaining([
        'selective_start',
        'selective_done',
        'summary_start',
        'summary_done',
        'commit',
      ]),
    );
    // Stored either way, with the figures of seed 003's meta event.
    for (const conv of [quiet, loud]) {
      const [record] = await conv.compactions();
      const stored = await conv.compactionEvents(record!.id);
      const byPhase = new Map(stored.map((e) => [e.phase, e]));
      expect([...byPhase.keys()]).toEqual(
        expect.arrayContaining([
          'selective_start',
          'selective_done',
          'summary_start',
          'summary_done',
          'commit',
        ]),
      );
      expect(byPhase.get('selective_done')?.data).toMatchObject({
        tokensBefore: expect.any(Number),
        tokensAfter: expect.any(Number),
        toolBlocksKept: expect.any(Number),
        toolBlocksDropped: expect.any(Number),
        toolCallsTruncated: expect.any(Number),
        toolResultsTruncated: expect.any(Number),
      });
    }
    // The pre-compact event records the trigger source; context_compacted carries the figures (seed 004).
    const events = await loud.events();
    expect(events.find((e) => e.type === 'pre_compact')).toMatchObject({ trigger: 'manual' });
    expect(events.find((e) => e.type === 'context_compacted')).toMatchObject({
      originalTokens: expect.any(Number),
      newTokens: expect.any(Number),
      savedRatio: expect.any(Number),
      summaryPreview: expect.stringContaining('a good summary'),
    });
  });
});
