/**
 * The one mapping from what Temporal and the store throw to the client's errors (errors.ts), by
 * the failure vocabulary of src/failures.ts: every method of the client passes its failures
 * through {@link conversationErrorFrom}.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import {
  applicationFailureIn,
  BAD_REQUEST_FAILURE_TYPES,
  BAD_START_INPUT_FAILURE_TYPES,
  CLIENT_FAILURE_TYPES,
  causeChain,
  innermostCause,
  LLM_FAILURE_TYPES,
  STORE_FAILURE_TYPES,
  WORKFLOW_FAILURE_TYPES,
  type FailureType,
} from '../failures';
import { StoreError } from '../store/errors';
import {
  BadInputError,
  CompactionRejectedError,
  ConversationEndedError,
  ConversationError,
  ConversationNotFoundError,
  NoApprovalPendingError,
  NoReviewPendingError,
  RequestFailedError,
  type ConversationErrorType,
} from './errors';

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

/**
 * The texts of the conversation's Update validators that have a class of their own. A validator
 * refuses with a plain Error, which reaches the client as an `ApplicationFailure` of type `Error`:
 * its text is all that tells one refusal from another (workflows/conversation/handlers.ts).
 */
const VALIDATOR_REFUSALS: Readonly<Record<string, (id: string, cause: unknown) => ConversationError>> = {
  'the conversation has ended': (id, cause) => new ConversationEndedError(id, {}, { cause }),
  'no compaction is awaiting approval': (id, cause) => new NoApprovalPendingError(id, { cause }),
};

/** Failure types that are the caller's fault: bad input. */
const BAD_REQUEST: ReadonlySet<string> = new Set<string>(BAD_REQUEST_FAILURE_TYPES);

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
  for (const failure of causeChain(cause)) {
    if (!(failure instanceof ApplicationFailure || failure instanceof ActivityFailure)) break;
    if (failure instanceof ApplicationFailure && failure.type) {
      const mapped = fromFailureType(failure.type, failure.message, id, err);
      if (mapped.badInput) return mapped;
    }
  }
  // The system's failures say what failed (the Update) and why (the innermost cause).
  const root = innermostCause(cause);
  const message = `${err.message}: ${root instanceof Error ? root.message : 'unknown failure'}`;
  const type = applicationFailureIn(cause)?.type;
  return type === 'COMPACTION_REJECTED'
    ? new CompactionRejectedError(id, message, { cause: err })
    : new RequestFailedError(knownType(type), id, message, { cause: err });
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
