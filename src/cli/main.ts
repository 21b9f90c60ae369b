#!/usr/bin/env node
/** The command line: `durable-compaction <command>` (`npm run cli -- <command>`; `npm start` = `up`). */
import { Command } from 'commander';
import { runMain } from '../infra/errors';
import { registerReplay } from './commands/replay';
import { registerUp } from './commands/up';
import { registerWorker } from './commands/worker';

const program = new Command();
program
  .name('durable-compaction')
  .description('Durable context compaction for long-running LLM agents (Temporal + PostgreSQL)')
  .showHelpAfterError();
registerUp(program);
registerWorker(program);
registerReplay(program);

runMain(async () => {
  await program.parseAsync(process.argv);
});
