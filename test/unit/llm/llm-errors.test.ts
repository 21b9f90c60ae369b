import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { APIError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../../src/context/items';
import {
  chatCompletion,
  classifyLlmError,
  createLlmClient,
  llmBoundary,
  LlmError,
  redactSecrets,
  retryAfterMs,
  toApplicationFailure,
  type LlmFailureType,
} from '../../../src/llm';
import { startFakeOpenAI, step, type FakeOpenAI, type FakeStep } from '../../support/fake-openai';

const KEY = 'sk-proj-VerySecretKey_0123456789abcdef';

let llm: FakeOpenAI;
beforeAll(async () => {
  llm = await startFakeOpenAI();
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => llm.reset());

const client = (timeoutMs = 5_000) => createLlmClient({ apiKey: KEY, baseURL: llm.url, timeoutMs });
const messages: ChatMessage[] = [{ role: 'user', content: 'hello' }];

/** Runs one call answered by `scripted` and returns what it threw. */
async function failWith(scripted: FakeStep, timeoutMs?: number): Promise<LlmError> {
  llm.script(scripted);
  const err = await chatCompletion(client(timeoutMs), { model: 'fake-model', messages }).then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LlmError);
  return err as LlmError;
}

describe('classification of every fault the fake server injects', () => {
  it.each<[string, FakeStep, LlmFailureType, boolean]>([
    ['400 context_length_exceeded', step.contextLengthExceeded(), 'LLM_CONTEXT_LENGTH_EXCEEDED', false],
    [
      '400 context length in words only (vLLM)',
      step.badRequest(
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
      ),
      'LLM_CONTEXT_LENGTH_EXCEEDED',
      false,
    ],
    [
      '413 payload too large',
      { type: 'http_error', status: 413, message: 'too large' },
      'LLM_CONTEXT_LENGTH_EXCEEDED',
      false,
    ],
    ['400 bad request', step.badRequest('Invalid value for temperature'), 'LLM_BAD_REQUEST', false],
    [
      '404 model not found',
      { type: 'http_error', status: 404, message: 'no such model', code: 'model_not_found' },
      'LLM_BAD_REQUEST',
      false,
    ],
    ['401 invalid key', step.authError(), 'LLM_AUTH', false],
    ['403 forbidden', { type: 'http_error', status: 403, message: 'forbidden' }, 'LLM_AUTH', false],
    ['429 rate limited', step.rateLimited(2), 'LLM_RATE_LIMITED', true],
    [
      '429 insufficient_quota',
      {
        type: 'http_error',
        status: 429,
        message: 'You exceeded your current quota',
        code: 'insufficient_quota',
      },
      'LLM_QUOTA_EXCEEDED',
      false,
    ],
    ['408 request timeout', { type: 'http_error', status: 408, message: 'timeout' }, 'LLM_TIMEOUT', true],
    ['500 server error', step.serverError(), 'LLM_SERVER_ERROR', true],
    ['503 overloaded', step.serverError(503, 'overloaded'), 'LLM_SERVER_ERROR', true],
    ['dropped connection', step.disconnect(), 'LLM_CONNECTION', true],
  ])('%s → %s (retryable: %s)', async (_name, scripted, type, retryable) => {
    const err = await failWith(scripted);
    expect(err.type).toBe(type);
    expect(err.retryable).toBe(retryable);

    const failure = toApplicationFailure(err);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.type).toBe(type);
    expect(failure.nonRetryable).toBe(!retryable);
    expect(failure.message).toBe(err.message);
  });

  it('a hang past the client timeout → LLM_TIMEOUT (retryable)', async () => {
    const err = await failWith(step.hang(), 200);
    expect(err.type).toBe('LLM_TIMEOUT');
    expect(toApplicationFailure(err).nonRetryable).toBe(false);
  });

  it('an unreachable server → LLM_CONNECTION naming the cause', async () => {
    const dead = await startFakeOpenAI();
    const url = dead.url;
    await dead.close();
    const err = (await chatCompletion(createLlmClient({ apiKey: KEY, baseURL: url, timeoutMs: 2_000 }), {
      model: 'm',
      messages,
    }).catch((e: unknown) => e)) as LlmError;
    expect(err).toBeInstanceOf(LlmError);
    expect(err.type).toBe('LLM_CONNECTION');
    expect(err.message).toMatch(/ECONNREFUSED/);
  });

  it('a 200 whose body is not JSON → LLM_INVALID_RESPONSE (retryable) saying so', async () => {
    // A proxy cut the body short: the SDK's JSON.parse throws a bare SyntaxError.
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":"chatcmpl-x","choices":[{"message":{"role":"assistant","content":"<summ');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    try {
      const err = (await chatCompletion(
        createLlmClient({ apiKey: KEY, baseURL: `http://127.0.0.1:${port}/v1`, timeoutMs: 2_000 }),
        { model: 'm', messages },
      ).catch((e: unknown) => e)) as LlmError;
      expect(err).toBeInstanceOf(LlmError);
      expect(err.type).toBe('LLM_INVALID_RESPONSE');
      expect(err.retryable).toBe(true);
      expect(err.message).toMatch(/^LLM response is not valid JSON: Unterminated string in JSON/);
    } finally {
      await new Promise((done) => server.close(done));
    }
  });

  it('keeps the status, code and request id in small details', async () => {
    const err = await failWith(step.contextLengthExceeded());
    expect(err.details).toMatchObject({ status: 400, code: 'context_length_exceeded' });
    expect(err.details.requestId).toMatch(/^req_fake_/);
    expect(err.message).toMatch(
      /^LLM context length exceeded \(HTTP 400\): This model's maximum context length/,
    );
    expect(toApplicationFailure(err).details).toEqual([err.details]);
  });
});

