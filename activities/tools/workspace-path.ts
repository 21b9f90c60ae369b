import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { ToolError } from './registry';

/**
 * Resolves a path the model gave against the workspace, refusing anything that escapes it:
 * absolute paths, `..` segments that leave it, NUL bytes, and symlinks (of the path or of its
 * nearest existing ancestor) that resolve outside. Safe by construction: every file tool goes
 * through here.
 */
export async function resolveInWorkspace(
  workspace: string | null,
  path: unknown,
  what = 'path',
): Promise<string> {
  if (!workspace) throw new ToolError('this conversation has no workspace, so file tools are not available');
  if (typeof path !== 'string' || path.length === 0)
    throw new ToolError(`${what} must be a non-empty string`);
  if (path.includes('\0')) throw new ToolError(`${what} contains a NUL byte`);
  if (isAbsolute(path))
    throw new ToolError(`${what} "${path}" is absolute; use a path relative to the workspace`);
  const root = await realpath(workspace).catch(() => {
    throw new ToolError(`the workspace ${workspace} does not exist`);
  });
  const target = resolve(root, path);
  if (!inside(root, target)) throw new ToolError(`${what} "${path}" is outside the workspace`);
  // Follow symlinks: the real location of the path, or of its nearest existing ancestor, must be inside.
  let probe = target;
  for (;;) {
    try {
      const real = await realpath(probe);
      if (!inside(root, real))
        throw new ToolError(`${what} "${path}" leads outside the workspace (through a symlink)`);
      break;
    } catch (err) {
      if (err instanceof ToolError) throw err;
      const parent = dirname(probe);
      if (parent === probe) break;
      probe = parent;
    }
  }
  return target;
}

function inside(root: string, target: string): boolean {
  const rel = relative(root, target);
  // A `..` segment leaves the root; a name that merely starts with dots (`..notes`, `....`) does not.
  return rel === '' || (!isAbsolute(rel) && !rel.split(sep).includes('..'));
}

/** The path as the model should see it: relative to the workspace, with forward slashes. */
export function displayPath(workspaceRoot: string, target: string): string {
  return relative(workspaceRoot, target).split(sep).join('/') || '.';
}
