/**
 * The wire side of the fake OpenAI server: response bodies (JSON and SSE) shaped as the `openai`
 * SDK parses them, and the request checks OpenAI itself applies.
 */
import type { ServerResponse } from 'node:http';
import {
  estimatePromptTokens,
  estimateTokens,
  type FakeChatBody,
  type FakeMessage,
  type FakeUsage,
  type HttpErrorStep,
  type RecordedRequest,
  type ReplyStep,
} from './fake-openai-steps';

/** Numbers the `x-request-id` of every response (unique within the test process). */
let responseCount = 0;

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-request-id': `req_fake_${++responseCount}`,
    ...headers,
  });
  res.end(text);
}

export function sendError(
  res: ServerResponse,
  status: number,
  type: string,
  message: string,
  extra: { code?: string | null; headers?: Record<string, string> } = {},
): void {
  sendJson(res, status, { error: { message, type, param: null, code: extra.code ?? null } }, extra.headers);
}

export function sendHttpError(res: ServerResponse, answer: HttpErrorStep, presentedKey: string): void {
  if (answer.body !== undefined) return sendJson(res, answer.status, answer.body, answer.headers);
  const message = (answer.message ?? `HTTP ${answer.status}`) + (answer.echoKey ? ` ${presentedKey}` : '');
  return sendError(res, answer.status, answer.errorType ?? 'invalid_request_error', message, {
    code: answer.code ?? null,
    headers: answer.headers ?? {},
  });
}

export interface FakeCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  system_fingerprint: string;
  choices: Array<{
    index: number;
    message: {
      role: 'assistant';
      content: string | null;
      refusal: null;
      tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
      reasoning_content?: string;
    };
    logprobs: null;
    finish_reason: string;
  }>;
  usage?: FakeUsage;
}

export function buildCompletion(request: RecordedRequest, answer: ReplyStep, n: number): FakeCompletion {
  const toolCalls = (answer.toolCalls ?? []).map((call, i) => ({
    id: call.id ?? `call_${request.index}_${i}`,
    type: 'function' as const,
    function: {
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
    },
  }));
  const content = answer.content === undefined ? (toolCalls.length > 0 ? null : 'ok') : answer.content;
  const message: FakeCompletion['choices'][number]['message'] = { role: 'assistant', content, refusal: null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (answer.reasoning !== undefined) message.reasoning_content = answer.reasoning;

  const completion: FakeCompletion = {
    id: `chatcmpl-fake-${n}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: answer.model ?? request.body.model ?? 'fake-model',
    system_fingerprint: 'fp_fake',
    choices: [
      {
        index: 0,
        message,
        logprobs: null,
        finish_reason: answer.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
      },
    ],
  };
  if (answer.usage !== null) {
    const promptTokens = answer.usage?.prompt_tokens ?? estimatePromptTokens(request.body);
    const completionTokens =
      answer.usage?.completion_tokens ??
      estimateTokens(
        (content ?? '') +
          (answer.reasoning ?? '') +
          toolCalls.map((c) => c.function.name + c.function.arguments).join(''),
      );
    completion.usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: answer.usage?.total_tokens ?? promptTokens + completionTokens,
    };
  }
  return completion;
}

/** Streams a completion as the SDK's SSE parser expects: deltas, a finish chunk, usage, [DONE]. */
export function sendStream(res: ServerResponse, completion: FakeCompletion, body: FakeChatBody): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-request-id': `req_fake_${++responseCount}`,
  });
  const choice = completion.choices[0];
  const base = {
    id: completion.id,
    object: 'chat.completion.chunk',
    created: completion.created,
    model: completion.model,
    system_fingerprint: completion.system_fingerprint,
  };
  const emit = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    res.write(
      `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] })}\n\n`,
    );
  emit({ role: 'assistant', content: choice?.message.content === null ? null : '', refusal: null });
  const reasoning = choice?.message.reasoning_content;
  if (reasoning) emit({ reasoning_content: reasoning });
  const content = choice?.message.content ?? '';
  // Two pieces, so clients must concatenate deltas.
  const cut = Math.ceil(content.length / 2);
  for (const piece of [content.slice(0, cut), content.slice(cut)]) if (piece) emit({ content: piece });
  (choice?.message.tool_calls ?? []).forEach((call, index) => {
    emit({
      tool_calls: [
        { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
      ],
    });
    emit({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] });
  });
  emit({}, choice?.finish_reason ?? 'stop');
  if (body.stream_options?.include_usage && completion.usage) {
    res.write(`data: ${JSON.stringify({ ...base, choices: [], usage: completion.usage })}\n\n`);
  }
  res.end('data: [DONE]\n\n');
}

/** The 400s OpenAI gives for malformed chat requests, or null when the body is acceptable. */
export function validateChatBody(body: FakeChatBody): string | null {
  if (typeof body.model !== 'string' || body.model.length === 0) {
    return 'you must provide a model parameter';
  }
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    return "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.";
  }
  const roles = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
  let open: Set<string> | null = null;
  for (const [i, message] of messages.entries()) {
    const m = message as FakeMessage | null;
    if (!m || typeof m !== 'object' || !roles.has(m.role)) {
      return `Invalid value for 'messages[${i}].role': expected one of system, developer, user, assistant, tool.`;
    }
    if (m.role === 'tool') {
      if (!open || typeof m.tool_call_id !== 'string' || !open.has(m.tool_call_id)) {
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      }
      open.delete(m.tool_call_id);
      continue;
    }
    if (open && open.size > 0) return missingResults(open);
    open = null;
    if (m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      open = new Set(m.tool_calls.map((c) => c.id));
    }
  }
  if (open && open.size > 0) return missingResults(open);
  return null;
}

function missingResults(open: Set<string>): string {
  return (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
    `'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(', ')}`
  );
}
