/**
 * {@link ConversationClient}: the agent conversations of a Temporal namespace, from code. Each
 * method names a conversation by its id, checks what it can before anything is sent, sends one
 * Update or Query, and returns the workflow's typed answer; every failure about the conversation is
 * a {@link ConversationError} (errors.ts: the classes; error-mapping.ts: the one mapping from
 * Temporal's failures).
 *
 * ```ts
 * const conversations = await ConversationClient.connect({
 *   address: 'localhost:7233',
 *   databaseUrl: process.env.DATABASE_URL, // the workers' PostgreSQL: message bodies, export
 * });
 * const { conversationId } = await conversations.start({
 *   systemPrompt: 'You are terse.',
 *   model: { provider: 'openai', model: 'gpt-4o' },
 *   config: { maxContextTokens: 32_000 },
 * });
 * const round = await conversations.send(conversationId, 'hello');
 * console.log(round.reply, round.contextTokens, round.compactions);
 * await conversations.end(conversationId);
 * await conversations.close();
 * ```
 *
 * Message bodies travel by reference (see codecs.ts): a client built on a `connection` is given the
 * workers' `pool` (or payload codecs of its own); one built on a `client` must carry those codecs in
 * its data converter already.
 */
import {
  Client,
  Connection,
  WorkflowNotFoundError,
  WorkflowUpdateStage,
  type WorkflowHandle,
} from '@temporalio/client';
import type { Pool } from 'pg';
import {
  approveCompactionUpdate,
  CLAIM,
  compactUpdate,
  endUpdate,
  eventsPageQuery,
  messageBody,
  restoreUpdate,
  reviewCompactionUpdate,
  sendMessageUpdate,
  statusQuery,
  type CompactionBrief,
  type ConversationStatus,
  type RestoreResult,
  type ReviewAnswer,
  type ReviewResult,
  type SendMessageResult,
} from '../../workflows/definitions';
import { newUpdateId } from '../update-ids';
import type {
  ApprovalResult,
  ConnectOptions,
  ConversationClientOptions,
  ConversationDescription,
  EndResult,
  EventsResult,
  QueuedMessage,
  StatusListener,
} from './client-types';
import { clientPayloadCodecs, messagesByReference } from './codecs';
import { compactionProgress, type WatchedStatus } from './compaction-progress';
import {
  describeConversation,
  DEFAULT_CONVERSATION_TASK_QUEUE,
  QUERY_DEADLINE_MS,
  queryConversation,
  workflowFailure,
} from './conversation-workflow';
import { conversationErrorFrom } from './error-mapping';
import {
  BadInputError,
  ConversationEndedError,
  NoReviewPendingError,
  StoreRequiredError,
  TemporalUnreachableError,
} from './errors';
import { exportContext, type ExportOptions, type ExportResult } from './export';
import { checkMessageSize, checkMessageText } from './message-checks';
import { watchPhases, withProgress, type PhaseWatcher } from './progress';
import { startConversation, type StartedConversation, type StartInput, type StartOptions } from './start';

/** The agent conversations of one namespace. See the module's documentation for an example. */
export class ConversationClient {
  /** The Temporal client it sends through. */
  readonly temporal: Client;
  /** Where `start` starts conversations. */
  readonly taskQueue: string;
  private readonly pool: Pool | null;
  private readonly byReference: boolean;
  private readonly queryTimeoutMs: number;
  /** What `close` releases: what the client made itself. */
  private readonly owned: (() => Promise<void>)[] = [];

  /**
   * A client on a Temporal `client` of the caller's, or on a `connection` (with its `namespace`
   * and payload codecs). Nothing is connected or sent here.
   */
  constructor(options: ConversationClientOptions) {
    this.taskQueue = options.taskQueue ?? DEFAULT_CONVERSATION_TASK_QUEUE;
    this.pool = options.pool ?? null;
    this.byReference = options.messagesByReference ?? true;
    this.queryTimeoutMs = options.queryTimeoutMs ?? QUERY_DEADLINE_MS;
    this.temporal =
      options.client ??
      new Client({
        connection: options.connection,
        namespace: options.namespace ?? 'default',
        dataConverter: { payloadCodecs: options.payloadCodecs ?? clientPayloadCodecs({ pool: this.pool }) },
      });
  }

