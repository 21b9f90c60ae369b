/**
 * What policy code needs from a tokenizer: count a text, cut a text to its first N tokens.
 *
 * Type-only module, so that `src/context` can take a tokenizer as an argument without importing
 * js-tiktoken. `src/tokens` implements it (`createTokenCounter`); tests may pass a fake. Message
 * and item accounting (per-message overhead, tool calls, tool definitions) is built on these two
 * operations in `token-accounting.ts`, so every counter agrees on it.
 */

/** The result of cutting a text to a token budget. */
export interface TruncateResult {
  /** The longest prefix of the input that fits the budget (the input itself when it fits). */
  text: string;
  /** Tokens of the whole input, before cutting. */
  originalTokens: number;
}

export interface Tokenizer {
  /**
   * Tokens of a plain text, without any message overhead. Linear in the length of the text. Never
   * more than the text's UTF-8 bytes (a token is at least one byte).
   */
  countText(text: string): number;
  /**
   * The first `maxTokens` tokens of `text`, as a prefix of `text` (never a partial character).
   * Returns `text` unchanged when it has at most `maxTokens` tokens.
   */
  truncate(text: string, maxTokens: number): TruncateResult;
  /**
   * The same text as `truncate(text, maxTokens).text`, reading no further into `text` than it must:
   * the cost of the prefix, not of the whole text.
   */
  prefix(text: string, maxTokens: number): string;
}

/**
 * The same tokenizer, counting each text once: one compaction's planning counts the same message
 * at every step and preview size. For one plan only: it holds on to every text it counted.
 */
export function countingOnce(tokenizer: Tokenizer): Tokenizer {
  const counts = new Map<string, number>();
  return {
    countText(text) {
      let tokens = counts.get(text);
      if (tokens === undefined) {
        tokens = tokenizer.countText(text);
        counts.set(text, tokens);
      }
      return tokens;
    },
    truncate: (text, maxTokens) => tokenizer.truncate(text, maxTokens),
    prefix: (text, maxTokens) => tokenizer.prefix(text, maxTokens),
  };
}

/**
 * The most tokens a text can have under any {@link Tokenizer}: its UTF-8 bytes (a token is at
 * least one byte). Cheap: lets a caller skip counting a text that fits a budget whatever it holds.
 */
export function maxTokens(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // Beyond ASCII a UTF-16 unit is at most 3 bytes (a surrogate pair, 2 units, is 4).
    if (code > 0x7f) bytes += code > 0x7ff ? 2 : 1;
  }
  return bytes;
}
