/**
 * `durable-compaction recall <id> "<query>"` and `recall <id> --handle H`: what the agent's recall
 * tool returns (issue 24), for people — the same search and the same pages, read from PostgreSQL
 * at DATABASE_URL; `--json` gives the results as data.
 */
import type { Command } from 'commander';
import { DEFAULT_COMPACTION_CONFIG } from '../../context/config';
import {
  MAX_SEARCH_LIMIT,
  Recall,
  RecallError,
  renderPage,
  renderSearch,
  type RecallPage,
  type RecallSearch,
} from '../../recall';
import type { ConversationStore } from '../../store';
import { tokenCounterForModel } from '../../tokens';
import { action, intArgument, printJson, UsageError, withStore } from '../client';

export interface RecallOptions {
  id: string;
  query?: string;
  handle?: string;
  offset?: number;
  limit?: number;
  pageTokens?: number;
  /** The model whose encoding pages an item (default gpt-4o: o200k_base). */
  model?: string;
}

/**
 * A search or a page, as the recall tool computes it.
 * @throws UsageError for an unknown conversation, neither or both of query and handle, and every recall refusal (empty or huge query, bad or unknown handle)
 */
export async function recallFromStore(
  store: ConversationStore,
  options: RecallOptions,
): Promise<{ search: RecallSearch } | { page: RecallPage }> {
  if (!(await store.conversationStatus(options.id))) throw new UsageError(`no conversation ${options.id}`);
  if ((options.query === undefined) === (options.handle === undefined)) {
    throw new UsageError('give a query ("<words>") or --handle H, not both');
  }
  const recall = new Recall(store.pool);
  try {
    if (options.handle !== undefined) {
      const page = await recall.read(
        options.id,
        options.handle,
        options.offset ?? 0,
        options.pageTokens ?? DEFAULT_COMPACTION_CONFIG.recallPageTokens,
        tokenCounterForModel(options.model ?? 'gpt-4o'),
      );
      return { page };
    }
    const limit = Math.min(options.limit ?? DEFAULT_COMPACTION_CONFIG.recallSearchLimit, MAX_SEARCH_LIMIT);
    return { search: await recall.search(options.id, options.query ?? '', limit) };
  } catch (err) {
    if (err instanceof RecallError) throw new UsageError(err.message);
    throw err;
  }
}

export function registerRecall(program: Command): void {
  program
    .command('recall')
    .description("search a conversation's archive (what compactions removed) or read one item by its handle")
    .argument('<id>', 'conversation id')
    .argument('[query]', 'words to search for: a path, an identifier, an error, a command')
    .option('--handle <h>', 'read the item with this handle (e.g. "#a1f3c2"), a page at a time')
    .option('--offset <n>', 'with --handle: where to continue (the previous page says)')
    .option(
      '--limit <n>',
      `most results (default ${DEFAULT_COMPACTION_CONFIG.recallSearchLimit}, at most ${MAX_SEARCH_LIMIT})`,
    )
    .option('--page-tokens <n>', `tokens of one page (default ${DEFAULT_COMPACTION_CONFIG.recallPageTokens})`)
    .option('--model <model>', 'the model whose encoding counts a page (default gpt-4o)')
    .option('--json', 'print as JSON')
    .addHelpText(
      'after',
      "\nNeeds DATABASE_URL. Prints what the agent's recall tool would return.\n" +
        'Exit codes: 0 shown, 1 failure, 2 unknown conversation or handle, empty or oversized query.',
    )
    .action(
      action(
        async (
          id: string,
          query: string | undefined,
          opts: {
            handle?: string;
            offset?: string;
            limit?: string;
            pageTokens?: string;
            model?: string;
            json?: boolean;
          },
        ) => {
          const options: RecallOptions = {
            id,
            ...(query !== undefined ? { query } : {}),
            ...(opts.handle !== undefined ? { handle: opts.handle } : {}),
            ...(opts.offset !== undefined ? { offset: intArgument('--offset', opts.offset, 0) } : {}),
            ...(opts.limit !== undefined ? { limit: intArgument('--limit', opts.limit) } : {}),
            ...(opts.pageTokens !== undefined
              ? { pageTokens: intArgument('--page-tokens', opts.pageTokens) }
              : {}),
            ...(opts.model !== undefined ? { model: opts.model } : {}),
          };
          await withStore(async (store) => {
            const result = await recallFromStore(store, options);
            if (opts.json) printJson('page' in result ? result.page : result.search);
            else console.log('page' in result ? renderPage(result.page) : renderSearch(result.search));
          });
        },
      ),
    );
}
