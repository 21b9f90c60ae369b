/**
 * Message bodies by reference (issue 22): a claim-check payload codec. A payload that carries
 * conversation text — its JSON has the `$claim` mark (`CLAIM` in workflows/definitions.ts: the
 * user's message, a reply or summary preview, a compaction's focus, the carried state) — or is
 * larger than `thresholdBytes` is stored in PostgreSQL (`payload_bodies`, keyed by the SHA-256 of
 * the encoded payload) before it is sent; history holds a reference of 64 hex digits. Decoding
 * reads it back. So no message body reaches the Temporal server, and Temporal's 2 MB payload limit
 * no longer bounds a message (`maxInputChars` does).
 *
 * It composes with the AES-GCM codec: it runs first on encode (it must see the plaintext mark), so
 * the reference is what gets encrypted. Whoever encodes or decodes needs the store: workers and
 * the CLI with DATABASE_URL; a client without database access uses a codec server
 * (`durable-compaction codec-server`, or the one `up` starts for the Web UI) through
 * {@link RemoteCodec} (DC_CODEC_ENDPOINT), as the Web UI does to show the bodies.
 */
import { createHash } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Pool } from 'pg';
import { InfraError } from './errors';

export const CLAIM_CHECK_ENCODING = 'binary/claim-check';
/** The mark as the JSON converter writes it (a string value cannot contain it: its quotes are escaped). */
const MARK = Buffer.from('"$claim":true');
const JSON_ENCODING = 'json/plain';
/** Default size above which any payload goes by reference. */
export const DEFAULT_CLAIM_CHECK_BYTES = 128 * 1024;
/** Bytes of payloads kept in memory, so a worker decodes what it has just encoded without a read. */
const CACHE_BYTES = 32 * 1024 * 1024;

/** Where the bodies are: `payload_bodies` in the workers' PostgreSQL. */
export interface ClaimStore {
  put(entries: { key: string; bytes: Buffer }[]): Promise<void>;
  get(keys: string[]): Promise<Map<string, Buffer>>;
}

export class PgClaimStore implements ClaimStore {
  constructor(private readonly pool: Pool) {}

  async put(entries: { key: string; bytes: Buffer }[]): Promise<void> {
    await this.pool.query(
      `insert into payload_bodies (sha256, payload, bytes)
       select * from unnest($1::text[], $2::bytea[], $3::int[])
       on conflict (sha256) do nothing`,
      [entries.map((e) => e.key), entries.map((e) => e.bytes), entries.map((e) => e.bytes.length)],
    );
  }

  async get(keys: string[]): Promise<Map<string, Buffer>> {
    const { rows } = await this.pool.query<{ sha256: string; payload: Buffer }>(
      'select sha256, payload from payload_bodies where sha256 = any($1::text[])',
      [keys],
    );
    return new Map(rows.map((r) => [r.sha256, r.payload]));
  }
}

/** What a process without a store is told when a payload needs one. */
const NO_STORE =
  'message bodies travel by reference (claim check) and this process has no store: ' +
  "set DATABASE_URL to the workers' PostgreSQL, or DC_CODEC_ENDPOINT to their codec server";

export interface ClaimCheckOptions {
  /** Payloads larger than this go by reference too (default {@link DEFAULT_CLAIM_CHECK_BYTES}). */
  thresholdBytes?: number;
  /** False: nothing is sent by reference (references already in history are still read). */
  offload?: boolean;
}

export class ClaimCheckCodec implements PayloadCodec {
  private readonly thresholdBytes: number;
  private readonly offload: boolean;
  /** Recently stored or read payloads by key, oldest first (a Map keeps insertion order). */
  private readonly cache = new Map<string, Buffer>();
  private cachedBytes = 0;

  /** `store` null: a process that can read neither; it says so when a payload needs it. */
  constructor(
    private readonly store: ClaimStore | null,
    options: ClaimCheckOptions = {},
  ) {
    this.thresholdBytes = options.thresholdBytes ?? DEFAULT_CLAIM_CHECK_BYTES;
    this.offload = options.offload ?? true;
  }

