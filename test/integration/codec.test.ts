/**
 * Payload encryption end to end (issue 8, security): a worker and a client with the AES-GCM codec
 * run a conversation on the real dev server; the history the server stores holds only ciphertext,
 * the client reads the plaintext, and the codec endpoint the Web UI calls decodes it over HTTP.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AesGcmCodec, ENCRYPTED_ENCODING, parseKey, startCodecServer } from '../../src/infra/codec';
import { sendMessageUpdate, type AgentConversationInput } from '../../workflows/definitions';
import { encodeHistory, TEST_API_KEY } from '../support/conversation-env';
import { startFakeOpenAI, step, type FakeOpenAI } from '../support/fake-openai';
import { startTestWorker, uniqueId, type TestWorker } from '../support/harness';

const SECRET_QUESTION = 'the launch code is seven four one';
const SECRET_REPLY = 'acknowledged, purple elephant';

let llm: FakeOpenAI;
let worker: TestWorker;
let codec: AesGcmCodec;
let codecServer: { url: string; server: Server };

beforeAll(async () => {
  llm = await startFakeOpenAI({ apiKey: TEST_API_KEY });
  codec = new AesGcmCodec(parseKey(randomBytes(32).toString('base64')));
  worker = await startTestWorker({
    llm: { apiKey: TEST_API_KEY, baseURL: llm.url, timeoutMs: 20_000 },
    payloadCodecs: [codec],
  });
  codecServer = await startCodecServer({ codec, port: 0, origins: ['http://localhost:8233'] });
});
afterAll(async () => {
  codecServer?.server.close();
  await worker?.shutdown();
  await llm?.close();
});

/** Every payload of a history (metadata and data, as the server stores them). */
function payloadsOf(value: unknown, out: { metadata: Record<string, Uint8Array>; data: Uint8Array }[] = []) {
  if (!value || typeof value !== 'object') return out;
  const v = value as Record<string, unknown>;
  if (v.metadata && v.data instanceof Uint8Array) {
    out.push(v as { metadata: Record<string, Uint8Array>; data: Uint8Array });
    return out;
  }
  for (const child of Object.values(v)) payloadsOf(child, out);
  return out;
}

describe('payload codec (AES-GCM)', () => {
  it('stores ciphertext in history; the client and the codec endpoint read the plaintext', async () => {
    llm.script(step.text(SECRET_REPLY));
    const client = new Client({ connection: worker.connection, dataConverter: { payloadCodecs: [codec] } });
    const id = uniqueId('codec');
    const input: AgentConversationInput = {
      conversationId: id,
      systemPrompt: 'You are a careful test agent.',
      tools: [],
      model: { provider: 'openai', model: 'fake-model' },
      config: { maxContextTokens: 8000 },
      searchAttributes: false,
    };
    const handle = await client.workflow.start('agentConversation', {
      workflowId: id,
      taskQueue: worker.taskQueue,
      args: [input],
    });
    const result = await handle.executeUpdate(sendMessageUpdate, { args: [SECRET_QUESTION] });
    expect(result.reply).toBe(SECRET_REPLY);

    // The server's copy: every payload encrypted, no plaintext anywhere.
    const history = await worker.client.workflow.getHandle(id).fetchHistory();
    const bytes = Buffer.from(encodeHistory(history)).toString('latin1');
    expect(bytes).not.toContain('launch code');
    expect(bytes).not.toContain('purple elephant');
    expect(bytes).not.toContain('careful test agent');
    const payloads = payloadsOf(history.events);
    expect(payloads.length).toBeGreaterThan(3);
    const plain = payloads
      .filter((p) => Buffer.from(p.metadata.encoding ?? new Uint8Array()).toString() !== ENCRYPTED_ENCODING)
      .map((p) => JSON.parse(Buffer.from(p.data).toString('utf8')) as Record<string, unknown>);
    // Only the SDK's own bookkeeping of local activities (sequence, type, times) stays readable.
    for (const bookkeeping of plain) {
      expect(Object.keys(bookkeeping).sort()).toEqual([
        'activity_id',
        'activity_type',
        'attempt',
        'backoff',
        'complete_time',
        'original_schedule_time',
        'seq',
      ]);
    }
    expect(payloads.length - plain.length).toBeGreaterThan(3);

    // The Web UI's codec endpoint: CORS for its origin, then /decode gives the plaintext back.
    const preflight = await fetch(`${codecServer.url}/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:8233', 'access-control-request-headers': 'x-namespace' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('x-namespace');
    const response = await fetch(`${codecServer.url}/decode`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin: 'http://localhost:8233',
        'x-namespace': 'default',
      },
      body: JSON.stringify({
        payloads: payloads.map((p) => ({
          metadata: Object.fromEntries(
            Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
          ),
          data: Buffer.from(p.data).toString('base64'),
        })),
      }),
    });
    expect(response.status).toBe(200);
    const decoded = (await response.json()) as {
      payloads: { metadata: Record<string, string>; data: string }[];
    };
    const texts = decoded.payloads.map((p) => Buffer.from(p.data, 'base64').toString('utf8'));
    expect(texts.some((t) => t.includes(SECRET_QUESTION))).toBe(true);
    expect(texts.some((t) => t.includes(SECRET_REPLY))).toBe(true);
    expect(
      decoded.payloads.every(
        (p) => Buffer.from(p.metadata.encoding ?? '', 'base64').toString() !== ENCRYPTED_ENCODING,
      ),
    ).toBe(true);

    // Another origin is refused.
    const foreign = await fetch(`${codecServer.url}/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
      body: JSON.stringify({ payloads: [] }),
    });
    expect(foreign.status).toBe(403);
    await handle.terminate('test finished');
  });
});
