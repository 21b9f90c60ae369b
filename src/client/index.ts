/**
 * The typed client of the agent conversations: {@link ConversationClient}, what its methods take
 * and return, and the errors they throw.
 *
 * @module
 */
export { ConversationClient } from './conversation-client';
export type {
  ApprovalResult,
  AwaitedDecision,
  EndResult,
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
  type WorkflowFailure,
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
// The workflow's own shapes, as the client's methods take and return them.
export type {
  AgentConversationInput,
  CompactionBrief,
  CompactionProgress,
  ConversationEvent,
  ConversationStatus,
  EventsPage,
  MetaPhase,
  ModelSettings,
  PendingReview,
  Phase,
  RestoreResult,
  ReviewResult,
  ReviewVerdict,
  RunningCompaction,
  SendMessageResult,
  TriggerKind,
  UsageInfo,
} from '../../workflows/definitions';
export type { ModelRequest } from '../context/lower';
export type {
  AssistantMessage,
  ChatMessage,
  SystemMessage,
  ToolDefinition,
  ToolMessage,
  UserMessage,
} from '../context/items';
export {
  CLIENT_FAILURE_TYPES,
  LLM_FAILURE_TYPES,
  STORE_FAILURE_TYPES,
  WORKFLOW_FAILURE_TYPES,
  type ClientFailureType,
  type FailureType,
  type LlmFailureType,
  type StoreFailureType,
  type WorkflowFailureType,
} from '../failures';
