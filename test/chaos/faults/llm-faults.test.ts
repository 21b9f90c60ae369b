/**
 * Every failure the fake LLM can give, through the running workflows, once during the agent's own
 * model call and once during the compaction's summary call (issue 8 §2): the right retries (429
 * honouring Retry-After, 5xx, timeouts, dropped connections, unusable summaries), no retry where a
 * retry cannot help (401, 400, exhausted quota), a rollback with the context unchanged, the
 * cooldown after a failed summary, and no loop when a failure repeats.
 *
 * The figures (injections per failure and lane) are written to `test-output/llm-faults.json` for
 * `bench/RELIABILITY.md`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_API_KEY } from '../../support/conversation-env';
import {
  isSummaryRequest,
  step,
  type FakeLane,
  type FakeStep,
  type RecordedRequest,
} from '../../support/fake-openai';
import {
  activityAttempts,
  startConversationEnv,
  words,
  type Conversation,
  type ConversationEnv,
} from '../../support/conversation-env';
import { ROOT } from '../../support/cli-process';

/** How long the client waits for an answer: the hang case times out after this. */
const LLM_TIMEOUT_MS = 1500;
const LONG_REPLY = words(1500, 'reply');

/** One failure of the fake server's list, and what the system must do with it. */
interface Fault {
  name: string;
  make(): FakeStep;
  /** Agent call: `retried` (the round answers), `fails` (the round fails with the type), `answered` (an empty answer, returned as is). */
  agent: { outcome: 'retried' } | { outcome: 'fails'; type: string } | { outcome: 'answered' };
  /** Summary call: `retried` (committed on the next attempt) or `fails` (rolled back at once, no retry). */
  summary: { outcome: 'retried'; failure: RegExp } | { outcome: 'fails'; type: string };
  /** The least time between the failed request and its retry (Retry-After). */
  minGapMs?: number;
}

const FAULTS: Fault[] = [
  {
    name: '429 with Retry-After: 2',
    make: () => step.rateLimited(2),
    agent: { outcome: 'retried' },
    summary: { outcome: 'retried', failure: /LLM_RATE_LIMITED/ },
    minGapMs: 1900,
  },
  {
    name: '429 with retry-after-ms: 1500',
    make: () => step.rateLimited(30, { retryAfterMs: 1500 }),
    agent: { outcome: 'retried' },
    summary: { outcome: 'retried', failure: /LLM_RATE_LIMITED/ },
    minGapMs: 1400,
  },
  {
    name: '429 insufficient_quota',
    make: () => ({
      type: 'http_error',
      status: 429,
      errorType: 'insufficient_quota',
      code: 'insufficient_quota',
      message: 'You exceeded your current quota, please check your plan and billing details.',
    }),
    agent: { outcome: 'fails', type: 'LLM_QUOTA_EXCEEDED' },
    summary: { outcome: 'fails', type: 'LLM_QUOTA_EXCEEDED' },
  },
  {
    name: '401 invalid_api_key',
    make: () => step.authError(),
    agent: { outcome: 'fails', type: 'LLM_AUTH' },
    summary: { outcome: 'fails', type: 'LLM_AUTH' },
  },
  {
    name: '400 invalid_request_error',
    make: () => step.badRequest('Invalid value for temperature.'),
    agent: { outcome: 'fails', type: 'LLM_BAD_REQUEST' },
    summary: { outcome: 'fails', type: 'LLM_BAD_REQUEST' },
  },
  {
    name: '500 server_error',
    make: () => step.serverError(),
    agent: { outcome: 'retried' },
    summary: { outcome: 'retried', failure: /LLM_SERVER_ERROR/ },
  },
  {
    name: '503 overloaded',
    make: () => step.serverError(503, 'The engine is currently overloaded, please try again later.'),
    agent: { outcome: 'retried' },
    summary: { outcome: 'retried', failure: /LLM_SERVER_ERROR/ },
  },
  {
    name: 'no answer (hang past the client timeout)',
    make: () => step.hang(),
    agent: { outcome: 'retried' },
    summary: { outcome: 'retried', failure: /LLM_TIMEOUT/ },
  },
  {
    name: 'connection dropped',
    make: () => step.disconnect(),
    agent: { outcome: 'retried' },
    summary: { outcome: 'retried', failure: /LLM_CONNECTION/ },
  },
  {
    name: 'content null',
    make: () => step.contentNull(),
    agent: { outcome: 'answered' },
    summary: { outcome: 'retried', failure: /SUMMARY_INVALID: summary invalid: content_none/ },
  },
  {
    name: 'empty content',
    make: () => step.emptyContent(),
    agent: { outcome: 'answered' },
    summary: { outcome: 'retried', failure: /SUMMARY_INVALID: summary invalid: empty_summary/ },
  },
  {
    name: 'max_tokens reached before any content (finish_reason length)',
    make: () => step.lengthNoContent(),
    agent: { outcome: 'answered' },
    summary: { outcome: 'retried', failure: /SUMMARY_INVALID: summary invalid: max_tokens_no_content/ },
  },
  {
    name: 'thinking only (reasoning_content, no content)',
    make: () => step.reasoningOnly(),
    agent: { outcome: 'answered' },
    summary: { outcome: 'retried', failure: /SUMMARY_INVALID: summary invalid: thinking_only_no_content/ },
  },
];

