/**
 * The API reference (`npm run docs`: TypeDoc over the package's entry points into docs/api/, not
 * committed) builds without a warning: every type the public surface names is exported, every
 * `{@link}` resolves. TypeDoc runs with `--emit none`, which checks all of it and writes nothing.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '../../..');
const typedoc = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8')) as {
  entryPoints: string[];
  treatWarningsAsErrors: boolean;
  out: string;
};
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { default: string }>;
};

describe('the API reference', () => {
  it('documents exactly the entry points of the exports map', () => {
    const compiled = Object.values(manifest.exports).flatMap((target) =>
      typeof target === 'string' ? [] : [target.default],
    );
    const documented = typedoc.entryPoints.map((file) => `./dist/${file.replace(/\.ts$/, '.js')}`);
    expect(documented.sort()).toStrictEqual(compiled.sort());
    expect(typedoc.out).toBe('docs/api');
  });

  it('builds without a warning', () => {
    expect(typedoc.treatWarningsAsErrors).toBe(true);
    const bin = join(dirname(require.resolve('typedoc/package.json')), 'bin', 'typedoc');
    const run = spawnSync(process.execPath, [bin, '--emit', 'none'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
    });
    const output = run.stdout + run.stderr;
    expect(output).not.toContain('[warning]');
    expect(output).not.toContain('[error]');
    expect(run.status).toBe(0);
  }, 120_000);
});
