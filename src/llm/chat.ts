/**
 * One chat completion: build the request from the context model's messages, call the API, and
 * normalize the answer (provider quirks included) into an {@link AssistantMessage}.
 * Every failure leaves as a classified {@link LlmError}.
 */
import { BadRequestError } from 'openai';
import type OpenAI from 'openai';
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { AssistantMessage, ChatMessage, ToolCall, ToolDefinition } from '../context/items';
import { lowerMessage } from '../context/lower';
import { classifyLlmError, LlmError } from './errors';

/** Which request field carries the output token limit. */
export type MaxTokensField = 'max_tokens' | 'max_completion_tokens';

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  /** Tool definitions; omitted from the request when empty. */
  tools?: ToolDefinition[];
  /** Output token limit; omitted when unset. */
  maxTokens?: number;
  /** Sampling temperature; omitted when unset (some reasoning models accept only the default). */
  temperature?: number;
  /**
   * The field for `maxTokens`. Default: `max_tokens`, which every compatible server knows; when a
   * server answers that it wants `max_completion_tokens` (OpenAI's reasoning models), the call is
   * repeated once with it and the client remembers the choice.
   */
  maxTokensField?: MaxTokensField;
  /** Cancels the call: pass the activity's `cancellationSignal`; its reason is rethrown as is. */
  signal?: AbortSignal;
  /** Per-call timeout in milliseconds, overriding the client's. */
  timeoutMs?: number;
}

/** Token usage as the API reports it. */
export interface LlmUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ChatResult {
  /** The answer as a context-model message (content, tool calls, reasoning_content). */
  message: AssistantMessage;
  /** `stop`, `tool_calls`, `length`, `content_filter`, ... or null when the provider sent none. */
  finishReason: string | null;
  /** Reported usage; absent when the provider sent none (then estimate). */
  usage?: LlmUsage;
  /** Reasoning text returned beside the content (`reasoning_content` or `reasoning`). */
  reasoning?: string;
  /** The model that answered, as reported. */
  model: string;
  /** The completion id, as reported. */
  id: string;
}

// What each client turned out to need for maxTokens (learned from a 400, see ChatRequest).
const learnedMaxTokensField = new WeakMap<OpenAI, MaxTokensField>();

/**
 * Calls `POST /chat/completions` (non-streaming) and returns the normalized answer.
 * Throws {@link LlmError} (classified, API key redacted) or, when `signal` aborted, its reason.
 */
export async function chatCompletion(client: OpenAI, request: ChatRequest): Promise<ChatResult> {
  const secrets = [client.apiKey ?? undefined];
  let field = request.maxTokensField ?? learnedMaxTokensField.get(client) ?? 'max_tokens';
  for (let attempt = 0; ; attempt++) {
    try {
      const raw: unknown = await client.chat.completions.create(buildChatParams(request, field), {
        signal: request.signal ?? null,
        ...(request.timeoutMs !== undefined ? { timeout: request.timeoutMs } : {}),
      });
      return normalizeCompletion(raw);
    } catch (err) {
      if (request.signal?.aborted) {
        const reason: unknown = request.signal.reason;
        throw reason instanceof Error ? reason : new Error('LLM call cancelled');
      }
      const canSwitch =
        attempt === 0 &&
        request.maxTokens !== undefined &&
        request.maxTokensField === undefined &&
        field === 'max_tokens';
      if (canSwitch && wantsMaxCompletionTokens(err)) {
        field = 'max_completion_tokens';
        learnedMaxTokensField.set(client, field);
        continue;
      }
      throw classifyLlmError(err, { secrets, timeoutMs: request.timeoutMs ?? client.timeout });
    }
  }
}

/** The request body for a {@link ChatRequest}. Pure. */
export function buildChatParams(
  request: ChatRequest,
  maxTokensField: MaxTokensField = request.maxTokensField ?? 'max_tokens',
): ChatCompletionCreateParamsNonStreaming {
  const params: ChatCompletionCreateParamsNonStreaming = {
    model: request.model,
    messages: request.messages.map(toRequestMessage),
  };
  if (request.tools && request.tools.length > 0) params.tools = request.tools.map(toRequestTool);
  if (request.maxTokens !== undefined) params[maxTokensField] = request.maxTokens;
  if (request.temperature !== undefined) params.temperature = request.temperature;
  return params;
}

/**
 * A context-model message as the API wants it: {@link lowerMessage} keeps only the fields of the
 * chat format (no `reasoning_content`, no tool message `name`, never `content: null` on an
 * assistant message without tool calls). Non-text content parts are the provider's own shape,
 * which the SDK's type is narrower than.
 */
