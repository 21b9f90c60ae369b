/**
 * Context versions (DESIGN.md §2): a version lists item ids in order, and the conversation row
 * names the active one and counts the next version number. This module owns those statements —
 * locking the conversation row, writing a version and its members, closing gaps, switching the
 * active version, measuring and listing versions. A write here runs on the client of a
 * transaction whose caller holds the conversation lock ({@link lockConversation}).
 */
import type { PoolClient } from 'pg';
import { conversationNotFound, malformed, MalformedRowError, noActiveVersion, StoreError } from './errors';
import { firstRow, rowDecoder } from './row-decoder';
import { prepared, type Db } from './sql';

/** Token and item totals of one context version. */
export interface ContextTotals {
  version: number;
  /** Sum of the stored token counts of the version's items (per-message overhead included). */
  tokens: number;
  itemCount: number;
}

export const VERSION_STATUSES = ['active', 'staged', 'superseded', 'discarded'] as const;

export interface VersionInfo {
  version: number;
  status: (typeof VERSION_STATUSES)[number];
  baseVersion: number | null;
  origin: string;
  compactionId: string | null;
  tokens: number;
  itemCount: number;
  createdAt: Date;
}

/** A version to write: its members in order, and the key a retried writer finds it by. */
export interface NewVersion {
  status: 'active' | 'staged';
  baseVersion: number | null;
  origin: string;
  compactionId: string | null;
  idemKey: string;
  itemIds: string[];
}

const decodeConversation = rowDecoder(
  { active_version: 'int?', status: ['open', 'ended'], next_seq: 'bigint', next_version: 'int' },
  malformed('conversation'),
);
/** The conversation row, read under its lock. */
export type ConversationLock = ReturnType<typeof decodeConversation>;

const decodeActiveVersion = rowDecoder({ active_version: 'int?' }, malformed('conversation'));
const decodeVersionNumber = rowDecoder({ version: 'int' }, malformed('context version'));
const decodeTotals = rowDecoder({ tokens: 'int', item_count: 'int' }, malformed('version totals'));
const decodeVersionInfo = rowDecoder(
  {
    version: 'int',
    status: VERSION_STATUSES,
    base_version: 'int?',
    origin: 'text',
    compaction_id: 'text?',
    created_at: 'timestamp',
    tokens: 'int',
    item_count: 'int',
  },
  (row, problem) => new MalformedRowError(`context version ${String(row.version)}`, problem),
);

/**
 * Locks the conversation row (`for update`) until the transaction ends: every write to a
 * conversation's versions or items takes this lock first, so they run one at a time.
 * @throws StoreError CONVERSATION_NOT_FOUND
 */
export async function lockConversation(c: PoolClient, conversationId: string): Promise<ConversationLock> {
  const r = await prepared(
    c,
    'select active_version, status, next_seq, next_version from conversations where id = $1 for update',
    [conversationId],
  );
  const row = firstRow(r.rows, decodeConversation);
  if (!row) throw conversationNotFound(conversationId);
  return row;
}

/**
 * The active version of a locked conversation.
 * @throws StoreError VERSION_NOT_FOUND before its first version
 */
export function requireActive(conv: { active_version: number | null }, conversationId: string): number {
  if (conv.active_version === null) {
    throw noActiveVersion(conversationId);
  }
  return conv.active_version;
}

/** The conversation's active version, without a lock: null before its first, undefined when it does not exist. */
export async function activeVersionOf(db: Db, conversationId: string): Promise<number | null | undefined> {
  const r = await prepared(db, 'select active_version from conversations where id = $1', [conversationId]);
  return firstRow(r.rows, decodeActiveVersion)?.active_version;
}

/** The version a writer already wrote under `idemKey`, if any (how a retried write finds its version). */
export async function versionByIdemKey(
  c: PoolClient,
  conversationId: string,
  idemKey: string,
): Promise<number | undefined> {
  const found = await prepared(
    c,
    'select version from context_versions where conversation_id = $1 and idem_key = $2',
    [conversationId, idemKey],
  );
  return firstRow(found.rows, decodeVersionNumber)?.version;
}

