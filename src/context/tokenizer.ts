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
  /**
   * Set when counts add up across a *break*: for texts `a` and `b` joined at a break,
   * `countText(a + b) === countText(a) + countText(b)`. A break is a line break ('\n') followed
   * by a character that is neither whitespace nor '/', or any other character but whitespace
   * followed by a space. True of the regex pre-split BPE encodings (o200k_base, cl100k_base): no
   * piece of their patterns runs across a break (a piece that ends in a line break takes only
   * more line breaks or a '/', and only whitespace pieces take a space after anything else), and
   * pieces are merged one by one. Lets a text assembled in several ways (a trail with fewer
   * details, a list with directories collapsed) be counted a part at a time, each part once
   * (`PartCounter`), and a part's count be kept with the data it is written from. Default false:
   * texts are counted whole.
   */
  readonly additiveAtBreaks?: boolean;
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
    ...(tokenizer.additiveAtBreaks ? { additiveAtBreaks: true } : {}),
  };
}

/** Whether a UTF-16 unit is whitespace as the encodings' patterns read it (`\s`). */
function isSpace(code: number): boolean {
  return code <= 0x20
    ? code >= 0x09 && (code <= 0x0d || code === 0x20)
    : code > 0x7f && /\s/u.test(String.fromCharCode(code));
}

/** Whether the end of `before` and the start of `after` meet at a break (see `additiveAtBreaks`). */
export function meetAtBreak(before: string, after: string): boolean {
  const last = before.charCodeAt(before.length - 1);
  const first = after.charCodeAt(0);
  if (last === 0x0a) return first !== 0x2f && !isSpace(first);
  // Half a surrogate pair never ends a part that meets another at a break.
  return first === 0x20 && !isSpace(last) && !(last >= 0xd800 && last <= 0xdbff);
}

/** Counts of the policy's fixed texts, by tokenizer (see {@link fixedTextTokens}). */
const fixedCounts = new WeakMap<Tokenizer, Map<string, number>>();

/**
 * Tokens of a fixed text of the policy (a heading every compaction writes), counted once per
 * tokenizer. Only for the policy's own constants: a text that comes from a conversation is
 * counted where it is used.
 */
export function fixedTextTokens(text: string, tokenizer: Tokenizer): number {
  let counts = fixedCounts.get(tokenizer);
  if (!counts) fixedCounts.set(tokenizer, (counts = new Map()));
  let tokens = counts.get(text);
  if (tokens === undefined) counts.set(text, (tokens = tokenizer.countText(text)));
  return tokens;
}

/**
 * Counts texts made of parts, each distinct part once, when the tokenizer's counts add up at
 * breaks (`additiveAtBreaks`) and every join is one; else it counts the joined text. Either way
 * `count(parts)` is exactly `countText(parts.join(''))`. For one text assembled in several ways:
 * it holds on to every part it counted.
 */
export class PartCounter {
  private readonly counts = new Map<string, number>();

  constructor(private readonly tokenizer: Tokenizer) {}

  /** Tokens of one part on its own. */
  part(text: string): number {
    let tokens = this.counts.get(text);
    if (tokens === undefined) {
      tokens = this.tokenizer.countText(text);
      this.counts.set(text, tokens);
    }
    return tokens;
  }

  /** Tokens of `parts.join('')`. */
  count(parts: readonly string[]): number {
    if (!this.tokenizer.additiveAtBreaks) return this.tokenizer.countText(parts.join(''));
    let total = 0;
    let before = '';
    for (const part of parts) {
      if (part.length === 0) continue;
      if (before.length > 0 && !meetAtBreak(before, part)) return this.tokenizer.countText(parts.join(''));
      total += this.part(part);
      before = part;
    }
    return total;
  }
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
