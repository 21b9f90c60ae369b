/**
 * Items as rows of the `items` table: the columns an item is written as ({@link itemColumns}) and
 * the decoder of a row read back ({@link rowToItem}), which checks the columns' types and then
 * the item itself (its type, its JSON body).
 */
import type { QueryResultRow } from 'pg';
import {
  ITEM_TYPES,
  type CarriedData,
  type ContextItem,
  type ItemFacts,
  type ItemType,
} from '../context/items';
import { StoredRowError } from './errors';
import { rowDecoder, type RowOf } from './row-decoder';

/** The columns of an `items` row that make an item, with their types. */
const ITEM_ROW = {
  id: 'text',
  conversation_id: 'text',
  seq: 'bigint',
  type: 'text',
  role: 'text',
  body: 'text',
  tokens: 'int',
  round: 'int',
  is_meta: 'bool',
  pinned: 'bool',
  ephemeral: 'bool',
  source_id: 'text?',
  attrs: 'text',
} as const;

/** An `items` row as PostgreSQL returns it. */
export type ItemRow = RowOf<typeof ITEM_ROW>;

/** The select list of {@link ItemRow}'s columns, of `items` aliased `i`. */
export const ITEM_COLUMNS = Object.keys(ITEM_ROW)
  .map((column) => `i.${column}`)
  .join(', ');

const decodeItemRow = rowDecoder(ITEM_ROW, (row, problem) => new StoredRowError(String(row.id), problem));

/** Carried state as stored (a hand-edited row with anything else is read without it). */
function isCarriedData(value: unknown): value is CarriedData {
  if (typeof value !== 'object' || value === null) return false;
  const data = value as Record<string, unknown>;
  if (data.kind === 'artifact_trail') return Array.isArray(data.files) && Array.isArray(data.commands);
  if (data.kind === 'open_errors') return Array.isArray(data.errors);
  return false;
}

/** Item facts as stored (anything else is read without them: they are worked out when needed). */
function isItemFacts(value: unknown): value is ItemFacts {
  if (typeof value !== 'object' || value === null) return false;
  const facts = value as Record<string, unknown>;
  if ('calls' in facts && !Array.isArray(facts.calls)) return false;
  if ('error' in facts && facts.error !== null && typeof facts.error !== 'string') return false;
  if ('framingTokens' in facts && typeof facts.framingTokens !== 'number') return false;
  return true;
}

function isItemType(type: string): type is ItemType {
  return (ITEM_TYPES as readonly string[]).includes(type);
}

/** The role column: what the model sees the item as ('tools' for the tool list). */
export function itemRole(item: ContextItem): string {
  return item.type === 'TOOL_DEFINITIONS' ? 'tools' : item.message.role;
}

/** Columns of an item, body serialized as JSON text (any string survives, see the migration). */
export function itemColumns(item: ContextItem): {
  type: string;
  role: string;
  body: string;
  attrs: string;
} {
  const attrs: Record<string, unknown> = {};
  if (item.type === 'COMPACTION_SUMMARY') attrs.summarizer = item.summarizer;
  if ('carried' in item && item.carried !== undefined) attrs.carried = item.carried;
  if (item.facts !== undefined) attrs.facts = item.facts;
  const body = item.type === 'TOOL_DEFINITIONS' ? item.tools : item.message;
  return { type: item.type, role: itemRole(item), body: JSON.stringify(body), attrs: JSON.stringify(attrs) };
}

/**
 * Decodes a stored row back into the item it was written from.
 * @throws StoredRowError naming the item and what is wrong: a column's type, the item type, the body
 */
export function rowToItem(raw: QueryResultRow): ContextItem {
  const row = decodeItemRow(raw);
  if (!isItemType(row.type)) throw new StoredRowError(row.id, `unknown type ${JSON.stringify(row.type)}`);
  let body: unknown;
  let attrs: Record<string, unknown>;
  try {
    body = JSON.parse(row.body);
    attrs = JSON.parse(row.attrs) as Record<string, unknown>;
  } catch (err) {
    throw new StoredRowError(row.id, `body is not JSON (${(err as Error).message})`);
  }
  if (typeof attrs !== 'object' || attrs === null) throw new StoredRowError(row.id, 'attrs is not an object');
  if (typeof body !== 'object' || body === null) throw new StoredRowError(row.id, 'body is not an object');
  const facts = isItemFacts(attrs.facts) ? { facts: attrs.facts } : {};
  const base = {
    ...facts,
    id: row.id,
    tokens: row.tokens,
    round: row.round,
    isMeta: row.is_meta,
    pinned: row.pinned,
    ephemeral: row.ephemeral,
    ...(row.source_id ? { sourceId: row.source_id } : {}),
  };
  if (row.type === 'TOOL_DEFINITIONS') {
    if (!Array.isArray(body)) throw new StoredRowError(row.id, 'tool list is not an array');
    return { ...base, type: 'TOOL_DEFINITIONS', tools: body as never };
  }
  if (!('role' in body)) throw new StoredRowError(row.id, 'message has no role');
  if (row.type === 'COMPACTION_SUMMARY') {
    const summarizer = attrs.summarizer === 'extractive' ? 'extractive' : 'llm';
    return { ...base, type: 'COMPACTION_SUMMARY', message: body as never, summarizer };
  }
  // The remaining variants differ only in the message role they carry; the row's type decides which.
  const carried = isCarriedData(attrs.carried) ? { carried: attrs.carried } : {};
  return { ...base, type: row.type, message: body as never, ...carried } as ContextItem;
}
