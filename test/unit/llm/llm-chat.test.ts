import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../../src/context/items';
import {
  buildChatParams,
  chatCompletion,
  createLlmClient,
  LlmError,
  normalizeCompletion,
} from '../../../src/llm';
import { startFakeOpenAI, step, type FakeOpenAI, type HttpErrorStep } from '../../support/fake-openai';

let llm: FakeOpenAI;
beforeAll(async () => {
  llm = await startFakeOpenAI();
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => llm.reset());

const client = () =>
  createLlmClient({ apiKey: 'sk-chat-test-key-000000', baseURL: llm.url, timeoutMs: 5_000 });
const user = (content: string): ChatMessage => ({ role: 'user', content });

describe('createLlmClient', () => {
  it('turns SDK retries off by default and sets the timeout', () => {
    const c = createLlmClient({ apiKey: 'k', baseURL: llm.url, timeoutMs: 1234 });
    expect(c.maxRetries).toBe(0);
    expect(c.timeout).toBe(1234);
    expect(c.baseURL).toBe(llm.url);
  });

  it.each([
    [{ apiKey: '' }, /apiKey is empty/],
    [{ apiKey: 'k', timeoutMs: 0 }, /timeoutMs must be a positive integer/],
    [{ apiKey: 'k', timeoutMs: 1.5 }, /timeoutMs must be a positive integer/],
    [{ apiKey: 'k', maxRetries: -1 }, /maxRetries must be a non-negative integer/],
  ])('refuses %o', (options, message) => {
    expect(() => createLlmClient(options)).toThrow(message);
  });

  it('does not retry inside the SDK: one failure, one request', async () => {
    llm.script(step.serverError(), step.text('would have succeeded'));
    await expect(chatCompletion(client(), { model: 'm', messages: [user('x')] })).rejects.toBeInstanceOf(
      LlmError,
    );
    expect(llm.chatRequests()).toHaveLength(1);
  });
});

describe('buildChatParams', () => {
  it('sends only request fields: no reasoning_content, no tool name; null assistant content becomes ""', () => {
    const params = buildChatParams({
      model: 'm',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'assistant', content: null, reasoning_content: 'secret thoughts' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', content: 'r', tool_call_id: 'c1', name: 'f' },
      ],
      tools: [],
    });
    expect(params).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'assistant', content: '' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', content: 'r', tool_call_id: 'c1' },
      ],
    });
  });

  it('sets tools, the token limit field and temperature only when given', () => {
    const tools = [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'object' } } }];
    expect(
      buildChatParams({ model: 'm', messages: [user('x')], tools, maxTokens: 10, temperature: 0 }),
    ).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      tools,
      max_tokens: 10,
      temperature: 0,
    });
    expect(
      buildChatParams({ model: 'm', messages: [user('x')], maxTokens: 10 }, 'max_completion_tokens'),
    ).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      max_completion_tokens: 10,
    });
  });
});

describe('chatCompletion against the fake server', () => {
  it('normalizes a text answer with usage', async () => {
    llm.script(step.text('hello', { usage: { prompt_tokens: 100, completion_tokens: 2 } }));
    const r = await chatCompletion(client(), { model: 'fake-model', messages: [user('hi')] });
    expect(r).toMatchObject({
      message: { role: 'assistant', content: 'hello' },
      finishReason: 'stop',
      usage: { promptTokens: 100, completionTokens: 2, totalTokens: 102 },
      model: 'fake-model',
    });
    expect(r.message.tool_calls).toBeUndefined();
    expect(r.reasoning).toBeUndefined();
  });

  it('returns tool calls as context-model ToolCalls and sends the tools', async () => {
    llm.script(step.toolCalls([{ id: 'call_a', name: 'read_file', arguments: { path: 'x' } }]));
    const tools = [{ type: 'function' as const, function: { name: 'read_file', description: 'reads' } }];
    const r = await chatCompletion(client(), { model: 'fake-model', messages: [user('read')], tools });
    expect(r.finishReason).toBe('tool_calls');
    expect(r.message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{"path":"x"}' } },
      ],
    });
    expect(llm.requests[0]?.body.tools).toEqual(tools);
  });

  it('keeps reasoning beside the content', async () => {
    llm.script(step.text('answer', { reasoning: 'because' }));
    const r = await chatCompletion(client(), { model: 'fake-model', messages: [user('q')] });
    expect(r.reasoning).toBe('because');
    expect(r.message.reasoning_content).toBe('because');
  });

  it('leaves usage out when the provider sends none', async () => {
    llm.script(step.text('x', { usage: null }));
    const r = await chatCompletion(client(), { model: 'fake-model', messages: [user('q')] });
    expect(r.usage).toBeUndefined();
  });

  it('switches to max_completion_tokens once when the model asks for it, and remembers', async () => {
    const unsupported: HttpErrorStep = {
      type: 'http_error',
      status: 400,
      body: {
        error: {
          message:
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
          type: 'invalid_request_error',
          param: 'max_tokens',
          code: 'unsupported_parameter',
        },
      },
    };
    llm.setDefault((req) => (req.body.max_tokens !== undefined ? unsupported : step.text('fine')));
    const c = client();
    const r = await chatCompletion(c, { model: 'fake-model', messages: [user('q')], maxTokens: 50 });
    expect(r.message.content).toBe('fine');
    await chatCompletion(c, { model: 'fake-model', messages: [user('q')], maxTokens: 50 });
    expect(llm.requests.map((q) => [q.body.max_tokens, q.body.max_completion_tokens])).toEqual([
      [50, undefined],
      [undefined, 50],
      [undefined, 50],
    ]);
  });

  it('rethrows the abort reason when the caller cancels', async () => {
    llm.script(step.hang());
    const controller = new AbortController();
    const reason = new Error('activity cancelled');
    const call = chatCompletion(client(), {
      model: 'fake-model',
      messages: [user('q')],
      signal: controller.signal,
    });
    while (llm.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
  });
});

describe('normalizeCompletion', () => {
  it('tolerates provider quirks: text parts, refusal, reasoning field, object arguments, missing ids', () => {
    const r = normalizeCompletion({
      id: 'x1',
      model: 'm',
      choices: [
        {
          message: {
            role: 'assistant',
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
            reasoning: 'r',
            tool_calls: [{ type: 'function', function: { name: 'f', arguments: { k: 1 } } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { total_tokens: 10, prompt_tokens: 7 },
    });
    expect(r.message).toEqual({
      role: 'assistant',
      content: 'ab',
      reasoning_content: 'r',
      tool_calls: [{ id: 'call_x1_0', type: 'function', function: { name: 'f', arguments: '{"k":1}' } }],
    });
    expect(r.usage).toEqual({ promptTokens: 7, completionTokens: 3, totalTokens: 10 });

    const refusal = normalizeCompletion({
      choices: [{ message: { content: null, refusal: 'no' }, finish_reason: 'stop' }],
    });
    expect(refusal.message.content).toBe('no');
  });

  it.each([[null], ['not json'], [{}], [{ choices: [] }], [{ error: { message: 'upstream failed' } }]])(
    'refuses %j as LLM_INVALID_RESPONSE (retryable)',
    (raw) => {
      const err = (() => {
        try {
          normalizeCompletion(raw);
        } catch (e) {
          return e;
        }
      })() as LlmError;
      expect(err).toBeInstanceOf(LlmError);
      expect(err.type).toBe('LLM_INVALID_RESPONSE');
      expect(err.retryable).toBe(true);
    },
  );
});
