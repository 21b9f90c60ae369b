/**
 * The activity boundary for LLM failures (STYLE.md §7): classified errors become Temporal
 * `ApplicationFailure`s with a stable `type`, the right retryability and, for 429 / 503 with
 * Retry-After, a `nextRetryDelay` that overrides the retry policy's backoff.
 */
import { ApplicationFailure } from '@temporalio/common';
import { OpenAIError } from 'openai';
import { classifyLlmError, LlmError, type ClassifyOptions } from './errors';

/**
 * The `ApplicationFailure` for an LLM failure: `type` is the {@link LlmFailureType}, `nonRetryable`
 * follows the classification, `details` is `[LlmFailureDetails]` (small, no secrets) and
 * `nextRetryDelay` is the provider's Retry-After in milliseconds when it sent one.
 * An `ApplicationFailure` is returned unchanged; anything else is classified first
 * (an unknown error becomes retryable `LLM_UNEXPECTED`; prefer {@link llmBoundary}, which lets
 * non-LLM errors such as cancellation pass through untouched).
 */
export function toApplicationFailure(err: unknown, options: ClassifyOptions = {}): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  const llm = classifyLlmError(err, options);
  const retryAfterMs = llm.details.retryAfterMs;
  return ApplicationFailure.create({
    type: llm.type,
    message: llm.message,
    nonRetryable: !llm.retryable,
    details: [llm.details],
    ...(llm.retryable && retryAfterMs !== undefined ? { nextRetryDelay: retryAfterMs } : {}),
  });
}

/** Is this an error of the LLM layer (classified, or straight from the openai SDK)? */
export function isLlmError(err: unknown): boolean {
  return err instanceof LlmError || err instanceof OpenAIError;
}

/**
 * Runs `fn` (an activity's LLM call) and turns LLM errors into `ApplicationFailure`s; other errors
 * (cancellation, store errors, bugs) are rethrown unchanged.
 */
export async function llmBoundary<T>(fn: () => Promise<T>, options: ClassifyOptions = {}): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isLlmError(err)) throw toApplicationFailure(err, options);
    throw err;
  }
}
