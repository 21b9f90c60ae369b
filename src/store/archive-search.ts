/**
 * Recall's reads of the archive (issue 24): full-text search over a conversation's archived items
 * and reading one item by its handle. Archived: stored for the conversation and not in its active
 * context (a compaction removed it, or put a cut form in its place). Every statement is scoped to
 * one conversation, and every value is a parameter: a handle of another conversation is simply not
 * found.
 */
import type { Pool } from 'pg';
import type { ContextItem, ToolCall } from '../context/items';
import { handleDigits, HANDLE_CHARS } from '../context/recall-handle';
import { malformed, MalformedRowError } from './errors';
import { firstRow, rowDecoder } from './row-decoder';
import { ITEM_COLUMNS, rowToItem } from './rows';
import { searchTexts } from './search-document';
import { queryTerms, searchVector, tsqueryLiteral } from './search-terms';
import { prepared } from './sql';

/** Longest query accepted, in characters. */
export const MAX_QUERY_CHARS = 500;
/** Most words of a query used (a pasted paragraph is not a query). */
export const MAX_QUERY_WORDS = 32;
/** Most results one search returns. */
export const MAX_SEARCH_LIMIT = 20;

/** Why a recall was refused: each says what to do instead (the model reads it as a tool error). */
export type RecallErrorKind = 'BAD_QUERY' | 'BAD_HANDLE' | 'HANDLE_NOT_FOUND' | 'HANDLE_AMBIGUOUS';

export class RecallError extends Error {
  constructor(
    readonly kind: RecallErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'RecallError';
  }
}

/** One search result: an archived item, ranked. */
export interface SearchHit {
  handle: string;
  itemId: string;
  type: ContextItem['type'];
  round: number;
  tokens: number;
  /** For a tool result: its tool's name. */
  tool: string | null;
  rank: number;
  item: ContextItem;
}

export interface SearchResult {
  /** Archived items matching a word of the query (or, when they are fewer than asked, a part of one). */
  total: number;
  hits: SearchHit[];
  /** The words searched for (after the stop words were left out). */
  terms: string[];
}

/** The item a handle names, with the call of a tool result (to say what it answered). */
export interface HandleMatch {
  handle: string;
  item: ContextItem;
  /** Whether the item is outside the active context. */
  archived: boolean;
}

const itemRowError = (row: { id?: unknown }, problem: string) =>
  new MalformedRowError(`item ${String(row.id)}`, problem);
/** The columns a search or a handle adds to an item's row (the item's own are rowToItem's to check). */
const decodeHit = rowDecoder({ handle: 'text', rank: 'float' }, itemRowError);
const decodeHandleMatch = rowDecoder(
  { handle: 'text', round: 'int', type: 'text', archived: 'bool' },
  itemRowError,
);
const decodeSearchMissing = rowDecoder({ search_missing: 'bool' }, itemRowError);
const decodeTotal = rowDecoder({ total: 'int' }, malformed('search result count'));
const decodeCount = rowDecoder({ n: 'int' }, malformed('item count'));

/** The handle of a stored row as shown: `#` and the first {@link HANDLE_CHARS} digits. */
function shown(handle: string, digits = HANDLE_CHARS): string {
  return `#${handle.slice(0, digits)}`;
}

function toolOf(item: ContextItem): string | null {
  return item.type === 'TOOL_RESULT' ? (item.message.name ?? null) : null;
}

export class ArchiveSearch {
  constructor(readonly pool: Pool) {}

  /**
   * The archived items matching `query`, best first: items with every word of the query rank
   * above those with some; within each, PostgreSQL's `ts_rank` over the weighted lexemes (a tool
   * result's call above a call's arguments above text), scaled down for long items; newest first on
   * a tie.
   * @throws RecallError BAD_QUERY for an empty query, one over {@link MAX_QUERY_CHARS} characters, or one with no word to search
   */
  async search(conversationId: string, query: string, limit: number): Promise<SearchResult> {
    const trimmed = query.trim();
    if (trimmed.length === 0) {
      throw new RecallError(
        'BAD_QUERY',
        'query is empty: give words to search for (a file path, an error message, a command)',
      );
    }
    if (trimmed.length > MAX_QUERY_CHARS) {
      throw new RecallError(
        'BAD_QUERY',
        `query is ${trimmed.length} characters, the limit is ${MAX_QUERY_CHARS}: search for a few distinctive words (a path, an identifier, an error's words)`,
      );
    }
    const terms = queryTerms(trimmed);
    if (terms.any.length === 0) {
      throw new RecallError(
        'BAD_QUERY',
        `query ${JSON.stringify(trimmed)} has no word to search for (only punctuation or very common words)`,
      );
    }
    const all = terms.all.slice(0, MAX_QUERY_WORDS);
    const any = terms.any.slice(0, MAX_QUERY_WORDS * 4);
    await this.indexMissing(conversationId);
    const n = Math.max(1, Math.min(limit, MAX_SEARCH_LIMIT));
    // Candidates are the items with a word of the query as written (few: `src/tax.ts`, `applytax`);
    // only when they are fewer than asked are the words' parts (`src`, `ts`, `apply`, which most
    // items of a coding session hold) candidates too. Ranking uses every lexeme either way.
    const rank = (candidates: string[]) =>
      prepared(
        this.pool,
        `with q as (select $2::tsquery as any_q, $3::tsquery as all_q, $5::tsquery as filter_q),
              active as (
                select m.item_id from conversations c
                  join context_version_items m on m.conversation_id = c.id and m.version = c.active_version
                 where c.id = $1),
              hits as (
                select i.id, (case when i.search @@ q.all_q then 1 else 0 end) + ts_rank(i.search, q.any_q, 1) as rank
                  from items i, q
                 where i.conversation_id = $1 and i.search @@ q.filter_q
                   and not exists (select 1 from active a where a.item_id = i.id))
         select ${HIT_COLUMNS}, h.rank::float8 as rank, (select count(*) from hits)::int as total
           from hits h join items i on i.id = h.id
          order by h.rank desc, i.seq desc
          limit $4`,
        [
          conversationId,
          tsqueryLiteral(any, '|'),
          tsqueryLiteral(all, '&'),
          n,
          tsqueryLiteral(candidates, '|'),
        ],
      );
    let r = await rank(all);
    if (r.rows.length < n && any.length > all.length) r = await rank(any);
    return {
      total: firstRow(r.rows, decodeTotal)?.total ?? 0,
      hits: r.rows.map((row) => {
        const hit = decodeHit(row);
        const item = rowToItem(row);
        return {
          handle: shown(hit.handle),
          itemId: item.id,
          type: item.type,
          round: item.round,
          tokens: item.tokens,
          tool: toolOf(item),
          rank: hit.rank,
          item,
        };
      }),
      terms: all,
    };
  }

