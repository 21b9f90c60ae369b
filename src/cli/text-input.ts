/**
 * Text a user gives the CLI in a file or on standard input: decoded as UTF-8 strictly, so that a
 * byte that is not UTF-8 is refused with its offset instead of silently becoming U+FFFD (unless
 * the user asks for that with `--lossy`).
 */
import { readFileSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { UsageError } from './client';

/** The offset of the first byte that is not part of a valid UTF-8 sequence, or -1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const c = bytes[i] as number;
    if (c < 0x80) {
      i++;
      continue;
    }
    // The sequence's length and the range of its second byte (which rules out overlong forms,
    // surrogates and code points past U+10FFFF).
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) length = 2;
    else if (c >= 0xe0 && c <= 0xef) {
      length = 3;
      if (c === 0xe0) low = 0xa0;
      if (c === 0xed) high = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      length = 4;
      if (c === 0xf0) low = 0x90;
      if (c === 0xf4) high = 0x8f;
    } else return i;
    if (i + length > bytes.length) return i;
    const second = bytes[i + 1] as number;
    if (second < low || second > high) return i;
    for (let k = 2; k < length; k++) {
      const next = bytes[i + k] as number;
      if (next < 0x80 || next > 0xbf) return i;
    }
    i += length;
  }
  return -1;
}

/**
 * Decodes `bytes` as UTF-8.
 * @throws UsageError naming `source` and the offset of the first invalid byte, unless `lossy`
 */
export function decodeUtf8(bytes: Buffer, source: string, lossy = false): string {
  if (!lossy && !isUtf8(bytes)) {
    const at = firstInvalidUtf8(bytes);
    const byte = bytes[at] ?? 0;
    throw new UsageError(
      `${source} is not valid UTF-8: byte 0x${byte.toString(16).padStart(2, '0')} at offset ${at}` +
        ' (convert it to UTF-8, or pass --lossy to replace invalid bytes with U+FFFD)',
    );
  }
  return bytes.toString('utf8');
}

/**
 * Reads a file, or standard input for `-`, as UTF-8.
 * @throws UsageError for a file that cannot be read or is not UTF-8
 */
export function readTextInput(path: string, lossy = false): string {
  const source = path === '-' ? 'standard input' : path;
  let bytes: Buffer;
  try {
    bytes = readFileSync(path === '-' ? 0 : path);
  } catch (err) {
    throw new UsageError(`cannot read ${source} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return decodeUtf8(bytes, source, lossy);
}
