/**
 * Payload encryption end to end (issue 8, security): a worker and a client with the AES-GCM codec
 * run a conversation on the real dev server; the history the server stores holds only ciphertext,
 * the client reads the plaintext, and the codec endpoint the Web UI calls decodes it over HTTP.
 * The CLI (`start`, `send` as processes with DC_PAYLOAD_KEY) and `replay` work on encrypted
 * conversations, and a dev server started with a key gives its Web UI a codec endpoint.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import type { NativeConnection } from '@temporalio/worker';
import { Pool } from 'pg';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClaimCheckCodec, PgClaimStore } from '../../../src/infra/claim-check';
import {
  AesGcmCodec,
  chainCodecs,
  ENCRYPTED_ENCODING,
  parseKey,
  startCodecServer,
} from '../../../src/infra/codec';
import { connectTemporal } from '../../../src/infra/temporal';
import { replayHistories } from '../../../src/replay/histories';
import { createWorker } from '../../../src/worker';
import {
  CLAIM,
  messageBody,
  sendMessageUpdate,
  type AgentConversationInput,
} from '../../../workflows/definitions';
import { encodeHistory, TEST_API_KEY } from '../../support/conversation-env';
import { runCli } from '../../support/cli-process';
import { startFakeOpenAI, step, type FakeOpenAI } from '../../support/fake-openai';
import {
  startTestWorker,
  testDatabaseUrl,
  testTemporalAddress,
  testWorkflowBundle,
  uniqueId,
  type TestWorker,
} from '../../support/harness';

const SECRET_QUESTION = 'the launch code is seven four one';
const SECRET_REPLY = 'acknowledged, purple elephant';

const KEY_TEXT = randomBytes(32).toString('base64');
const ROOT = join(__dirname, '..', '..', '..');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let llm: FakeOpenAI;
let worker: TestWorker;
let codec: AesGcmCodec;
/** The claim check (bodies by reference in the test database), then the key: what `up` runs with a key. */
let codecs: PayloadCodec[];
let claimPool: Pool;
let codecServer: { url: string; server: Server };

