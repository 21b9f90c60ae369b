/**
 * The LLM adapter (DESIGN.md §1): the openai client, request building, classification of
 * responses and errors. Used by activities only; workflows see failure types, never this module.
 */
export { createLlmClient, DEFAULT_LLM_TIMEOUT_MS, type LlmClientOptions } from './client';
export {
  buildChatParams,
  chatCompletion,
  normalizeCompletion,
  toRequestMessage,
  type ChatRequest,
  type ChatResult,
  type LlmUsage,
  type MaxTokensField,
} from './chat';
export {
  classifyLlmError,
  LLM_FAILURE_TYPES,
  LlmError,
  NON_RETRYABLE_LLM_FAILURE_TYPES,
  redactSecrets,
  retryAfterMs,
  SummaryInvalidError,
  type ClassifyOptions,
  type LlmFailureDetails,
  type LlmFailureType,
} from './errors';
export { isLlmError, llmBoundary, toApplicationFailure } from './failure';
export { requestSummary, summaryFromCompletion, type SummaryOutcome } from './summary';
export {
  checkSummary,
  SUMMARY_FAILURE_REASONS,
  type SummaryCheck,
  type SummaryCheckOptions,
  type SummaryFailureReason,
} from '../context/summary-result';
