/**
 * The conversation's other Updates and its Query: `compact <id> [--focus]`, `approve <id>`,
 * `reject <id>`, `status <id>`, `restore <id> --version N`, `end <id>`.
 */
import type { Client } from '@temporalio/client';
import type { Command } from 'commander';
import {
  approveCompactionUpdate,
  CLAIM,
  compactUpdate,
  endUpdate,
  restoreUpdate,
  type CompactionBrief,
  type ConversationStatus,
} from '../../../workflows/definitions';
import {
  action,
  describeConversation,
  explainUpdateFailure,
  intArgument,
  printJson,
  queryStatus,
  requireRunning,
  withClient,
} from '../client';
import { formatCompaction, formatStatus, formatTokens } from '../format';
import { withProgress } from '../progress';
import { compactionProgress, type WatchedStatus } from '../compaction-progress';
import { printPhase } from './send';

type OnStatus = ((status: ConversationStatus) => void) | undefined;

/** Runs an Update on a running conversation, turning its failures into what the user should see. */
async function update<T>(client: Client, id: string, run: () => Promise<T>): Promise<T> {
  await requireRunning(client, id);
  try {
    return await run();
  } catch (err) {
    throw explainUpdateFailure(err);
  }
}

/** A manual compaction (optional focus instructions for the summary); resolves when it is done. */
export async function compactConversation(
  client: Client,
  options: { id: string; focus?: string; onStatus?: OnStatus },
): Promise<CompactionBrief> {
  const handle = client.workflow.getHandle(options.id);
  return update(client, options.id, () =>
    withProgress(handle, options.onStatus, () =>
      handle.executeUpdate(compactUpdate, {
        // A focus is the user's text: by reference (see CLAIM).
        args: [options.focus === undefined ? {} : { ...CLAIM, focus: options.focus }],
      }),
    ),
  );
}

/**
 * Approves or rejects the compaction that awaits a decision.
 * @throws UsageError when none awaits one
 */
export async function decideCompaction(
  client: Client,
  options: { id: string; approve: boolean },
): Promise<{ decision: 'approved' | 'rejected' }> {
  return update(client, options.id, () =>
    client.workflow
      .getHandle(options.id)
      .executeUpdate(approveCompactionUpdate, { args: [{ approve: options.approve }] }),
  );
}

/** The `status` Query; an ended conversation answers too (from its closed workflow). */
export async function conversationStatus(client: Client, options: { id: string }): Promise<WatchedStatus> {
  await describeConversation(client, options.id);
  const status: WatchedStatus = await queryStatus(client, options.id);
  // A compaction running: where its child is.
  if (status.compaction)
    status.compactionProgress = await compactionProgress(client.workflow, status.compaction);
  return status;
}

/**
 * Makes an earlier version's content active again (as a new version).
 * @throws UsageError when the version does not exist
 */
export async function restoreConversation(
  client: Client,
  options: { id: string; version: number },
): Promise<{ version: number; activeVersion: number; tokens: number }> {
  return update(client, options.id, () =>
    client.workflow
      .getHandle(options.id)
      .executeUpdate(restoreUpdate, { args: [{ version: options.version }] }),
  );
}

/** Ends the conversation once its queued work is done. */
export async function endConversation(client: Client, options: { id: string }): Promise<{ rounds: number }> {
  return update(client, options.id, () => client.workflow.getHandle(options.id).executeUpdate(endUpdate));
}

const EXIT_CODES =
  '\nExit codes: 0 done, 1 failure, 2 bad input (unknown or ended conversation; nothing changed).';

export function registerControl(program: Command): void {
  program
    .command('compact')
    .description('compact the context now (the compact Update)')
    .argument('<id>', 'conversation id')
    .option('--focus <text>', 'what the summary should keep in focus')
    .option('--json', 'print the compaction as JSON')
    .addHelpText('after', EXIT_CODES)
    .action(
      action(async (id: string, opts: { focus?: string; json?: boolean }) => {
        const brief = await withClient((client) =>
          compactConversation(client, {
            id,
            ...(opts.focus !== undefined ? { focus: opts.focus } : {}),
            onStatus: opts.json ? undefined : printPhase,
          }),
        );
        if (opts.json) printJson(brief);
        else console.log(formatCompaction(brief));
      }),
    );

  for (const [name, approve] of [
    ['approve', true],
    ['reject', false],
  ] as const) {
    program
      .command(name)
      .description(`${name} the compaction that awaits approval (the approveCompaction Update)`)
      .argument('<id>', 'conversation id')
      .option('--json', 'print the decision as JSON')
      .addHelpText('after', EXIT_CODES)
      .action(
        action(async (id: string, opts: { json?: boolean }) => {
          const result = await withClient((client) => decideCompaction(client, { id, approve }));
          if (opts.json) printJson(result);
          else console.log(`${result.decision}`);
        }),
      );
  }

  program
    .command('status')
    .description('show a conversation: phase, tokens, rounds, compactions, cooldown, approval')
    .argument('<id>', 'conversation id')
    .option('--json', 'print the status as JSON')
    .addHelpText('after', '\nExit codes: 0 shown, 1 failure, 2 unknown conversation.')
    .action(
      action(async (id: string, opts: { json?: boolean }) => {
        const status = await withClient((client) => conversationStatus(client, { id }));
        if (opts.json) printJson(status);
        else for (const line of formatStatus(status)) console.log(line);
      }),
    );

  program
    .command('restore')
    .description('make an earlier context version active again (undo a compaction)')
    .argument('<id>', 'conversation id')
    .requiredOption('--version <n>', 'the version to restore (see `inspect <id>`)')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', EXIT_CODES.replace('conversation;', 'conversation or version;'))
    .action(
      action(async (id: string, opts: { version: string; json?: boolean }) => {
        const version = intArgument('--version', opts.version);
        const result = await withClient((client) => restoreConversation(client, { id, version }));
        if (opts.json) printJson(result);
        else
          console.log(
            `restored version ${result.version} as version ${result.activeVersion} (${formatTokens(result.tokens)} tokens)`,
          );
      }),
    );

  program
    .command('end')
    .description('end the conversation (its queued messages are answered first)')
    .argument('<id>', 'conversation id')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', EXIT_CODES)
    .action(
      action(async (id: string, opts: { json?: boolean }) => {
        const result = await withClient((client) => endConversation(client, { id }));
        if (opts.json) printJson(result);
        else console.log(`ended after ${result.rounds} round${result.rounds === 1 ? '' : 's'}`);
      }),
    );
}
