import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * `git diff --stat` of the workspace when it is a git repository (seed 001: the full summary keeps
 * the git diff statistics), or null. Bounded in time and size; never fails the caller.
 */
export async function gitDiffStat(workspace: string | null): Promise<string | null> {
  if (!workspace) return null;
  try {
    await stat(join(workspace, '.git'));
  } catch {
    return null;
  }
  return new Promise((resolve) => {
    execFile(
      'git',
      ['-C', workspace, 'diff', '--stat', 'HEAD'],
      { timeout: 5000, maxBuffer: 256 * 1024 },
      (err, stdout) => resolve(err ? null : stdout.trim().slice(0, 4000) || null),
    );
  });
}
