/**
 * `durable-compaction send <id> <message>`: one round through the `sendMessage` Update; prints the
 * reply, the token usage (`41,200 / 128,000 · 32%`) and the compactions the round ran. While a
 * compaction awaits approval or review the message is queued, and the command says so.
 */
import { WorkflowUpdateStage, type Client } from '@temporalio/client';
import type { Command } from 'commander';
import {
  messageBody,
  sendMessageUpdate,
  type ConversationStatus,
  type SendMessageResult,
} from '../../../workflows/definitions';
import {
  action,
  explainUpdateFailure,
  printJson,
  queryStatus,
  requireRunning,
  UsageError,
  withClient,
} from '../client';
import { formatPhase, formatSendResult } from '../format';
import { withProgress } from '../../client/progress';
import { newUpdateId } from '../../update-ids';
import { readTextInput } from '../text-input';
import { claimCheckOptionsFromEnv } from '../../infra/claim-check';

export interface SendOptions {
  id: string;
  message: string;
  /** Called on each change of phase while the round runs (progress). */
  onStatus?: (status: ConversationStatus) => void;
}

export type SendOutcome =
  | { queued: false; result: SendMessageResult }
  /**
   * Accepted into the conversation's queue while a compaction awaits approval: the round runs once
   * it is approved or rejected (its result: the Update `updateId`).
   */
  | { queued: true; updateId: string; trigger: string; awaits: 'approval' | 'review' };

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
 * A message sent inline (DC_CLAIM_CHECK=off) travels in the Update's payload, which Temporal limits
 * to 2 MB (its blob size limit; larger ones fail the workflow task): refused above this, before
 * anything is sent. By reference (the default) only `maxInputChars` bounds it.
 */
export const MAX_MESSAGE_BYTES = 1_500_000;

/**
 * Refuses a message the conversation would refuse (`maxInputChars`) or that could not travel,
 * before anything is sent or stored.
 * @throws UsageError naming the size and the limit
 */
export function checkMessageSize(
  message: string,
  maxInputChars: number | undefined,
  byReference: boolean = claimCheckOptionsFromEnv().offload !== false,
): void {
  if (maxInputChars !== undefined && message.length > maxInputChars)
    throw new UsageError(
      `message is too long: ${message.length} characters, the limit is ${maxInputChars} (maxInputChars)`,
    );
  if (byReference) return;
  const bytes = Buffer.byteLength(message, 'utf8');
  if (bytes > MAX_MESSAGE_BYTES)
    throw new UsageError(
      `message is too long: ${bytes} bytes, the limit is ${MAX_MESSAGE_BYTES} (with DC_CLAIM_CHECK=off a message travels in a Temporal payload, at most 2 MB)`,
    );
}

/**
 * Sends one message and waits for the round's result; while a compaction awaits approval or review, queues
 * it instead (the round runs once the compaction is decided). Refused (nothing sent) when the
 * message is empty or the conversation is unknown or ended.
 * @throws UsageError for bad input; other errors for runtime failures
 */
export async function sendMessage(client: Client, options: SendOptions): Promise<SendOutcome> {
  const { id, message } = options;
  if (message.trim() === '') throw new UsageError('message is empty: send some text');
  await requireRunning(client, id);
  const handle = client.workflow.getHandle(id);
  const status = await queryStatus(client, id);
  if (status.ended) throw new UsageError(`conversation ${id} has ended`);
  checkMessageSize(message, status.maxInputChars);
  try {
    // Waiting here would wait on a person: hand the message to the workflow's queue and return.
    const waiting = status.awaitingApproval
      ? { trigger: status.awaitingApproval.trigger, awaits: 'approval' as const }
      : status.review
        ? { trigger: status.review.trigger, awaits: 'review' as const }
        : null;
    if (waiting) {
      const update = await handle.startUpdate(sendMessageUpdate, {
        updateId: newUpdateId(),
        args: [messageBody(message)],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      });
      return { queued: true, updateId: update.updateId, ...waiting };
    }
    const result = await withProgress(handle, options.onStatus, () =>
      handle.executeUpdate(sendMessageUpdate, {
        updateId: newUpdateId(),
        args: [messageBody(message)],
      }),
    );
    return { queued: false, result };
  } catch (err) {
    throw explainUpdateFailure(err);
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
        const outcome = await withClient((client) =>
          sendMessage(client, { id, message, ...(opts.json ? {} : { onStatus: printPhase }) }),
        );
        if (opts.json) printJson(outcome.queued ? outcome : outcome.result);
        else if (outcome.queued) console.log(queuedMessage(id, outcome.trigger, 'cli', outcome.awaits));
        else for (const line of formatSendResult(id, outcome.result)) console.log(line);
      }),
    );
}