export function toRequestMessage(message: ChatMessage): ChatCompletionMessageParam {
  return lowerMessage(message) as ChatCompletionMessageParam;
}

function toRequestTool(tool: ToolDefinition): ChatCompletionTool {
  const fn: { name: string; description?: string; parameters?: Record<string, unknown> } = {
    name: tool.function.name,
  };
  if (tool.function.description !== undefined) fn.description = tool.function.description;
  if (tool.function.parameters !== undefined) fn.parameters = tool.function.parameters;
  return { type: 'function', function: fn };
}

/**
 * Normalizes a completion body, tolerating what compatible servers do differently: content as
 * text parts, a refusal instead of content, reasoning under `reasoning_content` or `reasoning`,
 * tool-call arguments as objects, missing or repeated tool-call ids, missing usage fields.
 * Throws `LLM_INVALID_RESPONSE` (retryable) when there is no answer to read.
 */
export function normalizeCompletion(raw: unknown): ChatResult {
  const body = asRecord(raw);
  const choice = asRecord(Array.isArray(body?.choices) ? (body.choices as unknown[])[0] : undefined);
  if (!body || !choice) {
    const error = asRecord(body?.error);
    const said = typeof error?.message === 'string' ? `: ${error.message}` : '';
    throw new LlmError('LLM_INVALID_RESPONSE', `LLM response has no choices${said}`.slice(0, 600), true);
  }
  const id = typeof body.id === 'string' ? body.id : '';
  const msg = asRecord(choice.message) ?? {};

  let content = readContent(msg.content);
  if (content === null && typeof msg.refusal === 'string' && msg.refusal.length > 0) content = msg.refusal;

  const toolCalls: ToolCall[] = [];
  const callIds = new Set<string>();
  if (Array.isArray(msg.tool_calls)) {
    msg.tool_calls.forEach((entry: unknown, index: number) => {
      const call = asRecord(entry);
      const fn = asRecord(call?.function);
      if (!call || !fn || typeof fn.name !== 'string') return; // custom (non-function) tools: none defined
      const args = fn.arguments;
      let callId =
        typeof call.id === 'string' && call.id.length > 0 ? call.id : `call_${id || 'anon'}_${index}`;
      // A result answers its call by id: a repeated id would run one call twice and answer the other never.
      while (callIds.has(callId)) callId = `${callId}_${index}`;
      callIds.add(callId);
      toolCalls.push({
        id: callId,
        type: 'function',
        function: {
          name: fn.name,
          arguments:
            typeof args === 'string'
              ? args
              : args === undefined || args === null
                ? '{}'
                : JSON.stringify(args),
        },
      });
    });
  }

  const reasoningRaw = typeof msg.reasoning_content === 'string' ? msg.reasoning_content : msg.reasoning;
  const reasoning = typeof reasoningRaw === 'string' && reasoningRaw.length > 0 ? reasoningRaw : undefined;

  const message: AssistantMessage = { role: 'assistant', content };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning !== undefined) message.reasoning_content = reasoning;

  const result: ChatResult = {
    message,
    finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
    model: typeof body.model === 'string' ? body.model : '',
    id,
  };
  const usage = readUsage(body.usage);
  if (usage) result.usage = usage;
  if (reasoning !== undefined) result.reasoning = reasoning;
  return result;
}

function readContent(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) => {
        const p = asRecord(part);
        return typeof p?.text === 'string' ? p.text : '';
      })
      .join('');
  }
  return null;
}

function readUsage(raw: unknown): LlmUsage | undefined {
  const usage = asRecord(raw);
  if (!usage) return undefined;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const prompt = num(usage.prompt_tokens);
  const completion = num(usage.completion_tokens);
  const total = num(usage.total_tokens);
  if (prompt === undefined && completion === undefined && total === undefined) return undefined;
  return {
    promptTokens: prompt ?? Math.max(0, (total ?? 0) - (completion ?? 0)),
    completionTokens: completion ?? Math.max(0, (total ?? 0) - (prompt ?? 0)),
    totalTokens: total ?? (prompt ?? 0) + (completion ?? 0),
  };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** A 400 saying the model takes `max_completion_tokens` instead of `max_tokens`. */
function wantsMaxCompletionTokens(err: unknown): boolean {
  return (
    err instanceof BadRequestError &&
    (err.param === 'max_tokens' || /max_completion_tokens/.test(err.message)) &&
    !/context[_ ]length/i.test(err.message)
  );
}
