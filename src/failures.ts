/**
 * The failure vocabulary (STYLE.md §7): every failure type the project raises or reacts to, named
 * once; the lists of types each retry policy will not retry; one walk down an error's `cause`
 * chain; one mapping of a bad start argument to its failure.
 *
 * Pure: imported by workflows, activities, the store, the LLM layer and the CLI alike.
 * `@temporalio/common` is deterministic code, allowed in the workflow sandbox.
 */
import { ApplicationFailure } from '@temporalio/common';
import { ConfigError } from './context/config';
import { ConversationIdError } from './context/conversation-id';

/** Failures of a model call, classified in src/llm/errors.ts. */
export const LLM_FAILURE_TYPES = [
  'LLM_CONTEXT_LENGTH_EXCEEDED',
  'LLM_BAD_REQUEST',
  'LLM_AUTH',
  'LLM_QUOTA_EXCEEDED',
  'LLM_RATE_LIMITED',
  'LLM_TIMEOUT',
  'LLM_SERVER_ERROR',
  'LLM_CONNECTION',
  'LLM_INVALID_RESPONSE',
  'LLM_UNEXPECTED',
  'SUMMARY_INVALID',
] as const;
export type LlmFailureType = (typeof LLM_FAILURE_TYPES)[number];

/** Failures of the store (src/store), each with a `StoreError` kind of the same name. */
export const STORE_FAILURE_TYPES = [
  'CONVERSATION_NOT_FOUND',
  'CONVERSATION_ENDED',
  'VERSION_NOT_FOUND',
  'BASE_VERSION_CHANGED',
  'COMPACTION_NOT_FOUND',
  'COMPACTION_FINISHED',
  'ITEM_NOT_FOUND',
  'INVALID_CONVERSATION_ID',
] as const;
export type StoreFailureType = (typeof STORE_FAILURE_TYPES)[number];

/** Failures the activities and workflows raise themselves. */
export const WORKFLOW_FAILURE_TYPES = [
  /** A compaction configuration the schema refuses. */
  'CONFIG_INVALID',
  /** The agent asked for a tool the conversation does not have. */
  'TOOL_UNKNOWN',
  /** A tool result names a call the context does not hold. */
  'TOOL_CALL_NOT_FOUND',
  /** A message given to a stored conversation is not an OpenAI chat message it can take. */
  'MESSAGE_INVALID',
  /** The system prompt and tool definitions alone exceed the window. */
  'HEADER_EXCEEDS_WINDOW',
  /** A recorded session cannot be played back. */
  'RECORDING_INVALID',
  /** A reviewer's edited summary is refused; nothing changed. */
  'SUMMARY_EDIT_REFUSED',
  'SUMMARY_EDIT_FAILED',
  /** A review answer reached a compaction with no summary awaiting review. */
  'NO_REVIEW_PENDING',
  /** The context needed compaction and it was declined (`onReject: "fail"`). */
  'COMPACTION_REJECTED',
  'COMPACTION_FAILED',
  /** The compaction child found no summary strategy to run (a bug). */
  'NO_STRATEGY',
  'RESTORE_FAILED',
  'ROUND_FAILED',
  /** A bug: the workflow lost track of its own state. */
  'INTERNAL',
] as const;
export type WorkflowFailureType = (typeof WORKFLOW_FAILURE_TYPES)[number];

export type FailureType = LlmFailureType | StoreFailureType | WorkflowFailureType;

/**
 * Failures a client finds itself (src/client), around the request it sends: no workflow raises
 * them. A client's errors carry a {@link FailureType} when the conversation gave one, else one of these.
 */
export const CLIENT_FAILURE_TYPES = [
  /** The conversation refuses the request as it is (an empty message, a version below 1); nothing changed. */
  'BAD_INPUT',
  /** `start` with an id another conversation has taken. */
  'CONVERSATION_EXISTS',
  /** An approval (`approve`, `reject`) with no compaction awaiting one. */
  'NO_APPROVAL_PENDING',
  /** The conversation did not answer a Query in time: no worker polls its task queue. */
  'NOT_RESPONDING',
  /** The operation reads the store (`export`) and the client was given none. */
  'STORE_REQUIRED',
  /** The Temporal server cannot be reached. */
  'TEMPORAL_UNREACHABLE',
  /** A failure whose type is not in this vocabulary. */
  'UNEXPECTED',
] as const;
export type ClientFailureType = (typeof CLIENT_FAILURE_TYPES)[number];

/**
 * LLM failures that retrying the same request cannot fix. The workflow handles
 * `LLM_CONTEXT_LENGTH_EXCEEDED` itself (emergency compaction, then one retry of the call).
 */
export const NON_RETRYABLE_LLM_FAILURE_TYPES: readonly LlmFailureType[] = [
  'LLM_CONTEXT_LENGTH_EXCEEDED',
  'LLM_BAD_REQUEST',
  'LLM_AUTH',
  'LLM_QUOTA_EXCEEDED',
];

/** Store failures that retrying cannot fix (every one but a transient database error). */
export const NON_RETRYABLE_STORE_FAILURE_TYPES: readonly StoreFailureType[] = STORE_FAILURE_TYPES;

/**
 * The summary call's retries (seed 003: a summary retried twice): the summarize activity's retry
 * policy, and what `eval` replays. Part of the command that schedules the activity, like
 * {@link NOT_RETRIED}: they change only with a versioned change of the workflows.
 */