  /**
   * Connects to the Temporal server and builds the client with the codecs message bodies need:
   * with `databaseUrl` (or `pool`) the claim check on the workers' PostgreSQL, else with
   * `codecEndpoint` their codec server, else none (a body that needs the store is refused with
   * what to set). `close` ends what this made.
   * @throws TemporalUnreachableError when the server cannot be reached
   */
  static async connect(options: ConnectOptions = {}): Promise<ConversationClient> {
    const env = options.env ?? process.env;
    // The settings are checked before anything is opened: a bad one leaves nothing behind.
    const byReference = messagesByReference(env);
    let pool = options.pool ?? null;
    const owned: (() => Promise<void>)[] = [];
    if (!pool && options.databaseUrl) {
      const { lazyPool } = await import('../infra/postgres');
      const made = lazyPool(options.databaseUrl);
      owned.push(() => made.end());
      pool = made;
    }
    const codecEndpoint = options.codecEndpoint;
    const address = options.address ?? 'localhost:7233';
    try {
      const payloadCodecs = clientPayloadCodecs({ pool, env, ...(codecEndpoint ? { codecEndpoint } : {}) });
      const connection = await Connection.connect({
        connectTimeout: '5s',
        ...options.connection,
        address,
      }).catch((err: unknown) => {
        throw new TemporalUnreachableError(address, { cause: err });
      });
      const client = new ConversationClient({
        connection,
        namespace: options.namespace ?? 'default',
        ...(options.taskQueue !== undefined ? { taskQueue: options.taskQueue } : {}),
        ...(pool ? { pool } : {}),
        payloadCodecs,
        messagesByReference: byReference,
      });
      client.owned.push(() => connection.close(), ...owned);
      return client;
    } catch (err) {
      for (const release of owned) await release().catch(() => undefined);
      throw err;
    }
  }

  /** Closes what {@link ConversationClient.connect} opened (the connection, the pool it made). */
  async close(): Promise<void> {
    for (const release of this.owned.splice(0)) await release().catch(() => undefined);
  }

  /**
   * Starts a conversation and waits (`waitMs`) until a worker has set it up. An id already used is
   * refused — a conversation's history in the store belongs to one workflow — except one whose
   * first run failed on its input: it wrote nothing, so it starts again with the input corrected.
   * @throws BadInputError an invalid id or configuration (nothing started), or a conversation that
   *   failed at once on its input (`TOOL_UNKNOWN`, `HEADER_EXCEEDS_WINDOW`, …)
   * @throws ConversationExistsError when the id is taken
   * @throws RequestFailedError when it failed at start for another reason
   */
  start(input: StartInput, options: StartOptions = {}): Promise<StartedConversation> {
    return startConversation(this.temporal, input, {
      ...options,
      taskQueue: options.taskQueue ?? this.taskQueue,
    });
  }

  /**
   * Sends a message and waits for the round's result: the reply, the tokens, the compactions the
   * round ran. While a compaction awaits a person's approval or review, the round (and so this
   * call) waits for the decision: {@link ConversationClient.queue} returns at once instead.
   * @param options.onStatus - called on each change of phase while the round runs
   * @throws BadInputError an empty or too long message (nothing sent)
   * @throws ConversationNotFoundError, ConversationEndedError
   * @throws RequestFailedError when the round failed (its model call, say); CompactionRejectedError
   */
  async send(
    id: string,
    text: string,
    options: { onStatus?: StatusListener } = {},
  ): Promise<SendMessageResult> {
    const queued = await this.queue(id, text);
    return withProgress(this.handle(id), options.onStatus, () => queued.result());
  }

  /**
   * Hands a message to the conversation and returns once it has accepted it (checked, queued);
   * `result()` waits for its round. What it waits behind, if a person must decide first, is in
   * `awaiting`.
   * @throws BadInputError, ConversationNotFoundError, ConversationEndedError as {@link ConversationClient.send}
   */
  async queue(id: string, text: string): Promise<QueuedMessage> {
    checkMessageText(id, text);
    await this.ensureRunning(id);
    const status = await this.statusOf(id);
    if (status.ended) throw new ConversationEndedError(id);
    checkMessageSize(id, text, status.maxInputChars, this.byReference);
    const awaiting = status.awaitingApproval
      ? { trigger: status.awaitingApproval.trigger, awaits: 'approval' as const }
      : status.review
        ? { trigger: status.review.trigger, awaits: 'review' as const }
        : null;
    const update = await this.update(id, (handle) =>
      handle.startUpdate(sendMessageUpdate, {
        updateId: newUpdateId(),
        args: [messageBody(text)],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      }),
    );
    return {
      conversationId: id,
      updateId: update.updateId,
      awaiting,
      result: () => this.mapped(id, () => update.result()),
    };
  }

