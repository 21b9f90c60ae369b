#!/usr/bin/env node
/** The command line: `durable-compaction <command>` (`npm run cli -- <command>`; `npm start` = `up`). */
import { Command } from 'commander';
import { runMain } from '../infra/errors';
import { registerChat } from './commands/chat';
import { registerCodecServer } from './commands/codec-server';
import { registerControl } from './commands/control';
import { registerEval } from './commands/eval';
import { registerEvents } from './commands/events';
import { registerExport } from './commands/export';
import { registerImport } from './commands/import';
import { registerInspect } from './commands/inspect';
import { registerRecall } from './commands/recall';
import { registerReplay } from './commands/replay';
import { registerSend } from './commands/send';
import { registerStart } from './commands/start';
import { registerUp } from './commands/up';
import { registerWorker } from './commands/worker';

// `durable-compaction … | head`: the reader went away; nothing more to say, and no stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
}

const program = new Command();
program
  .name('durable-compaction')
  .description('Durable context compaction for long-running LLM agents (Temporal + PostgreSQL)')
  .showHelpAfterError()
  // Usage errors (unknown option, missing argument) are bad input: exit 2, like the commands' own.
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));
registerUp(program);
registerWorker(program);
registerReplay(program);
registerStart(program);
registerSend(program);
registerChat(program);
registerControl(program);
registerExport(program);
registerImport(program);
registerInspect(program);
registerRecall(program);
registerEvents(program);
registerEval(program);
registerCodecServer(program);

runMain(async () => {
  await program.parseAsync(process.argv);
});
