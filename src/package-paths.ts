/**
 * Where the package's own files are, whether the code runs from source or compiled.
 *
 * From source (tsx, vitest) this file is `src/package-paths.ts` and the project's modules are `.ts`
 * files under the repository root; compiled (`npm run build`) it is `dist/src/package-paths.js` and
 * they are `.js` files under `dist/`, which mirrors the repository. Code that names a module by its
 * path — the workflows entry webpack bundles, the modules a worker preloads — asks
 * {@link codeModule} instead of writing `.ts`; code that reads the package's own files asks
 * {@link PACKAGE_ROOT}.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Whether this is the compiled code (a `.js` file under `dist/`). */
const COMPILED = __filename.endsWith('.js');

/** The root of the running code's tree: the repository from source, `dist/` compiled. */
export const CODE_ROOT = join(__dirname, '..');

/** The package's root, where its package.json is (the repository, or where npm installed it). */
export const PACKAGE_ROOT = COMPILED ? join(CODE_ROOT, '..') : CODE_ROOT;

/**
 * A module of the project by its path from the code root, without extension, as the running code
 * has it: `codeModule('workflows', 'index')` is `<repository>/workflows/index.ts` from source and
 * `<package>/dist/workflows/index.js` compiled.
 */
export function codeModule(...segments: string[]): string {
  return join(CODE_ROOT, ...segments) + (COMPILED ? '.js' : '.ts');
}

/** The package's version (package.json), read once. */
export const PACKAGE_VERSION: string = (
  JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
