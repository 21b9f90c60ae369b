/**
 * The agent conversation workflow on the real dev server, real PostgreSQL and the fake LLM:
 * a plain round, tool calls, and the compaction triggers that fire before and after a model call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSummaryRequest, step } from '../../support/fake-openai';
import { testDatabaseUrl } from '../../support/harness';
import { localActivityType } from '../../../src/replay/timeline';
import { createTokenCounter } from '../../../src/tokens';
import {
  activityNames,
  eventSummary,
  eventsOf,
  startConversationEnv,
  TEST_API_KEY,
  waitFor,
  words,
  type ConversationEnv,
} from '../../support/conversation-env';

let env: ConversationEnv;

beforeAll(async () => {
  env = await startConversationEnv();
});
afterAll(async () => {
  await env?.close();
});

/** The local activities of a history (their markers), with the summary each carries. */
const markers = (history: Parameters<typeof eventsOf>[0]) =>
  eventsOf(history, 'MARKER_RECORDED')
    .map((e) => ({ type: localActivityType(e), summary: eventSummary(e) }))
    .filter((m) => m.type !== null);

describe('a round', () => {
  it('answers, stores both messages and reports the tokens', async () => {
    env.llm.reset();
    env.llm.script(step.text('hello back'));
    const conv = await env.startConversation({ systemPrompt: 'You are terse.' });
    const result = await conv.send('hello');
    expect(result.reply).toBe('hello back');
    expect(result.round).toBe(1);
    const { items } = await conv.activeContext();
    expect(items.map((i) => i.type)).toEqual(['SYSTEM_PROMPT', 'USER_MESSAGE', 'ASSISTANT_MESSAGE']);
    expect(result.contextTokens).toBe(items.reduce((n, i) => n + i.tokens, 0));
    const request = env.llm.chatRequests()[0];
    expect(request?.body.messages?.map((m) => m.role)).toEqual(['system', 'user']);
    const status = await conv.status();
    expect(status).toMatchObject({ rounds: 1, phase: 'idle', compactions: 0 });
  });

  it('rejects empty and oversized input in the validator, changing nothing', async () => {
    env.llm.reset();
    const conv = await env.startConversation({ config: { maxInputChars: 50 } });
    await expect(conv.send('   ')).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/empty/i) },
    });
    await expect(conv.send('x'.repeat(51))).rejects.toMatchObject({
      cause: { message: expect.stringContaining('too long: 51 characters, the limit is 50') },
    });
    expect(env.llm.chatRequests()).toHaveLength(0);
    // The validator answered before the workflow created the conversation: wait for that, then look.
    await waitFor(
      () => conv.status(),
      (s) => s.phase === 'idle',
    );
    const { items } = await conv.activeContext();
    expect(items.filter((i) => i.type === 'USER_MESSAGE')).toHaveLength(0);
  });

  it('runs the tools the model calls and sends their results back', async () => {
    env.llm.reset();
    env.llm.script(
      step.toolCalls([
        { id: 'call_1', name: 'remember', arguments: JSON.stringify({ note: 'the answer is 42' }) },
      ]),
      step.text('noted'),
    );
    const conv = await env.startConversation({ tools: ['remember'] });
    const result = await conv.send('remember 42');
    expect(result.reply).toBe('noted');
    const second = env.llm.chatRequests()[1];
    const roles = second?.body.messages?.map((m) => m.role);
    expect(roles).toContain('tool');
    const { items } = await conv.activeContext();
    expect(items.some((i) => i.type === 'MEMORY')).toBe(true);
  });
});

