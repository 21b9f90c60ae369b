/**
 * The shared real agent sessions (../shared/data/sessions, beside the repository; never copied
 * into it). Read-only test input. Where they are missing, the tests that read them are skipped
 * (`needsSharedSessions`) and the run ends with one line saying where they were looked for and how
 * many tests that skipped (shared-sessions-reporter.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestOptions } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    /** Set on the tests that read the shared sessions (inherited from a describe). */
    sharedSessions?: boolean;
  }
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Where the shared sessions live: `TEST_SHARED_SESSIONS` (resolved from the working directory) when
 * set, else ../shared/data/sessions resolved from the repository root.
 */
export const SESSIONS_DIR = process.env.TEST_SHARED_SESSIONS
  ? resolve(process.env.TEST_SHARED_SESSIONS)
  : resolve(repoRoot, '../shared/data/sessions');

export const SHARED_SESSIONS = [
  'pi-large-session.jsonl',
  'swe-agent-marshmallow-1867.traj',
  'swe-agent-function-calling-simple.traj',
] as const;
export type SharedSession = (typeof SHARED_SESSIONS)[number];

/** The shared sessions `dir` lacks, in `SHARED_SESSIONS` order: all of them when it does not exist. */
export function missingSessions(dir: string): SharedSession[] {
  return SHARED_SESSIONS.filter((name) => !existsSync(resolve(dir, name)));
}

/** Whether every shared session is at `SESSIONS_DIR`; checked once per test file. */
export const sharedSessionsAvailable = missingSessions(SESSIONS_DIR).length === 0;

/**
 * Options for a `describe` or `it` whose tests read the shared sessions: skipped when any is
 * missing, and marked so that the run's closing line counts them.
 */
export const needsSharedSessions: TestOptions = {
  skip: !sharedSessionsAvailable,
  meta: { sharedSessions: true },
};

/**
 * The one line a run ends with when it skipped tests for want of the shared sessions; null when
 * none is missing or no test was skipped.
 */
export function sessionsSkippedWarning(
  dir: string,
  missing: readonly string[],
  skipped: number,
): string | null {
  if (skipped === 0 || missing.length === 0) return null;
  const which = missing.length === SHARED_SESSIONS.length ? '' : ` (missing ${missing.join(', ')})`;
  return (
    `shared sessions not found at ${dir}${which}: ${skipped} test${skipped === 1 ? '' : 's'} skipped` +
    ' (TEST_SHARED_SESSIONS names another directory)'
  );
}

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