  /**
   * Compacts the context now; resolves when the compaction has ended: committed, rolled back or
   * skipped (the result's `status`, with its `reason`).
   * @param options.focus - what the summary should keep in focus (at most 4,000 characters)
   * @param options.onStatus - called on each change of phase while it runs
   * @throws BadInputError a focus that is too long; ConversationNotFoundError, ConversationEndedError
   */
  async compact(
    id: string,
    options: { focus?: string; onStatus?: StatusListener } = {},
  ): Promise<CompactionBrief> {
    return this.update(id, (handle) =>
      withProgress(handle, options.onStatus, () =>
        handle.executeUpdate(compactUpdate, {
          // A focus is the user's text: by reference (see CLAIM).
          args: [options.focus === undefined ? {} : { ...CLAIM, focus: options.focus }],
        }),
      ),
    );
  }

  /**
   * Approves the compaction that awaits approval (`requireConfirmation`): it runs, then the rounds
   * queued behind it. A summary awaiting review is answered with {@link ConversationClient.review}.
   * @throws NoApprovalPendingError when none awaits approval
   */
  async approve(id: string): Promise<ApprovalResult> {
    return this.update(id, (handle) =>
      handle.executeUpdate(approveCompactionUpdate, { args: [{ approve: true }] }),
    );
  }

  /**
   * Rejects the compaction that awaits approval: the conversation's `onReject` applies (go on
   * uncompacted, drop the oldest rounds, or fail the round).
   * @throws NoApprovalPendingError when none awaits approval
   */
  async reject(id: string): Promise<ApprovalResult> {
    return this.update(id, (handle) =>
      handle.executeUpdate(approveCompactionUpdate, { args: [{ approve: false }] }),
    );
  }

  /**
   * Answers the summary that awaits review (`reviewSummary`; `status(id).review` shows it):
   * approve it, approve an edited `summary` instead (not empty, within its `summaryBudget`), or
   * reject it (rolled back, then `onReject` applies). Resolves when the compaction has ended.
   * @throws NoReviewPendingError when none awaits review (`decidedMeanwhile`: it was decided, or
   *   timed out, since the client looked)
   * @throws BadInputError `SUMMARY_EDIT_REFUSED` or `BAD_INPUT`: the edit is refused, nothing changed
   */
  async review(
    id: string,
    answer: { decision: 'approve' | 'reject'; summary?: string },
  ): Promise<ReviewResult> {
    await this.ensureRunning(id);
    const { review } = await this.statusOf(id);
    if (!review) throw new NoReviewPendingError(id);
    const args: ReviewAnswer = {
      decision: answer.decision,
      // An edited summary is text: by reference (see CLAIM).
      ...(answer.summary !== undefined ? { ...CLAIM, summary: answer.summary } : {}),
    };
    try {
      return await this.temporal.workflow
        .getHandle(review.workflowId)
        .executeUpdate(reviewCompactionUpdate, { args: [args] });
    } catch (err) {
      // The child has ended: the review was decided (or timed out) since the status was read.
      if (err instanceof WorkflowNotFoundError)
        throw new NoReviewPendingError(id, { decidedMeanwhile: true, cause: err });
      throw conversationErrorFrom(err, id);
    }
  }

  /**
   * The conversation's status (the `status` Query): phase, tokens, rounds, compactions, what
   * awaits a person, and where a running compaction is (`compactionProgress`). An ended
   * conversation answers too.
   * @throws ConversationNotFoundError; NotRespondingError when no worker answers
   */
  async status(id: string): Promise<WatchedStatus> {
    await this.describe(id);
    const status: WatchedStatus = await this.statusOf(id);
    if (status.compaction)
      status.compactionProgress = await compactionProgress(this.temporal.workflow, status.compaction);
    return status;
  }

  /**
   * Makes an earlier version's content active again, as a new version (undoes a compaction). It
   * runs in turn, after the rounds and compactions asked for before it.
   * @throws BadInputError a version below 1, or `VERSION_NOT_FOUND`
   */
  async restore(id: string, version: number): Promise<RestoreResult> {
    if (!Number.isInteger(version) || version < 1)
      throw new BadInputError('BAD_INPUT', id, 'version must be a positive integer');
    return this.update(id, (handle) => handle.executeUpdate(restoreUpdate, { args: [{ version }] }));
  }

