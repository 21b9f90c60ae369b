import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  NotFoundError,
  RateLimitError,
} from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  estimatePromptTokens,
  isSummaryRequest,
  route,
  startFakeOpenAI,
  step,
  type FakeOpenAI,
} from '../../support/fake-openai';

const KEY = 'sk-test-fake-openai-0123456789';

let llm: FakeOpenAI;
let client: OpenAI;

beforeAll(async () => {
  llm = await startFakeOpenAI();
  client = new OpenAI({ baseURL: llm.url, apiKey: KEY, maxRetries: 0, timeout: 5_000 });
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => llm.reset());

const ask = (text: string, extra: Partial<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming> = {}) =>
  client.chat.completions.create({
    model: 'fake-model',
    messages: [{ role: 'user', content: text }],
    ...extra,
  });

/** The raw message object of a completion, extra provider fields included. */
const rawMessage = (c: OpenAI.Chat.ChatCompletion) =>
  c.choices[0]?.message as unknown as Record<string, unknown>;

describe('fake OpenAI server: answers', () => {
  it('listens on 127.0.0.1 with a base URL ending in /v1', () => {
    expect(llm.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  it('answers a text reply in the full chat.completion shape with estimated usage', async () => {
    llm.script(step.text('hello there'));
    const c = await ask('x'.repeat(400));
    expect(c).toMatchObject({
      object: 'chat.completion',
      model: 'fake-model',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hello there' }, finish_reason: 'stop' }],
    });
    expect(c.id).toMatch(/^chatcmpl-/);
    expect(typeof c.created).toBe('number');
    expect(c.usage?.prompt_tokens).toBeGreaterThanOrEqual(100);
    expect(c.usage?.completion_tokens).toBe(3);
    expect(c.usage?.total_tokens).toBe((c.usage?.prompt_tokens ?? 0) + 3);
  });

  it('estimates usage from the request so bigger prompts report more tokens', async () => {
    const small = await ask('a'.repeat(40));
    const big = await ask('a'.repeat(40_000));
    expect(big.usage!.prompt_tokens).toBeGreaterThan(small.usage!.prompt_tokens + 9_000);
    expect(big.usage!.prompt_tokens).toBe(estimatePromptTokens(llm.requests[1]!.body));
  });

  it('answers tool calls with finish_reason tool_calls and JSON arguments', async () => {
    llm.script(
      step.toolCalls([
        { name: 'read_file', arguments: { path: 'a.txt' } },
        { id: 'call_fixed', name: 'list_dir', arguments: '{"path":"."}' },
      ]),
    );
    const c = await ask('read it', {
      tools: [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }],
    });
    const choice = c.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      { id: 'call_0_0', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } },
      { id: 'call_fixed', type: 'function', function: { name: 'list_dir', arguments: '{"path":"."}' } },
    ]);
  });

  it('overrides usage per step, or leaves it out', async () => {
    llm.script(step.text('a', { usage: { prompt_tokens: 9_000 } }), step.text('b', { usage: null }));
    const first = await ask('hi');
    expect(first.usage).toEqual({ prompt_tokens: 9_000, completion_tokens: 1, total_tokens: 9_001 });
    const second = await ask('hi');
    expect(second.usage).toBeUndefined();
  });

  it.each([
    ['content null', step.contentNull(), { content: null }, 'stop'],
    ['empty content', step.emptyContent(), { content: '' }, 'stop'],
    ['length with no content', step.lengthNoContent(), { content: null }, 'length'],
    [
      'reasoning only',
      step.reasoningOnly('thinking...'),
      { content: null, reasoning_content: 'thinking...' },
      'stop',
    ],
    [
      'reasoning only, empty content',
      step.reasoningOnly('hmm', { content: '' }),
      { content: '', reasoning_content: 'hmm' },
      'stop',
    ],
  ] as const)('answers %s as scripted', async (_name, scripted, message, finish) => {
    llm.script(scripted);
    const c = await ask('summarize');
    expect(rawMessage(c)).toMatchObject(message);
    expect(c.choices[0]?.finish_reason).toBe(finish);
  });

  it('streams SSE chunks the SDK assembles into the same completion', async () => {
    llm.script(
      step.text('streamed answer', { reasoning: 'why' }),
      step.toolCalls([{ id: 'call_s', name: 'read_file', arguments: { path: 'b' } }]),
    );
    const stream = await client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'go' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('streamed answer');
    expect(finish).toBe('stop');
    expect(usage?.total_tokens).toBeGreaterThan(0);

    const runner = client.chat.completions.stream({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'go' }],
    });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]?.message.tool_calls).toEqual([
      { id: 'call_s', type: 'function', function: { name: 'read_file', arguments: '{"path":"b"}' } },
    ]);
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('lists models', async () => {
    const page = await client.models.list();
    expect(page.data.map((m) => m.id)).toEqual(['fake-model', 'fake-summarizer']);
    await expect(client.models.retrieve('nope')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('fake OpenAI server: faults', () => {
  it('HTTP 500 → InternalServerError', async () => {
    llm.script(step.serverError());
    const err = await ask('x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect((err as InternalServerError).status).toBe(500);
  });

  it('HTTP 429 with retry-after → RateLimitError carrying the header', async () => {
    llm.script(step.rateLimited(7, { retryAfterMs: 6_500 }));
    const err = (await ask('x').catch((e: unknown) => e)) as RateLimitError;
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err.headers.get('retry-after')).toBe('7');
    expect(err.headers.get('retry-after-ms')).toBe('6500');
    expect(err.code).toBe('rate_limit_exceeded');
  });

  it('HTTP 400 context_length_exceeded → BadRequestError with the code', async () => {
    llm.script(step.contextLengthExceeded());
    const err = (await ask('x').catch((e: unknown) => e)) as BadRequestError;
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.code).toBe('context_length_exceeded');
    expect(err.type).toBe('invalid_request_error');
    expect(err.message).toMatch(/maximum context length/);
  });

  it('HTTP 401 → AuthenticationError (the scripted one echoes the key, to test redaction)', async () => {
    llm.script(step.authError());
    const err = (await ask('x').catch((e: unknown) => e)) as AuthenticationError;
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err.code).toBe('invalid_api_key');
    expect(err.message).toContain(KEY);
  });

  it('checks the key when started with one', async () => {
    const guarded = await startFakeOpenAI({ apiKey: 'right-key' });
    try {
      const wrong = new OpenAI({ baseURL: guarded.url, apiKey: 'wrong-key', maxRetries: 0 });
      await expect(wrong.models.list()).rejects.toBeInstanceOf(AuthenticationError);
      const right = new OpenAI({ baseURL: guarded.url, apiKey: 'right-key', maxRetries: 0 });
      const listed = await right.models.list();
      expect(listed.data.map((m) => m.id)).toEqual(['fake-model', 'fake-summarizer']);
    } finally {
      await guarded.close();
    }
  });

  it('hangs past the client timeout → APIConnectionTimeoutError; the next request is answered', async () => {
    llm.script(step.hang(), step.text('after the hang'));
    const started = Date.now();
    const err = await client.chat.completions
      .create({ model: 'fake-model', messages: [{ role: 'user', content: 'x' }] }, { timeout: 300 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIConnectionTimeoutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect((await ask('x')).choices[0]?.message.content).toBe('after the hang');
  });

  it('drops the connection → APIConnectionError', async () => {
    llm.script(step.disconnect());
    const err = await ask('x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(err).not.toBeInstanceOf(APIConnectionTimeoutError);
  });

  it('refuses malformed requests as OpenAI does (strict mode)', async () => {
    const err = (await client.chat.completions
      .create({
        model: 'fake-model',
        messages: [
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          { role: 'user', content: 'next' },
        ],
      })
      .catch((e: unknown) => e)) as BadRequestError;
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.message).toContain('did not have response messages: c1');

    const orphan = (await client.chat.completions
      .create({ model: 'fake-model', messages: [{ role: 'tool', content: 'r', tool_call_id: 'zz' }] })
      .catch((e: unknown) => e)) as BadRequestError;
    expect(orphan).toBeInstanceOf(BadRequestError);
    expect(orphan.message).toMatch(/role 'tool' must be a response/);
  });
});

describe('fake OpenAI server: scripting and recording', () => {
  it('records every request with method, path, headers, parsed body and time', async () => {
    const before = Date.now();
    await ask('record me', { max_tokens: 50 });
    const [r] = llm.requests;
    expect(r).toMatchObject({ index: 0, method: 'POST', path: '/v1/chat/completions' });
    expect(r!.headers['authorization']).toBe(`Bearer ${KEY}`);
    expect(r!.headers['content-type']).toMatch(/application\/json/);
    expect(r!.body).toMatchObject({
      model: 'fake-model',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'record me' }],
    });
    expect(r!.time).toBeGreaterThanOrEqual(before);
    expect(llm.chatRequests()).toHaveLength(1);
  });

  it('consumes scripted steps in order, then falls back to the default', async () => {
    llm.script(step.text('one'), step.text('two'));
    expect(llm.pending()).toBe(2);
    const texts = [];
    for (let i = 0; i < 3; i++) texts.push((await ask('q')).choices[0]?.message.content);
    expect(texts).toEqual(['one', 'two', 'ok']);
    expect(llm.pending()).toBe(0);
    llm.setDefault(step.text('custom default'));
    expect((await ask('q')).choices[0]?.message.content).toBe('custom default');
  });

  it('lets a step be a function of the request', async () => {
    llm.script((req) =>
      step.text(`you said ${req.body.messages?.length} message(s)`, { usage: { prompt_tokens: 42 } }),
    );
    const c = await ask('hi');
    expect(c.choices[0]?.message.content).toBe('you said 1 message(s)');
    expect(c.usage?.prompt_tokens).toBe(42);
  });

  it('answers summary requests from their own lane and agent calls from the main queue', async () => {
    llm.when(isSummaryRequest).script(step.emptyContent(), step.summary('final'));
    llm.script(step.text('agent 1'), step.text('agent 2'));
    const summaryPrompt = 'Summarize the conversation in <summary></summary> tags.';
    expect((await ask('task')).choices[0]?.message.content).toBe('agent 1');
    expect((await ask(summaryPrompt)).choices[0]?.message.content).toBe('');
    expect((await ask('task')).choices[0]?.message.content).toBe('agent 2');
    expect((await ask(summaryPrompt)).choices[0]?.message.content).toBe('<summary>\nfinal\n</summary>');
    // Lane empty: the server default answers a summary request with a summary.
    expect((await ask(summaryPrompt)).choices[0]?.message.content).toMatch(/^<summary>[\s\S]*<\/summary>$/);
  });

  it('routes with route() as a default responder', async () => {
    llm.setDefault(
      route({ summary: step.summary('S'), agent: (req) => step.text(`agent saw ${req.index}`) }),
    );
    expect((await ask('<summary> please')).choices[0]?.message.content).toBe('<summary>\nS\n</summary>');
    expect((await ask('hello')).choices[0]?.message.content).toBe('agent saw 1');
  });

  it('reset() forgets requests, queues and lanes', async () => {
    llm.script(step.text('queued'));
    llm.when(() => true).script(step.text('lane'));
    await ask('x');
    llm.reset();
    expect(llm.requests).toHaveLength(0);
    expect(llm.pending()).toBe(0);
    expect((await ask('x')).choices[0]?.message.content).toBe('ok');
  });

  it('answers unknown paths with an OpenAI-shaped 404', async () => {
    const res = await fetch(`${llm.url}/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'unknown_url' } });
  });

  it('keeps only the last maxRecorded requests, numbered in arrival order', async () => {
    const other = await startFakeOpenAI({ maxRecorded: 2 });
    try {
      const c = new OpenAI({ baseURL: other.url, apiKey: KEY, maxRetries: 0 });
      for (const text of ['one', 'two', 'three']) {
        await c.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: text }] });
      }
      expect(other.requests.map((r) => [r.index, r.body.messages?.[0]?.content])).toEqual([
        [1, 'two'],
        [2, 'three'],
      ]);
    } finally {
      await other.close();
    }
  });

  it('closes cleanly while a request hangs', async () => {
    const other = await startFakeOpenAI();
    other.script(step.hang());
    const c = new OpenAI({ baseURL: other.url, apiKey: KEY, maxRetries: 0, timeout: 60_000 });
    const pending = c.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    while (other.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    const t = Date.now();
    await other.close();
    expect(Date.now() - t).toBeLessThan(2_000);
    expect(await pending).toBeInstanceOf(APIConnectionError);
  });
});
