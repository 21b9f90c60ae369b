/**
 * `durable-compaction send <id> <message>`: one round through the `sendMessage` Update; prints the
 * reply, the token usage (`41,200 / 128,000 · 32%`) and the compactions the round ran. While a
 * compaction awaits approval or review the message is queued, and the command says so.
 */
import type { Command } from 'commander';
import type { ConversationStatus, SendMessageResult } from '../../../workflows/definitions';
import type { ConversationClient } from '../../client';
import { action, printJson, UsageError, withConversations } from '../client';
import { formatPhase, formatSendResult } from '../format';
import { readTextInput } from '../text-input';

export interface SendOptions {
  id: string;
  message: string;
  /** Called on each change of phase while the round runs (progress). */
  onStatus?: (status: ConversationStatus) => void;
}

export type SendOutcome =
  | { queued: false; result: SendMessageResult }
  /**
   * Accepted into the conversation's queue while a compaction awaits approval or review: the round
   * runs once it is decided (`result()`; its Update is `updateId`).
   */
  | {
      queued: true;
      updateId: string;
      trigger: string;
      awaits: 'approval' | 'review';
      result(): Promise<SendMessageResult>;
    };

/** What the user is told when the message was queued behind a compaction that awaits a person. */
export function queuedMessage(
  id: string,
  trigger: string,
  how: 'cli' | 'chat' = 'cli',
  awaits: 'approval' | 'review' = 'approval',
): string {
  const decide =
    how === 'chat'
      ? '/approve or /reject'
      : awaits === 'review'
        ? `\`durable-compaction review ${id}\`, then \`approve ${id}\` or \`reject ${id}\``
        : `\`durable-compaction approve ${id}\` or \`reject ${id}\``;
  return (
    `queued: a ${trigger} compaction of ${id} awaits ${awaits}; ` +
    `the message is answered once it is approved or rejected (${decide})`
  );
}

/**
 * Sends one message and waits for the round's result; while a compaction awaits approval or
 * review, leaves it queued instead (the round runs once the compaction is decided). Refused
 * (nothing sent) when the message is empty or too long, or the conversation is unknown or ended.
 * @throws ConversationError from the client (bad input, or the round's failure)
 */
export async function sendMessage(
  conversations: ConversationClient,
  options: SendOptions,
): Promise<SendOutcome> {
  const { id, message } = options;
  // Waiting here would wait on a person: the message stays in the workflow's queue.
  const queued = await conversations.queue(id, message);
  if (queued.awaiting)
    return { queued: true, updateId: queued.updateId, ...queued.awaiting, result: queued.result };
  const watcher = options.onStatus ? conversations.watchStatus(id, options.onStatus) : null;
  try {
    return { queued: false, result: await queued.result() };
  } finally {
    await watcher?.stop();
  }
}

/** Prints a phase change on stderr (progress never mixes with the reply on stdout). */
export function printPhase(status: ConversationStatus): void {
  const line = formatPhase(status);
  if (line) console.error(`… ${line}`);
}

/**
 * The message from the argument, `--file`, or standard input (`-`): one of them. A long message
 * goes through a file or a pipe, past the shell's limit on arguments.
 * @throws UsageError for none or both, or a file that cannot be read or is not UTF-8
 */
export function messageFrom(argument: string | undefined, file: string | undefined): string {
  if (argument !== undefined && file !== undefined)
    throw new UsageError('give the message as an argument or with --file, not both');
  if (file !== undefined) return readTextInput(file);
  if (argument === '-') return readTextInput('-');
  if (argument === undefined)
    throw new UsageError(
      'missing message: give it as an argument, with --file <path>, or - for standard input',
    );
  return argument;
}

export function registerSend(program: Command): void {
  program
    .command('send')
    .description('send a message (the sendMessage Update); print the reply, token usage and compactions')
    .argument('<id>', 'conversation id')
    .argument('[message]', 'the user message (- reads it from standard input)')
    .option('--file <path>', 'read the message from a file (UTF-8; - for standard input)')
    .option('--json', 'print the round result as JSON')
    .addHelpText(
      'after',
      '\nWhile a compaction awaits approval or review the message is queued (printed as such) and answered once\n' +
        'the compaction is approved or rejected.\n' +
        'Exit codes: 0 answered or queued, 1 the round failed, 2 bad input (nothing sent).',
    )
    .action(
      action(async (id: string, argument: string | undefined, opts: { json?: boolean; file?: string }) => {
        const message = messageFrom(argument, opts.file);
        const outcome = await withConversations((conversations) =>
          sendMessage(conversations, { id, message, ...(opts.json ? {} : { onStatus: printPhase }) }),
        );
        if (opts.json) printJson(outcome.queued ? outcome : outcome.result);
        else if (outcome.queued) console.log(queuedMessage(id, outcome.trigger, 'cli', outcome.awaits));
        else for (const line of formatSendResult(id, outcome.result)) console.log(line);
      }),
    );
}