/** Writes a version with the next version number and its members in order; returns its number. */
export async function insertVersion(c: PoolClient, conversationId: string, v: NewVersion): Promise<number> {
  const r = await prepared(
    c,
    'update conversations set next_version = next_version + 1 where id = $1 returning next_version - 1 as version',
    [conversationId],
  );
  const version = firstRow(r.rows, decodeVersionNumber)?.version;
  if (version === undefined)
    throw new StoreError('CONVERSATION_NOT_FOUND', `conversation ${conversationId} vanished`);
  await prepared(
    c,
    `insert into context_versions (conversation_id, version, status, base_version, origin, compaction_id, idem_key)
       values ($1, $2, $3, $4, $5, $6, $7)`,
    [conversationId, version, v.status, v.baseVersion, v.origin, v.compactionId, v.idemKey],
  );
  await prepared(
    c,
    `insert into context_version_items (conversation_id, version, position, item_id)
       select $1, $2, ord - 1, id from unnest($3::text[]) with ordinality as t(id, ord)`,
    [conversationId, version, v.itemIds],
  );
  return version;
}

/** Adds items at the end of a version, skipping those already in it. */
export async function addMembers(
  c: PoolClient,
  conversationId: string,
  version: number,
  ids: string[],
): Promise<void> {
  if (ids.length === 0) return;
  await prepared(
    c,
    `insert into context_version_items (conversation_id, version, position, item_id)
       select $1, $2, base.n + t.ord - 1, t.id
         from unnest($3::text[]) with ordinality as t(id, ord),
              (select coalesce(max(position) + 1, 0) as n from context_version_items
                where conversation_id = $1 and version = $2) base
        where not exists (select 1 from context_version_items m
                           where m.conversation_id = $1 and m.version = $2 and m.item_id = t.id)`,
    [conversationId, version, ids],
  );
}

/** Closes gaps in positions after removals (positions stay 0..n-1, in order). */
export async function renumber(c: PoolClient, conversationId: string, version: number): Promise<void> {
  await prepared(
    c,
    `update context_version_items m set position = -1 - r.rn
         from (select item_id, row_number() over (order by position) - 1 as rn from context_version_items
                where conversation_id = $1 and version = $2) r
        where m.conversation_id = $1 and m.version = $2 and m.item_id = r.item_id`,
    [conversationId, version],
  );
  await prepared(
    c,
    'update context_version_items set position = -1 - position where conversation_id = $1 and version = $2',
    [conversationId, version],
  );
}

/** Marks a version that was active as superseded (a commit or a restore replaced it). */
export async function supersede(c: PoolClient, conversationId: string, version: number): Promise<void> {
  await prepared(
    c,
    `update context_versions set status = 'superseded' where conversation_id = $1 and version = $2`,
    [conversationId, version],
  );
}

/** Names `version` as the conversation's active version. */
export async function setActiveVersion(
  c: PoolClient,
  conversationId: string,
  version: number,
): Promise<void> {
  await prepared(c, 'update conversations set active_version = $2 where id = $1', [conversationId, version]);
}

/**
 * Totals of the active version (or of `version`).
 * @throws StoreError VERSION_NOT_FOUND when no version is given and the conversation has no active one
 */
export async function totalsOf(db: Db, conversationId: string, version?: number): Promise<ContextTotals> {
  let v = version;
  if (v === undefined) {
    const active = await activeVersionOf(db, conversationId);
    if (active === undefined || active === null) {
      throw noActiveVersion(conversationId);
    }
    v = active;
  }
  const t = await prepared(
    db,
    `select coalesce(sum(i.tokens), 0)::int as tokens, count(*)::int as item_count
         from context_version_items m join items i on i.id = m.item_id
        where m.conversation_id = $1 and m.version = $2`,
    [conversationId, v],
  );
  const totals = firstRow(t.rows, decodeTotals);
  return { version: v, tokens: totals?.tokens ?? 0, itemCount: totals?.item_count ?? 0 };
}

/** Every version of the conversation with its totals, oldest first. */
export async function listVersions(db: Db, conversationId: string): Promise<VersionInfo[]> {
  const r = await prepared(
    db,
    `select v.version, v.status, v.base_version, v.origin, v.compaction_id, v.created_at,
              coalesce(sum(i.tokens), 0)::int as tokens, count(m.item_id)::int as item_count
         from context_versions v
         left join context_version_items m on m.conversation_id = v.conversation_id and m.version = v.version
         left join items i on i.id = m.item_id
        where v.conversation_id = $1
        group by v.conversation_id, v.version order by v.version`,
    [conversationId],
  );
  return r.rows.map(decodeVersionInfo).map((row) => ({
    version: row.version,
    status: row.status,
    baseVersion: row.base_version,
    origin: row.origin,
    compactionId: row.compaction_id,
    tokens: row.tokens,
    itemCount: row.item_count,
    createdAt: row.created_at,
  }));
}