let env: ConversationEnv;
let summaries: FakeLane;
/** Injections per fault and lane, for the report. */
const injected = new Map<string, { agent: number; summary: number; held: number }>();

function count(fault: string, lane: 'agent' | 'summary', n = 1): void {
  const row = injected.get(fault) ?? { agent: 0, summary: 0, held: 0 };
  row[lane] += n;
  injected.set(fault, row);
}

beforeAll(async () => {
  env = await startConversationEnv({ llmTimeoutMs: LLM_TIMEOUT_MS });
});
afterAll(async () => {
  await env?.close();
  mkdirSync(join(ROOT, 'test-output'), { recursive: true });
  writeFileSync(
    join(ROOT, 'test-output', 'llm-faults.json'),
    JSON.stringify(Object.fromEntries(injected), null, 2),
  );
});

/** Fresh fake: long agent replies on the main queue, good summaries on their lane. */
function resetLlm(): void {
  env.llm.reset();
  summaries = env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('a good summary'));
  env.llm.setDefault(step.text(LONG_REPLY));
}

function agentRequests(since: number): RecordedRequest[] {
  return env.llm
    .chatRequests()
    .slice(since)
    .filter((r) => !isSummaryRequest(r));
}

function summaryRequests(since: number): RecordedRequest[] {
  return env.llm
    .chatRequests()
    .slice(since)
    .filter((r) => isSummaryRequest(r));
}

async function talk(conv: Conversation, rounds: number): Promise<void> {
  for (let i = 0; i < rounds; i++) await conv.send(words(300, `q${i}w`));
}

async function activeIds(conv: Conversation): Promise<string[]> {
  return (await conv.activeContext()).items.map((i) => i.id);
}

/** The user messages in the archive, in order (not the previews a compaction made of them). */
async function userTexts(conv: Conversation): Promise<string[]> {
  return (await conv.archive())
    .filter((i) => i.type === 'USER_MESSAGE' && !i.sourceId)
    .map((i) => (i.type === 'USER_MESSAGE' ? String(i.message.content) : ''));
}

