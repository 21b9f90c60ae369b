/**
 * Classification of LLM failures into typed errors with a stable type and a retryability, so the
 * activity boundary can turn them into Temporal failures (STYLE.md §7) and the workflow can react
 * to the kind (a context-length error is the overflow trigger, not a crash).
 *
 * Messages are built from the provider's error text with every secret removed: the API key never
 * reaches a log, an exception or workflow history.
 */
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  OpenAIError,
} from 'openai';
import type { SummaryFailureReason } from '../context/summary-result';
import type { LlmFailureType } from '../failures';

/** The failure types this module produces, and those not retried (src/failures.ts names them all). */
export { LLM_FAILURE_TYPES, NON_RETRYABLE_LLM_FAILURE_TYPES, type LlmFailureType } from '../failures';

/** Small, history-safe facts about a failure (no bodies, no headers, no secrets). */
export interface LlmFailureDetails {
  status?: number;
  /** The provider's error code, e.g. `context_length_exceeded`, `rate_limit_exceeded`. */
  code?: string;
  requestId?: string;
  /** The delay the provider asked for (Retry-After / retry-after-ms), in milliseconds. */
  retryAfterMs?: number;
  /** For `SUMMARY_INVALID`: why the answer is not a usable summary (seed 003). */
  reason?: SummaryFailureReason;
  finishReason?: string | null;
}

/** A classified LLM failure. `message` is already redacted. */
export class LlmError extends Error {
  override readonly name: string = 'LlmError';
  constructor(
    readonly type: LlmFailureType,
    message: string,
    readonly retryable: boolean,
    readonly details: LlmFailureDetails = {},
  ) {
    super(message);
  }
}

/** The summarizer answered, but not with a usable summary. Retryable: a new sample may be fine. */
export class SummaryInvalidError extends LlmError {
  override readonly name: string = 'SummaryInvalidError';
  constructor(
    readonly reason: SummaryFailureReason,
    detail: string,
    details: Omit<LlmFailureDetails, 'reason'> = {},
  ) {
    super('SUMMARY_INVALID', `summary invalid: ${reason}: ${detail}`, true, { ...details, reason });
  }
}

export interface ClassifyOptions {
  /** Strings to remove from messages (the API key; the client's key is added automatically). */
  secrets?: readonly (string | undefined)[];
  /** Clock for HTTP-date Retry-After values. Default: `Date.now()`. */
  now?: number;
  /** The timeout that applied, to name it in timeout messages. */
  timeoutMs?: number;
}

const MAX_MESSAGE_CHARS = 600;

// Phrases providers use for "the prompt does not fit": OpenAI, vLLM, llama.cpp, Anthropic-style proxies.
const CONTEXT_LENGTH_TEXT =
  /context[_ ]length|maximum context|context window|context size|maximum model length|prompt is too long|input is too long|too many (?:input )?tokens|reduce the length of the (?:messages|prompt)/i;
const CONTEXT_LENGTH_CODES = new Set([
  'context_length_exceeded',
  'model_context_window_exceeded',
  'exceed_context_size_error',
  'string_above_max_length',
]);

/**
 * Maps anything an LLM call can throw to an {@link LlmError}:
 * context length (400/413 with the code or wording) → `LLM_CONTEXT_LENGTH_EXCEEDED`;
 * 401/403 → `LLM_AUTH`; 429 `insufficient_quota` → `LLM_QUOTA_EXCEEDED`; other 429 →
 * `LLM_RATE_LIMITED` with Retry-After; 408 and client timeouts → `LLM_TIMEOUT`; 409 and 5xx →
 * `LLM_SERVER_ERROR`; other 4xx → `LLM_BAD_REQUEST`; no response → `LLM_CONNECTION`; a body that is
 * not JSON → `LLM_INVALID_RESPONSE`.
 */
