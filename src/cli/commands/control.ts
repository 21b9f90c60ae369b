/**
 * The conversation's other Updates and its Query: `compact <id> [--focus]`, `review <id>`,
 * `approve <id> [--summary-file F]`, `reject <id>`, `status <id>`, `restore <id> --version N`,
 * `end <id>`.
 */
import type { Command } from 'commander';
import { summaryText } from '../../context/summary-edit';
import type {
  CompactionBrief,
  ConversationStatus,
  PendingReview,
  RestoreResult,
  ReviewResult,
} from '../../../workflows/definitions';
import {
  ConversationEndedError,
  type ConversationClient,
  type EndResult,
  type WatchedStatus,
} from '../../client';
import { action, intArgument, printJson, UsageError, withConversations, withStore } from '../client';
import { formatReview, type ReviewView } from '../review-view';
import { readTextInput } from '../text-input';
import { formatCompaction, formatStatus, formatTokens } from '../format';
import { printPhase } from './send';

type OnStatus = ((status: ConversationStatus) => void) | undefined;

/** A manual compaction (optional focus instructions for the summary); resolves when it is done. */
export async function compactConversation(
  conversations: ConversationClient,
  options: { id: string; focus?: string; onStatus?: OnStatus },
): Promise<CompactionBrief> {
  return conversations.compact(options.id, {
    ...(options.focus !== undefined ? { focus: options.focus } : {}),
    ...(options.onStatus ? { onStatus: options.onStatus } : {}),
  });
}

/**
 * Approves or rejects the compaction that awaits a decision: its summary under review (the
 * client's `review`; `summary` replaces it), else its confirmation (`approve` or `reject`). A
 * summary's review resolves when the compaction has ended (`review`).
 * @throws UsageError when a summary is given and none awaits review; the client's errors when
 *   nothing awaits a decision or the edited summary is refused (nothing changed)
 */
export async function decideCompaction(
  conversations: ConversationClient,
  options: { id: string; approve: boolean; summary?: string },
): Promise<{ decision: 'approved' | 'rejected'; review?: ReviewResult }> {
  const { id, approve, summary } = options;
  await conversations.ensureRunning(id);
  const status = await conversations.status(id);
  if (status.review) {
    const decision = approve ? ('approve' as const) : ('reject' as const);
    const result = await conversations.review(id, {
      decision,
      ...(summary !== undefined ? { summary } : {}),
    });
    return { decision: result.decision, review: result };
  }
  if (summary !== undefined) {
    if (status.ended) throw new ConversationEndedError(id);
    throw new UsageError(`no summary of ${id} awaits review: there is nothing to edit`);
  }
  return approve ? conversations.approve(id) : conversations.reject(id);
}

/**
 * The summary that awaits review, its whole text from the store (DATABASE_URL), else its preview.
 * @throws UsageError when none awaits review
 */
export async function pendingReview(
  conversations: ConversationClient,
  options: { id: string },
): Promise<ReviewView> {
  await conversations.ensureRunning(options.id);
  const status = await conversations.status(options.id);
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

/** The `status` Query, with where a running compaction is; an ended conversation answers too. */
export function conversationStatus(
  conversations: ConversationClient,
  options: { id: string },
): Promise<WatchedStatus> {
  return conversations.status(options.id);
}

/**
 * Makes an earlier version's content active again (as a new version).
 * @throws BadInputError from the client when the version does not exist
 */
export function restoreConversation(
  conversations: ConversationClient,
  options: { id: string; version: number },
): Promise<RestoreResult> {
  return conversations.restore(options.id, options.version);
}

/** Ends the conversation once its queued work is done. */
export function endConversation(
  conversations: ConversationClient,
  options: { id: string },
): Promise<EndResult> {
  return conversations.end(options.id);
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
        const brief = await withConversations((conversations) =>
          compactConversation(conversations, {
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
        const view = await withConversations((conversations) => pendingReview(conversations, { id }));
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
          const result = await withConversations((conversations) =>
            decideCompaction(conversations, { id, approve, ...(summary !== undefined ? { summary } : {}) }),
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
        const status = await withConversations((conversations) => conversationStatus(conversations, { id }));
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
        const result = await withConversations((conversations) =>
          restoreConversation(conversations, { id, version }),
        );
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
        const result = await withConversations((conversations) => endConversation(conversations, { id }));
        if (opts.json) printJson(result);
        else console.log(`ended after ${result.rounds} round${result.rounds === 1 ? '' : 's'}`);
      }),
    );
}
