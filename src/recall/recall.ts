/**
 * `recall` (issue 24): what the agent's tool, the `recall` command and `eval` call to search a
 * conversation's archive and read an item back, a page at a time. The same results as data
 * ({@link RecallSearch}, {@link RecallPage}) and as the text the model reads (`render.ts`).
 */
import type { Pool } from 'pg';
import type { ContextItem, ToolCall } from '../context/items';
import type { Tokenizer } from '../context/tokenizer';
import { ArchiveSearch, type SearchHit } from '../store/archive-search';
import { prepared } from '../store/sql';
import { callLine, readableText } from '../store/search-document';
import { wordsOf, wordLexemes } from '../store/search-terms';
import { rowToItem, type ItemRow } from '../store/rows';

/** Characters of text shown around the first match of a search result. */
export const SNIPPET_CHARS = 240;
/** Characters of a tool call shown beside its result. */
const CALL_CHARS = 160;

/** Where an archived item is and what it is: a search hit and a page both say it. */
export interface RecallItemRef {
  handle: string;
  round: number;
  type: ContextItem['type'];
  /** A tool result's tool, or null. */
  tool: string | null;
  /** A tool result's call (`read_file {"path":"src/tax.ts"}`, cut), or null. */
  call: string | null;
  tokens: number;
}

export interface RecallHit extends RecallItemRef {
  rank: number;
  /** The text around the first match, on one line. */
  snippet: string;
}

export interface RecallSearch {
  query: string;
  /** Archived items matching any word of the query. */
  total: number;
  hits: RecallHit[];
}

export interface RecallPage extends RecallItemRef {
  /** Whether the item is outside the active context (false: it is in the context already). */
  archived: boolean;
  /** Characters of the item's text before this page. */
  offset: number;
  /** Characters of the item's text up to the end of this page. */
  end: number;
  totalChars: number;
  text: string;
  /** The offset of the next page, or null on the last one. */
  next: number | null;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The text around the first word of `text` that matches a word of the query, on one line. */
export function snippetOf(text: string, query: string, chars = SNIPPET_CHARS): string {
  const wanted = new Set(wordsOf(query).flatMap(wordLexemes));
  let at = -1;
  const re = /[\p{L}\p{N}_]+(?:[./:-]+[\p{L}\p{N}_]+)*/gu;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (wordLexemes(m[0]).some((l) => wanted.has(l))) {
      at = m.index;
      break;
    }
    if (m.index > 2_000_000) break;
  }
  const from = Math.max(0, (at < 0 ? 0 : at) - Math.floor(chars / 3));
  const piece = oneLine(text.slice(from, from + chars));
  return `${from > 0 ? '…' : ''}${piece}${from + chars < text.length ? '…' : ''}`;
}

/** Recall over one store. */
export class Recall {
  readonly archive: ArchiveSearch;

  constructor(private readonly pool: Pool) {
    this.archive = new ArchiveSearch(pool);
  }

  /** The archived items best matching `query` (see {@link ArchiveSearch.search}; its errors). */
  async search(conversationId: string, query: string, limit: number): Promise<RecallSearch> {
    const found = await this.archive.search(conversationId, query, limit);
    const calls = await this.callsOf(
      conversationId,
      found.hits.map((h) => h.item),
    );
    return {
      query: query.trim(),
      total: found.total,
      hits: found.hits.map((hit: SearchHit) => ({
        handle: hit.handle,
        round: hit.round,
        type: hit.type,
        tool: hit.tool,
        call: callOf(hit.item, calls),
        tokens: hit.tokens,
        rank: Math.round(hit.rank * 1000) / 1000,
        snippet: snippetOf(readableText(hit.item), query),
      })),
    };
  }

  /**
   * A page of the item `handle` names: its text from `offset` (characters), at most `pageTokens`
   * tokens of it (see {@link ArchiveSearch.byHandle}; its errors). An offset past the end gives an
   * empty last page.
   */
  async read(
    conversationId: string,
    handle: string,
    offset: number,
    pageTokens: number,
    tokenizer: Tokenizer,
  ): Promise<RecallPage> {
    const match = await this.archive.byHandle(conversationId, handle);
    const text = readableText(match.item);
    const from = Math.min(Math.max(0, offset), text.length);
    // A token is rarely over 16 characters: the prefix is cut from a slice, not from the whole item.
    let page = tokenizer.prefix(text.slice(from, from + pageTokens * 16), pageTokens);
    if (page.length === 0 && from < text.length) page = text.slice(from, from + 1);
    const end = from + page.length;
    const calls = await this.callsOf(conversationId, [match.item]);
    return {
      handle: match.handle,
      round: match.item.round,
      type: match.item.type,
      tool: match.item.type === 'TOOL_RESULT' ? (match.item.message.name ?? null) : null,
      call: callOf(match.item, calls),
      tokens: match.item.tokens,
      archived: match.archived,
      offset: from,
      end,
      totalChars: text.length,
      text: page,
      next: end < text.length ? end : null,
    };
  }

  /** The call of each tool result among `items`, by the result's id: the nearest one before it with its id. */
  private async callsOf(conversationId: string, items: ContextItem[]): Promise<Map<string, ToolCall>> {
    const results = items.flatMap((i) => (i.type === 'TOOL_RESULT' ? [i] : []));
    const calls = new Map<string, ToolCall>();
    if (results.length === 0) return calls;
    const r = await prepared<ItemRow & { result_id: string }>(
      this.pool,
      `select r.result_id, i.id, i.conversation_id, i.seq, i.type, i.role, i.body, i.tokens, i.round, i.is_meta,
              i.pinned, i.ephemeral, i.source_id, i.attrs
         from unnest($2::text[], $3::text[]) as r(result_id, call_id)
         cross join lateral (
           select a.* from items a
            where a.conversation_id = $1 and a.type = 'ASSISTANT_MESSAGE' and a.source_id is null
              and a.seq < (select seq from items where id = r.result_id) and strpos(a.body, r.call_id) > 0
            order by a.seq desc limit 1) i`,
      [conversationId, results.map((i) => i.id), results.map((i) => JSON.stringify(i.message.tool_call_id))],
    );
    const byResult = new Map(results.map((i) => [i.id, i.message.tool_call_id]));
    for (const row of r.rows) {
      const item = rowToItem(row);
      const callId = byResult.get(row.result_id);
      const call =
        item.type === 'ASSISTANT_MESSAGE' ? item.message.tool_calls?.find((t) => t.id === callId) : undefined;
      if (call) calls.set(row.result_id, call);
    }
    return calls;
  }
}

function callOf(item: ContextItem, calls: Map<string, ToolCall>): string | null {
  if (item.type !== 'TOOL_RESULT') return null;
  const call = calls.get(item.id);
  if (!call) return null;
  const line = oneLine(callLine(call));
  return line.length > CALL_CHARS ? `${line.slice(0, CALL_CHARS)}…` : line;
}
