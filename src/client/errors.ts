/**
 * The errors a {@link ConversationClient} throws: one base, {@link ConversationError}, carrying the
 * failure's `type` (a {@link FailureType} of src/failures.ts when the conversation gave one, else a
 * {@link ClientFailureType}), the conversation's id and whether the caller's input was at fault
 * (`badInput`: nothing changed, the same call cannot succeed). {@link conversationErrorFrom} is the
 * one mapping from what Temporal and the store throw to these classes.
 *
 * Errors that are not about the conversation — a payload codec without a store, a server that
 * answers with a gRPC status, a bug — are not wrapped: they reach the caller as they are.
 *
 * @module
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import {
  BAD_REQUEST_FAILURE_TYPES,
  BAD_START_INPUT_FAILURE_TYPES,
  CLIENT_FAILURE_TYPES,
  innermostCause,
  LLM_FAILURE_TYPES,
  STORE_FAILURE_TYPES,
  WORKFLOW_FAILURE_TYPES,
  type ClientFailureType,
  type FailureType,
} from '../failures';
import { StoreError } from '../store/errors';

/** What a {@link ConversationError} is: a failure type of the vocabulary, or a client's own kind. */
export type ConversationErrorType = FailureType | ClientFailureType;

/** Every type a {@link ConversationError} may carry. */
const KNOWN_TYPES: ReadonlySet<string> = new Set<string>([
  ...LLM_FAILURE_TYPES,
  ...STORE_FAILURE_TYPES,
  ...WORKFLOW_FAILURE_TYPES,
  ...CLIENT_FAILURE_TYPES,
]);

/** `type` when the vocabulary names it, else `UNEXPECTED`. */
function knownType(type: string | null | undefined): ConversationErrorType {
  return type && KNOWN_TYPES.has(type) ? (type as ConversationErrorType) : 'UNEXPECTED';
}

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
  override name = 'ConversationError';

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
  }
}

/** No conversation has this id (no workflow, or a workflow of another type). */
export class ConversationNotFoundError extends ConversationError {
  override name = 'ConversationNotFoundError';

  /** @param message - default `no conversation <id>` */
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

/** How a conversation that has ended closed. */
export interface ConversationClosing {
  /** Its workflow's status: `COMPLETED` (it was ended), `FAILED`, `TERMINATED`, `TIMED_OUT`, …; null when it is ending. */
  workflowStatus: string | null;
  /** Why it failed (`workflowStatus` FAILED): the innermost failure's first line and its type. */
  failure: { message: string; type: string | null } | null;
}

/** The conversation has ended (or is ending): it takes no more messages or requests. */
export class ConversationEndedError extends ConversationError {
  override name = 'ConversationEndedError';
  /** Its workflow's status: `COMPLETED` (it was ended), `FAILED`, `TERMINATED`, …; null when it is ending. */
  readonly workflowStatus: string | null;
  /** Why it failed, when it did. */
  readonly failure: { message: string; type: string | null } | null;

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
          ? ` (its workflow is ${status.toLowerCase().replace(/_/g, ' ')})`
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
  override name = 'ConversationExistsError';

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
  override name = 'BadInputError';

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
  override name = 'NoApprovalPendingError';