  /**
   * The item a handle names in this conversation (archived or not). A handle is a prefix of the
   * item's stored digits; one that fits two items is refused with both, longer, so the caller can
   * pick.
   * @throws RecallError BAD_HANDLE (not 4–16 hex digits), HANDLE_NOT_FOUND, HANDLE_AMBIGUOUS
   */
  async byHandle(conversationId: string, handle: string): Promise<HandleMatch> {
    const digits = handleDigits(handle);
    if (digits === null) {
      throw new RecallError(
        'BAD_HANDLE',
        `handle ${JSON.stringify(handle)} is not a recall handle: "#" and 4 to 16 hex digits, as in "#a1f3c2"`,
      );
    }
    const r = await prepared(
      this.pool,
      `select ${HIT_COLUMNS}, 0::float8 as rank,
              not exists (select 1 from conversations c join context_version_items m
                           on m.conversation_id = c.id and m.version = c.active_version
                          where c.id = $1 and m.item_id = i.id) as archived
         from items i
        where i.conversation_id = $1 and i.handle like $2 || '%'
        order by i.seq limit 5`,
      [conversationId, digits],
    );
    const matches = r.rows.map(decodeHandleMatch);
    const [first, second] = matches;
    if (!first) {
      throw new RecallError(
        'HANDLE_NOT_FOUND',
        `handle #${digits} was not found in this conversation: use a handle from the context or from a recall search`,
      );
    }
    if (second) {
      const longer = matches.map((row) => `${shown(row.handle, STORED)} (round ${row.round}, ${row.type})`);
      throw new RecallError(
        'HANDLE_AMBIGUOUS',
        `handle #${digits} names ${matches.length} items: ${longer.join('; ')}; use more digits`,
      );
    }
    return {
      handle: shown(first.handle, Math.max(HANDLE_CHARS, digits.length)),
      item: rowToItem(first),
      archived: first.archived,
    };
  }

  /** How many items of the conversation are archived (outside its active context). */
  async archivedCount(conversationId: string): Promise<number> {
    const r = await prepared(
      this.pool,
      `select count(*)::int as n from items i
        where i.conversation_id = $1
          and not exists (select 1 from conversations c join context_version_items m
                           on m.conversation_id = c.id and m.version = c.active_version
                          where c.id = $1 and m.item_id = i.id)`,
      [conversationId],
    );
    return firstRow(r.rows, decodeCount)?.n ?? 0;
  }

  /**
   * Indexes the conversation's items stored before migration 003 (their `search` is null), so a
   * conversation older than recall is searchable the first time it is searched. Each row is
   * written once; a concurrent run writes the same vector.
   */
  async indexMissing(conversationId: string): Promise<number> {
    const missing = await prepared(
      this.pool,
      'select count(*)::int as n from items where conversation_id = $1 and search is null',
      [conversationId],
    );
    if ((firstRow(missing.rows, decodeCount)?.n ?? 0) === 0) return 0;
    const rows = await prepared(
      this.pool,
      `select ${ITEM_SELECT} from items i where i.conversation_id = $1 order by i.seq`,
      [conversationId],
    );
    // The nearest call before each result (real sessions reuse call ids).
    const calls = new Map<string, ToolCall>();
    let indexed = 0;
    for (const row of rows.rows) {
      const item = rowToItem(row);
      if (item.type === 'ASSISTANT_MESSAGE' && item.sourceId === undefined) {
        for (const call of item.message.tool_calls ?? []) calls.set(call.id, call);
      }
      if (!decodeSearchMissing(row).search_missing) continue;
      const call = item.type === 'TOOL_RESULT' ? calls.get(item.message.tool_call_id) : undefined;
      await prepared(this.pool, 'update items set search = $2::tsvector where id = $1 and search is null', [
        item.id,
        searchVector(searchTexts(item, call)) ?? '',
      ]);
      indexed++;
    }
    return indexed;
  }
}

/** Digits shown to tell apart items whose short handles clash. */
const STORED = 12;

const ITEM_SELECT = `${ITEM_COLUMNS}, i.search is null as search_missing`;

const HIT_COLUMNS = `${ITEM_COLUMNS}, i.handle`;
