/**
 * The client commands as a user runs them (a process, no Temporal): bad input is one line on
 * stderr and exit 2; an unreachable server exit 1; --help exit 0.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The CLI from source, as `npm run cli` runs it (the bin runs the compiled one: test/unit/package).
const cli = join(__dirname, '..', '..', '..', 'src', 'cli', 'main.ts');
const dir = mkdtempSync(join(tmpdir(), 'dc-cli-exit-'));

function run(
  args: string[],
  env: Record<string, string> = {},
): { code: number | null; stderr: string; stdout: string } {
  const clean = { ...process.env };
  for (const key of ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'DEBUG', 'DC_COMPACTION_CONFIG']) delete clean[key];
  const r = spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], {
    env: { ...clean, TEMPORAL_ADDRESS: '127.0.0.1:1', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stderr: r.stderr, stdout: r.stdout };
}

const badSession = join(dir, 'bad.jsonl');
writeFileSync(badSession, '{"role":"system","content":"s"}\n{"role":"user","content":"x"\n');
const badConfig = join(dir, 'bad.yaml');
writeFileSync(badConfig, 'context_compaction:\n  trigger_ratio: 1.2\n');

describe('exit codes', () => {
  it.each([
    ['start --window abc', ['start', '--window', 'abc'], /^error: --window must be a whole number/],
    [
      'start with an out-of-range config value',
      ['start', '--config', badConfig],
      /^error: invalid compaction config: .*bad.yaml: context_compaction.trigger_ratio: triggerRatio must be greater than 0 and at most 1 \(got 1.2\)$/,
    ],
    [
      'import of a malformed file',
      ['import', badSession],
      /^error: cannot import .*bad.jsonl: line 2: not valid JSON/,
    ],
    ['inspect without DATABASE_URL', ['inspect', 'conv-1'], /^error: DATABASE_URL is not set/],
    [
      'restore --version 0',
      ['restore', 'conv-1', '--version', '0'],
      /^error: --version must be a whole number ≥ 1/,
    ],
  ])('%s: one line, exit 2', (_name, args, message) => {
    const r = run(args);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(message);
  });

  it('a missing argument is a usage error: exit 2', () => {
    const r = run(['send', 'conv-1']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      'error: missing message: give it as an argument, with --file <path>, or - for standard input',
    );
  });

  it('an unreachable Temporal server is a runtime failure: exit 1', () => {
    const r = run(['status', 'conv-1']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^error: cannot reach the Temporal server at 127.0.0.1:1/);
  });

  it('--help: exit 0 with the exit codes documented', () => {
    const r = run(['compact', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--focus <text>/);
    expect(r.stdout).toMatch(/Exit codes: 0 done, 1 failure, 2 bad input/);
  });
});
