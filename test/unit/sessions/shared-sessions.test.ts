/**
 * The shared sessions helper (test/support/sessions.ts): which sessions a directory lacks, the one
 * line a run ends with when tests were skipped for want of them, and — through a real vitest run
 * with TEST_SHARED_SESSIONS pointing at an empty directory — that the golden tests skip and the run
 * says where the sessions were looked for.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  missingSessions,
  needsSharedSessions,
  SESSIONS_DIR,
  sessionsSkippedWarning,
  SHARED_SESSIONS,
} from '../../support/sessions';

const ROOT = join(__dirname, '..', '..', '..');

describe('missingSessions', () => {
  it('names every session for a directory that does not exist', () => {
    expect(missingSessions(join(tmpdir(), 'dc-no-such-dir', 'sessions'))).toEqual([...SHARED_SESSIONS]);
  });

  it('names only the sessions a directory lacks, in order', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dc-sessions-'));
    writeFileSync(join(dir, 'swe-agent-marshmallow-1867.traj'), '{}');
    expect(missingSessions(dir)).toEqual([
      'pi-large-session.jsonl',
      'swe-agent-function-calling-simple.traj',
    ]);
  });

  it('decides whether the tests that need them are skipped', () => {
    expect(needsSharedSessions.skip).toBe(missingSessions(SESSIONS_DIR).length > 0);
    expect(needsSharedSessions.meta).toEqual({ sharedSessions: true });
  });
});

describe('sessionsSkippedWarning', () => {
  it.each([
    [
      'all missing',
      [...SHARED_SESSIONS],
      14,
      'shared sessions not found at /x/sessions: 14 tests skipped (TEST_SHARED_SESSIONS names another directory)',
    ],
    [
      'one missing, one test',
      ['pi-large-session.jsonl'],
      1,
      'shared sessions not found at /x/sessions (missing pi-large-session.jsonl): 1 test skipped ' +
        '(TEST_SHARED_SESSIONS names another directory)',
    ],
    ['none skipped', [...SHARED_SESSIONS], 0, null],
    ['none missing', [], 3, null],
  ])('%s', (_, missing, skipped, expected) => {
    expect(sessionsSkippedWarning('/x/sessions', missing, skipped)).toBe(expected);
  });
});

describe('a run without the shared sessions', () => {
  it('skips the golden tests and ends with one line naming the directory', () => {
    const empty = mkdtempSync(join(tmpdir(), 'dc-no-sessions-'));
    // A clean environment: the child is a vitest run of its own, not a worker of this one.
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([key]) => !key.startsWith('VITEST') && key !== 'NODE_OPTIONS'),
    );
    const r = spawnSync(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
        'run',
        '--project',
        'unit',
        'test/unit/sessions/golden-sessions.test.ts',
      ],
      {
        cwd: ROOT,
        env: { ...env, TEST_SHARED_SESSIONS: empty, CI: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    const output = `${r.stdout}\n${r.stderr}`;
    expect(r.status, output).toBe(0);
    expect(output).toMatch(/Tests\s+14 skipped \(14\)/);
    const warnings = output.split('\n').filter((line) => line.includes('shared sessions not found'));
    expect(warnings).toEqual([
      `shared sessions not found at ${empty}: 14 tests skipped (TEST_SHARED_SESSIONS names another directory)`,
    ]);
  });
});
