/**
 * No message body in history (issue 22): the CLI sends a user message, a compaction focus and a
 * system prompt as real processes; the model's reply and the summary come back; then every event
 * of every run and child, as the server stores it (raw protobuf), is searched for their text and
 * finds none — the bodies are in PostgreSQL (`payload_bodies`), history holds references. A 3 MB
 * message is refused before anything is stored under the default limit and answered under a
 * raised one (Temporal's 2 MB payload limit no longer bounds it). A client without database access
 * sends through a codec server; one with neither is told what to set, and nothing is sent.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import type { Payload } from '@temporalio/common';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_CHECK_ENCODING, ClaimCheckCodec, PgClaimStore } from '../../../src/infra/claim-check';
import {
  AesGcmCodec,
  chainCodecs,
  parseKey,
  payloadCodecsFor,
  startCodecServer,
} from '../../../src/infra/codec';
import { isSummaryRequest, step } from '../../support/fake-openai';
import { startConversationEnv, type ConversationEnv } from '../../support/conversation-env';
import { allHistories, encodeHistory, fetchFullHistory } from '../../support/histories';
import { testDatabaseUrl, testTemporalAddress, uniqueId } from '../../support/harness';
import { runCli, type Run } from '../../support/cli-process';

let env: ConversationEnv;
let pool: Pool;
const dir = mkdtempSync(join(tmpdir(), 'dc-bodies-'));

beforeAll(async () => {
  env = await startConversationEnv();
  pool = new Pool({ connectionString: testDatabaseUrl(), max: 3 });
});
afterAll(async () => {
  await pool?.end();
  await env?.close();
});

function cli(
  args: string[],
  extra: Record<string, string> = { DATABASE_URL: testDatabaseUrl() },
): Promise<Run> {
  return runCli(args, { TEMPORAL_ADDRESS: testTemporalAddress(), TASK_QUEUE: env.taskQueue, ...extra });
}

async function started(r: Run): Promise<string> {
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.split('\n')[0]!.trim();
}

/** Every event of every run of the conversation and of its compaction children, as the server stores them. */
async function historyBytes(id: string): Promise<string> {
  const description = await env.client.workflow.getHandle(id).describe();
  // These conversations are short: one run (fetchFullHistory would follow a continue-as-new).
  const full = await fetchFullHistory(env.client, id, description.runId);
  return allHistories(full)
    .map((h) => Buffer.from(encodeHistory(h)).toString('latin1'))
    .join('\n');
}

async function storedBodies(): Promise<number> {
  const { rows } = await pool.query<{ n: string }>('select count(*) as n from payload_bodies');
  return Number(rows[0]?.n);
}

describe('message bodies travel by reference', () => {
  it('a message with a marker and a secret: neither is in any history event, `send` prints the reply', async () => {
    const marker = `marker-${uniqueId('m')}`;
    const secret = `s3cret-${Math.random().toString(36).slice(2)}`;
    env.llm.reset();
    env.llm.when(isSummaryRequest).setDefault(step.summary(`the user asked about ${marker} and ${secret}`));
    env.llm.setDefault(step.text(`answer about ${marker}: ${secret} noted`));
    const id = await started(
      await cli(['start', '--model', 'fake-model', '--window', '8000', '--system', `system ${marker}`]),
    );
    const sent = await cli(['send', id, `tell me about ${marker}, the password is ${secret}`]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toContain(`answer about ${marker}: ${secret} noted`);
    // A manual compaction with the user's focus: the focus, the summary and its preview carry text.
    const compacted = await cli(['compact', id, '--focus', `keep ${marker}`]);
    expect(compacted.code, compacted.stderr).toBe(0);
    const again = await cli(['send', id, `and again ${secret}`]);
    expect(again.code, again.stderr).toBe(0);
    // The model saw everything (the bodies came back from the store).
    const last = env.llm.chatRequests().at(-1)!;
    expect(JSON.stringify(last.body)).toContain(`and again ${secret}`);

    const bytes = await historyBytes(id);
    expect(bytes).toContain(CLAIM_CHECK_ENCODING);
    for (const text of [marker, secret]) expect(bytes).not.toContain(text);
    // They are in the store, by content hash.
    const { rows } = await pool.query<{ payload: Buffer }>(
      `select payload from payload_bodies where position(convert_to($1, 'UTF8') in payload) > 0`,
      [secret],
    );
    expect(rows.length).toBeGreaterThanOrEqual(2);
    await env.client.workflow.getHandle(id).terminate('test finished');
  });

  it('a 3 MB message: refused before anything is stored by maxInputChars, answered under a raised one', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text('read it all'));
    const file = join(dir, 'three-mb.txt');
    const body = 'abc '.repeat(750_000);
    writeFileSync(file, body);
    const id = await started(await cli(['start', '--model', 'fake-model']));
    const before = await storedBodies();
    const refused = await cli(['send', id, '--file', file]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toBe(
      'error: message is too long: 3000000 characters, the limit is 200000 (maxInputChars)',
    );
    expect(await storedBodies()).toBe(before);
    expect(env.llm.chatRequests()).toHaveLength(0);

    // Raised past Temporal's 2 MB payload limit, with a window that holds it: answered.
    const config = join(dir, 'raised.yaml');
    writeFileSync(config, 'context_compaction:\n  maxInputChars: 4000000\n  maxContextTokens: 2000000\n');
    const raised = await started(await cli(['start', '--model', 'fake-model', '--config', config]));
    const sent = await cli(['send', raised, '--file', file]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toContain('read it all');
    const request = JSON.stringify(env.llm.chatRequests().at(-1)!.body);
    expect(request.length).toBeGreaterThan(3_000_000);
    const bytes = await historyBytes(raised);
    expect(bytes).not.toContain('abc abc abc');
    expect(bytes.length).toBeLessThan(200_000);

    // Inline (DC_CLAIM_CHECK=off) it could not travel: refused by the payload limit, before sending.
    const inline = await cli(['send', raised, '--file', file], {
      DATABASE_URL: testDatabaseUrl(),
      DC_CLAIM_CHECK: 'off',
    });
    expect(inline.code).toBe(2);
    expect(inline.stderr).toMatch(/message is too long: 3000000 bytes, the limit is 1500000/);
    for (const c of [id, raised]) await env.client.workflow.getHandle(c).terminate('test finished');
  });

  it('a client without database access sends through a codec server; with neither it is told what to set', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text('through the codec server'));
    const server = await startCodecServer({ codec: chainCodecs(payloadCodecsFor(pool)), port: 0 });
    try {
      const id = await started(await cli(['start', '--model', 'fake-model', '--system', 'remote agent']));
      const secret = `remote-${Math.random().toString(36).slice(2)}`;
      const sent = await cli(['send', id, `hello ${secret}`], { DC_CODEC_ENDPOINT: server.url });
      expect(sent.code, sent.stderr).toBe(0);
      expect(sent.stdout).toContain('through the codec server');
      expect(await historyBytes(id)).not.toContain(secret);

      const asked = env.llm.chatRequests().length;
      const blind = await cli(['send', id, 'no store here'], {});
      expect(blind.code).toBe(1);
      expect(blind.stderr).toMatch(/set DATABASE_URL to the workers' PostgreSQL, or DC_CODEC_ENDPOINT/);
      expect(env.llm.chatRequests()).toHaveLength(asked);
      await env.client.workflow.getHandle(id).terminate('test finished');
    } finally {
      server.server.close();
    }
  });
});

