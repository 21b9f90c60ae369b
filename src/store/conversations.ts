/**
 * Conversations (DESIGN.md §2): creating one with its first active version, appending to and
 * dropping from its active version, restoring an earlier version, its status and its end. Each
 * write is one transaction under the conversation lock, made mostly of `versions.ts`'s and
 * `items.ts`'s statements.
 */
import type { Pool } from 'pg';
import type { ContextItem } from '../context/items';
import { assertConversationId, malformed, StoreError } from './errors';
import { insertItems } from './items';
import { firstRow, rowDecoder } from './row-decoder';
import { inTransaction, prepared, type Db } from './sql';
import {
  addMembers,
  insertVersion,
  lockConversation,
  renumber,
  requireActive,
  setActiveVersion,
  supersede,
  totalsOf,
  versionByIdemKey,
  VERSION_STATUSES,
  type ContextTotals,
} from './versions';

const decodeStatus = rowDecoder(
  { status: ['open', 'ended'], active_version: 'int?' },
  malformed('conversation'),
);
const decodeRound = rowDecoder({ round: 'int' }, malformed('last round'));
const decodeVersionStatus = rowDecoder({ status: VERSION_STATUSES }, malformed('context version'));
const decodeMember = rowDecoder({ item_id: 'text' }, malformed('context version member'));

/**
 * Creates the conversation with a first active version holding `items` (its header). Idempotent.
 * @throws StoreError INVALID_CONVERSATION_ID before anything is written
 */
export async function createConversation(
  pool: Pool,
  conversationId: string,
  items: ContextItem[],
): Promise<ContextTotals> {
  assertConversationId(conversationId);
  return inTransaction(pool, async (c) => {
    await prepared(c, 'insert into conversations (id) values ($1) on conflict (id) do nothing', [
      conversationId,
    ]);
    const conv = await lockConversation(c, conversationId);
    if (conv.active_version === null) {
      await insertItems(c, conversationId, items);
      const version = await insertVersion(c, conversationId, {
        status: 'active',
        baseVersion: null,
        origin: 'start',
        compactionId: null,
        idemKey: 'start',
        itemIds: items.map((i) => i.id),
      });
      await setActiveVersion(c, conversationId, version);
    }
    return totalsOf(c, conversationId);
  });
}

/** Whether the conversation exists. */
export async function conversationExists(db: Db, conversationId: string): Promise<boolean> {
  const r = await prepared(db, 'select 1 from conversations where id = $1', [conversationId]);
  return r.rowCount === 1;
}

/**
 * The highest round of the conversation's items (0 for none): the real user rounds already
 * stored, e.g. by `import`, after which a workflow continuing the conversation numbers its own.
 */
export async function lastRound(db: Db, conversationId: string): Promise<number> {
  const r = await prepared(
    db,
    'select coalesce(max(round), 0)::int as round from items where conversation_id = $1',
    [conversationId],
  );
  return firstRow(r.rows, decodeRound)?.round ?? 0;
}

/**
 * Appends items to the archive and to the end of the active version, in order.
 * A retried call with the same items changes nothing.
 * @throws StoreError CONVERSATION_NOT_FOUND, CONVERSATION_ENDED, VERSION_NOT_FOUND
 */
export async function appendItems(
  pool: Pool,
  conversationId: string,
  items: ContextItem[],
): Promise<ContextTotals> {
  return inTransaction(pool, async (c) => {
    const conv = await lockConversation(c, conversationId);
    if (conv.status === 'ended') {
      throw new StoreError('CONVERSATION_ENDED', `conversation ${conversationId} has ended`);
    }
    const active = requireActive(conv, conversationId);
    await insertItems(c, conversationId, items);
    await addMembers(
      c,
      conversationId,
      active,
      items.map((i) => i.id),
    );
    return totalsOf(c, conversationId, active);
  });
}

/** Removes the ephemeral items from the active version (they were meant for one model call). */
export async function dropEphemeral(pool: Pool, conversationId: string): Promise<ContextTotals> {
  return inTransaction(pool, async (c) => {
    const conv = await lockConversation(c, conversationId);
    const active = requireActive(conv, conversationId);
    const removed = await prepared(
      c,
      `delete from context_version_items m using items i
          where m.conversation_id = $1 and m.version = $2 and i.id = m.item_id and i.ephemeral`,
      [conversationId, active],
    );
    if ((removed.rowCount ?? 0) > 0) await renumber(c, conversationId, active);
    return totalsOf(c, conversationId, active);
  });
}

/** The conversation's status and active version, or null when it does not exist. */
export async function conversationStatus(
  db: Db,
  conversationId: string,
): Promise<{ status: 'open' | 'ended'; activeVersion: number | null } | null> {
  const r = await prepared(db, 'select status, active_version from conversations where id = $1', [
    conversationId,
  ]);
  const row = firstRow(r.rows, decodeStatus);
  return row ? { status: row.status, activeVersion: row.active_version } : null;
}

/** Ends the conversation (appends are refused from then on); ending it again keeps the first end time. */
export async function endConversation(db: Db, conversationId: string): Promise<void> {
  await prepared(
    db,
    `update conversations set status = 'ended', ended_at = coalesce(ended_at, now()) where id = $1`,
    [conversationId],
  );
}

/**
 * Undo: makes the content of an earlier version active again, as a new version (so the history
 * of versions stays linear and inspectable). Idempotent by `idemKey`. One transaction, under the
 * conversation lock.
 * @throws StoreError VERSION_NOT_FOUND for a version that does not exist or is staged
 */
export async function restore(
  pool: Pool,
  conversationId: string,
  version: number,
  idemKey: string,
): Promise<ContextTotals> {
  return inTransaction(pool, async (c) => {
    const conv = await lockConversation(c, conversationId);
    const active = requireActive(conv, conversationId);
    const key = `restore:${idemKey}`;
    const restored = await versionByIdemKey(c, conversationId, key);
    if (restored !== undefined) return totalsOf(c, conversationId, restored);
    const source = await prepared(
      c,
      'select status from context_versions where conversation_id = $1 and version = $2',
      [conversationId, version],
    );
    const sourceRow = firstRow(source.rows, decodeVersionStatus);
    if (!sourceRow || sourceRow.status === 'staged') {
      throw new StoreError(
        'VERSION_NOT_FOUND',
        `conversation ${conversationId} has no version ${version} to restore` +
          (sourceRow ? ' (it is a staged version of a running compaction)' : ''),
      );
    }
    const members = await prepared(
      c,
      'select item_id from context_version_items where conversation_id = $1 and version = $2 order by position',
      [conversationId, version],
    );
    const newVersion = await insertVersion(c, conversationId, {
      status: 'active',
      baseVersion: version,
      origin: 'restore',
      compactionId: null,
      idemKey: key,
      itemIds: members.rows.map((r) => decodeMember(r).item_id),
    });
    await supersede(c, conversationId, active);
    await setActiveVersion(c, conversationId, newVersion);
    return totalsOf(c, conversationId, newVersion);
  });
}
