/**
 * Optional payload encryption (issue 8): an AES-256-GCM payload codec. With `DC_PAYLOAD_KEY` set
 * (32 bytes, base64), every payload the workers and clients put into workflow history — Update
 * inputs with the user's text, replies, compaction results, summaries in events — is stored as
 * ciphertext; the Temporal server never sees the plaintext. The Web UI shows it through the codec
 * endpoint (`durable-compaction codec-server`), which holds the same key.
 *
 * Each encrypted payload names its key (`encryption-key-id`), so keys can rotate: set the new key
 * in `DC_PAYLOAD_KEY` and the old ones in `DC_PAYLOAD_OLD_KEYS` (comma-separated) to keep reading
 * histories written with them.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Pool } from 'pg';
import { ClaimCheckCodec, claimCheckOptionsFromEnv, PgClaimStore } from './claim-check';
import { InfraError, innermostCause } from './errors';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface CodecKey {
  id: string;
  key: Buffer;
}

/** A key from its base64 text; its id is a short hash of it (nothing about the key leaks). */
export function parseKey(text: string, variable = 'DC_PAYLOAD_KEY'): CodecKey {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) {
    throw new InfraError(
      `${variable} must be 32 bytes in base64 (got ${key.length} bytes)`,
      'make one with: openssl rand -base64 32',
    );
  }
  return { id: createHash('sha256').update(key).digest('hex').slice(0, 12), key };
}

export class AesGcmCodec implements PayloadCodec {
  private readonly keys: Map<string, Buffer>;

  /** `current` encrypts; it and `older` decrypt. */
  constructor(
    private readonly current: CodecKey,
    older: CodecKey[] = [],
  ) {
    this.keys = new Map([current, ...older].map((k) => [k.id, k.key]));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
      const plain = temporal.api.common.v1.Payload.encode(payload).finish();
      const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: {
          encoding: Buffer.from(ENCRYPTED_ENCODING),
          [KEY_ID]: Buffer.from(this.current.id),
        },
        data: sealed,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.encoding ? Buffer.from(payload.metadata.encoding).toString() : '';
      if (encoding !== ENCRYPTED_ENCODING) return payload;
      const id = payload.metadata?.[KEY_ID] ? Buffer.from(payload.metadata[KEY_ID]).toString() : '';
      const key = this.keys.get(id);
      if (!key) {
        throw new Error(
          `payload encrypted with key ${id || '(none)'}, which this process does not have: set it in DC_PAYLOAD_KEY or DC_PAYLOAD_OLD_KEYS`,
        );
      }
      const data = Buffer.from(payload.data ?? new Uint8Array());
      if (data.length < IV_BYTES + TAG_BYTES) throw new Error('encrypted payload too short: it was altered');
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      let plain: Buffer;
      try {
        plain = Buffer.concat([
          decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
          decipher.final(),
        ]);
      } catch {
        throw new Error(`encrypted payload failed authentication (key ${id}): it was altered`);
      }
      return temporal.api.common.v1.Payload.decode(plain) as Payload;
    });
  }
}

/** The encryption codec the environment asks for: none, or AES-GCM with `DC_PAYLOAD_KEY`. */
export function payloadCodecsFromEnv(env: NodeJS.ProcessEnv = process.env): PayloadCodec[] {
  const text = env.DC_PAYLOAD_KEY;
  if (!text) return [];
  const older = (env.DC_PAYLOAD_OLD_KEYS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => parseKey(s, 'DC_PAYLOAD_OLD_KEYS'));
  return [new AesGcmCodec(parseKey(text), older)];
}

/**
 * The codecs of a process: the claim check (bodies by reference in `pool`'s `payload_bodies`; with
 * no pool, a process that says what to set when it meets one), then AES-GCM when DC_PAYLOAD_KEY is
 * set. Workers, `up`, the codec server and the CLI with DATABASE_URL all use these.
 */
export function payloadCodecsFor(pool: Pool | null, env: NodeJS.ProcessEnv = process.env): PayloadCodec[] {
  return [
    new ClaimCheckCodec(pool ? new PgClaimStore(pool) : null, claimCheckOptionsFromEnv(env)),
    ...payloadCodecsFromEnv(env),
  ];
}