  /** @param message - default: the conversation's own words, `no compaction is awaiting approval` */
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
  override name = 'NoReviewPendingError';
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
  override name = 'CompactionRejectedError';

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
  override name = 'RequestFailedError';

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
  override name = 'NotRespondingError';

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
  override name = 'StoreRequiredError';

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
  override name = 'TemporalUnreachableError';

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

// ---- the mapping ---------------------------------------------------------------------------

/**
 * The texts of the conversation's Update validators that have a class of their own. A validator
 * refuses with a plain Error, which reaches the client as an `ApplicationFailure` of type `Error`:
 * its text is all that tells one refusal from another (workflows/conversation/handlers.ts).
 */
const VALIDATOR_REFUSALS: Readonly<Record<string, (id: string, cause: unknown) => ConversationError>> = {
  'the conversation has ended': (id, cause) => new ConversationEndedError(id, {}, { cause }),
  'no compaction is awaiting approval': (id, cause) => new NoApprovalPendingError(id, { cause }),
};

/** Failure types that name what the caller asked for as absent or refused: bad input. */
const BAD_REQUEST: ReadonlySet<string> = new Set<string>([
  ...BAD_REQUEST_FAILURE_TYPES,
  'INVALID_CONVERSATION_ID',
]);

/**
 * The error a client throws for `err`, caught while it acted on conversation `conversationId`:
 *
 * - `WorkflowNotFoundError` → {@link ConversationNotFoundError};
 * - a `WorkflowUpdateFailedError` refused by a validator → {@link ConversationEndedError},
 *   {@link NoApprovalPendingError}, or {@link BadInputError} (`BAD_INPUT`) with the validator's text;
 * - a `WorkflowUpdateFailedError` whose failure, through activity failures, is one of the store's
 *   refusals (`CONVERSATION_NOT_FOUND`, `CONVERSATION_ENDED`, `VERSION_NOT_FOUND`) → the matching
 *   class with the store's message; a review's `NO_REVIEW_PENDING` → {@link NoReviewPendingError},
 *   `SUMMARY_EDIT_REFUSED` → {@link BadInputError}; `COMPACTION_REJECTED` →
 *   {@link CompactionRejectedError}; any other → {@link RequestFailedError} with the failure's type,
 *   its message naming the innermost cause;
 * - a `StoreError` → the same classes by its kind;
 * - a {@link ConversationError} and anything else → unchanged.
 */
export function conversationErrorFrom(err: unknown, conversationId: string): unknown {
  if (err instanceof ConversationError) return err;
  if (err instanceof WorkflowNotFoundError)
    return new ConversationNotFoundError(conversationId, { cause: err });
  if (err instanceof StoreError) return fromFailureType(err.kind, err.message, conversationId, err);
  if (err instanceof WorkflowUpdateFailedError) return fromUpdateFailure(err, conversationId);
  return err;
}

function fromUpdateFailure(err: WorkflowUpdateFailedError, id: string): ConversationError {
  const cause = err.cause;
  // A validator's plain Error arrives as an ApplicationFailure of type `Error`.
  if (cause instanceof ApplicationFailure && cause.type === 'Error') {
    const refusal = VALIDATOR_REFUSALS[cause.message];
    return refusal ? refusal(id, err) : new BadInputError('BAD_INPUT', id, cause.message, { cause: err });
  }
  // The caller's mistakes reach the Update through the activities that found them; a failure
  // inside a compaction child (its commit finding a version gone) is the system's, not the caller's.
  let chain: unknown = cause;
  while (chain instanceof ApplicationFailure || chain instanceof ActivityFailure) {
    if (chain instanceof ApplicationFailure && chain.type) {
      const mapped = fromFailureType(chain.type, chain.message, id, err);
      if (!(mapped instanceof RequestFailedError)) return mapped;
    }
    chain = chain.cause;
  }
  const application = cause instanceof ApplicationFailure ? cause : undefined;
  const root = innermostCause(cause);
  const reason = root instanceof Error ? root.message : 'unknown failure';
  return new RequestFailedError(knownType(application?.type), id, `${err.message}: ${reason}`, {
    cause: err,
  });
}

/** The class for a failure of type `type` (raised by the conversation or the store). */
function fromFailureType(type: string, message: string, id: string, cause: unknown): ConversationError {
  switch (type) {
    case 'CONVERSATION_NOT_FOUND':
      return new ConversationNotFoundError(id, { message, cause });
    case 'CONVERSATION_ENDED':
      return new ConversationEndedError(id, {}, { message, cause });
    case 'NO_REVIEW_PENDING':
      return new NoReviewPendingError(id, { decidedMeanwhile: true, cause });
    case 'SUMMARY_EDIT_REFUSED':
      return new BadInputError(type, id, message, { cause });
    case 'COMPACTION_REJECTED':
      return new CompactionRejectedError(id, message, { cause });
  }
  if (BAD_REQUEST.has(type)) return new BadInputError(knownType(type), id, message, { cause });
  return new RequestFailedError(knownType(type), id, message, { cause });
}

/**
 * The error of a conversation whose workflow failed at start with `failure` (its innermost
 * application failure): {@link BadInputError} when it failed on what it was started with (an
 * unknown tool, a header over the window, a bad configuration or id), else {@link RequestFailedError}.
 */
export function startFailureError(
  conversationId: string,
  failure: { message: string; type: string | null },
): ConversationError {
  const message = `conversation ${conversationId} failed to start: ${failure.message}`;
  const type = knownType(failure.type);
  return BAD_START_INPUT_FAILURE_TYPES.includes(type as FailureType)
    ? new BadInputError(type, conversationId, message)
    : new RequestFailedError(type, conversationId, message);
}

function firstLine(err: unknown): string {
  return err instanceof Error ? (err.message.split('\n')[0] ?? '') : err === undefined ? '' : String(err);
}
