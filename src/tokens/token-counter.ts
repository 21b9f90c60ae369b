/**
 * Token counting for one encoding: texts, messages, tool lists, items and whole requests.
 *
 * Implements the policy code's {@link Tokenizer}; message-level accounting is the pure one of
 * `src/context/token-accounting.ts`, so the numbers stored at append and the estimates made in
 * workflows agree.
 */
import type { ChatMessage, ContextItem, ToolDefinition } from '../context/items';
import {
  countItemTokens,
  countMessageTokens,
  countRequestTokens,
  countToolsTokens,
} from '../context/token-accounting';
import type { Tokenizer, TruncateResult } from '../context/tokenizer';
import { encodingForModel, loadEncoding, type EncodingName } from './encodings';
import { LinearEncoder } from './linear-encoder';

export interface TokenCounter extends Tokenizer {
  readonly encoding: EncodingName;
  /** Tokens of a plain text. Linear in its length whatever it holds (1 MB in well under a second). */
  countText(text: string): number;
  /** The first `maxTokens` tokens of `text` (a prefix, whole characters) and the tokens of all of it. */
  truncate(text: string, maxTokens: number): TruncateResult;
  /** Same as {@link truncate}. */
  truncateToTokens(text: string, maxTokens: number): TruncateResult;
  /** Token ids of a text (js-tiktoken's ids; runs longer than 512 characters are encoded in chunks). */
  encode(text: string): number[];
  /** One message in a request: content, name, tool calls and the 3-token framing (no reply priming). */
  countMessage(message: ChatMessage): number;
  /** A tool list as the request's `tools` (0 for none). */
  countTools(tools: readonly ToolDefinition[]): number;
  /** An item as sent: its message, or its tool list. */
  countItem(item: ContextItem): number;
  /** A whole request: messages, tools and the 3 tokens that prime the reply. */
  countRequest(request: { messages: readonly ChatMessage[]; tools?: readonly ToolDefinition[] }): number;
}

export interface TokenCounterOptions {
  encoding: EncodingName;
}

const counters = new Map<EncodingName, TokenCounter>();

/**
 * The counter of an encoding. The encoding's ranks are parsed on first use and shared by every
 * counter of the process (counters are cached too, so this is cheap to call per request).
 */
export function createTokenCounter(options: TokenCounterOptions): TokenCounter {
  const cached = counters.get(options.encoding);
  if (cached) return cached;
  const encoding = options.encoding;
  let encoder: LinearEncoder | undefined;
  // Parse the ranks when the first text is counted, not when the counter is made.
  const text = (): LinearEncoder => (encoder ??= new LinearEncoder(loadEncoding(encoding)));
  const counter: TokenCounter = {
    encoding,
    additiveAtBreaks: true,
    countText: (value) => text().count(value),
    truncate: (value, maxTokens) => text().truncate(value, maxTokens),
    prefix: (value, maxTokens) => text().prefix(value, maxTokens),
    truncateToTokens: (value, maxTokens) => text().truncate(value, maxTokens),
    encode: (value) => text().encode(value),
    countMessage: (message) => countMessageTokens(message, counter),
    countTools: (tools) => countToolsTokens(tools, counter),
    countItem: (item) => countItemTokens(item, counter),
    countRequest: (request) => countRequestTokens(request, counter),
  };
  counters.set(encoding, counter);
  return counter;
}

/** The counter for a model's encoding (see {@link encodingForModel} for the mapping). */
export function tokenCounterForModel(model: string): TokenCounter {
  return createTokenCounter({ encoding: encodingForModel(model) });
}
