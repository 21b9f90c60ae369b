/**
 * Counting, cutting and encoding text in linear time with an encoding's ranks.
 *
 * The text is pre-split with the encoding's own pattern (as tiktoken does), so ordinary text gives
 * exactly js-tiktoken's tokens. Two guards keep any input linear:
 *
 * - a piece longer than {@link MAX_PIECE_CHARS} (a run without whitespace or punctuation, such as
 *   one character repeated, a long word in a script written without spaces) is cut into chunks
 *   of that length, each merged on its own: counts of such runs may differ from js-tiktoken by
 *   about one token per chunk, ordinary text is unaffected;
 * - merging is O(m log m) per chunk with cached pair merges (`bpe.ts`), and a chunk equal to the
 *   previous one (a run of one character) is not merged again, so base64, minified JSON and
 *   repeated characters stay cheap.
 *
 * Speed: ASCII text is pre-split by the pattern written out (`ascii-split.ts`), the regular
 * expression taking over, one piece at a time, where a character beyond ASCII decides a piece; the
 * counts of short pieces are remembered in a fixed table (see {@link COUNTED_PIECE_CHARS}).
 */
import { asciiSplitter, nonAsciiFrom, type PieceEnd } from './ascii-split';
import { Merger } from './bpe';
import type { EncodingData } from './encodings';

/** Longest piece merged in one go; longer runs are cut into chunks of this many UTF-16 units. */
export const MAX_PIECE_CHARS = 512;

const utf8 = new TextEncoder();

/** A string's UTF-8 bytes as a binary string (one char per byte); ASCII strings are their own bytes. */
function toBytes(text: string): string {
  let ascii = true;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) return text;
  const bytes = utf8.encode(text);
  let out = '';
  for (let i = 0; i < bytes.length; i += 4096) {
    out += String.fromCharCode(...bytes.subarray(i, i + 4096));
  }
  return out;
}

/** UTF-8 length of a code point (a lone surrogate is written as U+FFFD: 3 bytes). */
function utf8Length(codePoint: number): number {
  if (codePoint < 0x80) return 1;
  if (codePoint < 0x800) return 2;
  if (codePoint < 0x10000) return 3;
  return 4;
}

/** The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes` (whole characters only). */
function prefixWithinBytes(text: string, maxBytes: number): string {
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const codePoint = text.codePointAt(i) as number;
    const length = utf8Length(codePoint);
    if (bytes + length > maxBytes) break;
    bytes += length;
    i += codePoint > 0xffff ? 2 : 1;
  }
  return text.slice(0, i);
}

/**
 * Pieces up to this long have their counts remembered: words, paths' parts, punctuation and
 * indentation recur (pi-large's 107,000 pieces are 6,500 distinct ones), and a small table is
 * quicker to look in than the encoding's 200,000 ranks. Longer pieces are not: V8 makes a slice of
 * 13 characters or more a view of the text it was cut from, and a remembered piece would keep that
 * whole text alive (a 2 MB tool output per slot).
 */
const COUNTED_PIECE_CHARS = 12;
/**
 * Slots of that table (a power of two). A piece has one slot, by a hash of its characters, and
 * takes it over from whatever was there: text that never repeats (random base64) costs a hash and
 * a comparison more per piece, never a growing table to rebuild.
 */
const COUNTED_PIECE_BITS = 17;

/** The table slot of the piece `text[start, end)`: FNV-1a over its UTF-16 units, the top bits. */
function pieceSlot(text: string, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> (32 - COUNTED_PIECE_BITS);
}

export class LinearEncoder {
  /** Pieces seen lately, by slot, and their token counts (see {@link COUNTED_PIECE_CHARS}). */
  private readonly pieceKeys: (string | undefined)[] = new Array<string | undefined>(1 << COUNTED_PIECE_BITS);
  private readonly pieceTokens = new Int32Array(1 << COUNTED_PIECE_BITS);
  private lastChunk = '';
  private lastChunkTokens = 0;

  private readonly merger: Merger;
  /** The pattern written out for ASCII text (`ascii-split.ts`), when the encoding has one. */
  private readonly asciiPieceEnd: PieceEnd | null;
  /** The pattern, matching only where it is asked to (`lastIndex`). */
  private readonly sticky: RegExp;

  constructor(encoding: EncodingData) {
    this.merger = new Merger(encoding.ranks);
    this.asciiPieceEnd = asciiSplitter(encoding.pattern.source);
    this.sticky = new RegExp(encoding.pattern.source, 'uy');
  }

  /** Tokens of `text`. */
  count(text: string): number {
    const pieceEnd = this.asciiPieceEnd;
    if (pieceEnd === null) {
      let total = 0;
      this.forEachChunk(text, (chunk) => {
        total += this.countChunk(chunk);
      });
      return total;
    }
    // forEachChunk's walk written out: a remembered piece is found in place, with no slice of it
    // made (most pieces of ordinary text are remembered).
    const length = text.length;
    let total = 0;
    let wide = nonAsciiFrom(text, 0);
    for (let start = 0; start < length;) {
      let end = start < wide ? pieceEnd(text, start, wide) : -1;
      if (end <= start) {
        this.sticky.lastIndex = start;
        end = start + (this.sticky.exec(text)?.[0].length ?? 1);
      }
      const size = end - start;
      if (size <= COUNTED_PIECE_CHARS) {
        const slot = pieceSlot(text, start, end);
        const key = this.pieceKeys[slot];
        total +=
          key !== undefined && key.length === size && text.startsWith(key, start)
            ? (this.pieceTokens[slot] as number)
            : this.countChunk(text.slice(start, end));
      } else total += this.countPiece(text.slice(start, end));
      start = end;
      if (start > wide) wide = nonAsciiFrom(text, start);
    }
    return total;
  }

