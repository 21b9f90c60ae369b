/**
 * Byte-pair merging of one pre-split piece.
 *
 * The rule is tiktoken's: start from single bytes and repeatedly merge the adjacent pair whose
 * concatenation has the lowest rank (the leftmost one on ties) until no adjacent pair is a token.
 * js-tiktoken rescans every pair after every merge and looks each one up through a freshly joined
 * string, which is quadratic with a large constant (seconds for 10,000 identical characters).
 * Here:
 * - a pair of tokens always merges into the same token, so "which token do A and B make" is cached
 *   by the two ranks (integer keys, no string hashing): pieces share most of their pairs. The
 *   cache is a fixed table where a new pair takes its slot's place, so input that is all new pairs
 *   (random base64) costs a lookup and no allocation, and cannot slow down what comes after it;
 * - short pieces (most of them) scan for the lowest pair; long ones keep candidate pairs in a
 *   min-heap keyed by (rank, start), skipping stale entries when popped: O(m log m).
 * The merges chosen are the same, so the tokens are the same (the unit tests compare with
 * js-tiktoken token for token).
 */

/** Up to this many bytes a plain scan beats the heap. */
const SMALL_PIECE_BYTES = 24;
/** The pair cache has 2^PAIR_CACHE_BITS slots (three Int32Arrays of that length). */
const PAIR_CACHE_BITS = 16;
const NO_MERGE = -1;
/** An empty slot's left token: no token has it (ranks are >= 0, a missing byte is NO_MERGE). */
const EMPTY = -2;

/** An encoding's ranks, with the caches merging needs. One per encoding, shared. */
export class Merger {
  private readonly byteRanks: number[] = [];
  // The pair cache: slot → left token, right token, merged token (or NO_MERGE).
  private readonly pairLeft = new Int32Array(1 << PAIR_CACHE_BITS).fill(EMPTY);
  private readonly pairRight = new Int32Array(1 << PAIR_CACHE_BITS);
  private readonly pairMerged = new Int32Array(1 << PAIR_CACHE_BITS);
  // Scratch arrays of the short-piece scan (see `scan`).
  private readonly next = new Int32Array(SMALL_PIECE_BYTES + 1);
  private readonly tokens = new Int32Array(SMALL_PIECE_BYTES + 1);
  private readonly pairRanks = new Int32Array(SMALL_PIECE_BYTES + 1);

  constructor(readonly ranks: ReadonlyMap<string, number>) {
    for (let b = 0; b < 256; b++) this.byteRanks.push(ranks.get(String.fromCharCode(b)) ?? NO_MERGE);
  }

  /** The rank of a byte sequence, or undefined when it is not a token. */
  rank(bytes: string): number | undefined {
    return this.ranks.get(bytes);
  }

  /** Tokens a piece encodes to (as `tokenEnds(bytes).length`, without allocating). */
  count(bytes: string): number {
    const m = bytes.length;
    if (m <= 1 || this.ranks.has(bytes)) return m === 0 ? 0 : 1;
    return m <= SMALL_PIECE_BYTES ? this.scan(bytes) : this.heap(bytes).length;
  }

  /**
   * The end offsets (in bytes) of the tokens a piece encodes to, in order.
   * @param bytes the piece's UTF-8 bytes as a binary string (one char per byte)
   */
  tokenEnds(bytes: string): number[] {
    const m = bytes.length;
    if (m === 0) return [];
    if (m === 1 || this.ranks.has(bytes)) return [m];
    if (m > SMALL_PIECE_BYTES) return this.heap(bytes);
    this.scan(bytes);
    const ends: number[] = [];
    for (let i = 0; i < m; i = this.next[i] as number) ends.push(this.next[i] as number);
    return ends;
  }

  /** Token made by merging two adjacent parts [from, mid) [mid, to), or NO_MERGE. */
  private merged(left: number, right: number, bytes: string, from: number, to: number): number {
    const slot = (Math.imul(left, 0x9e3779b1) ^ Math.imul(right, 0x85ebca6b)) >>> (32 - PAIR_CACHE_BITS);
    if (this.pairLeft[slot] === left && this.pairRight[slot] === right)
      return this.pairMerged[slot] as number;
    const rank = this.ranks.get(bytes.slice(from, to)) ?? NO_MERGE;
    this.pairLeft[slot] = left;
    this.pairRight[slot] = right;
    this.pairMerged[slot] = rank;
    return rank;
  }

