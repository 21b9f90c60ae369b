import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../../src/context/items';
import {
  createLlmClient,
  requestSummary,
  SummaryInvalidError,
  toApplicationFailure,
  type SummaryFailureReason,
} from '../../../src/llm';
import {
  isSummaryRequest,
  startFakeOpenAI,
  step,
  type FakeStep,
  type FakeOpenAI,
} from '../../support/fake-openai';

let llm: FakeOpenAI;
beforeAll(async () => {
  llm = await startFakeOpenAI();
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => llm.reset());

const client = () =>
  createLlmClient({ apiKey: 'sk-summary-test-key-0000', baseURL: llm.url, timeoutMs: 5_000 });
const prompt: ChatMessage[] = [
  { role: 'system', content: 'You summarize conversations.' },
  { role: 'user', content: 'Conversation: ...\nWrite the summary inside <summary></summary> tags.' },
];
const summarize = () =>
  requestSummary(client(), { model: 'fake-summarizer', messages: prompt, maxTokens: 2_000 });

describe('requestSummary against the fake server', () => {
  it('returns the text inside <summary> and the completion', async () => {
    llm.when(isSummaryRequest).script(step.summary('Task: fix the bug.\nNext: run tests.'));
    const { summary, completion } = await summarize();
    expect(summary).toBe('Task: fix the bug.\nNext: run tests.');
    expect(completion.finishReason).toBe('stop');
    expect(completion.usage?.promptTokens).toBeGreaterThan(0);
    expect(llm.requests[0]?.body).toMatchObject({ model: 'fake-summarizer', max_tokens: 2_000 });
    expect(llm.requests[0]?.body.tools).toBeUndefined();
  });

  it.each<[SummaryFailureReason, FakeStep]>([
    ['content_none', step.contentNull()],
    ['empty_summary', step.emptyContent()],
    ['empty_summary', step.text('   ')],
    ['max_tokens_no_content', step.lengthNoContent()],
    ['thinking_only_no_content', step.reasoningOnly('Let me think...')],
    ['thinking_only_no_content', step.reasoningOnly('Hmm', { content: '' })],
    ['missing_summary_tags', step.text('Sure! The user wanted a fix.')],
  ])('%s: SUMMARY_INVALID, retryable, reason in message and details', async (reason, scripted) => {
    llm.script(scripted);
    const err = await summarize().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SummaryInvalidError);
    expect((err as SummaryInvalidError).reason).toBe(reason);

    const failure = toApplicationFailure(err);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.type).toBe('SUMMARY_INVALID');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain(reason);
    expect(failure.details?.[0]).toMatchObject({ reason });
  });

  it('fails twice, then succeeds: each attempt is one request', async () => {
    llm.when(isSummaryRequest).script(step.emptyContent(), step.contentNull(), step.summary('third time'));
    const outcomes: string[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      outcomes.push(
        await summarize().then(
          (r) => `ok: ${r.summary}`,
          (e: SummaryInvalidError) => e.reason,
        ),
      );
    }
    expect(outcomes).toEqual(['empty_summary', 'content_none', 'ok: third time']);
    expect(llm.chatRequests()).toHaveLength(3);
  });

  it('API failures keep their own type (a bad request is not a summary failure)', async () => {
    llm.script(step.badRequest('nope'));
    const failure = toApplicationFailure(await summarize().catch((e: unknown) => e));
    expect(failure.type).toBe('LLM_BAD_REQUEST');
    expect(failure.nonRetryable).toBe(true);
  });

  it('accepts an untagged summary when tags are not required', async () => {
    llm.script(step.text('just the summary'));
    const { summary } = await requestSummary(client(), { model: 'm', messages: prompt, requireTags: false });
    expect(summary).toBe('just the summary');
  });
});
