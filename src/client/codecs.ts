/**
 * The payload codecs a client needs. Message bodies travel by reference (the claim-check codec,
 * src/infra/claim-check.ts): a user's message, a reply, a summary's preview are stored in the
 * workers' PostgreSQL and workflow history holds only their key. A client must therefore encode
 * and decode with the same store as the workers — through a pool on their PostgreSQL, or through
 * their codec server — and, when payloads are encrypted (DC_PAYLOAD_KEY), with the same key.
 */
import type { PayloadCodec } from '@temporalio/common';
import type { Pool } from 'pg';
import { claimCheckOptionsFromEnv } from '../infra/claim-check';
import { payloadCodecsFor, RemoteCodec } from '../infra/codec';

/** Where a client's codecs find the message bodies. */
export interface ClientCodecOptions {
  /** A pool on the workers' PostgreSQL: bodies are written and read there. */
  pool?: Pool | null;
  /**
   * A codec server of the workers (`durable-compaction codec-server`, or the one `up` starts), for
   * a client without database access. Ignored with `pool`.
   */
  codecEndpoint?: string;
  /**
   * Where the claim-check and encryption settings are read: DC_CLAIM_CHECK, DC_CLAIM_CHECK_BYTES,
   * DC_PAYLOAD_KEY, DC_PAYLOAD_OLD_KEYS. Default `process.env`.
   */
  env?: NodeJS.ProcessEnv;
}

/**
 * The codecs for a client: with a pool, the claim check on it (then AES-GCM with DC_PAYLOAD_KEY);
 * with a codec endpoint, that server (it holds the store and the key); with neither, a claim check
 * that says what to give it when a body needs the store.
 */
export function clientPayloadCodecs(options: ClientCodecOptions = {}): PayloadCodec[] {
  const env = options.env ?? process.env;
  if (options.pool) return payloadCodecsFor(options.pool, env);
  if (options.codecEndpoint) return [new RemoteCodec(options.codecEndpoint)];
  return payloadCodecsFor(null, env);
}

/**
 * Whether messages go by reference under `env` (DC_CLAIM_CHECK is not `off`): then only the
 * conversation's `maxInputChars` bounds a message; inline, Temporal's payload limit does too.
 */
export function messagesByReference(env: NodeJS.ProcessEnv = process.env): boolean {
  return claimCheckOptionsFromEnv(env).offload !== false;
}
