/**
 * What the fake OpenAI server can answer: scripted steps (plain data) and the builders tests use
 * to write them. The server itself is in `fake-openai.ts`, which re-exports everything here.
 */

/** Token usage as the chat completions API reports it. */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** A tool call to put in a reply; `arguments` may be given as an object (it is JSON-encoded). */
export interface FakeToolCall {
  /** Default: `call_<request number>_<index>`. */
  id?: string;
  name: string;
  arguments?: string | Record<string, unknown>;
}

/** A message as recorded from a request (loosely typed: the fake accepts what the SDK sends). */
export interface FakeMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  name?: string;
  [key: string]: unknown;
}

/** The JSON body of a chat completion request (other fields kept as sent). */
export interface FakeChatBody {
  model?: string;
  messages?: FakeMessage[];
  tools?: unknown[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  [key: string]: unknown;
}

/** One request as the server received it. */
export interface RecordedRequest {
  /** 0-based arrival order since the server started or was last `reset()`. */
  index: number;
  method: string;
  /** Path without the query string, e.g. `/v1/chat/completions`. */
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** Parsed JSON body (`{}` when there was none). */
  body: FakeChatBody;
  rawBody: string;
  /** `Date.now()` when the request arrived. */
  time: number;
}

/** A normal answer. Every field is optional; unset fields get realistic defaults. */
export interface ReplyStep {
  type: 'reply';
  /** The message content; `null` sends `"content": null`. Default: `""` with tool calls, else `"ok"`. */
  content?: string | null;
  toolCalls?: FakeToolCall[];
  /** Sent as `message.reasoning_content` (DeepSeek / vLLM style). */
  reasoning?: string;
  /** Default: `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: string;
  /**
   * Default: estimated from the request (characters / 4) and the reply. A partial object overrides
   * those fields (`total_tokens` follows unless given); `null` leaves `usage` out of the response.
   */
  usage?: Partial<FakeUsage> | null;
  /** Default: the request's model. */
  model?: string;
  /** Wait this long before answering (a slow but successful model). */
  delayMs?: number;
}

/** An HTTP error answer with an OpenAI-shaped error body. */
export interface HttpErrorStep {
  type: 'http_error';
  status: number;
  /** The whole JSON body; default `{"error":{message,type,code,param}}` from the fields below. */
  body?: unknown;
  message?: string;
  errorType?: string;
  code?: string | null;
  headers?: Record<string, string>;
  /** Append the presented bearer key to the message verbatim (to test that clients redact it). */
  echoKey?: boolean;
}

/** Hold the request open and never answer (until the client gives up or the server closes). */
export interface HangStep {
  type: 'hang';
}

/** Destroy the connection without an answer (a connection error for the client). */
export interface DisconnectStep {
  type: 'disconnect';
}

export type FakeStep = ReplyStep | HttpErrorStep | HangStep | DisconnectStep;

/** Computes the answer from the request (e.g. summary vs agent calls, usage from the prompt). */
export type FakeResponder = (request: RecordedRequest) => FakeStep | Promise<FakeStep>;

/** What `script()` and `setDefault()` accept. */
export type StepOrResponder = FakeStep | FakeResponder;

type ReplyOptions = Omit<ReplyStep, 'type' | 'content' | 'toolCalls'>;

function httpError(
  status: number,
  errorType: string,
  message: string,
  extra: Partial<HttpErrorStep> = {},
): HttpErrorStep {
  return { type: 'http_error', status, errorType, message, code: null, ...extra };
}

/** Builders for every step the server knows. */
export const step = {
  /** A plain text answer. */
  text(content: string, options: ReplyOptions = {}): ReplyStep {
    return { type: 'reply', content, ...options };
  },
  /** An answer that calls tools (content `null`, finish reason `tool_calls` unless overridden). */
  toolCalls(calls: FakeToolCall[], options: ReplyOptions & { content?: string | null } = {}): ReplyStep {
    return { type: 'reply', content: null, toolCalls: calls, ...options };
  },
  /** A well-formed summary answer: `<summary>text</summary>`. */
  summary(text: string, options: ReplyOptions = {}): ReplyStep {
    return { type: 'reply', content: `<summary>\n${text}\n</summary>`, ...options };
  },
  /** `"content": null`, finish reason `stop`. */
  contentNull(options: ReplyOptions = {}): ReplyStep {
    return { type: 'reply', content: null, ...options };
  },
  /** `"content": ""`, finish reason `stop`. */
  emptyContent(options: ReplyOptions = {}): ReplyStep {
    return { type: 'reply', content: '', ...options };
  },
  /** Cut at the output token limit before any content: `finish_reason: "length"`, content null. */
  lengthNoContent(options: ReplyOptions = {}): ReplyStep {
    return { type: 'reply', content: null, finishReason: 'length', ...options };
  },
  /** Reasoning only: `reasoning_content` set, content `null` (or `""` with `{ content: '' }`). */
  reasoningOnly(
    reasoning = 'Let me think about how to summarize this...',
    options: ReplyOptions & { content?: null | '' } = {},
  ): ReplyStep {
    return { type: 'reply', content: null, reasoning, ...options };
  },
  /** HTTP 500 `server_error`. */
  serverError(
    status = 500,
    message = 'The server had an error while processing your request.',
  ): HttpErrorStep {
    return httpError(status, 'server_error', message);
  },
  /** HTTP 429 with `retry-after: <seconds>` (and `retry-after-ms` when given). */
  rateLimited(
    retryAfterSeconds = 1,
    options: { retryAfterMs?: number; message?: string } = {},
  ): HttpErrorStep {
    const headers: Record<string, string> = { 'retry-after': String(retryAfterSeconds) };
    if (options.retryAfterMs !== undefined) headers['retry-after-ms'] = String(options.retryAfterMs);
    return httpError(429, 'requests', options.message ?? 'Rate limit reached. Please try again later.', {
      code: 'rate_limit_exceeded',
      headers,
    });
  },
  /** HTTP 400 `context_length_exceeded`, worded as OpenAI words it. */
  contextLengthExceeded(
    message = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.",
  ): HttpErrorStep {
    return httpError(400, 'invalid_request_error', message, { code: 'context_length_exceeded' });
  },
  /** HTTP 400 `invalid_request_error`. */
  badRequest(message = 'Invalid request.', code: string | null = null): HttpErrorStep {
    return httpError(400, 'invalid_request_error', message, { code });
  },
  /**
   * HTTP 401 `invalid_api_key`. Unlike OpenAI, the message echoes the presented key in full
   * (`echoKey`, default true), so tests can prove the client never repeats it.
   */
  authError(options: { echoKey?: boolean } = {}): HttpErrorStep {
    const echoKey = options.echoKey ?? true;
    const message = echoKey ? 'Incorrect API key provided:' : 'Incorrect API key provided.';
    return httpError(401, 'invalid_request_error', message, { code: 'invalid_api_key', echoKey });
  },
  /** Never answer. */
  hang(): HangStep {
    return { type: 'hang' };
  },
  /** Drop the connection. */
  disconnect(): DisconnectStep {
    return { type: 'disconnect' };
  },
};

/** Text of a recorded message's content (string or text parts). */
export function fakeMessageText(message: FakeMessage | undefined): string {
  const content = message?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) =>
        part && typeof part === 'object' && 'text' in part && typeof part.text === 'string' ? part.text : '',
      )
      .join('');
  }
  return '';
}

