/**
 * The shared real agent sessions (../shared/data/sessions, beside the repository; never copied
 * into it). Read-only test input.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Where the shared sessions live, resolved from the repository root. */
export const SESSIONS_DIR = resolve(repoRoot, '../shared/data/sessions');

export const SHARED_SESSIONS = [
  'pi-large-session.jsonl',
  'swe-agent-marshmallow-1867.traj',
  'swe-agent-function-calling-simple.traj',
] as const;
export type SharedSession = (typeof SHARED_SESSIONS)[number];

export function readSession(name: SharedSession): string {
  return readFileSync(resolve(SESSIONS_DIR, name), 'utf8');
}

/** The source parsed as the exporters must give it back: JSON value, or JSONL as a list of lines. */
export function parseSessionText(name: string, text: string): unknown {
  if (name.endsWith('.jsonl')) {
    return text
      .split('\n')
      .filter((line) => line.trim().length > 0)
      .map((line) => JSON.parse(line) as unknown);
  }
  return JSON.parse(text) as unknown;
}
