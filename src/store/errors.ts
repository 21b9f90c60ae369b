/**
 * The store's failures: {@link StoreError} with a stable kind that activities map to Temporal
 * failures (`activities/failures.ts`), the messages each kind is raised with, named once here, and
 * the errors of a stored row that does not decode ({@link StoredRowError}, {@link MalformedRowError}).
 */
import { checkConversationId, ConversationIdError } from '../context/conversation-id';
import type { StoreFailureType } from '../failures';

/** Kinds of store failure that callers (activities) map to Temporal failures (src/failures.ts). */
export type StoreErrorKind = StoreFailureType;

export class StoreError extends Error {
  constructor(
    readonly kind: StoreErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

/**
 * Checks a conversation id (the rule of `src/context/conversation-id.ts`) before the store writes
 * anything under it.
 * @throws StoreError INVALID_CONVERSATION_ID quoting the id and the rule
 */
export function assertConversationId(id: string): void {
  try {
    checkConversationId(id);
  } catch (err) {
    if (err instanceof ConversationIdError) throw new StoreError('INVALID_CONVERSATION_ID', err.message);
    throw err;
  }
}

/** CONVERSATION_NOT_FOUND, as every operation on a conversation id says it. */
export function conversationNotFound(conversationId: string): StoreError {
  return new StoreError('CONVERSATION_NOT_FOUND', `conversation ${conversationId} does not exist`);
}

/** VERSION_NOT_FOUND for a conversation before its first version. */
export function noActiveVersion(conversationId: string): StoreError {
  return new StoreError('VERSION_NOT_FOUND', `conversation ${conversationId} has no active version`);
}

/** COMPACTION_NOT_FOUND, as every operation on a compaction id says it. */
export function compactionNotFound(compactionId: string): StoreError {
  return new StoreError('COMPACTION_NOT_FOUND', `compaction ${compactionId} does not exist`);
}

/** COMPACTION_FINISHED: the compaction is committed, rolled back or skipped. */
export function compactionFinished(compactionId: string, status: string): StoreError {
  return new StoreError('COMPACTION_FINISHED', `compaction ${compactionId} is ${status}, not running`);
}

/** Raised when a stored row does not decode into an item (a trust boundary: rows may be old or hand-edited). */
export class StoredRowError extends Error {
  constructor(itemId: string, detail: string) {
    super(`stored item ${itemId} is not a valid context item: ${detail}`);
    this.name = 'StoredRowError';
  }
}

/**
 * Raised when another stored row (a version, a compaction, an event, a conversation's counters) is
 * not of the shape its statement selects: a column of another type than its migration declares, a
 * status outside its check. Like {@link StoredRowError}, it says the database needs a look.
 */
export class MalformedRowError extends Error {
  constructor(what: string, problem: string) {
    super(`stored ${what} is malformed: ${problem}`);
    this.name = 'MalformedRowError';
  }
}

/** The `fail` of a row decoder for rows of `what` (`compaction`, `version totals`). */
export function malformed(what: string): (row: unknown, problem: string) => MalformedRowError {
  return (_row, problem) => new MalformedRowError(what, problem);
}
