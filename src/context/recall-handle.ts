/**
 * Recall handles (issue 24): the short name by which the agent and people address an archived
 * item, e.g. `#a1f3c2`. A handle is the first {@link HANDLE_CHARS} hex digits of the SHA-256 of
 * the item's id, so it is the same in every compaction, after continue-as-new and in every process
 * that sees the id; nothing has to be stored to keep it stable. The store keeps 16 digits per item
 * (migration 003: `encode(sha256(convert_to(id, 'UTF8')), 'hex')`, the same digits) and resolves a
 * handle by prefix within one conversation only.
 *
 * A cut or summarized form stands for its original: its handle is the original's
 * ({@link originalHandle}).
 *
 * Pure module (SHA-256 written out: `src/context` runs inside workflows, without Node's crypto).
 */
import type { ContextItem } from './items';

/** Hex digits of a handle as written in the context (24 bits: a clash in one conversation is rare; see `resolveHandle`). */
export const HANDLE_CHARS = 6;
/** Hex digits the store keeps per item (and the longest handle accepted). */
export const STORED_HANDLE_CHARS = 16;
/** Fewest hex digits a handle may be looked up by. */
export const MIN_HANDLE_CHARS = 4;

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

// Work arrays reused by every digest (a digest runs start to end, never interleaved).
const W = new Uint32Array(64);
const H = new Uint32Array(8);
const INITIAL = [
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];
// TextEncoder is a global of the workflow sandbox and of Node alike; a lone surrogate becomes
// U+FFFD, as the pg driver sends it, so the store's digest agrees.
const ENCODER = new TextEncoder();

/** The SHA-256 of the text's UTF-8 bytes, as 64 hex digits. */
export function sha256Hex(text: string): string {
  const data = ENCODER.encode(text);
  const length = data.length;
  const padded = new Uint8Array(((length + 9 + 63) >> 6) << 6);
  padded.set(data);
  padded[length] = 0x80;
  const end = padded.length;
  const bits = length * 8;
  const high = Math.floor(bits / 0x1_0000_0000);
  padded[end - 8] = high >>> 24;
  padded[end - 7] = (high >>> 16) & 0xff;
  padded[end - 6] = (high >>> 8) & 0xff;
  padded[end - 5] = high & 0xff;
  padded[end - 4] = bits >>> 24;
  padded[end - 3] = (bits >>> 16) & 0xff;
  padded[end - 2] = (bits >>> 8) & 0xff;
  padded[end - 1] = bits & 0xff;
  H.set(INITIAL);
  for (let block = 0; block < end; block += 64) {
    for (let i = 0; i < 16; i++) {
      const at = block + i * 4;
      W[i] =
        (((padded[at] as number) << 24) |
          ((padded[at + 1] as number) << 16) |
          ((padded[at + 2] as number) << 8) |
          (padded[at + 3] as number)) >>>
        0;
    }
    for (let i = 16; i < 64; i++) {
      const x = W[i - 15] as number;
      const y = W[i - 2] as number;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      W[i] = ((W[i - 16] as number) + s0 + (W[i - 7] as number) + s1) >>> 0;
    }
    let a = H[0] as number;
    let b = H[1] as number;
    let c = H[2] as number;
    let d = H[3] as number;
    let e = H[4] as number;
    let f = H[5] as number;
    let g = H[6] as number;
    let h = H[7] as number;
    for (let i = 0; i < 64; i++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (h + s1 + ch + (K[i] as number) + (W[i] as number)) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (s0 + maj) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    H[0] = (H[0] as number) + a;
    H[1] = (H[1] as number) + b;
    H[2] = (H[2] as number) + c;
    H[3] = (H[3] as number) + d;
    H[4] = (H[4] as number) + e;
    H[5] = (H[5] as number) + f;
    H[6] = (H[6] as number) + g;
    H[7] = (H[7] as number) + h;
  }
  let hex = '';
  for (let i = 0; i < 8; i++) hex += (H[i] as number).toString(16).padStart(8, '0');
  return hex;
}

/** The digits the store keeps for an item id ({@link STORED_HANDLE_CHARS} of its SHA-256). */
export function storedHandle(itemId: string): string {
  return sha256Hex(itemId).slice(0, STORED_HANDLE_CHARS);
}

/** Handles worked out lately, by item id: each compaction writes the same files' handles again. */
const recentHandles = new Map<string, string>();
/** Most handles remembered (then forgotten all at once). */
const RECENT_HANDLES = 4096;

/** The handle of an item id as written in the context: `#` and {@link HANDLE_CHARS} hex digits. */
export function handleOf(itemId: string): string {
  let handle = recentHandles.get(itemId);
  if (handle === undefined) {
    if (recentHandles.size >= RECENT_HANDLES) recentHandles.clear();
    handle = `#${sha256Hex(itemId).slice(0, HANDLE_CHARS)}`;
    recentHandles.set(itemId, handle);
  }
  return handle;
}

/** The handle of what an item stands for: its original's for a cut or summarized form. */
export function originalHandle(item: Pick<ContextItem, 'id' | 'sourceId'>): string {
  return handleOf(item.sourceId ?? item.id);
}

/**
 * The hex digits of a handle as someone typed it (`#A1F3C2`, `a1f3c2`, ` #a1f3 `), lower-cased,
 * or null when it is not {@link MIN_HANDLE_CHARS}..{@link STORED_HANDLE_CHARS} hex digits.
 */
export function handleDigits(input: string): string | null {
  const digits = input.trim().replace(/^#/, '').toLowerCase();
  if (digits.length < MIN_HANDLE_CHARS || digits.length > STORED_HANDLE_CHARS) return null;
  return /^[0-9a-f]+$/.test(digits) ? digits : null;
}