export const SUMMARY_RETRY = { attempts: 3, initialIntervalMs: 1000, backoffCoefficient: 2 } as const;

/**
 * What each retry policy does not retry (`nonRetryableErrorTypes`). Read by the option profiles in
 * workflows/; the activities raise these types. A retry policy is part of the command that
 * schedules an activity: these lists (and their order) are what recorded histories hold, so they
 * change only with a versioned change of the workflows. A failure raised as non-retryable
 * (`LLM_QUOTA_EXCEEDED`, say) is not retried whether or not a list names it.
 */
export const NOT_RETRIED = {
  /** The agent's model call, live or recorded. */
  modelCall: ['LLM_BAD_REQUEST', 'LLM_AUTH', 'LLM_CONTEXT_LENGTH_EXCEEDED', 'RECORDING_INVALID'],
  /** The summary call of a compaction. */
  summaryCall: ['LLM_BAD_REQUEST', 'LLM_AUTH', 'LLM_CONTEXT_LENGTH_EXCEEDED', 'CONFIG_INVALID'],
  /** A tool call (a failing tool reports its error to the model instead). */
  toolCall: ['TOOL_UNKNOWN'],
  /** Planning and staging the pruned context. */
  prune: ['CONFIG_INVALID'],
  /** The commit: a changed base or a finished compaction stays so. */
  commit: ['BASE_VERSION_CHANGED', 'COMPACTION_FINISHED', 'VERSION_NOT_FOUND'],
  /** Staging a reviewer's edit. */
  reviewEdit: ['SUMMARY_EDIT_REFUSED', 'COMPACTION_FINISHED', 'VERSION_NOT_FOUND'],
} as const satisfies Record<string, readonly FailureType[]>;

/** Failures of a conversation that fails at start because of what it was started with. */
export const BAD_START_INPUT_FAILURE_TYPES: readonly FailureType[] = [
  'TOOL_UNKNOWN',
  'HEADER_EXCEEDS_WINDOW',
  'CONFIG_INVALID',
  'INVALID_CONVERSATION_ID',
];

/**
 * Failures that name something absent or over, or an id that breaks the rule: the caller's input,
 * not the system, is at fault (a client's `BadInputError` and its kin).
 */
export const BAD_REQUEST_FAILURE_TYPES: readonly FailureType[] = [
  'CONVERSATION_NOT_FOUND',
  'CONVERSATION_ENDED',
  'VERSION_NOT_FOUND',
  'INVALID_CONVERSATION_ID',
];

/** Links followed at most: a cycle of causes must not hang whoever walks it. */
const MAX_CAUSE_DEPTH = 20;

/**
 * `err` and its causes, outermost first. Temporal's failures chain the same way (an
 * `ActivityFailure` or `ChildWorkflowFailure` holds the `ApplicationFailure` as its `cause`).
 */
export function causeChain(err: unknown): unknown[] {
  const chain: unknown[] = [err];
  let current = err;
  while (chain.length <= MAX_CAUSE_DEPTH && current instanceof Error && current.cause !== undefined) {
    current = current.cause;
    chain.push(current);
  }
  return chain;
}

/** The innermost error of `err`'s cause chain (itself when it has no cause). */
export function innermostCause(err: unknown): unknown {
  const chain = causeChain(err);
  return chain[chain.length - 1];
}

/** The outermost `ApplicationFailure` in `err`'s chain, optionally of one of `types`. */
export function applicationFailureIn(
  err: unknown,
  types?: readonly string[],
): ApplicationFailure | undefined {
  for (const cause of causeChain(err)) {
    if (cause instanceof ApplicationFailure && (!types || types.includes(cause.type ?? ''))) return cause;
  }
  return undefined;
}

/** A failure that retrying cannot fix, of a type the vocabulary names. */
export function finalFailure(type: FailureType, message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, type);
}

/**
 * `err` as a non-retryable `ApplicationFailure` for a caller (an Update's answer, a failed round):
 * the application failure inside it, type and message kept, or `fallbackType` with the innermost
 * message.
 */
export function asFinalFailure(err: unknown, fallbackType: FailureType): ApplicationFailure {
  const application = applicationFailureIn(err);
  if (application) {
    return ApplicationFailure.create({
      type: application.type ?? fallbackType,
      message: application.message,
      nonRetryable: true,
    });
  }
  const root = innermostCause(err);
  const message = root instanceof Error ? root.message : String(root);
  return ApplicationFailure.create({ type: fallbackType, message, nonRetryable: true });
}

/**
 * A bad argument's failure: a `ConfigError` is `CONFIG_INVALID`, a `ConversationIdError`
 * `INVALID_CONVERSATION_ID`, both non-retryable (retrying the same input cannot fix it). Anything
 * else is returned unchanged.
 */
export function asInputFailure(err: unknown): unknown {
  if (err instanceof ConfigError) return ApplicationFailure.nonRetryable(err.message, 'CONFIG_INVALID');
  if (err instanceof ConversationIdError) {
    return ApplicationFailure.nonRetryable(err.message, 'INVALID_CONVERSATION_ID');
  }
  return err;
}

/** Runs `check` (a parse of input), throwing a bad input as its failure ({@link asInputFailure}). */
export function checkedInput<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    throw asInputFailure(err);
  }
}