describe.each(FAULTS)('$name', (fault) => {
  it('during the agent call', async () => {
    resetLlm();
    const conv = await env.startConversation({ config: { maxContextTokens: 20_000 } });
    await conv.send('first');
    const since = env.llm.chatRequests().length;
    env.llm.script(fault.make());
    if (fault.agent.outcome !== 'answered') env.llm.script(step.text('answer after the fault'));
    count(fault.name, 'agent');

    if (fault.agent.outcome === 'retried') {
      const result = await conv.send('second');
      expect(result.reply).toBe('answer after the fault');
      const calls = agentRequests(since);
      expect(calls).toHaveLength(2);
      if (fault.minGapMs) expect(calls[1]!.time - calls[0]!.time).toBeGreaterThanOrEqual(fault.minGapMs);
    } else if (fault.agent.outcome === 'fails') {
      await expect(conv.send('second')).rejects.toMatchObject({
        cause: { type: fault.agent.type, message: expect.not.stringContaining(TEST_API_KEY) },
      });
      // Not retried: one request; the message is kept; the conversation goes on.
      expect(agentRequests(since)).toHaveLength(1);
      const next = await conv.send('third');
      expect(next.reply).toBe('answer after the fault');
    } else {
      // An empty answer is the model's answer: stored and returned, not retried, and the next
      // request stays valid (the empty assistant message is sent as '').
      const result = await conv.send('second');
      expect(result.reply).toBe('');
      expect(agentRequests(since)).toHaveLength(1);
      env.llm.script(step.text('next answer'));
      expect((await conv.send('third')).reply).toBe('next answer');
    }
    expect(await userTexts(conv)).toEqual([
      'first',
      'second',
      ...(fault.agent.outcome === 'retried' ? [] : ['third']),
    ]);
    const status = await conv.status();
    expect(status).toMatchObject({ phase: 'idle', compactions: 0 });
    injected.get(fault.name)!.held++;
  });

  it('during the summary call', async () => {
    resetLlm();
    const conv = await env.startConversation({ config: { maxContextTokens: 20_000, cooldownMs: 60_000 } });
    await talk(conv, 3);
    const before = await activeIds(conv);
    const since = env.llm.chatRequests().length;
    summaries.script(fault.make());
    count(fault.name, 'summary');
    const brief = await conv.compact();
    const [record] = await conv.compactions();

    if (fault.summary.outcome === 'retried') {
      expect(brief).toMatchObject({ status: 'committed' });
      expect(record).toMatchObject({ status: 'committed', attempts: 2 });
      const child = (await conv.fullHistory()).children.at(-1)!.history;
      const second = activityAttempts(child, 'summarize').find((a) => a.attempt === 2);
      expect(second?.lastFailure).toMatch(fault.summary.failure);
      if (fault.minGapMs) {
        const [failed, retry] = summaryRequests(since);
        expect(retry!.time - failed!.time).toBeGreaterThanOrEqual(fault.minGapMs);
      }
      expect((await conv.status()).cooldownActive).toBe(false);
    } else {
      // Not retried: one request, rolled back, the context exactly as it was, cooldown.
      expect(brief).toMatchObject({ status: 'rolled_back' });
      expect(brief.reason).toContain(fault.summary.type);
      expect(brief.reason).not.toContain(TEST_API_KEY);
      expect(summaryRequests(since)).toHaveLength(1);
      expect(record).toMatchObject({ status: 'rolled_back', attempts: 1 });
      expect(await activeIds(conv)).toEqual(before);
      expect((await conv.status()).cooldownActive).toBe(true);
    }
    // Either way the conversation answers the next message.
    env.llm.script(step.text('still here'));
    expect((await conv.send('after')).reply).toBe('still here');
    injected.get(fault.name)!.held++;
  });
});

