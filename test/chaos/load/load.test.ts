/**
 * Load with faults: LOAD_CONVERSATIONS (200) concurrent conversations × LOAD_ROUNDS (30) rounds on
 * one worker, a small window so they compact along the way, and 5% of LLM calls (agent and
 * summary) failing with HTTP 500. Zero lost messages, zero stuck or failed workflows, zero
 * nondeterminism on replay of their histories; prints rounds/s and round latency.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayHistories } from '../../../src/replay/histories';
import { isSummaryRequest, step, type RecordedRequest } from '../../support/fake-openai';
import {
  startConversationEnv,
  words,
  type Conversation,
  type ConversationEnv,
} from '../../support/conversation-env';
import { testWorkflowBundle } from '../../support/harness';
import { payloadCodecsFor } from '../../../src/infra/codec';

const CONVERSATIONS = Number(process.env.LOAD_CONVERSATIONS ?? 200);
const ROUNDS = Number(process.env.LOAD_ROUNDS ?? 30);
const FAILURE_RATE = 0.05;

let env: ConversationEnv;
beforeAll(async () => {
  env = await startConversationEnv({ llmTimeoutMs: 20_000 });
});
afterAll(async () => {
  await env?.close();
});

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

describe('load with injected LLM failures', () => {
  it(`${CONVERSATIONS} conversations × ${ROUNDS} rounds, ${FAILURE_RATE * 100}% LLM failures: nothing lost, nothing stuck`, async () => {
    let calls = 0;
    let injected = 0;
    // Deterministic: every 20th call fails (5%), agent and summary calls alike.
    const answer = (ok: ReturnType<typeof step.text>) => () => {
      calls++;
      if (calls % Math.round(1 / FAILURE_RATE) === 0) {
        injected++;
        return step.serverError();
      }
      return ok;
    };
    env.llm.reset();
    env.llm
      .when((r: RecordedRequest) => isSummaryRequest(r))
      .setDefault(answer(step.summary('load summary')));
    env.llm.setDefault(answer(step.text(words(1500, 'answer'))));

    const conversations: Conversation[] = [];
    for (let i = 0; i < CONVERSATIONS; i++) {
      conversations.push(
        await env.startConversation({ name: `load${i}`, config: { maxContextTokens: 4000 } }),
      );
    }
    const latencies: number[] = [];
    const sent = new Map<string, string[]>();
    const started = Date.now();
    await Promise.all(
      conversations.map(async (conv) => {
        const texts: string[] = [];
        sent.set(conv.id, texts);
        for (let round = 0; round < ROUNDS; round++) {
          const text = `${conv.id} round ${round}: ${words(200, 'q')}`;
          texts.push(text);
          const t = Date.now();
          const result = await conv.send(text);
          latencies.push(Date.now() - t);
          expect(result.round).toBe(round + 1);
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const compactions = (await Promise.all(conversations.map((c) => c.status()))).reduce(
      (n, s) => n + s.compactions,
      0,
    );
    console.error(
      `load: ${CONVERSATIONS * ROUNDS} rounds in ${seconds.toFixed(1)} s = ${((CONVERSATIONS * ROUNDS) / seconds).toFixed(1)} rounds/s; ` +
        `round latency p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms; ` +
        `${compactions} compactions; ${injected} of ${calls} LLM calls failed on purpose`,
    );
    expect(injected).toBeGreaterThan(0);
    expect(compactions).toBeGreaterThan(0);

    // Nothing lost: every message of every conversation is in its archive, in order, once.
    for (const conv of conversations) {
      const archive = await conv.archive();
      const users = archive.filter((i) => i.type === 'USER_MESSAGE' && !i.isMeta && !i.sourceId);
      expect(users.map((i) => (i.type === 'USER_MESSAGE' ? i.message.content : ''))).toEqual(
        sent.get(conv.id),
      );
    }
    // Nothing stuck: every conversation is idle and ends cleanly.
    await Promise.all(conversations.map(async (c) => expect((await c.status()).phase).toBe('idle')));
    await Promise.all(conversations.map((c) => c.end()));
    // No nondeterminism: a sample of the histories replays against the current code.
    const sample = conversations.filter((_, i) => i % Math.max(1, Math.floor(CONVERSATIONS / 10)) === 0);
    const histories = await Promise.all(
      sample.map(async (c) => ({ workflowId: c.id, history: await c.history() })),
    );
    const outcomes = await replayHistories(testWorkflowBundle(), histories, {
      payloadCodecs: payloadCodecsFor(env.pool),
    });
    expect(outcomes.filter((o) => o.error !== null)).toEqual([]);
  }, 1_800_000);
});