beforeAll(async () => {
  llm = await startFakeOpenAI({ apiKey: TEST_API_KEY });
  codec = new AesGcmCodec(parseKey(KEY_TEXT));
  claimPool = new Pool({ connectionString: testDatabaseUrl(), max: 2 });
  codecs = [new ClaimCheckCodec(new PgClaimStore(claimPool)), codec];
  worker = await startTestWorker({
    llm: { apiKey: TEST_API_KEY, baseURL: llm.url, timeoutMs: 20_000 },
    payloadCodecs: codecs,
  });
  codecServer = await startCodecServer({
    codec: chainCodecs(codecs),
    port: 0,
    origins: ['http://localhost:8233'],
  });
});
afterAll(async () => {
  codecServer?.server.close();
  await claimPool?.end();
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
    const client = new Client({ connection: worker.connection, dataConverter: { payloadCodecs: codecs } });
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

/** A CLI command as a user runs it, with the key in its environment; `out` is all it printed. */
async function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  const r = await runCli(args, { TEMPORAL_ADDRESS: testTemporalAddress(), ...env });
  return { code: r.code, out: r.stdout + r.stderr };
}

describe('the CLI and replay on encrypted conversations', () => {
  it('`start` and `send` with DC_PAYLOAD_KEY run a conversation whose history is ciphertext; replay needs the key', async () => {
    llm.reset();
    llm.setDefault(step.text('the vault opens at dawn'));
    const id = uniqueId('codec-cli');
    const env = { DC_PAYLOAD_KEY: KEY_TEXT, TASK_QUEUE: worker.taskQueue, DATABASE_URL: testDatabaseUrl() };
    const started = await cli(
      ['start', '--id', id, '--model', 'fake-model', '--system', 'a private agent'],
      env,
    );
    expect(started.code, started.out).toBe(0);
    const sent = await cli(['send', id, 'when does the vault open?'], env);
    expect(sent.code, sent.out).toBe(0);
    expect(sent.out).toContain('the vault opens at dawn');

    // Without the key the CLI cannot read the conversation's answers (and says so).
    const blind = await cli(['status', id], { TASK_QUEUE: worker.taskQueue });
    expect(blind.code).not.toBe(0);
    expect(blind.out).toMatch(/the conversation is encrypted: set DC_PAYLOAD_KEY/);

    const history = await worker.client.workflow.getHandle(id).fetchHistory();
    const bytes = Buffer.from(encodeHistory(history)).toString('latin1');
    expect(bytes).toContain(ENCRYPTED_ENCODING);
    for (const plain of ['vault', 'a private agent']) expect(bytes).not.toContain(plain);

    // Replay decodes with the key; without it the workflow cannot even read its input.
    const withKey = await replayHistories(testWorkflowBundle(), [{ workflowId: id, history }], {
      payloadCodecs: codecs,
    });
    expect(withKey).toEqual([{ workflowId: id, error: null }]);
    const withoutKey = await replayHistories(testWorkflowBundle(), [{ workflowId: id, history }], {
      payloadCodecs: [],
    });
    expect(withoutKey).toEqual([{ workflowId: id, error: expect.any(String) }]);
    await worker.client.workflow.getHandle(id).terminate('test finished');
  });
});

describe('a dev server started with a key', () => {
  it('gives its Web UI a codec endpoint of its own, open to the UI origin only; a browser shows plaintext', async () => {
    // As `up` runs with a key: bodies by reference, then encrypted; the UI reads both through it.
    const temporal = await connectTemporal({ ui: true, payloadCodecs: codecs, log: () => undefined });
    let keyedWorker: Awaited<ReturnType<typeof startWorkerOn>> | undefined;
    let browser: Browser | undefined;
    try {
      expect(temporal.uiUrl).not.toBeNull();
      expect(temporal.codecEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // What the UI reads at load: its codec endpoint.
      const settings = (await (await fetch(`${temporal.uiUrl}/api/v1/settings`)).json()) as {
        Codec?: { Endpoint?: string };
      };
      expect(settings.Codec?.Endpoint).toBe(temporal.codecEndpoint);

      const [sealed] = await codec.encode([
        { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"hello UI"') },
      ]);
      const body = JSON.stringify({
        payloads: [
          {
            metadata: Object.fromEntries(
              Object.entries(sealed!.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
            ),
            data: Buffer.from(sealed!.data!).toString('base64'),
          },
        ],
      });
      const decode = (origin: string) =>
        fetch(`${temporal.codecEndpoint}/decode`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin, 'x-namespace': 'default' },
          body,
        });
      const ok = await decode(temporal.uiUrl!);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('access-control-allow-origin')).toBe(temporal.uiUrl);
      const decoded = (await ok.json()) as { payloads: { data: string }[] };
      expect(Buffer.from(decoded.payloads[0]!.data, 'base64').toString()).toBe('"hello UI"');
      expect((await decode('http://localhost:1')).status).toBe(403);

      // A conversation on this server, and its page in a real browser: the UI decrypts the input.
      keyedWorker = await startWorkerOn(temporal.nativeConnection);
      const id = uniqueId('codec-ui');
      const handle = await temporal.client.workflow.start('agentConversation', {
        workflowId: id,
        taskQueue: keyedWorker.taskQueue,
        args: [
          {
            ...CLAIM,
            conversationId: id,
            systemPrompt: 'You are the lighthouse keeper of Ushant.',
            tools: [],
            model: { provider: 'openai', model: 'fake-model' },
            config: { maxContextTokens: 8000 },
            searchAttributes: false,
          } satisfies AgentConversationInput,
        ],
      });
      await handle.executeUpdate(sendMessageUpdate, { args: [messageBody(SECRET_QUESTION)] });
      const raw = Buffer.from(encodeHistory(await handle.fetchHistory())).toString('latin1');
      expect(raw).not.toContain('lighthouse keeper');
      expect(raw).not.toContain('launch code');
      // By reference: the input is in the store, history holds its (encrypted) reference only.
      const stored = await claimPool.query(
        `select 1 from payload_bodies where position(convert_to('lighthouse keeper of Ushant', 'UTF8') in payload) > 0`,
      );
      expect(stored.rowCount).toBeGreaterThan(0);
      if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`);
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      });
      const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
      await page.goto(`${temporal.uiUrl}/namespaces/default/workflows/${encodeURIComponent(id)}`, {
        waitUntil: 'domcontentloaded',
        timeout: 60_000,
      });
      let text = '';
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await page.waitForTimeout(500)) {
        text = await page.innerText('body');
        if (text.includes('lighthouse keeper of Ushant')) break;
      }
      mkdirSync(join(ROOT, 'test-output', 'web-ui'), { recursive: true });
      await page.screenshot({ path: join(ROOT, 'test-output', 'web-ui', 'codec.png'), fullPage: true });
      // The input, stored by reference and the reference encrypted, shown in plain text.
      expect(text).toContain('lighthouse keeper of Ushant');
      await handle.terminate('test finished');
    } finally {
      await browser?.close();
      await keyedWorker?.shutdown();
      await temporal.shutdown();
    }
  });
});

/** A worker with the codec on another server (the test's own dev server), answering with the fake LLM. */
async function startWorkerOn(connection: NativeConnection) {
  const pool = new Pool({ connectionString: testDatabaseUrl(), max: 3 });
  pool.on('error', () => undefined);
  const taskQueue = uniqueId('codec-ui-tq');
  const keyed = await createWorker({
    connection,
    pool,
    taskQueue,
    workflowBundle: testWorkflowBundle(),
    llm: { apiKey: TEST_API_KEY, baseURL: llm.url, timeoutMs: 20_000 },
    payloadCodecs: codecs,
    shutdownGraceTime: '1s',
  });
  const running = keyed.run();
  return {
    taskQueue,
    async shutdown() {
      keyed.shutdown();
      await running.catch(() => undefined);
      await pool.end();
    },
  };
}
