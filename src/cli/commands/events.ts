/**
 * `durable-compaction events <id> [--follow] [--json] [--since N]`: the conversation's events
 * (compactions, their meta phases when `emitCompactionMetaEvents` is on, cooldowns, the loop
 * guard, approvals, restores), one line each. `--follow` prints new ones as they come until
 * Ctrl-C or the conversation's end, from a cursor that holds across continue-as-new: nothing is
 * printed twice or skipped.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import type { ConversationEvent } from '../../../workflows/definitions';
import type { ConversationClient } from '../../client';
import { action, UsageError, withConversations } from '../client';
import { formatEvent } from '../format';

/** How often `--follow` asks for new events. */
export const FOLLOW_POLL_MS = 500;

export interface FollowOptions {
  id: string;
  /** The cursor to start from (default 0: the oldest event kept). */
  since?: number;
  follow?: boolean;
  /** Called with each event and its cursor, in order. */
  onEvent: (event: ConversationEvent, cursor: number) => void;
  /** Ends `follow` (e.g. on Ctrl-C). */
  stopped?: () => boolean;
  pollMs?: number;
}

/**
 * Reads the events from `since`, then, with `follow`, keeps reading until `stopped()` or the
 * conversation has ended and every event is read. Returns the next cursor.
 * @throws ConversationNotFoundError for an unknown conversation
 */
export async function readEvents(conversations: ConversationClient, options: FollowOptions): Promise<number> {
  let cursor = options.since ?? 0;
  for (;;) {
    const page = await conversations.events(options.id, { since: cursor });
    const running = page.running;
    page.events.forEach((event, i) => options.onEvent(event, page.from + i));
    cursor = page.next;
    if (!options.follow || !running || options.stopped?.()) return cursor;
    await sleep(options.pollMs ?? FOLLOW_POLL_MS);
    if (options.stopped?.()) return cursor;
  }
}

/** An event as a line: what `formatEvent` says, or its type. */
export function eventLine(event: ConversationEvent, cursor: number): string {
  return `${cursor}  ${formatEvent(event)?.trim() ?? event.type}`;
}

export function registerEvents(program: Command): void {
  program
    .command('events')
    .description('print the conversation events (compactions and their phases, cooldowns, approvals)')
    .argument('<id>', 'conversation id')
    .option('--follow', 'print new events as they come, until Ctrl-C or the end of the conversation')
    .option('--since <cursor>', 'start at this cursor (each line starts with its cursor)', '0')
    .option('--json', 'one JSON object per line: {"cursor": n, ...event}')
    .addHelpText(
      'after',
      '\nThe per-phase meta events need emitCompactionMetaEvents: true in the conversation config.\n' +
        'Exit codes: 0 done (or Ctrl-C), 1 failure, 2 unknown conversation or bad cursor.',
    )
    .action(
      action(async (id: string, opts: { follow?: boolean; since: string; json?: boolean }) => {
        const since = Number(opts.since);
        if (!Number.isInteger(since) || since < 0)
          throw new UsageError(`--since must be a non-negative integer (got ${JSON.stringify(opts.since)})`);
        let stop = false;
        process.once('SIGINT', () => (stop = true));
        await withConversations((conversations) =>
          readEvents(conversations, {
            id,
            since,
            follow: opts.follow === true,
            stopped: () => stop,
            onEvent: (event, cursor) =>
              console.log(opts.json ? JSON.stringify({ cursor, ...event }) : eventLine(event, cursor)),
          }),
        );
      }),
    );
}
