#!/usr/bin/env node
// The installed command: runs the compiled CLI (dist/src/cli/main.js, made by `npm run build`).
// From a checkout without a build, `npm run cli -- <command>` runs the TypeScript source with tsx.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const main = join(__dirname, '..', 'dist', 'src', 'cli', 'main.js');
if (!existsSync(main)) {
  console.error(
    `durable-compaction: the compiled CLI is missing (${main}).\n` +
      'Run `npm run build` in the package first, or `npm run cli -- <command>` to run it from source.',
  );
  process.exit(1);
}
require(main);