/** Several codecs as one, in the SDK's order: encode with the first first, decode with the last first. */
export function chainCodecs(codecs: PayloadCodec[]): PayloadCodec {
  if (codecs.length === 1) return codecs[0]!;
  return {
    async encode(payloads) {
      for (const codec of codecs) payloads = await codec.encode(payloads);
      return payloads;
    },
    async decode(payloads) {
      for (const codec of [...codecs].reverse()) payloads = await codec.decode(payloads);
      return payloads;
    },
  };
}

function describeCause(err: unknown): string {
  const root = innermostCause(err);
  return root instanceof Error ? root.message : String(root);
}

/**
 * A codec server's codec, for a client without database access (DC_CODEC_ENDPOINT): it encodes
 * and decodes through `POST <endpoint>/encode` and `/decode`, so the server holds the store and the
 * key.
 */
export class RemoteCodec implements PayloadCodec {
  constructor(private readonly endpoint: string) {}

  encode(payloads: Payload[]): Promise<Payload[]> {
    return this.call('encode', payloads);
  }

  decode(payloads: Payload[]): Promise<Payload[]> {
    return this.call('decode', payloads);
  }

  private async call(route: 'encode' | 'decode', payloads: Payload[]): Promise<Payload[]> {
    if (payloads.length === 0) return payloads;
    const url = `${this.endpoint.replace(/\/+$/, '')}/${route}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ payloads: payloads.map(toJson) }),
      });
    } catch (err) {
      throw new Error(`codec server ${url} unreachable (${describeCause(err)})`, { cause: err });
    }
    const text = await response.text();
    if (!response.ok)
      throw new Error(`codec server ${url} answered ${response.status}: ${text.slice(0, 200)}`);
    return (JSON.parse(text) as { payloads: JsonPayload[] }).payloads.map(fromJson);
  }
}

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

function fromJson(p: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(
      Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
    ),
    data: Buffer.from(p.data ?? '', 'base64'),
  };
}

function toJson(p: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    ),
    data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
  };
}

/** The largest request the codec server reads: the UI sends a page of events (payloads ≤ 2 MB each). */
const MAX_CODEC_BODY_BYTES = 64 * 1024 * 1024;

export interface CodecServerOptions {
  codec: PayloadCodec;
  port: number;
  host?: string;
  /** Origins allowed to call it (the Web UI's); default any. */
  origins?: string[];
}

/**
 * The Temporal codec server protocol: `POST /encode` and `POST /decode` (also under a namespace
 * segment, `/<namespace>/decode`) with `{payloads: [...]}` (base64 metadata and data), CORS for the
 * Web UI (which sends `x-namespace`). One key serves every namespace.
 */
export async function startCodecServer(
  options: CodecServerOptions,
): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    void handle(options, req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return { url: `http://${options.host ?? '127.0.0.1'}:${port}`, server };
}

async function handle(options: CodecServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const origin = req.headers.origin;
  const allowed = !origin || !options.origins || options.origins.includes(origin);
  if (origin && allowed) {
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('access-control-allow-methods', 'POST, OPTIONS');
    res.setHeader('access-control-allow-headers', 'content-type, x-namespace');
    res.setHeader('access-control-allow-credentials', 'true');
  }
  if (req.method === 'OPTIONS') {
    res.writeHead(allowed ? 204 : 403).end();
    return;
  }
  // `/encode`, or `/<namespace>/encode` as the `temporal` CLI's `--codec-endpoint .../{namespace}` calls it.
  const route = /^(?:\/[^/]+)?\/(encode|decode)$/.exec((req.url ?? '').split('?')[0] ?? '')?.[1];
  if (req.method !== 'POST' || !route) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('POST /encode or /decode');
    return;
  }
  if (!allowed) {
    res.writeHead(403, { 'content-type': 'text/plain' }).end('origin not allowed');
    return;
  }
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_CODEC_BODY_BYTES) {
        res.writeHead(413, { 'content-type': 'text/plain' }).end('request body too large');
        return;
      }
      chunks.push(chunk as Buffer);
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { payloads?: JsonPayload[] };
    if (!Array.isArray(body.payloads)) throw new Error('the body must be {"payloads": [...]}');
    const payloads = body.payloads.map(fromJson);
    const out =
      route === 'encode' ? await options.codec.encode(payloads) : await options.codec.decode(payloads);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ payloads: out.map(toJson) }));
  } catch (err) {
    res.writeHead(400, { 'content-type': 'text/plain' }).end((err as Error).message);
  }
}