describe('where the agent calls run', () => {
  /** Local-activity markers of a history: activity type and summary. */
  for (const agentCalls of ['local', 'task_queue'] as const) {
    it(`${agentCalls}: a round with a tool call answers the same, with a summary on every call`, async () => {
      env.llm.reset();
      env.llm.script(
        step.toolCalls([{ id: 'call_1', name: 'remember', arguments: JSON.stringify({ note: 'blue' }) }]),
        step.text('noted blue'),
      );
      const conv = await env.startConversation({ tools: ['remember'], agentCalls });
      const result = await conv.send('remember blue');
      expect(result.reply).toBe('noted blue');
      const { items } = await conv.activeContext();
      expect(items.map((i) => i.type)).toEqual(
        expect.arrayContaining(['USER_MESSAGE', 'ASSISTANT_MESSAGE', 'TOOL_RESULT', 'MEMORY']),
      );
      expect(items.filter((i) => i.type === 'USER_MESSAGE')).toHaveLength(1);

      const history = (await conv.fullHistory()).runs[0]!.history;
      const scheduled = activityNames(history);
      const local = markers(history);
      const expected = [
        { type: 'callModel', summary: 'model call · round 1 step 1' },
        { type: 'runTool', summary: 'tool remember · round 1' },
        { type: 'callModel', summary: 'model call · round 1 step 2' },
      ];
      if (agentCalls === 'local') {
        // The user message goes in with the round's first model call: one marker per call.
        expect(local).toEqual(expected);
        expect(scheduled).not.toContain('callModel');
      } else {
        expect(scheduled).toEqual(expect.arrayContaining(['callModel', 'runTool']));
        expect(local.map((m) => m.type)).toEqual(['appendUserMessage']);
        const summaries = eventsOf(history, 'ACTIVITY_TASK_SCHEDULED').map(eventSummary);
        expect(summaries).toEqual(expect.arrayContaining(expected.map((e) => e.summary)));
      }
    });
  }
});

