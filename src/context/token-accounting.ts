/**
 * How many tokens a message, an item, a tool list and a whole request cost, built on a
 * {@link Tokenizer}'s text count, so every counter (js-tiktoken in `src/tokens`, fakes in tests)
 * agrees on the overheads.
 *
 * The framing constants follow OpenAI's published way of counting chat tokens (the "How to count
 * tokens with tiktoken" cookbook, for gpt-3.5-turbo-0613 and later, gpt-4, gpt-4o): each message
 * costs its text plus 3 tokens, a `name` 1 more, and every reply is primed with 3 tokens. OpenAI
 * documents no rule for tool calls inside messages; {@link TOOL_CALL_OVERHEAD_TOKENS} is our
 * estimate. Tool definitions follow the same cookbook's method for functions. All of it is an
 * estimate of what the provider bills; the model's reported usage wins when present (DESIGN.md §6).
 *
 * Pure module.
 */
import type { ChatMessage, ContentPart, ContextItem, ToolDefinition } from './items';
import type { Tokenizer } from './tokenizer';

/** Per message: `<|start|>{role}<|message|>` … `<|end|>` framing. */
export const MESSAGE_OVERHEAD_TOKENS = 3;
/** A `name` on a system, user or assistant message costs its text plus this. */
export const NAME_OVERHEAD_TOKENS = 1;
/** Per request: the reply is primed with `<|start|>assistant<|message|>`. */
export const REPLY_PRIMING_TOKENS = 3;
/** Per tool call in an assistant message, beyond its name and arguments (our estimate). */
export const TOOL_CALL_OVERHEAD_TOKENS = 3;

/** Tool definitions (the cookbook's constants for the gpt-4o family). */
export const TOOL_DEFINITION_TOKENS = {
  /** Once per request that has tools. */
  end: 12,
  /** Per function. */
  function: 7,
  /** Per function that has parameters. */
  properties: 3,
  /** Per parameter. */
  property: 3,
  /** Per parameter with an enum (negative: the enum's framing replaces part of the property's). */
  enum: -3,
  /** Per enum value. */
  enumItem: 3,
} as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function withoutFinalPeriod(text: string): string {
  return text.endsWith('.') ? text.slice(0, -1) : text;
}

/** Tokens of a message's content: text, or the text parts of a part list (other parts count 0). */
export function countContentTokens(
  content: string | ContentPart[] | null | undefined,
  tokenizer: Tokenizer,
): number {
  if (content == null) return 0;
  if (typeof content === 'string') return tokenizer.countText(content);
  let total = 0;
  for (const part of content) {
    if (part.type === 'text' && typeof part.text === 'string') total += tokenizer.countText(part.text);
  }
  return total;
}

/**
 * Tokens one message costs in a request: content, `name`, tool calls (name + arguments + overhead)
 * and the per-message framing. Fields never sent (a tool message's `name`, `reasoning_content`) cost
 * nothing. The reply priming is per request, not per message: see {@link countRequestTokens}.
 */
export function countMessageTokens(message: ChatMessage, tokenizer: Tokenizer): number {
  let total = MESSAGE_OVERHEAD_TOKENS + countContentTokens(message.content, tokenizer);
  if (message.role !== 'tool' && message.name) {
    total += NAME_OVERHEAD_TOKENS + tokenizer.countText(message.name);
  }
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      total +=
        TOOL_CALL_OVERHEAD_TOKENS +
        tokenizer.countText(call.function.name) +
        tokenizer.countText(call.function.arguments);
    }
  }
  return total;
}

/**
 * Tokens of a tool list as the request's `tools`: per function its name and description, per
 * parameter its name, type, description and enum values, plus fixed framing (0 for no tools).
 * Parts of a parameter's schema beyond those (nested `properties`, `items`, ...) are counted as
 * their JSON text.
 */
export function countToolsTokens(tools: readonly ToolDefinition[], tokenizer: Tokenizer): number {
  if (tools.length === 0) return 0;
  const k = TOOL_DEFINITION_TOKENS;
  let total = k.end;
  for (const tool of tools) {
    const fn = tool.function;
    total += k.function + tokenizer.countText(`${fn.name}:${withoutFinalPeriod(fn.description ?? '')}`);
    const parameters = fn.parameters;
    const properties = parameters && isRecord(parameters.properties) ? parameters.properties : {};
    const names = Object.keys(properties);
    if (names.length === 0) continue;
    total += k.properties;
    for (const name of names) {
      const schema = properties[name];
      const { type, description, enum: values, ...rest } = isRecord(schema) ? schema : {};
      const typeText = typeof type === 'string' ? type : type === undefined ? '' : JSON.stringify(type);
      const descriptionText = typeof description === 'string' ? withoutFinalPeriod(description) : '';
      total += k.property + tokenizer.countText(`${name}:${typeText}:${descriptionText}`);
      if (Array.isArray(values)) {
        total += k.enum;
        for (const value of values) total += k.enumItem + tokenizer.countText(String(value));
      }
      if (Object.keys(rest).length > 0) total += tokenizer.countText(JSON.stringify(rest));
    }
  }
  return total;
}

/** Tokens an item costs as sent: its message, or its tool list for TOOL_DEFINITIONS. */
export function countItemTokens(item: ContextItem, tokenizer: Tokenizer): number {
  return item.type === 'TOOL_DEFINITIONS'
    ? countToolsTokens(item.tools, tokenizer)
    : countMessageTokens(item.message, tokenizer);
}

/** The item with its `tokens` counted (a new object; the input is not changed). */
export function withTokenCount<T extends ContextItem>(item: T, tokenizer: Tokenizer): T {
  return { ...item, tokens: countItemTokens(item, tokenizer) };
}

/** Tokens of a whole request: every message, the tool list and the reply priming. */
export function countRequestTokens(
  request: { messages: readonly ChatMessage[]; tools?: readonly ToolDefinition[] },
  tokenizer: Tokenizer,
): number {
  let total = REPLY_PRIMING_TOKENS + countToolsTokens(request.tools ?? [], tokenizer);
  for (const message of request.messages) total += countMessageTokens(message, tokenizer);
  return total;
}