  /** Whether a payload goes by reference: marked as conversation text, or large. */
  private claims(payload: Payload): boolean {
    const data = payload.data;
    if (!data) return false;
    if (data.length > this.thresholdBytes) return true;
    const encoding = payload.metadata?.encoding;
    return (
      encoding !== undefined &&
      Buffer.from(encoding).toString() === JSON_ENCODING &&
      Buffer.from(data.buffer, data.byteOffset, data.byteLength).includes(MARK)
    );
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    if (!this.offload) return payloads;
    const fresh = new Map<string, Buffer>();
    const out = payloads.map((payload) => {
      if (!this.claims(payload)) return payload;
      if (!this.store) throw new Error(NO_STORE);
      const bytes = Buffer.from(temporal.api.common.v1.Payload.encode(payload).finish());
      const key = createHash('sha256').update(bytes).digest('hex');
      if (!this.cache.has(key)) fresh.set(key, bytes);
      return reference(key);
    });
    if (fresh.size > 0) {
      // Stored before the reference leaves this process: history never names a missing body.
      await this.store!.put([...fresh].map(([key, bytes]) => ({ key, bytes })));
      for (const [key, bytes] of fresh) this.remember(key, bytes);
    }
    return out;
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    const keys = payloads.map(referenceKey);
    const wanted = [...new Set(keys.filter((k): k is string => k !== null && !this.cache.has(k)))];
    if (wanted.length > 0) {
      if (!this.store) throw new Error(NO_STORE);
      const found = await this.store.get(wanted);
      for (const key of wanted) {
        const bytes = found.get(key);
        if (!bytes) {
          throw new Error(
            `payload ${key.slice(0, 12)}… is not in payload_bodies: this process reads another database than the workers that wrote it`,
          );
        }
        this.remember(key, bytes);
      }
    }
    return payloads.map((payload, i) => {
      const key = keys[i];
      if (key === null || key === undefined) return payload;
      return temporal.api.common.v1.Payload.decode(this.cache.get(key)!) as Payload;
    });
  }

  private remember(key: string, bytes: Buffer): void {
    if (bytes.length > CACHE_BYTES / 4) return;
    this.cache.delete(key);
    this.cache.set(key, bytes);
    this.cachedBytes += bytes.length;
    for (const [oldest, old] of this.cache) {
      if (this.cachedBytes <= CACHE_BYTES) break;
      this.cache.delete(oldest);
      this.cachedBytes -= old.length;
    }
  }
}

function reference(key: string): Payload {
  return { metadata: { encoding: Buffer.from(CLAIM_CHECK_ENCODING) }, data: Buffer.from(key) };
}

/** The key a reference names, or null for any other payload. */
function referenceKey(payload: Payload): string | null {
  const encoding = payload.metadata?.encoding;
  if (!encoding || Buffer.from(encoding).toString() !== CLAIM_CHECK_ENCODING) return null;
  const key = Buffer.from(payload.data ?? new Uint8Array()).toString();
  if (!/^[0-9a-f]{64}$/.test(key)) throw new Error('claim-check reference is malformed: it was altered');
  return key;
}

/** The claim-check settings from the environment (DC_CLAIM_CHECK, DC_CLAIM_CHECK_BYTES). */
export function claimCheckOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): ClaimCheckOptions {
  const off = env.DC_CLAIM_CHECK;
  if (off !== undefined && off !== '' && !['on', 'off'].includes(off))
    throw new InfraError(`DC_CLAIM_CHECK must be on or off (got ${JSON.stringify(off)})`);
  const bytes = env.DC_CLAIM_CHECK_BYTES;
  if (bytes !== undefined && bytes !== '' && !/^\d+$/.test(bytes))
    throw new InfraError(`DC_CLAIM_CHECK_BYTES must be a number of bytes (got ${JSON.stringify(bytes)})`);
  return {
    offload: off !== 'off',
    ...(bytes ? { thresholdBytes: Number(bytes) } : {}),
  };
}
