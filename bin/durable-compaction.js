#!/usr/bin/env node
// Runs the TypeScript CLI through tsx (a dependency), so no build step is needed.
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');
const tsx = require.resolve('tsx/cli');
const result = spawnSync(
  process.execPath,
  [tsx, join(__dirname, '..', 'src', 'cli', 'main.ts'), ...process.argv.slice(2)],
  {
    stdio: 'inherit',
  },
);
process.exit(result.status ?? 1);
