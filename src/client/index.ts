/**
 * The typed client of the agent conversations: {@link ConversationClient}, what its methods take
 * and return, and the errors they throw.
 *
 * @module
 */
export { ConversationClient } from './conversation-client';
export type {
  ClientOptionsWithClient,
  ClientOptionsWithConnection,
  CommonClientOptions,
  ConnectOptions,
  ConversationClientOptions,
  ConversationDescription,
  EventsResult,
  QueuedMessage,
  StatusListener,
} from './client-types';
export {
  CONVERSATION_WORKFLOW,
  DEFAULT_CONVERSATION_TASK_QUEUE,
  QUERY_DEADLINE_MS,
  type WorkflowFailure,
} from './conversation-workflow';
export { conversationErrorFrom, startFailureError } from './error-mapping';
export {
  BadInputError,
  CompactionRejectedError,
  ConversationEndedError,
  ConversationError,
  ConversationExistsError,
  ConversationNotFoundError,
  NoApprovalPendingError,
  NoReviewPendingError,
  NotRespondingError,
  RequestFailedError,
  StoreRequiredError,
  TemporalUnreachableError,
  type ConversationClosing,
  type ConversationErrorOptions,
  type ConversationErrorType,
} from './errors';
export {
  newConversationId,
  START_WAIT_MS,
  type StartedConversation,
  type StartInput,
  type StartOptions,
} from './start';
export {
  EXPORT_FORMATS,
  renderExport,
  type ExportFormat,
  type ExportOptions,
  type ExportResult,
} from './export';
export { clientPayloadCodecs, messagesByReference, type ClientCodecOptions } from './codecs';
export { MAX_MESSAGE_BYTES } from './message-checks';
export type { CompactionProgressView, SummaryAttempt, WatchedStatus } from './compaction-progress';
export type { PhaseWatcher } from './progress';
export type {
  CompactionBrief,
  ConversationEvent,
  ConversationStatus,
  EventsPage,
  PendingReview,
  RestoreResult,
  ReviewResult,
  SendMessageResult,
} from '../../workflows/definitions';
export type { ClientFailureType, FailureType } from '../failures';
