/**
 * The built-in `recall` tool (issue 24): searches the conversation's archive or reads one item of
 * it, a page at a time. Unlike the workspace tools it reads the store, so `runTool` runs it with
 * the conversation's recall settings instead of through the registry; its definition joins the
 * context with the first compaction (`src/context/recall-tool.ts`). Its result is an ordinary tool
 * result: counted toward the context, compacted like any other, never searched itself.
 */
import type { Tokenizer } from '../../src/context/tokenizer';
import { MAX_SEARCH_LIMIT, Recall, RecallError, renderPage, renderSearch } from '../../src/recall';
import { ToolError, type ToolOutput } from './registry';

/** What the conversation's config says about recall (passed by the workflow with each recall call). */
export interface RecallSettings {
  /** Tokens of one page (`recallPageBudget`). */
  pageTokens: number;
  /** Results of a search without `limit`. */
  searchLimit: number;
}

function optionalInt(args: Record<string, unknown>, key: string): number | undefined {
  const value = args[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new ToolError(`argument "${key}" must be a non-negative integer`);
  }
  return value;
}

function optionalString(args: Record<string, unknown>, key: string): string | undefined {
  const value = args[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ToolError(`argument "${key}" must be a string`);
  return value;
}

/**
 * Runs one recall call: `{ query, limit }` searches, `{ handle, offset }` reads. Bad arguments, an
 * empty or oversized query, and an unknown handle are {@link ToolError}s the model reads.
 */
export async function runRecall(
  recall: Recall,
  conversationId: string,
  args: Record<string, unknown>,
  settings: RecallSettings,
  tokenizer: Tokenizer,
): Promise<ToolOutput> {
  const query = optionalString(args, 'query');
  const handle = optionalString(args, 'handle');
  const limit = optionalInt(args, 'limit');
  const offset = optionalInt(args, 'offset');
  try {
    if (handle !== undefined && handle.trim() !== '') {
      const page = await recall.read(conversationId, handle, offset ?? 0, settings.pageTokens, tokenizer);
      return { content: renderPage(page) };
    }
    if (query === undefined) {
      throw new ToolError(
        'give "query" (words to search the archive for) or "handle" (an item to read, e.g. "#a1f3c2")',
      );
    }
    const found = await recall.search(
      conversationId,
      query,
      Math.min(limit ?? settings.searchLimit, MAX_SEARCH_LIMIT),
    );
    return { content: renderSearch(found) };
  } catch (err) {
    if (err instanceof RecallError) throw new ToolError(err.message);
    throw err;
  }
}