/** Text of the request's last message. */
export function lastMessageText(request: RecordedRequest): string {
  const messages = request.body.messages ?? [];
  return fakeMessageText(messages[messages.length - 1]);
}

/**
 * Is this a summarizer call? Default rule: the last message asks for a `<summary>` block (the
 * structured summary prompt does). Pass `match` for another rule.
 */
export function isSummaryRequest(request: RecordedRequest, match: RegExp | string = /<summary>/i): boolean {
  const text = lastMessageText(request);
  return typeof match === 'string' ? text.includes(match) : match.test(text);
}

/**
 * Routes by request kind, so one server serves both the agent and the summarizer:
 * `server.setDefault(route({ summary: step.summary('...'), agent: step.text('done') }))`.
 */
export function route(routes: {
  summary: StepOrResponder;
  agent: StepOrResponder;
  isSummary?: (request: RecordedRequest) => boolean;
}): FakeResponder {
  const isSummary = routes.isSummary ?? ((r: RecordedRequest) => isSummaryRequest(r));
  return (request) => {
    const chosen = isSummary(request) ? routes.summary : routes.agent;
    return typeof chosen === 'function' ? chosen(request) : chosen;
  };
}

/** Rough token estimate of a text: characters / 4, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Rough prompt size of a chat request: messages and tools, characters / 4. */
export function estimatePromptTokens(body: FakeChatBody): number {
  const messages = (body.messages ?? []).map((m) => {
    const calls = (m.tool_calls ?? []).map((c) => c.function.name + c.function.arguments).join('');
    return 4 + estimateTokens(fakeMessageText(m) + calls);
  });
  const tools = body.tools ? estimateTokens(JSON.stringify(body.tools)) : 0;
  return messages.reduce((a, b) => a + b, 0) + tools;
}