describe('Retry-After becomes nextRetryDelay', () => {
  it('429 retry-after seconds → nextRetryDelay in ms', async () => {
    const err = await failWith(step.rateLimited(7));
    expect(err.details.retryAfterMs).toBe(7_000);
    const failure = toApplicationFailure(err);
    expect(failure.nextRetryDelay).toBe(7_000);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('retry after 7000 ms');
  });

  it('retry-after-ms wins over retry-after', async () => {
    const err = await failWith(step.rateLimited(7, { retryAfterMs: 1_250 }));
    expect(toApplicationFailure(err).nextRetryDelay).toBe(1_250);
  });

  it('503 with retry-after is honoured too', async () => {
    const err = await failWith({
      type: 'http_error',
      status: 503,
      message: 'busy',
      headers: { 'retry-after': '3' },
    });
    expect(toApplicationFailure(err).nextRetryDelay).toBe(3_000);
  });

  it('no header → no nextRetryDelay (the retry policy decides)', async () => {
    const err = await failWith(step.serverError());
    expect(toApplicationFailure(err).nextRetryDelay).toBeUndefined();
  });

  it('non-retryable failures never carry a delay', async () => {
    const err = await failWith({
      type: 'http_error',
      status: 429,
      message: 'quota',
      code: 'insufficient_quota',
      headers: { 'retry-after': '60' },
    });
    expect(toApplicationFailure(err).nextRetryDelay).toBeUndefined();
  });

  it.each<[Record<string, string>, number | undefined]>([
    [{}, undefined],
    [{ 'retry-after': '2' }, 2_000],
    [{ 'retry-after': '0.5' }, 500],
    [{ 'retry-after': '-4' }, 0],
    [{ 'retry-after': 'soon' }, undefined],
    [{ 'retry-after-ms': '150', 'retry-after': '9' }, 150],
    [{ 'retry-after-ms': 'x', 'retry-after': '9' }, 9_000],
    [{ 'retry-after': 'Wed, 21 Oct 2015 07:28:10 GMT' }, 10_000],
    [{ 'retry-after': 'Wed, 21 Oct 2015 07:27:00 GMT' }, 0],
  ])('retryAfterMs(%o) = %s', (headers, expected) => {
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
    expect(retryAfterMs(new Headers(headers), now)).toBe(expected);
  });
});

describe('the API key never appears in errors', () => {
  it('a 401 that echoes the key in full is redacted everywhere', async () => {
    const err = await failWith(step.authError({ echoKey: true }));
    const failure = toApplicationFailure(err);
    for (const text of [
      err.message,
      err.stack ?? '',
      failure.message,
      failure.stack ?? '',
      JSON.stringify(failure.details),
    ]) {
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(KEY.slice(8));
    }
    expect(err.message).toContain('[REDACTED]');
  });

  it.each([
    step.serverError(500, `upstream said ${KEY}`),
    step.badRequest(`bad key ${KEY}`),
    step.rateLimited(1, { message: `key=${KEY}` }),
  ])('redacts a key echoed in any error message (%#)', async (scripted) => {
    const err = await failWith(scripted);
    expect(err.message).not.toContain(KEY);
    expect(toApplicationFailure(err).message).not.toContain(KEY);
  });

  it('redacts keys even when classifying a raw SDK error without the client', () => {
    const raw = APIError.generate(
      500,
      { error: { message: `boom Bearer ${KEY}` } },
      undefined,
      new Headers(),
    );
    expect(toApplicationFailure(raw).message).not.toContain(KEY);
    const custom = classifyLlmError(new Error('failed with my-own-secret-token'), {
      secrets: ['my-own-secret-token'],
    });
    expect(custom.message).not.toContain('my-own-secret-token');
  });

  it.each([
    ['sk-abcdefghijklmnop', 'sk-[REDACTED]'],
    ['Authorization: Bearer abc.def.ghi', 'Authorization: Bearer [REDACTED]'],
    ['http://user:pa55@proxy:8080/v1', 'http://[REDACTED]@proxy:8080/v1'],
    ['nothing secret here', 'nothing secret here'],
  ])('redactSecrets(%j)', (text, expected) => {
    expect(redactSecrets(text)).toBe(expected);
  });
});

describe('the activity boundary', () => {
  it('llmBoundary maps LLM errors and lets everything else through untouched', async () => {
    llm.script(step.contextLengthExceeded());
    const mapped = await llmBoundary(() => chatCompletion(client(), { model: 'm', messages })).catch(
      (e: unknown) => e,
    );
    expect(mapped).toBeInstanceOf(ApplicationFailure);
    expect((mapped as ApplicationFailure).type).toBe('LLM_CONTEXT_LENGTH_EXCEEDED');
    expect((mapped as ApplicationFailure).nonRetryable).toBe(true);

    const other = new TypeError('a bug');
    await expect(llmBoundary(() => Promise.reject(other))).rejects.toBe(other);
    await expect(llmBoundary(() => Promise.resolve(42))).resolves.toBe(42);
  });

  it('toApplicationFailure returns an ApplicationFailure unchanged and wraps unknown errors as retryable', () => {
    const existing = ApplicationFailure.create({ type: 'X', message: 'x', nonRetryable: true });
    expect(toApplicationFailure(existing)).toBe(existing);
    const unknown = toApplicationFailure(new Error('weird'));
    expect(unknown.type).toBe('LLM_UNEXPECTED');
    expect(unknown.nonRetryable).toBe(false);
  });
});