describe('triggers', () => {
  it('precheck: the estimate crosses 80% of the window before a model call, compaction commits', async () => {
    env.llm.reset();
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('Earlier the user sent long texts.'));
    env.llm.setDefault(step.text('ok'));
    const conv = await env.startConversation({
      config: { maxContextTokens: 4000, protectedRounds: 1, toolBlocksKeepRecent: 1 },
    });
    // Each message is several hundred tokens: a few rounds cross 3,200 (80% of 4,000).
    let compacted = null;
    let sent = 0;
    for (let i = 0; i < 9 && !compacted; i++, sent++) {
      const r = await conv.send(words(2500, `m${i}x`));
      compacted = r.compactions.find((c) => c.status === 'committed') ?? null;
    }
    expect(compacted).not.toBeNull();
    expect(compacted?.trigger).toBe('precheck');
    expect(compacted?.tokensAfter).toBeLessThan(compacted?.tokensBefore ?? 0);
    const { items } = await conv.activeContext();
    // The message the compaction ran before answering stays verbatim (it fits the window with the
    // header); with it the context is at the target of 2,000 tokens or over it by that message alone.
    const users = (await conv.archive()).filter((i) => i.type === 'USER_MESSAGE' && !i.isMeta && !i.sourceId);
    const current = users[sent - 1];
    expect(items.some((i) => i.id === current?.id)).toBe(true);
    expect(compacted?.tokensAfter).toBeLessThanOrEqual(2000 + (current?.tokens ?? 0));
    const summary = items.find((i) => i.type === 'COMPACTION_SUMMARY');
    expect(summary?.type === 'COMPACTION_SUMMARY' ? summary.message.content : '').toContain(
      '[System] Context cleared. Summary of previous conversation:',
    );
    // Nothing is lost: every user message is still in the archive.
    const archive = await conv.archive();
    expect(archive.filter((i) => i.type === 'USER_MESSAGE' && !i.isMeta && !i.sourceId)).toHaveLength(sent);

    const events = await conv.events();
    expect(events.find((e) => e.type === 'pre_compact')).toMatchObject({ trigger: 'precheck' });
    expect(events.find((e) => e.type === 'context_compacted')).toMatchObject({ trigger: 'precheck' });

    const full = await conv.fullHistory();
    expect(full.children).toHaveLength(1);
    expect(full.children[0]?.workflowId).toBe(`${conv.id}/compaction-1`);
    const child = full.children[0]!.history;
    // Prune and commit are local activities, the summary an activity; each with its summary.
    expect(new Set(activityNames(child))).toEqual(new Set(['summarize']));
    expect(markers(child).map((m) => m.type)).toEqual(['selectivePrune', 'commitCompaction']);
    for (const scheduled of eventsOf(child, 'ACTIVITY_TASK_SCHEDULED')) {
      expect(eventSummary(scheduled)).toBeTruthy();
    }
    for (const marker of markers(child)) expect(marker.summary).toBeTruthy();
    const records = await conv.compactions();
    expect(records[0]).toMatchObject({ status: 'committed', trigger: 'precheck' });
  });

  it('a summary model of another encoding: cut forms and the summary are counted in the conversation model’s', async () => {
    // gpt-4 counts with cl100k_base, gpt-4o with o200k_base; this text is 33 and 24 tokens.
    const text =
      'Der Nutzer möchte, dass die Übersicht über Größenänderungen erhalten bleibt; 日本語のメモも残す。 ';
    const cl100k = createTokenCounter({ encoding: 'cl100k_base' });
    const o200k = createTokenCounter({ encoding: 'o200k_base' });
    env.llm.reset();
    env.llm.script(
      step.text('ok'),
      // Arguments over 500 tokens: the prune cuts them to a preview (a new, counted item).
      step.toolCalls([
        { id: 'call_1', name: 'remember', arguments: JSON.stringify({ note: text.repeat(30) }) },
      ]),
      step.text('noted'),
    );
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary(text.repeat(3)));
    const conv = await env.startConversation({
      tools: ['remember'],
      model: { model: 'gpt-4', summaryModel: 'gpt-4o' },
      config: { maxContextTokens: 8000, protectedRounds: 1 },
    });
    await conv.send('first, a question');
    await conv.send('remember this');
    env.llm.setDefault(step.text('ok'));
    for (let i = 0; i < 3; i++) await conv.send(`${text.repeat(40)} ${i}`);
    expect(await conv.compact()).toMatchObject({ status: 'committed' });
    const { items } = await conv.activeContext();
    // Made by the compaction: the cut arguments (kept, or summarized with their block), the summary,
    // and, where the room allows, a removed message given back as a preview of its text.
    const made = (await conv.archive()).filter((i) => i.sourceId != null || i.type === 'COMPACTION_SUMMARY');
    const types = new Set(made.map((i) => i.type));
    expect(types.has('ASSISTANT_MESSAGE') && types.has('COMPACTION_SUMMARY')).toBe(true);
    expect(
      [...types].filter((t) => !['ASSISTANT_MESSAGE', 'COMPACTION_SUMMARY', 'USER_MESSAGE'].includes(t)),
    ).toEqual([]);
    for (const item of made) {
      expect(item.tokens).toBe(cl100k.countItem(item));
      expect(item.tokens).not.toBe(o200k.countItem(item));
    }
    for (const item of items) expect(item.tokens).toBe(cl100k.countItem(item));
  });

  it('manual: the compact Update runs a compaction with the focus text in the summary request', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text('ok'));
    const conv = await env.startConversation({ config: { maxContextTokens: 8000, protectedRounds: 1 } });
    for (let i = 0; i < 4; i++) await conv.send(words(400, `r${i}y`));
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('manual summary'));
    const brief = await conv.compact('keep the file names');
    expect(brief).toMatchObject({ trigger: 'manual', status: 'committed' });
    const summaryRequest = env.llm.chatRequests().find((r) => isSummaryRequest(r));
    const last = summaryRequest?.body.messages?.at(-1);
    expect(String(last?.content)).toContain('keep the file names');
  });

  it('one summarize activity per compaction whatever steps the plan ran, and the plan is recorded', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text(words(1500, 'only')));
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('the only round, summarized'));
    // One round: every strategy and full(keep 2), full(keep 1) keep it verbatim; full(keep 0) does not.
    const conv = await env.startConversation({ config: { maxContextTokens: 8000 } });
    await conv.send(words(300, 'one'));
    const brief = await conv.compact();
    expect(brief).toMatchObject({ status: 'committed', strategy: 'full(keep 0)' });
    const child = (await conv.fullHistory()).children.at(-1)!.history;
    const summaries = eventsOf(child, 'ACTIVITY_TASK_SCHEDULED')
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'summarize')
      .map(eventSummary);
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toMatch(/^summary: planned steps \(prune → [\w →]+ → full\), one summary$/);
    expect(env.llm.chatRequests().filter((r) => isSummaryRequest(r))).toHaveLength(1);
    // The steps the plan ran are recorded with the compaction (inspect shows them).
    const record = (await conv.compactions()).at(-1)!;
    const events = await conv.compactionEvents(record.id);
    expect(events.find((e) => e.phase === 'summary_start')?.data).toMatchObject({ strategy: 'full(keep 0)' });
    const steps = events.find((e) => e.phase === 'selective_done')?.data.steps as string[];
    expect(steps.map((s) => s.split(' → ')[0])).toEqual(
      expect.arrayContaining([
        'truncate',
        'tool_blocks',
        'sliding_window',
        'full(keep 2)',
        'full(keep 1)',
        'full(keep 0)',
      ]),
    );
  });
});

