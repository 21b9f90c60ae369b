/**
 * `npm run build`: the package compiled into `dist/` (or `--out-dir <dir>`), ready to run with
 * plain Node and to publish.
 *
 * 1. The output directory is emptied (a module deleted from the source must not linger in it).
 * 2. `tsc -p tsconfig.build.json`: CommonJS and type declarations, `dist/` mirroring the repository
 *    (`dist/src`, `dist/workflows`, `dist/activities`).
 * 3. The files the code reads by a path relative to its own ({@link ASSETS}) are copied to the same
 *    place under `dist/`.
 * 4. `dist/package.json` marks the output as CommonJS whatever the root says, and carries the
 *    version for code that reads `../package.json` from `dist/src`.
 * 5. The output is checked: no `import.meta` (CommonJS has none), and every asset is in place.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { runMain } from '../src/infra/errors';

const ROOT = resolve(__dirname, '..');

/**
 * Files the compiled code reads by a path relative to its own file, from the repository root: they
 * go to the same path under the output directory.
 */
export const ASSETS = [
  // src/store/migrate.ts: `join(__dirname, 'migrations')`.
  'src/store/migrations',
  // src/cli/demo.ts: the session `up` replays without a model.
  'samples/sample-session.json',
] as const;

function parseOutDir(argv: readonly string[]): string {
  const at = argv.indexOf('--out-dir');
  if (at < 0) return join(ROOT, 'dist');
  const value = argv[at + 1];
  if (!value) throw new Error('--out-dir needs a directory');
  return resolve(value);
}

/** Every `.js` file under `dir`. */
function javaScriptFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.js'))
    .map((name) => join(dir, name));
}

function build(outDir: string): void {
  // Emptying a directory that holds the repository would delete it.
  if (!relative(outDir, ROOT).startsWith('..')) throw new Error(`--out-dir ${outDir} holds the repository`);
  rmSync(outDir, { recursive: true, force: true });
  const tsc = spawnSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', outDir],
    { stdio: 'inherit' },
  );
  if (tsc.status !== 0) throw new Error(`tsc failed (exit ${tsc.status ?? tsc.signal})`);

  for (const asset of ASSETS) {
    const target = join(outDir, asset);
    mkdirSync(dirname(target), { recursive: true });
    cpSync(join(ROOT, asset), target, { recursive: true });
  }
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  writeFileSync(
    join(outDir, 'package.json'),
    JSON.stringify(
      {
        '//': 'Written by scripts/build.ts: the compiled code is CommonJS; the package is the parent directory.',
        type: 'commonjs',
        version,
      },
      null,
      2,
    ) + '\n',
  );

  const withImportMeta = javaScriptFiles(outDir).filter((file) =>
    readFileSync(file, 'utf8').includes('import.meta'),
  );
  if (withImportMeta.length > 0) {
    throw new Error(
      `import.meta in compiled code (CommonJS has none; use __dirname): ${withImportMeta.map((f) => relative(outDir, f)).join(', ')}`,
    );
  }
  const missing = ASSETS.filter((asset) => !existsSync(join(outDir, asset)));
  if (missing.length > 0) throw new Error(`assets missing from ${outDir}: ${missing.join(', ')}`);
}

runMain(async () => {
  const started = Date.now();
  const outDir = parseOutDir(process.argv.slice(2));
  build(outDir);
  console.log(
    `built ${relative(process.cwd(), outDir) || '.'} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
});
