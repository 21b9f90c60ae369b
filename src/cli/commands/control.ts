/**
 * The conversation's other Updates and its Query: `compact <id> [--focus]`, `review <id>`,
 * `approve <id> [--summary-file F]`, `reject <id>`, `status <id>`, `restore <id> --version N`,
 * `end <id>`.
 */
import { type Client, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Command } from 'commander';
import { summaryText } from '../../context/summary-edit';
import {
  approveCompactionUpdate,
  CLAIM,
  compactUpdate,
  endUpdate,
  NO_REVIEW_PENDING,
  restoreUpdate,
  reviewCompactionUpdate,
  type CompactionBrief,
  type ConversationStatus,
  type PendingReview,
  type ReviewResult,
} from '../../../workflows/definitions';
import {
  action,
  describeConversation,
  explainUpdateFailure,
  intArgument,
  printJson,
  queryStatus,
  requireRunning,
  UsageError,
  withClient,
  withStore,
} from '../client';
import { formatReview, type ReviewView } from '../review-view';
import { readTextInput } from '../text-input';
import { formatCompaction, formatStatus, formatTokens } from '../format';
import { withProgress } from '../../client/progress';
import { compactionProgress, type WatchedStatus } from '../../client/compaction-progress';
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
 * Approves or rejects the compaction that awaits a decision: its summary under review (the
 * child's `reviewCompaction` Update; `summary` replaces it), else its confirmation
 * (`approveCompaction`). A summary's review resolves when the compaction has ended (`review`).
 * @throws UsageError when none awaits one, or when the edited summary is refused (nothing changed)
 */
export async function decideCompaction(
  client: Client,
  options: { id: string; approve: boolean; summary?: string },
): Promise<{ decision: 'approved' | 'rejected'; review?: ReviewResult }> {
  return update(client, options.id, async () => {
    const { review } = await queryStatus(client, options.id);
    if (review) {
      const answer = {
        decision: options.approve ? ('approve' as const) : ('reject' as const),
        // An edited summary is text: by reference (see CLAIM).
        ...(options.summary !== undefined ? { ...CLAIM, summary: options.summary } : {}),
      };
      try {
        const result = await client.workflow
          .getHandle(review.workflowId)
          .executeUpdate(reviewCompactionUpdate, { args: [answer] });
        return { decision: result.decision, review: result };
      } catch (err) {
        throw explainReviewFailure(err, options.id);
      }
    }
    if (options.summary !== undefined)
      throw new UsageError(`no summary of ${options.id} awaits review: there is nothing to edit`);
    return client.workflow
      .getHandle(options.id)
      .executeUpdate(approveCompactionUpdate, { args: [{ approve: options.approve }] });
  });
}

/**
 * An answer to a review that failed, as the user should see it: a refused edit says why; a review
 * that ended between the status query and the answer (decided by someone else, or timed out) says
 * so. Both are bad input (exit 2): nothing changed.
 */
export function explainReviewFailure(err: unknown, id: string): unknown {
  const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
  if (cause instanceof ApplicationFailure && cause.type === 'SUMMARY_EDIT_REFUSED')
    return new UsageError(cause.message);
  const gone =
    err instanceof WorkflowNotFoundError ||
    (cause instanceof ApplicationFailure && cause.type === NO_REVIEW_PENDING);
  if (gone)
    return new UsageError(
      `no compaction of ${id} awaits review any more: it was decided or timed out meanwhile (\`durable-compaction status ${id}\`)`,
    );
  return err;
}

/**
 * The summary that awaits review, its whole text from the store (DATABASE_URL), else its preview.
 * @throws UsageError when none awaits review
 */
export async function pendingReview(client: Client, options: { id: string }): Promise<ReviewView> {
  await requireRunning(client, options.id);
  const status = await queryStatus(client, options.id);
  const review: PendingReview | null | undefined = status.review;
  if (!review) {
    throw new UsageError(
      `no compaction of ${options.id} awaits review` +
        (status.awaitingApproval ? ' (one awaits approval: approve or reject it)' : ''),
    );
  }
  const view = { ...review, summary: review.summaryPreview, summaryIsPreview: true };
  if (!review.summaryItemId || !process.env.DATABASE_URL) return view;
  const id = review.summaryItemId;
  const [item] = await withStore((store) => store.getItemsIfPresent([id]));
  return item?.type === 'COMPACTION_SUMMARY'
    ? { ...view, summary: summaryText(item), summaryIsPreview: false }
    : view;
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

/** `approved (edited summary): committed, 12,000 → 3,100 tokens` */
function formatReviewResult(r: ReviewResult): string {
  const outcome =
    r.status === 'committed'
      ? `committed, ${formatTokens(r.tokensBefore)} → ${formatTokens(r.tokensAfter)} tokens`
      : `${r.status.replace('_', ' ')}${r.reason ? ` (${r.reason})` : ''}`;
  return `${r.decision}${r.edited ? ' (edited summary)' : ''}: ${outcome}`;
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

  program
    .command('review')
    .description('show the summary that awaits review (review_summary): tokens, what it removes, its text')
    .argument('<id>', 'conversation id')
    .option('--json', 'print the review as JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 shown, 1 failure, 2 unknown conversation or nothing awaits review.',
    )
    .action(
      action(async (id: string, opts: { json?: boolean }) => {
        const view = await withClient((client) => pendingReview(client, { id }));
        if (opts.json) printJson(view);
        else for (const line of formatReview(view)) console.log(line);
      }),
    );

  for (const [name, approve] of [
    ['approve', true],
    ['reject', false],
  ] as const) {
    const command = program
      .command(name)
      .description(
        `${name} the compaction that awaits a decision: its summary under review (review_summary; ` +
          `reject rolls it back, then on_reject applies), or its confirmation (require_confirmation)`,
      )
      .argument('<id>', 'conversation id');
    if (approve)
      command.option(
        '--summary-file <file>',
        'commit this summary instead of the proposed one (checked: not empty, within the summary budget)',
      );
    command
      .option('--json', 'print the decision as JSON')
      .addHelpText('after', EXIT_CODES.replace('conversation;', 'conversation, a refused summary;'))
      .action(
        action(async (id: string, opts: { json?: boolean; summaryFile?: string }) => {
          const summary = opts.summaryFile === undefined ? undefined : readTextInput(opts.summaryFile);
          const result = await withClient((client) =>
            decideCompaction(client, { id, approve, ...(summary !== undefined ? { summary } : {}) }),
          );
          if (opts.json) printJson(result);
          else if (result.review) console.log(formatReviewResult(result.review));
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