describe('what the Web UI shows', () => {
  it('search attributes, current details, the child id and its static summary, activity summaries', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text(words(1500, 'ui')));
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('for the UI'));
    const conv = await env.startConversation({
      searchAttributes: true,
      config: { maxContextTokens: 20_000 },
    });
    for (let i = 0; i < 3; i++) await conv.send(words(300, `u${i}v`));
    const brief = await conv.compact();
    expect(brief.status).toBe('committed');

    const { CONVERSATION_SEARCH_ATTRIBUTES: keys } = await import('../../../workflows/search-attributes');
    const described = await env.client.workflow.getHandle(conv.id).describe();
    const attrs = described.typedSearchAttributes;
    expect(attrs.get(keys.conversationId)).toBe(conv.id);
    expect(attrs.get(keys.compactionCount)).toBe(1);
    expect(attrs.get(keys.lastCompactionStatus)).toBe('committed');
    expect(attrs.get(keys.contextTokens)).toBe((await conv.status()).contextTokens);
    // No secret in what the server indexes and shows: search attributes, memo, details.
    const shown = JSON.stringify([
      attrs.getAll(),
      described.memo ?? {},
      await (await env.client.workflow.getHandle(`${conv.id}/compaction-1`).describe()).staticDetails(),
    ]);
    for (const secret of [
      TEST_API_KEY,
      decodeURIComponent(new URL(testDatabaseUrl()).password),
      env.llm.url,
    ]) {
      expect(shown).not.toContain(secret);
    }

    const metadata = (await env.client.workflow.getHandle(conv.id).query('__temporal_workflow_metadata')) as {
      currentDetails?: string;
    };
    // The figures, not the labels: three rounds, one manual compaction, the context of status.
    const status = await conv.status();
    expect(status).toMatchObject({ phase: 'idle', rounds: 3, compactions: 1, window: 20_000 });
    const pct = Math.round((status.contextTokens / 20_000) * 100);
    expect(metadata.currentDetails).toBe(
      [
        `**${conv.id}** · idle`,
        `Context: ${status.contextTokens.toLocaleString('en-US')} / 20,000 tokens (${pct}%) · ` +
          `${status.itemCount} items · v${status.activeVersion}`,
        'Rounds: 3 · Compactions: 1 · last: committed (manual)',
      ].join('\n\n'),
    );

    const child = await env.client.workflow.getHandle(`${conv.id}/compaction-1`).describe();
    // The child's summary gives the context's size when it started, as the pre_compact event has it.
    const started = (await conv.events()).find((e) => e.type === 'pre_compact');
    const tokens = started?.type === 'pre_compact' ? started.tokens : NaN;
    expect(tokens).toBeGreaterThan(0);
    expect(await child.staticSummary()).toBe(
      `manual compaction #1: ${tokens.toLocaleString('en-US')} tokens (${Math.round((tokens / 20_000) * 100)}% of 20,000)`,
    );
    const childHistory = (await conv.fullHistory()).children[0]!.history;
    const summaries = [
      ...eventsOf(childHistory, 'ACTIVITY_TASK_SCHEDULED').map(eventSummary),
      ...markers(childHistory).map((m) => m.summary),
    ];
    expect(summaries).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^selective prune/),
        expect.stringMatching(/^summary: /),
        expect.stringMatching(/^commit v\d+/),
      ]),
    );
  });
});