  /**
   * Merges a short piece in the scratch arrays and returns its token count; afterwards the parts
   * are the linked list `next` from 0 (part i ends at next[i]).
   */
  private scan(bytes: string): number {
    const m = bytes.length;
    const { next, tokens, pairRanks } = this;
    for (let i = 0; i < m; i++) {
      next[i] = i + 1;
      tokens[i] = this.byteRanks[bytes.charCodeAt(i)] as number;
    }
    for (let i = 0; i + 1 < m; i++) {
      pairRanks[i] = this.merged(tokens[i] as number, tokens[i + 1] as number, bytes, i, i + 2);
    }
    pairRanks[m - 1] = NO_MERGE;
    let parts = m;
    for (;;) {
      let best = Infinity;
      let at = -1;
      let before = -1;
      for (let i = 0, previous = -1; i < m; previous = i, i = next[i] as number) {
        const rank = pairRanks[i] as number;
        if (rank !== NO_MERGE && rank < best) {
          best = rank;
          at = i;
          before = previous;
        }
      }
      if (at < 0) return parts;
      next[at] = next[next[at] as number] as number;
      tokens[at] = best;
      parts--;
      const after = next[at] as number;
      pairRanks[at] =
        after < m ? this.merged(best, tokens[after] as number, bytes, at, next[after] as number) : NO_MERGE;
      if (before >= 0) pairRanks[before] = this.merged(tokens[before] as number, best, bytes, before, after);
    }
  }

  private heap(bytes: string): number[] {
    const m = bytes.length;
    // Parts form a linked list over byte offsets: the part starting at i ends at next[i], is token[i].
    const next = new Int32Array(m);
    const prev = new Int32Array(m);
    const token = new Int32Array(m);
    const alive = new Uint8Array(m).fill(1);
    // Rank of the pair (part at i, the part after it), or NO_MERGE.
    const pairRank = new Int32Array(m).fill(NO_MERGE);
    for (let i = 0; i < m; i++) {
      next[i] = i + 1;
      prev[i] = i - 1;
      token[i] = this.byteRanks[bytes.charCodeAt(i)] as number;
    }
    const span = m + 1;
    const heap = new MinHeap();
    const refresh = (start: number): void => {
      const mid = next[start] as number;
      const rank =
        mid < m
          ? this.merged(token[start] as number, token[mid] as number, bytes, start, next[mid] as number)
          : NO_MERGE;
      pairRank[start] = rank;
      if (rank !== NO_MERGE) heap.push(rank * span + start);
    };
    for (let i = 0; i + 1 < m; i++) refresh(i);

    while (heap.size > 0) {
      const key = heap.pop();
      const start = key % span;
      const rank = (key - start) / span;
      // Skip entries made stale by an earlier merge (an equal key for the current pair is as good).
      if (alive[start] === 0 || pairRank[start] !== rank) continue;
      const mid = next[start] as number;
      const after = next[mid] as number;
      alive[mid] = 0;
      next[start] = after;
      token[start] = rank;
      if (after < m) prev[after] = start;
      refresh(start);
      if (start > 0) refresh(prev[start] as number);
    }

    const ends: number[] = [];
    for (let i = 0; i < m; i = next[i] as number) ends.push(next[i] as number);
    return ends;
  }
}

/** A binary min-heap of non-negative integers (keys below 2^53). */
class MinHeap {
  private readonly keys: number[] = [];

  get size(): number {
    return this.keys.length;
  }

  push(key: number): void {
    const keys = this.keys;
    let i = keys.length;
    keys.push(key);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const up = keys[parent] as number;
      if (up <= key) break;
      keys[i] = up;
      i = parent;
    }
    keys[i] = key;
  }

  pop(): number {
    const keys = this.keys;
    const top = keys[0] as number;
    const last = keys.pop() as number;
    const n = keys.length;
    if (n === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      let child = left;
      if (right < n && (keys[right] as number) < (keys[left] as number)) child = right;
      if ((keys[child] as number) >= last) break;
      keys[i] = keys[child] as number;
      i = child;
    }
    keys[i] = last;
    return top;
  }
}
