/**
 * What a {@link ConversationClient} is built with, and the shapes its methods take and return
 * besides the workflow's own (workflows/definitions.ts).
 */
import type { Client, Connection, ConnectionOptions } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import type { Pool } from 'pg';
import type { EventsPage, SendMessageResult } from '../../workflows/definitions';
import type { ClientCodecOptions } from './codecs';
import type { WatchedStatus } from './compaction-progress';

/** Settings every client takes. */
export interface CommonClientOptions {
  /** The workers' task queue, where `start` starts conversations. Default `durable-compaction`. */
  taskQueue?: string;
  /**
   * A pool on the workers' PostgreSQL. `export` reads the store through it; a client built on a
   * `connection` also stores and reads message bodies there. The client does not end it.
   */
  pool?: Pool;
  /**
   * Whether the client's codecs send messages by reference (DC_CLAIM_CHECK not `off`). Inline,
   * a message over 1.5 MB is refused before it is sent. Default true.
   */
  messagesByReference?: boolean;
  /**
   * How long a Query (status, events) may take before the conversation is reported as not
   * answering ({@link NotRespondingError}: no worker polls its task queue). Default 15 s.
   */
  queryTimeoutMs?: number;
}

/** A client on a Temporal client of the caller's, used as it is. */
export interface ClientOptionsWithClient extends CommonClientOptions {
  /**
   * The Temporal client to send through. Its data converter must carry the workers' payload codecs
   * (`clientPayloadCodecs({ pool })`): without them a reply, which travels by reference, cannot be read.
   */
  client: Client;
  /** Not with `client`. */
  connection?: never;
}

/** A client built on a connection of the caller's. */
export interface ClientOptionsWithConnection extends CommonClientOptions {
  /** The connection to the Temporal server. The client does not close it. */
  connection: Connection;
  /** Not with `connection`. */
  client?: never;
  /** The namespace of the conversations. Default `default`. */
  namespace?: string;
  /**
   * The payload codecs. Default: the claim check on `pool` (then AES-GCM with DC_PAYLOAD_KEY);
   * without a pool, a claim check that refuses, with what to set, any body it would have to store.
   */
  payloadCodecs?: PayloadCodec[];
}

/** How to build a {@link ConversationClient}: on a Temporal `client`, or on a `connection`. */
export type ConversationClientOptions = ClientOptionsWithClient | ClientOptionsWithConnection;

/** How {@link ConversationClient.connect} connects. */
export interface ConnectOptions extends Omit<ClientCodecOptions, 'pool'> {
  /** `host:port` of the Temporal frontend. Default `localhost:7233`. */
  address?: string;
  /** The namespace of the conversations. Default `default`. */
  namespace?: string;
  /** The workers' task queue, where `start` starts conversations. Default `durable-compaction`. */
  taskQueue?: string;
  /**
   * The workers' PostgreSQL (`postgres://…`): message bodies are written and read there, and
   * `export` reads the store. The pool connects on first use and is ended by `close`.
   */
  databaseUrl?: string;
  /** A pool on the workers' PostgreSQL instead of `databaseUrl` (not ended by `close`). */
  pool?: Pool;
  /** More connection options (TLS, API key, metadata). Default: plain, a 5 s connect timeout. */
  connection?: Omit<ConnectionOptions, 'address'>;
}

/** A message handed to a conversation, answered in its turn. */
export interface QueuedMessage {
  /** The conversation it was sent to. */
  conversationId: string;
  /** The id of its `sendMessage` Update. */
  updateId: string;
  /**
   * What it waits behind: a compaction that awaited a person's approval or review when it was
   * sent (it is answered once that is decided), or null.
   */
  awaiting: AwaitedDecision | null;
  /** The round's result, once the round has run. Rejects with a {@link ConversationError}. */
  result(): Promise<SendMessageResult>;
}

/** A compaction that waits for a person. */
export interface AwaitedDecision {
  /** What fired it (`rounds`, `precheck`, `manual`, …). */
  trigger: string;
  /** Its confirmation (`requireConfirmation`: `approve`, `reject`), or its summary's review (`review`). */
  awaits: 'approval' | 'review';
}

/** What an approval (`approve`, `reject`) decided. */
export interface ApprovalResult {
  /** The decision taken: the compaction runs (`approved`), or `onReject` applies (`rejected`). */
  decision: 'approved' | 'rejected';
}

/** What `end` reports. */
export interface EndResult {
  /** The rounds the conversation ran. */
  rounds: number;
}

/** Called with the conversation's status on each change of phase while a request runs. */
export type StatusListener = (status: WatchedStatus) => void;

/** A page of events and whether more may come. */
export interface EventsResult extends EventsPage {
  /** The conversation still runs: more events may come after `next`. */
  running: boolean;
}

/** Where a conversation's workflow is, as the server knows it (no worker needed). */
export interface ConversationDescription {
  /** The conversation asked about. */
  conversationId: string;
  /** Its workflow's status: `RUNNING`, `COMPLETED` (ended), `FAILED`, `TERMINATED`, … */
  workflowStatus: string;
  /** Its workflow runs (`workflowStatus` is `RUNNING`): it takes messages, unless it is ending. */
  running: boolean;
}