describe('a failure that repeats does not loop', () => {
  it('agent call: 500 every time, 5 attempts, then the round fails and the next one works', async () => {
    resetLlm();
    const conv = await env.startConversation({ config: { maxContextTokens: 20_000 } });
    const since = env.llm.chatRequests().length;
    env.llm.setDefault(step.serverError());
    await expect(conv.send('doomed')).rejects.toMatchObject({ cause: { type: 'LLM_SERVER_ERROR' } });
    expect(agentRequests(since)).toHaveLength(5);
    count('500 server_error, every time', 'agent', 5);
    env.llm.setDefault(step.text('back'));
    expect((await conv.send('again')).reply).toBe('back');
    expect(await userTexts(conv)).toEqual(['doomed', 'again']);
    injected.get('500 server_error, every time')!.held++;
  });

  it('agent call: context_length_exceeded twice, one overflow compaction, one retry, then the round fails', async () => {
    resetLlm();
    const conv = await env.startConversation({ config: { maxContextTokens: 20_000 } });
    await talk(conv, 3);
    const since = env.llm.chatRequests().length;
    env.llm.script(step.contextLengthExceeded(), step.contextLengthExceeded());
    count('context_length_exceeded, every time', 'agent', 2);
    await expect(conv.send('too big')).rejects.toMatchObject({
      cause: { type: 'LLM_CONTEXT_LENGTH_EXCEEDED' },
    });
    expect(agentRequests(since)).toHaveLength(2);
    const overflow = (await conv.compactions()).filter((c) => c.trigger === 'overflow');
    expect(overflow).toHaveLength(1);
    expect((await conv.send('smaller')).reply).toBe(LONG_REPLY);
    injected.get('context_length_exceeded, every time')!.held++;
  });

  it('summary: 500 every time, 3 attempts, rolled back, cooldown; automatic triggers skip without calling until it ends', async () => {
    resetLlm();
    summaries.setDefault(step.serverError());
    const conv = await env.startConversation({
      config: { maxContextTokens: 20_000, roundsThreshold: 3, cooldownMs: 6_000 },
    });
    await talk(conv, 2);
    const before = await activeIds(conv);
    const since = env.llm.chatRequests().length;
    const third = await conv.send('third');
    expect(third.compactions[0]).toMatchObject({ trigger: 'rounds', status: 'rolled_back' });
    expect(third.compactions[0]?.reason).toContain('LLM_SERVER_ERROR');
    expect(summaryRequests(since)).toHaveLength(3);
    count('500 server_error, every time', 'summary', 3);
    const after = await activeIds(conv);
    expect(after.slice(0, before.length)).toEqual(before);

    // During the cooldown: the trigger still fires, is skipped, and makes no summary call.
    const duringCooldown = env.llm.chatRequests().length;
    for (const text of ['fourth', 'fifth']) {
      const r = await conv.send(text);
      expect(r.compactions[0]).toMatchObject({ trigger: 'rounds', status: 'skipped' });
    }
    expect(summaryRequests(duringCooldown)).toHaveLength(0);

    // After it: the next trigger runs again, and with the LLM healthy it commits.
    summaries.setDefault(step.summary('healthy again'));
    await conv.waitForStatus((s) => !s.cooldownActive, 20_000);
    const later = await conv.send('sixth');
    expect(later.compactions.map((c) => c.status)).toContain('committed');
    expect(await userTexts(conv)).toHaveLength(6);
    injected.get('500 server_error, every time')!.held++;
  });
});

describe('agent calls as regular activities (agentCalls: task_queue)', () => {
  it('429 with Retry-After is retried after the delay; 401 is not retried', async () => {
    resetLlm();
    const conv = await env.startConversation({
      config: { maxContextTokens: 20_000 },
      agentCalls: 'task_queue',
    });
    await conv.send('first');
    let since = env.llm.chatRequests().length;
    env.llm.script(step.rateLimited(2), step.text('after the wait'));
    count('429 with Retry-After: 2 (task queue)', 'agent');
    expect((await conv.send('second')).reply).toBe('after the wait');
    const calls = agentRequests(since);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.time - calls[0]!.time).toBeGreaterThanOrEqual(1900);

    since = env.llm.chatRequests().length;
    env.llm.script(step.authError());
    count('401 invalid_api_key (task queue)', 'agent');
    await expect(conv.send('third')).rejects.toMatchObject({ cause: { type: 'LLM_AUTH' } });
    expect(agentRequests(since)).toHaveLength(1);
    expect(await userTexts(conv)).toEqual(['first', 'second', 'third']);
    injected.get('429 with Retry-After: 2 (task queue)')!.held++;
    injected.get('401 invalid_api_key (task queue)')!.held++;
  });
});