  /**
   * Tokens of a piece too long to be remembered, in chunks when it is over
   * {@link MAX_PIECE_CHARS} (apart from {@link count}'s loop: a closure there would keep its
   * running total off the registers).
   */
  private countPiece(piece: string): number {
    let tokens = 0;
    this.visitPiece(piece, 0, (chunk) => {
      tokens += this.countChunk(chunk);
    });
    return tokens;
  }

  /** The first `maxTokens` tokens of `text` as a prefix of it, and the tokens of the whole text. */
  truncate(text: string, maxTokens: number): { text: string; originalTokens: number } {
    const budget = Math.max(0, Math.floor(maxTokens));
    let total = 0;
    let cutAt = -1;
    this.forEachChunk(text, (chunk, offset) => {
      const tokens = this.countChunk(chunk);
      if (cutAt < 0 && total + tokens > budget) {
        cutAt = offset + this.prefixOfTokens(chunk, budget - total).length;
      }
      total += tokens;
    });
    return { text: cutAt < 0 ? text : text.slice(0, cutAt), originalTokens: total };
  }

  /** Token ids of `text` (same as js-tiktoken's `encode(text, [], [])` outside over-long runs). */
  encode(text: string): number[] {
    const ids: number[] = [];
    this.forEachChunk(text, (chunk) => {
      const bytes = toBytes(chunk);
      let start = 0;
      for (const end of this.merger.tokenEnds(bytes)) {
        ids.push(this.merger.rank(bytes.slice(start, end)) as number);
        start = end;
      }
    });
    return ids;
  }

  /**
   * The first `maxTokens` tokens of `text` as a prefix of it, reading no further than it must (the
   * same text as {@link truncate}'s, without counting the rest).
   */
  prefix(text: string, maxTokens: number): string {
    const budget = Math.max(0, Math.floor(maxTokens));
    let total = 0;
    let cutAt = -1;
    this.forEachChunk(text, (chunk, offset) => {
      const tokens = this.countChunk(chunk);
      if (total + tokens > budget) {
        cutAt = offset + this.prefixOfTokens(chunk, budget - total).length;
        return false;
      }
      total += tokens;
      return true;
    });
    return cutAt < 0 ? text : text.slice(0, cutAt);
  }

  /**
   * Calls `visit` for each chunk of the text in order: a pre-split piece, or a slice of a long one;
   * stops when `visit` returns false.
   */
  private forEachChunk(text: string, visit: (chunk: string, offset: number) => boolean | void): void {
    const length = text.length;
    const pieceEnd = this.asciiPieceEnd;
    // The first character beyond ASCII at or after the current piece (length: none).
    let wide = pieceEnd === null ? 0 : nonAsciiFrom(text, 0);
    for (let start = 0; start < length;) {
      let end = -1;
      // The ASCII splitter decides the piece unless a character beyond ASCII would.
      if (pieceEnd !== null && start < wide) {
        const candidate = pieceEnd(text, start, wide);
        if (candidate > start) end = candidate;
      }
      if (end < 0) {
        this.sticky.lastIndex = start;
        end = start + (this.sticky.exec(text)?.[0].length ?? 1);
      }
      if (!this.visitPiece(text.slice(start, end), start, visit)) return;
      start = end;
      if (pieceEnd !== null && start > wide) wide = nonAsciiFrom(text, start);
    }
  }

  /** Visits a piece, or the slices of a long one; false when `visit` asked to stop. */
  private visitPiece(
    piece: string,
    offset: number,
    visit: (chunk: string, offset: number) => boolean | void,
  ): boolean {
    if (piece.length <= MAX_PIECE_CHARS) return visit(piece, offset) !== false;
    let start = 0;
    while (start < piece.length) {
      let end = Math.min(start + MAX_PIECE_CHARS, piece.length);
      // Never separate the two halves of a surrogate pair.
      const last = piece.charCodeAt(end - 1);
      if (end < piece.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
      if (visit(piece.slice(start, end), offset + start) === false) return false;
      start = end;
    }
    return true;
  }

  private countChunk(chunk: string): number {
    if (chunk.length <= COUNTED_PIECE_CHARS) {
      const slot = pieceSlot(chunk, 0, chunk.length);
      if (this.pieceKeys[slot] === chunk) return this.pieceTokens[slot] as number;
      const tokens = this.merger.count(toBytes(chunk));
      this.pieceKeys[slot] = chunk;
      this.pieceTokens[slot] = tokens;
      return tokens;
    }
    if (chunk.length < MAX_PIECE_CHARS) return this.merger.count(toBytes(chunk));
    // Long runs of one character come as a series of equal chunks.
    if (chunk === this.lastChunk) return this.lastChunkTokens;
    const tokens = this.merger.count(toBytes(chunk));
    this.lastChunk = chunk;
    this.lastChunkTokens = tokens;
    return tokens;
  }

  /** The text of the first `tokens` tokens of a chunk, cut back to a whole character. */
  private prefixOfTokens(chunk: string, tokens: number): string {
    if (tokens <= 0) return '';
    const ends = this.merger.tokenEnds(toBytes(chunk));
    const byteLength = ends[Math.min(tokens, ends.length) - 1] as number;
    return prefixWithinBytes(chunk, byteLength);
  }
}
