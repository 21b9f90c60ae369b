/**
 * The errors a {@link ConversationClient} throws: one base, {@link ConversationError}, carrying the
 * failure's `type` (a {@link FailureType} of src/failures.ts when the conversation gave one, else a
 * {@link ClientFailureType}), the conversation's id and whether the caller's input was at fault
 * (`badInput`: nothing changed, the same call cannot succeed). error-mapping.ts holds the one
 * mapping from what Temporal and the store throw to these classes.
 *
 * Errors that are not about the conversation — a payload codec without a store, a server that
 * answers with a gRPC status, a bug — are not wrapped: they reach the caller as they are.
 *
 * @module
 */
import type { ClientFailureType, FailureType } from '../failures';

/** What a {@link ConversationError} is: a failure type of the vocabulary, or a client's own kind. */
export type ConversationErrorType = FailureType | ClientFailureType;

/** Options every error takes. */
export interface ConversationErrorOptions {
  /** The error it was made from (a Temporal failure, a store error). */
  cause?: unknown;
}

/**
 * Base of every error a {@link ConversationClient} throws about a conversation.
 *
 * ```ts
 * try {
 *   await conversations.send(id, text);
 * } catch (err) {
 *   if (err instanceof ConversationError && err.badInput) showToUser(err.message);
 *   else throw err;
 * }
 * ```
 */
export class ConversationError extends Error {
  /**
   * @param type - the failure's type
   * @param conversationId - the conversation the request named
   * @param message - one line, for a person
   * @param badInput - the request, not the system, is at fault (see {@link ConversationError.badInput})
   */
  constructor(
    /** The failure's type: a {@link FailureType} the conversation raised, or a {@link ClientFailureType}. */
    readonly type: ConversationErrorType,
    /** The conversation the request named. */
    readonly conversationId: string,
    message: string,
    /**
     * True when the request, not the system, is at fault: nothing changed and the same call cannot
     * succeed (an unknown or ended conversation, an empty message, a version that does not exist).
     * False for failures of the system (a model call, a worker that does not answer), which may
     * succeed later.
     */
    readonly badInput: boolean,
    options: ConversationErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
  }
}

/** No conversation has this id (no workflow, or a workflow of another type). */
export class ConversationNotFoundError extends ConversationError {
  /** @param options - `message` replaces the default, `no conversation <id>` */
  constructor(conversationId: string, options: ConversationErrorOptions & { message?: string } = {}) {
    super(
      'CONVERSATION_NOT_FOUND',
      conversationId,
      options.message ?? `no conversation ${conversationId}`,
      true,
      options,
    );
  }
}

/** Why a workflow failed: its innermost application failure. */
export interface WorkflowFailure {
  /** The failure's message, first line. */
  message: string;
  /** The failure's type (a {@link FailureType} when the project raised it), or null. */
  type: string | null;
}

/** How a conversation that has ended closed. */
export interface ConversationClosing {
  /** Its workflow's status: `COMPLETED` (it was ended), `FAILED`, `TERMINATED`, `TIMED_OUT`, …; null when it is ending. */
  workflowStatus: string | null;
  /** Why it failed (`workflowStatus` FAILED): the innermost failure's first line and its type. */
  failure: WorkflowFailure | null;
}

/** The conversation has ended (or is ending): it takes no more messages or requests. */
export class ConversationEndedError extends ConversationError {
  /** Its workflow's status: `COMPLETED` (it was ended), `FAILED`, `TERMINATED`, …; null when it is ending. */
  readonly workflowStatus: string | null;
  /** Why it failed, when it did. */
  readonly failure: WorkflowFailure | null;

  /** @param closing - how it closed; default: ending, reason unknown */
  constructor(
    conversationId: string,
    closing: Partial<ConversationClosing> = {},
    options: ConversationErrorOptions & { message?: string } = {},
  ) {
    const status = closing.workflowStatus ?? null;
    const failure = closing.failure ?? null;
    const how =
      status === 'FAILED'
        ? `: it failed${failure ? ` (${failure.message})` : ''}`
        : status !== null && status !== 'COMPLETED'
          ? ` (its workflow is ${status.toLowerCase()})`
          : '';
    super(
      'CONVERSATION_ENDED',
      conversationId,
      options.message ?? `conversation ${conversationId} has ended${how}`,
      true,
      options,
    );
    this.workflowStatus = status;
    this.failure = failure;
  }
}

/**
 * `start` with an id that is taken: a conversation's history in the store belongs to one workflow,
 * so an id is never started twice (except after a start that failed on its input; see `start`).
 */
export class ConversationExistsError extends ConversationError {
  constructor(conversationId: string, options: ConversationErrorOptions = {}) {
    super(
      'CONVERSATION_EXISTS',
      conversationId,
      `conversation ${conversationId} already exists`,
      true,
      options,
    );
  }
}

