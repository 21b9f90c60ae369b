/**
 * `durable-compaction chat <id>`: an interactive loop. Each line is a `send`; `/compact [focus]`
 * compacts, `/approve` and `/reject` decide a pending compaction (also while a round waits on it),
 * `/status` shows the conversation, `/quit` leaves (the conversation goes on running). While an
 * Update is in flight the phase changes are printed (`… compacting…`). A message typed while a
 * compaction awaits approval is queued; its answer is printed once the compaction is decided.
 */
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import type { ConversationStatus } from '../../../workflows/definitions';
import type { ConversationClient } from '../../client';
import { action, cliError, exitCodeFor, withConversations } from '../client';
import { formatCompaction, formatPhase, formatSendResult, formatStatus } from '../format';
import { compactConversation, conversationStatus, decideCompaction } from './control';
import { queuedMessage, sendMessage } from './send';

export const CHAT_HELP = [
  'type a message and press Enter to send it',
  '/compact [focus]   compact now, optionally with focus instructions',
  '/approve, /reject  decide a compaction that awaits approval',
  '/status            show tokens, rounds, compactions',
  '/quit              leave (the conversation keeps running; `end` ends it)',
];

export interface ChatOptions {
  id: string;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Show a prompt (interactive terminals). */
  prompt?: boolean;
}

/** What a line asks for. */
export type ChatLine =
  | { kind: 'empty' }
  | { kind: 'message'; text: string }
  | { kind: 'compact'; focus?: string }
  | { kind: 'approve' | 'reject' | 'status' | 'quit' | 'help' }
  | { kind: 'unknown'; command: string };

/** Parses one line of the chat. Pure. */
export function parseChatLine(line: string): ChatLine {
  const text = line.trim();
  if (text === '') return { kind: 'empty' };
  if (!text.startsWith('/')) return { kind: 'message', text: line };
  const command = text.split(/\s+/)[0] ?? '';
  const argument = text.slice(command.length).trim();
  switch (command.toLowerCase()) {
    case '/compact':
      return argument ? { kind: 'compact', focus: argument } : { kind: 'compact' };
    case '/approve':
    case '/reject':
    case '/status':
    case '/help':
      return { kind: command.slice(1).toLowerCase() as 'approve' | 'reject' | 'status' | 'help' };
    case '/quit':
    case '/exit':
      return { kind: 'quit' };
    default:
      return { kind: 'unknown', command };
  }
}

/**
 * Runs the loop until `/quit` or the end of the input; lines are handled in order, except
 * `/approve`, `/reject` and `/status`, which run at once even while a round is in flight.
 */
export async function chat(conversations: ConversationClient, options: ChatOptions): Promise<void> {
  const { id } = options;
  await conversations.ensureRunning(id);
  const write = (line: string): void => {
    options.output.write(`${line}\n`);
  };
  const rl = createInterface({
    input: options.input,
    output: options.output,
    terminal: options.prompt ?? false,
  });
  rl.setPrompt('you> ');
  const prompt = (): void => {
    if (options.prompt) rl.prompt();
  };
  const onStatus = (status: ConversationStatus): void => {
    const line = formatPhase(status);
    if (line) write(`… ${line}`);
  };
  const report = (caught: unknown): void => {
    const err = cliError(caught);
    write(`error: ${err instanceof Error ? err.message : String(err)}`);
    if (exitCodeFor(err) === 1 && process.env.DEBUG) write(String((err as Error).stack));
  };

  let busy = false;
  let quit = false;
  /** Answers of queued messages still to come. */
  const queued = new Set<Promise<void>>();
  let chain: Promise<void> = Promise.resolve();

  const run = async (parsed: ChatLine): Promise<void> => {
    switch (parsed.kind) {
      case 'empty':
        return;
      case 'help':
        for (const line of CHAT_HELP) write(line);
        return;
      case 'unknown':
        write(`unknown command ${parsed.command} (/help lists them)`);
        return;
      case 'quit':
        quit = true;
        rl.close();
        return;
      case 'status':
        for (const line of formatStatus(await conversationStatus(conversations, { id }))) write(line);
        return;
      case 'approve':
      case 'reject': {
        const result = await decideCompaction(conversations, { id, approve: parsed.kind === 'approve' });
        write(result.decision);
        return;
      }
      case 'compact':
        write(
          formatCompaction(await compactConversation(conversations, { id, focus: parsed.focus, onStatus })),
        );
        return;
      case 'message': {
        const outcome = await sendMessage(conversations, { id, message: parsed.text, onStatus });
        if (!outcome.queued) {
          for (const line of formatSendResult(id, outcome.result)) write(line);
          return;
        }
        write(queuedMessage(id, outcome.trigger, 'chat', outcome.awaits));
        // The round runs once the compaction is decided (by /approve, /reject or another client).
        const answered = outcome.result().then((result) => {
          for (const line of formatSendResult(id, result)) write(line);
        }, report);
        queued.add(answered);
        void answered.finally(() => queued.delete(answered));
        return;
      }
    }
  };

  const closed = new Promise<void>((resolve) => rl.once('close', resolve));
  rl.on('line', (line) => {
    const parsed = parseChatLine(line);
    const immediate = parsed.kind === 'approve' || parsed.kind === 'reject' || parsed.kind === 'status';
    if (busy && immediate) {
      void run(parsed).catch(report);
      return;
    }
    chain = chain.then(async () => {
      if (quit) return;
      busy = true;
      try {
        await run(parsed);
      } catch (err) {
        report(err);
      } finally {
        busy = false;
        if (!quit) prompt();
      }
    });
  });
  rl.on('SIGINT', () => {
    write('(leaving; a round in flight goes on in the workflow)');
    quit = true;
    rl.close();
  });

  write(`chat with ${id} · /help for commands`);
  prompt();
  await closed;
  // End of input: let the lines already read finish (a piped script), unless the user quit.
  if (!quit) {
    await chain;
    await Promise.all(queued);
  }
}

export function registerChat(program: Command): void {
  program
    .command('chat')
    .description(
      'chat interactively: a line is a message; /compact [focus], /approve, /reject, /status, /quit',
    )
    .argument('<id>', 'conversation id')
    .addHelpText(
      'after',
      `\n${CHAT_HELP.join('\n')}\n\nExit codes: 0 left normally, 1 failure, 2 unknown or ended conversation.`,
    )
    .action(
      action(async (id: string) => {
        await withConversations((conversations) =>
          chat(conversations, {
            id,
            input: process.stdin,
            output: process.stdout,
            prompt: Boolean(process.stdin.isTTY),
          }),
        );
      }),
    );
}
