/**
 * The OpenAI-compatible client the worker uses. Built once per worker from its environment
 * (DESIGN.md §7: secrets never enter workflow arguments or history).
 */
import OpenAI from 'openai';

export interface LlmClientOptions {
  /** The API key. Local servers that ignore keys accept any non-empty string. */
  apiKey: string;
  /** Base URL of any OpenAI-compatible API, ending in `/v1`. Default: OpenAI's. */
  baseURL?: string;
  /**
   * Per-request timeout in milliseconds; a request without an answer by then fails with
   * `LLM_TIMEOUT` (retryable). Keep the activity's startToCloseTimeout above it. Default: 300,000.
   */
  timeoutMs?: number;
  /**
   * Retries inside the SDK. Default 0 and best left so: Temporal's retry policy retries the
   * activity, visibly and durably, and honours Retry-After through `nextRetryDelay`.
   */
  maxRetries?: number;
  /** Extra headers sent with every request (e.g. for a proxy). */
  defaultHeaders?: Record<string, string>;
}

/** Default per-request timeout: long summaries of long contexts take minutes on slow models. */
export const DEFAULT_LLM_TIMEOUT_MS = 300_000;

/** Creates the client: SDK retries off unless asked, timeout set, nothing read from the environment. */
export function createLlmClient(options: LlmClientOptions): OpenAI {
  const timeoutMs = options.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) {
    throw new RangeError(`LLM timeoutMs must be a positive integer of milliseconds, got ${timeoutMs}`);
  }
  if (options.apiKey.length === 0) {
    throw new RangeError(
      'LLM apiKey is empty; set OPENAI_API_KEY (servers that ignore keys accept any value)',
    );
  }
  const maxRetries = options.maxRetries ?? 0;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new RangeError(`LLM maxRetries must be a non-negative integer, got ${maxRetries}`);
  }
  return new OpenAI({
    apiKey: options.apiKey,
    // Explicit values everywhere: the SDK must not read OPENAI_* variables behind the config's back.
    baseURL: options.baseURL ?? 'https://api.openai.com/v1',
    organization: null,
    project: null,
    adminAPIKey: null,
    webhookSecret: null,
    timeout: timeoutMs,
    maxRetries,
    defaultHeaders: options.defaultHeaders,
  });
}