export function classifyLlmError(err: unknown, options: ClassifyOptions = {}): LlmError {
  if (err instanceof LlmError) return err;
  const clean = (text: string) => clip(redactSecrets(text, options.secrets ?? []));

  if (err instanceof APIConnectionTimeoutError) {
    const limit = options.timeoutMs === undefined ? 'the client timeout' : `${options.timeoutMs} ms`;
    return new LlmError('LLM_TIMEOUT', `LLM request timed out (no response within ${limit})`, true);
  }
  if (err instanceof APIUserAbortError) {
    return new LlmError('LLM_CONNECTION', 'LLM request was aborted', true);
  }
  if (err instanceof APIConnectionError || (err instanceof APIError && err.status === undefined)) {
    const cause = describeCause(err.cause);
    return new LlmError(
      'LLM_CONNECTION',
      clean(`LLM connection failed: ${err.message}${cause ? ` (${cause})` : ''}`),
      true,
    );
  }
  if (err instanceof APIError) {
    const status = err.status ?? 0;
    const details: LlmFailureDetails = { status };
    if (typeof err.code === 'string') details.code = err.code;
    if (err.requestID) details.requestId = err.requestID;
    const retryAfter = retryAfterMs(err.headers, options.now);
    if (retryAfter !== undefined) details.retryAfterMs = retryAfter;
    const text = providerMessage(err);
    const say = (what: string) => clean(`${what} (HTTP ${status}): ${text}`);

    if (
      (status === 400 || status === 413 || status === 422) &&
      (CONTEXT_LENGTH_CODES.has(details.code ?? '') || status === 413 || CONTEXT_LENGTH_TEXT.test(text))
    ) {
      return new LlmError('LLM_CONTEXT_LENGTH_EXCEEDED', say('LLM context length exceeded'), false, details);
    }
    if (status === 401 || status === 403) {
      return new LlmError('LLM_AUTH', say('LLM authentication failed'), false, details);
    }
    if (status === 429) {
      if (details.code === 'insufficient_quota') {
        return new LlmError('LLM_QUOTA_EXCEEDED', say('LLM quota exceeded'), false, details);
      }
      const after = retryAfter === undefined ? '' : ` (retry after ${retryAfter} ms)`;
      return new LlmError('LLM_RATE_LIMITED', say('LLM rate limited') + after, true, details);
    }
    if (status === 408) return new LlmError('LLM_TIMEOUT', say('LLM request timed out'), true, details);
    if (status === 409 || status >= 500) {
      return new LlmError('LLM_SERVER_ERROR', say('LLM server error'), true, details);
    }
    return new LlmError('LLM_BAD_REQUEST', say('LLM rejected the request'), false, details);
  }
  if (err instanceof OpenAIError) {
    return new LlmError('LLM_INVALID_RESPONSE', clean(`LLM response unusable: ${err.message}`), true);
  }
  // The SDK parses a 200's body with JSON.parse and lets its SyntaxError through (a body cut short).
  if (err instanceof SyntaxError && /JSON/.test(err.message)) {
    return new LlmError(
      'LLM_INVALID_RESPONSE',
      clean(`LLM response is not valid JSON: ${err.message}`),
      true,
    );
  }
  const message = err instanceof Error ? err.message : String(err);
  return new LlmError('LLM_UNEXPECTED', clean(`LLM call failed: ${message}`), true);
}

/**
 * The delay a response asks for before retrying, in milliseconds: `retry-after-ms` first, then
 * `retry-after` as seconds or an HTTP date. Undefined when absent or unreadable; never negative.
 */
export function retryAfterMs(
  headers: Headers | undefined | null,
  now: number = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const value = Number(ms);
    if (Number.isFinite(value)) return Math.max(0, Math.round(value));
  }
  const after = headers.get('retry-after');
  if (after === null || after.trim() === '') return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds * 1000));
  const date = Date.parse(after);
  if (Number.isFinite(date)) return Math.max(0, date - now);
  return undefined;
}

/**
 * Removes secrets from a text: each given secret (4+ characters) wherever it appears, plus
 * anything shaped like an OpenAI key, a bearer token or URL credentials.
 */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join('[REDACTED]');
  }
  return out
    .replace(/\bsk-[A-Za-z0-9_-]{6,}/g, 'sk-[REDACTED]')
    .replace(/\b(Bearer)\s+[^\s"',;]+/gi, '$1 [REDACTED]')
    .replace(/(\/\/)[^/\s:@]+:[^/\s@]+@/g, '$1[REDACTED]@');
}

/** The provider's own error message, without the SDK's `"<status> "` prefix. */
function providerMessage(err: APIError): string {
  const body = err.error as { message?: unknown } | undefined;
  if (body && typeof body.message === 'string' && body.message.length > 0) return body.message;
  return err.message.replace(/^\d{3}\s+/, '');
}

/** Node's fetch hides the useful part (ECONNREFUSED, ENOTFOUND...) two causes down. */
function describeCause(cause: unknown): string {
  const parts: string[] = [];
  let current: unknown = cause;
  for (let depth = 0; depth < 3 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    parts.push(typeof code === 'string' ? `${code}: ${current.message}` : current.message);
    current = current.cause;
  }
  return parts.join(' <- ');
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text;
}