  /**
   * The active context (or `version`) as the model is sent it, from the store: OpenAI chat
   * messages, as JSON (`{ messages, tools? }`) or JSONL. Needs the client's `pool`.
   * @throws StoreRequiredError when the client has no store
   * @throws ConversationNotFoundError; BadInputError `VERSION_NOT_FOUND`
   */
  async export(id: string, options: ExportOptions = {}): Promise<ExportResult> {
    if (!this.pool) throw new StoreRequiredError(id, 'export');
    const { ConversationStore } = await import('../store');
    return exportContext(new ConversationStore(this.pool), id, options);
  }

  /**
   * The conversation's events from cursor `since` (default 0: the oldest kept; it keeps its last
   * 100): compactions and their phases, cooldowns, the loop guard, approvals, reviews, restores.
   * Ask again from `next` for the ones after; the cursor holds across continue-as-new.
   * @throws BadInputError a cursor that is not a whole number ≥ 0; ConversationNotFoundError
   */
  async events(id: string, options: { since?: number } = {}): Promise<EventsResult> {
    const since = options.since ?? 0;
    if (!Number.isInteger(since) || since < 0)
      throw new BadInputError('BAD_INPUT', id, `the events cursor must be a whole number ≥ 0 (got ${since})`);
    const { running } = await this.describe(id);
    const page = await this.ask(id, 'eventsPage', (handle) => handle.query(eventsPageQuery, { since }));
    return { ...page, running };
  }

  /**
   * Ends the conversation once its queued work is done; resolves with the rounds it ran.
   * @throws ConversationNotFoundError, ConversationEndedError
   */
  async end(id: string): Promise<EndResult> {
    return this.update(id, (handle) => handle.executeUpdate(endUpdate));
  }

  /**
   * Where the conversation's workflow is, from the server alone (no worker needed).
   * @throws ConversationNotFoundError when no conversation has this id
   */
  describe(id: string): Promise<ConversationDescription> {
    return describeConversation(this.temporal, id);
  }

  /**
   * Checks that the conversation runs.
   * @throws ConversationNotFoundError; ConversationEndedError saying how it closed (and why, if it failed)
   */
  async ensureRunning(id: string): Promise<void> {
    const { workflowStatus, running } = await this.describe(id);
    if (running) return;
    const failure = workflowStatus === 'FAILED' ? await workflowFailure(this.temporal, id) : null;
    throw new ConversationEndedError(id, { workflowStatus, failure });
  }

  /**
   * Calls `onChange` with the status each time its phase (or where a compaction is) changes,
   * polling every `intervalMs` (default 500) until `stop()`. A failed poll is skipped.
   */
  watchStatus(id: string, onChange: StatusListener, options: { intervalMs?: number } = {}): PhaseWatcher {
    return watchPhases(this.handle(id), onChange, options.intervalMs);
  }

  /** A Query of the conversation's (`name`, for the error), with the client's timeout. */
  private ask<T>(id: string, name: string, ask: (handle: WorkflowHandle) => Promise<T>): Promise<T> {
    return queryConversation(this.temporal, id, { name, timeoutMs: this.queryTimeoutMs }, ask);
  }

  /** The `status` Query. */
  private statusOf(id: string): Promise<ConversationStatus> {
    return this.ask(id, 'status', (handle) => handle.query(statusQuery));
  }

  private handle(id: string): WorkflowHandle {
    return this.temporal.workflow.getHandle(id);
  }

  /** Runs `work`, its failures mapped to the client's errors. */
  private async mapped<T>(id: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw conversationErrorFrom(err, id);
    }
  }

  /** Sends an Update to a running conversation; one that closes meanwhile is reported as ended. */
  private async update<T>(id: string, send: (handle: WorkflowHandle) => Promise<T>): Promise<T> {
    await this.ensureRunning(id);
    try {
      return await send(this.handle(id));
    } catch (err) {
      // An Update to a workflow that has just closed finds no workflow: say how it closed.
      if (err instanceof WorkflowNotFoundError) await this.ensureRunning(id);
      throw conversationErrorFrom(err, id);
    }
  }
}
