/**
 * `durable-compaction send <id> <message>`: one round through the `sendMessage` Update; prints the
 * reply, the token usage (`41,200 / 128,000 · 32%`) and the compactions the round ran.
 */
import { WorkflowUpdateStage, type Client } from '@temporalio/client';
import type { Command } from 'commander';
import {
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
import { withProgress } from '../progress';

export interface SendOptions {
  id: string;
  message: string;
  /** While a compaction awaits approval: queue the message anyway instead of refusing. */
  queue?: boolean;
  /** Called on each change of phase while the round runs (progress). */
  onStatus?: (status: ConversationStatus) => void;
}

export type SendOutcome =
  | { queued: false; result: SendMessageResult }
  /** Accepted into the conversation's queue; it runs after the pending approval is decided. */
  | { queued: true; updateId: string };

/** The message a user gets when a compaction waits for a decision. */
export function awaitingApprovalMessage(
  id: string,
  status: Pick<ConversationStatus, 'awaitingApproval'>,
): string {
  const trigger = status.awaitingApproval?.trigger ?? 'automatic';
  return (
    `a ${trigger} compaction of ${id} awaits approval: a message sent now is queued until ` +
    `\`durable-compaction approve ${id}\` or \`reject ${id}\` (or resend with --queue)`
  );
}

/**
 * Sends one message and waits for the round's result. Refused (nothing sent) when the message is
 * empty, the conversation is unknown or ended, or a compaction awaits approval (unless `queue`).
 * @throws UsageError for bad input; other errors for runtime failures
 */
export async function sendMessage(client: Client, options: SendOptions): Promise<SendOutcome> {
  const { id, message } = options;
  if (message.trim() === '') throw new UsageError('message is empty: send some text');
  await requireRunning(client, id);
  const handle = client.workflow.getHandle(id);
  const status = await queryStatus(client, id);
  if (status.ended) throw new UsageError(`conversation ${id} has ended`);
  try {
    if (status.awaitingApproval) {
      if (!options.queue) throw new UsageError(awaitingApprovalMessage(id, status));
      const update = await handle.startUpdate(sendMessageUpdate, {
        args: [message],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      });
      return { queued: true, updateId: update.updateId };
    }
    const result = await withProgress(handle, options.onStatus, () =>
      handle.executeUpdate(sendMessageUpdate, { args: [message] }),
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

export function registerSend(program: Command): void {
  program
    .command('send')
    .description('send a message (the sendMessage Update); print the reply, token usage and compactions')
    .argument('<id>', 'conversation id')
    .argument('<message>', 'the user message')
    .option('--queue', 'queue the message even while a compaction awaits approval')
    .option('--json', 'print the round result as JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 answered (or queued), 1 the round failed, 2 bad input (nothing sent).',
    )
    .action(
      action(async (id: string, message: string, opts: { queue?: boolean; json?: boolean }) => {
        const outcome = await withClient((client) =>
          sendMessage(client, {
            id,
            message,
            queue: opts.queue,
            ...(opts.json ? {} : { onStatus: printPhase }),
          }),
        );
        if (opts.json) printJson(outcome.queued ? outcome : outcome.result);
        else if (outcome.queued)
          console.log(
            `queued (update ${outcome.updateId}): it runs once the compaction is approved or rejected`,
          );
        else for (const line of formatSendResult(id, outcome.result)) console.log(line);
      }),
    );
}
