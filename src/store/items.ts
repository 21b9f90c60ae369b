/**
 * Items (DESIGN.md §2): writing them to the append-only archive, each with the next sequence
 * number and its recall index, and reading them back — the active context, one version's, some by
 * id, the whole archive. Items are never updated or deleted here.
 */
import type { PoolClient } from 'pg';
import type { ContextItem, ToolCall } from '../context/items';
import { conversationNotFound, malformed, noActiveVersion, StoreError } from './errors';
import { firstRow, rowDecoder } from './row-decoder';
import { ITEM_COLUMNS, itemColumns, rowToItem } from './rows';
import { searchTexts } from './search-document';
import { searchVector } from './search-terms';
import { prepared, type Db } from './sql';
import { activeVersionOf } from './versions';

const decodeItemId = rowDecoder({ id: 'text' }, malformed('item'));
const decodeNextSeq = rowDecoder({ next_seq: 'bigint' }, malformed('conversation'));
const decodeContextVersion = rowDecoder({ active_version: 'int' }, malformed('active context'));

/**
 * Inserts items that are not in the archive yet, giving them the next sequence numbers. Runs in
 * the caller's transaction, under the conversation lock (the sequence counter is on its row).
 */
export async function insertItems(
  c: PoolClient,
  conversationId: string,
  items: ContextItem[],
): Promise<void> {
  if (items.length === 0) return;
  const existing = await prepared(c, 'select id from items where id = any($1)', [items.map((i) => i.id)]);
  const known = new Set(existing.rows.map((r) => decodeItemId(r).id));
  const fresh = items.filter((i) => !known.has(i.id));
  if (fresh.length === 0) return;
  const seqRow = await prepared(
    c,
    'update conversations set next_seq = next_seq + $2 where id = $1 returning next_seq - $2 as next_seq',
    [conversationId, fresh.length],
  );
  let seq = Number(firstRow(seqRow.rows, decodeNextSeq)?.next_seq ?? 1);
  const calls = await callsOf(c, conversationId, fresh);
  for (const item of fresh) {
    const col = itemColumns(item);
    const call = calls.get(item.id);
    // The recall index (migration 003): '' for an item recall does not search.
    const search = searchVector(searchTexts(item, call)) ?? '';
    await prepared(
      c,
      `insert into items (id, conversation_id, seq, type, role, body, tokens, round, is_meta, pinned, ephemeral,
                            source_id, attrs, search)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::tsvector)`,
      [
        item.id,
        conversationId,
        seq++,
        col.type,
        col.role,
        col.body,
        item.tokens,
        item.round,
        item.isMeta,
        item.pinned,
        item.ephemeral,
        item.sourceId ?? null,
        col.attrs,
        search,
      ],
    );
  }
}

/**
 * The call of each tool result among `items`, by the result's id: the nearest call with its id
 * before it in `items`, else in the newest stored assistant message that has it (a result is
 * stored after its call; real sessions reuse call ids, so the nearest one is the call).
 */
async function callsOf(
  c: PoolClient,
  conversationId: string,
  items: ContextItem[],
): Promise<Map<string, ToolCall>> {
  const latest = new Map<string, ToolCall>();
  const callOf = new Map<string, ToolCall>();
  const missing: { resultId: string; callId: string }[] = [];
  for (const item of items) {
    if (item.type === 'ASSISTANT_MESSAGE')
      for (const call of item.message.tool_calls ?? []) latest.set(call.id, call);
    if (item.type !== 'TOOL_RESULT') continue;
    const call = latest.get(item.message.tool_call_id);
    if (call) callOf.set(item.id, call);
    else missing.push({ resultId: item.id, callId: item.message.tool_call_id });
  }
  for (const { resultId, callId } of missing) {
    const r = await prepared(
      c,
      `select ${ITEM_COLUMNS} from items i
          where i.conversation_id = $1 and i.type = 'ASSISTANT_MESSAGE' and i.source_id is null
            and strpos(i.body, $2) > 0
          order by i.seq desc limit 1`,
      [conversationId, JSON.stringify(callId)],
    );
    const found = firstRow(r.rows, rowToItem);
    const call =
      found?.type === 'ASSISTANT_MESSAGE'
        ? found.message.tool_calls?.find((t) => t.id === callId)
        : undefined;
    if (call) callOf.set(resultId, call);
  }
  return callOf;
}

/**
 * The items of the active version, in order.
 * @throws StoreError CONVERSATION_NOT_FOUND, VERSION_NOT_FOUND (no active version yet)
 */
export async function getActiveContext(
  db: Db,
  conversationId: string,
): Promise<{ version: number; items: ContextItem[] }> {
  // One round trip in the common case (asked before every model call); the checks below only
  // run to say why nothing came back.
  const r = await prepared(
    db,
    `select c.active_version, ${ITEM_COLUMNS}
         from conversations c
         join context_version_items m on m.conversation_id = c.id and m.version = c.active_version
         join items i on i.id = m.item_id
        where c.id = $1 order by m.position`,
    [conversationId],
  );
  const first = firstRow(r.rows, decodeContextVersion);
  if (first) return { version: first.active_version, items: r.rows.map(rowToItem) };
  const active = await activeVersionOf(db, conversationId);
  if (active === undefined) throw conversationNotFound(conversationId);
  if (active === null) throw noActiveVersion(conversationId);
  return { version: active, items: await getVersionItems(db, conversationId, active) };
}

/**
 * The items of one version, in order.
 * @throws StoreError VERSION_NOT_FOUND
 */
export async function getVersionItems(
  db: Db,
  conversationId: string,
  version: number,
): Promise<ContextItem[]> {
  const exists = await prepared(
    db,
    'select 1 from context_versions where conversation_id = $1 and version = $2',
    [conversationId, version],
  );
  if (exists.rowCount !== 1) {
    throw new StoreError('VERSION_NOT_FOUND', `conversation ${conversationId} has no version ${version}`);
  }
  const r = await prepared(
    db,
    `select ${ITEM_COLUMNS} from context_version_items m join items i on i.id = m.item_id
        where m.conversation_id = $1 and m.version = $2 order by m.position`,
    [conversationId, version],
  );
  return r.rows.map(rowToItem);
}

/** The stored items among `ids` (any conversation), by id: one query serves both readers below. */
async function itemsById(db: Db, ids: string[]): Promise<Map<string, ContextItem>> {
  if (ids.length === 0) return new Map();
  const r = await prepared(db, `select ${ITEM_COLUMNS} from items i where i.id = any($1)`, [ids]);
  return new Map(
    r.rows.map((row) => {
      const item = rowToItem(row);
      return [item.id, item];
    }),
  );
}

/**
 * Items by id (any conversation), in the order asked.
 * @throws StoreError ITEM_NOT_FOUND naming the first id that is not stored
 */
export async function getItems(db: Db, ids: string[]): Promise<ContextItem[]> {
  const byId = await itemsById(db, ids);
  return ids.map((id) => {
    const item = byId.get(id);
    if (!item) throw new StoreError('ITEM_NOT_FOUND', `item ${id} does not exist`);
    return item;
  });
}

/** Items by id that exist, in the order asked; missing ids are left out. */
export async function getItemsIfPresent(db: Db, ids: string[]): Promise<ContextItem[]> {
  const byId = await itemsById(db, ids);
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** Every item ever appended to the conversation, in append order (the archive). */
export async function getArchive(db: Db, conversationId: string): Promise<ContextItem[]> {
  const r = await prepared(
    db,
    `select ${ITEM_COLUMNS} from items i where i.conversation_id = $1 order by i.seq`,
    [conversationId],
  );
  return r.rows.map(rowToItem);
}
