/** Small helpers of tests that read files and expect errors. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh temporary directory and a function that writes a file into it, returning its path. */
export function tempFiles(prefix: string): (name: string, text: string) => string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return (name, text) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
}

/** The error `fn` throws (fails the test when it does not throw). */
export function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an error');
}

/** The values of a JSONL text, one per line. */
export function jsonlValues(text: string): unknown[] {
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as unknown);
}