describe('the claim-check codec on the real store', () => {
  const json = (value: unknown): Payload => ({
    metadata: { encoding: Buffer.from('json/plain') },
    data: Buffer.from(JSON.stringify(value)),
  });
  const encodingOf = (p: Payload): string => Buffer.from(p.metadata?.encoding ?? new Uint8Array()).toString();

  it('sends marked and large payloads by reference, the rest inline, and reads them back', async () => {
    const codec = new ClaimCheckCodec(new PgClaimStore(pool), { thresholdBytes: 1000 });
    const marked = json({ $claim: true, text: `hi ${uniqueId('x')}` });
    const large = json({ text: 'z'.repeat(2000) });
    const small = json({ seq: 3 });
    // A mark inside a string is escaped by JSON: not a mark.
    const quoted = json({ text: '"$claim":true' });
    const encoded = await codec.encode([marked, large, small, quoted]);
    expect(encoded.map(encodingOf)).toEqual([
      CLAIM_CHECK_ENCODING,
      CLAIM_CHECK_ENCODING,
      'json/plain',
      'json/plain',
    ]);
    // Another process (no cache) reads them from the store.
    const reader = new ClaimCheckCodec(new PgClaimStore(pool));
    const decoded = await reader.decode(encoded);
    expect(decoded.map((p) => Buffer.from(p.data!).toString())).toEqual(
      [marked, large, small, quoted].map((p) => Buffer.from(p.data!).toString()),
    );
  });

  it('composes with AES-GCM: the reference is encrypted, the body stays in the store', async () => {
    const aes = new AesGcmCodec(parseKey(Buffer.alloc(32, 7).toString('base64')));
    const chain = chainCodecs([new ClaimCheckCodec(new PgClaimStore(pool)), aes]);
    const payload = json({ $claim: true, text: 'composed' });
    const [sealed] = await chain.encode([payload]);
    expect(encodingOf(sealed!)).toBe('binary/encrypted');
    const [opened] = await chain.decode([sealed!]);
    expect(Buffer.from(opened!.data!).toString()).toBe(Buffer.from(payload.data!).toString());
  });

  it('says what is wrong: no store, a reference the store lacks, an altered reference', async () => {
    const storeless = new ClaimCheckCodec(null);
    await expect(storeless.encode([json({ $claim: true, text: 'x' })])).rejects.toThrow(/set DATABASE_URL/);
    // Unmarked small payloads need no store.
    expect(await storeless.encode([json({ seq: 1 })])).toHaveLength(1);
    const codec = new ClaimCheckCodec(new PgClaimStore(pool));
    const missing: Payload = {
      metadata: { encoding: Buffer.from(CLAIM_CHECK_ENCODING) },
      data: Buffer.from('0'.repeat(64)),
    };
    await expect(codec.decode([missing])).rejects.toThrow(/not in payload_bodies/);
    await expect(
      codec.decode([
        { metadata: { encoding: Buffer.from(CLAIM_CHECK_ENCODING) }, data: Buffer.from('nope') },
      ]),
    ).rejects.toThrow(/malformed/);
    // Offload off: nothing goes by reference, references are still read.
    const off = new ClaimCheckCodec(new PgClaimStore(pool), { offload: false });
    const marked = json({ $claim: true, text: 'inline' });
    expect((await off.encode([marked]))[0]).toBe(marked);
    const [ref] = await codec.encode([marked]);
    expect(Buffer.from((await off.decode([ref!]))[0]!.data!).toString()).toContain('inline');
    expect(temporal.api.common.v1.Payload.encode(ref!).finish().length).toBeLessThan(120);
  });
});