/**
 * The conversation refuses the request as it is; nothing changed. `type` says which check refused
 * it: `BAD_INPUT` for the conversation's own checks (an empty or too long message, a focus that is
 * too long, a version below 1), or the failure type (`VERSION_NOT_FOUND`, `SUMMARY_EDIT_REFUSED`,
 * `CONFIG_INVALID`, `TOOL_UNKNOWN`, `INVALID_CONVERSATION_ID`, `HEADER_EXCEEDS_WINDOW`).
 */
export class BadInputError extends ConversationError {
  constructor(
    type: ConversationErrorType,
    conversationId: string,
    message: string,
    options: ConversationErrorOptions = {},
  ) {
    super(type, conversationId, message, true, options);
  }
}

/** `approve` or `reject` while no compaction awaits approval (`requireConfirmation`). */
export class NoApprovalPendingError extends ConversationError {
  /** @param options - `message` replaces the default, the conversation's own words */
  constructor(conversationId: string, options: ConversationErrorOptions & { message?: string } = {}) {
    super(
      'NO_APPROVAL_PENDING',
      conversationId,
      options.message ?? 'no compaction is awaiting approval',
      true,
      options,
    );
  }
}

/** `review` while no summary awaits review (`reviewSummary`), or no longer does. */
export class NoReviewPendingError extends ConversationError {
  /**
   * A review was pending when the client looked, and was decided (by another reviewer, or by its
   * timeout's default) before this answer reached it.
   */
  readonly decidedMeanwhile: boolean;

  constructor(
    conversationId: string,
    options: ConversationErrorOptions & { decidedMeanwhile?: boolean } = {},
  ) {
    const meanwhile = options.decidedMeanwhile ?? false;
    super(
      'NO_REVIEW_PENDING',
      conversationId,
      meanwhile
        ? `no compaction of ${conversationId} awaits review any more: it was decided or timed out meanwhile`
        : `no compaction of ${conversationId} awaits review`,
      true,
      options,
    );
    this.decidedMeanwhile = meanwhile;
  }
}

/**
 * The context needed a compaction, it was declined (rejected, or its approval timed out) and the
 * conversation is configured to fail the round then (`onReject: "fail"`).
 */
export class CompactionRejectedError extends ConversationError {
  constructor(conversationId: string, message: string, options: ConversationErrorOptions = {}) {
    super('COMPACTION_REJECTED', conversationId, message, false, options);
  }
}

/**
 * The request reached the conversation and failed there: a round's model call, a compaction, a
 * restore, a start that failed on something other than its input. `type` is the failure's type
 * (`LLM_AUTH`, `ROUND_FAILED`, `COMPACTION_FAILED`, …; `UNEXPECTED` when it has none of the
 * vocabulary). The conversation goes on unless its workflow failed.
 */
export class RequestFailedError extends ConversationError {
  constructor(
    type: ConversationErrorType,
    conversationId: string,
    message: string,
    options: ConversationErrorOptions = {},
  ) {
    super(type, conversationId, message, false, options);
  }
}

/**
 * The conversation did not answer a Query in time: no worker polls its task queue (or none that
 * has its workflows). Nothing was sent.
 */
export class NotRespondingError extends ConversationError {
  /**
   * @param query - the Query it did not answer, e.g. `status`
   * @param reason - what the Query failed with, first line
   */
  constructor(conversationId: string, query: string, reason: string, options: ConversationErrorOptions = {}) {
    super(
      'NOT_RESPONDING',
      conversationId,
      `conversation ${conversationId} did not answer the ${query} query (${reason})`,
      false,
      options,
    );
  }
}

/** `export` on a client that was given no store (`pool` or `databaseUrl`). */
export class StoreRequiredError extends ConversationError {
  /** @param operation - what needed the store, e.g. `export` */
  constructor(conversationId: string, operation: string) {
    super(
      'STORE_REQUIRED',
      conversationId,
      `${operation} reads the conversation store, and this client has none: ` +
        "create it with the workers' PostgreSQL (`pool`, or `databaseUrl` with ConversationClient.connect)",
      true,
    );
  }
}

/** `ConversationClient.connect` could not reach the Temporal server. */
export class TemporalUnreachableError extends ConversationError {
  /** @param address - the `host:port` it tried */
  constructor(
    readonly address: string,
    options: ConversationErrorOptions = {},
  ) {
    const reason = firstLine(options.cause);
    super(
      'TEMPORAL_UNREACHABLE',
      '',
      `cannot reach the Temporal server at ${address}${reason ? ` (${reason})` : ''}`,
      false,
      options,
    );
  }
}

function firstLine(err: unknown): string {
  return err instanceof Error ? (err.message.split('\n')[0] ?? '') : err === undefined ? '' : String(err);
}
