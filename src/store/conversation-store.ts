import type { Pool, PoolClient, QueryResultRow } from 'pg';
import type { ContextItem, ToolCall } from '../context/items';
import {
  assertConversationId,
  compactionFinished,
  compactionNotFound,
  conversationNotFound,
  malformed,
  MalformedRowError,
  noActiveVersion,
  StoreError,
} from './errors';
import { firstRow, jsonObject, rowDecoder } from './row-decoder';
import { ITEM_COLUMNS, itemColumns, rowToItem } from './rows';
import { searchTexts } from './search-document';
import { searchVector } from './search-terms';
import { inTransaction, prepared, textColumn } from './sql';

/** Token and item totals of one context version. */
export interface ContextTotals {
  version: number;
  /** Sum of the stored token counts of the version's items (per-message overhead included). */
  tokens: number;
  itemCount: number;
}

const VERSION_STATUSES = ['active', 'staged', 'superseded', 'discarded'] as const;

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

const COMPACTION_STATUSES = ['running', 'committed', 'rolled_back', 'skipped'] as const;

export type CompactionStatus = (typeof COMPACTION_STATUSES)[number];

export interface CompactionRecord {
  id: string;
  conversationId: string;
  seq: number;
  trigger: string;
  status: CompactionStatus;
  strategy: string | null;
  taskType: string | null;
  focus: string | null;
  baseVersion: number;
  baseItemCount: number | null;
  stagedVersion: number | null;
  tokensBefore: number | null;
  tokensAfter: number | null;
  itemsCompacted: number | null;
  summaryItemId: string | null;
  reason: string | null;
  attempts: number;
  timings: Record<string, number>;
  startedAt: Date;
  finishedAt: Date | null;
}

export interface CompactionEvent {
  key: string;
  phase: string;
  data: Record<string, unknown>;
  createdAt: Date;
}

const decodeConversation = rowDecoder(
  { active_version: 'int?', status: ['open', 'ended'], next_seq: 'bigint', next_version: 'int' },
  malformed('conversation'),
);
type ConversationLockRow = ReturnType<typeof decodeConversation>;

const decodeConversationStatus = rowDecoder(
  { status: ['open', 'ended'], active_version: 'int?' },
  malformed('conversation'),
);
const decodeNextSeq = rowDecoder({ n: 'int' }, malformed('next compaction number'));
const decodeVersionStatus = rowDecoder({ status: VERSION_STATUSES }, malformed('context version'));
const decodeMember = rowDecoder({ item_id: 'text' }, malformed('context version member'));
const decodeItemId = rowDecoder({ id: 'text' }, malformed('item'));
const decodeNextItemSeq = rowDecoder({ next_seq: 'bigint' }, malformed('conversation'));
const decodeRound = rowDecoder({ round: 'int' }, malformed('last round'));
const decodeActiveItemsVersion = rowDecoder({ active_version: 'int' }, malformed('active context'));
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
const decodeCompaction = rowDecoder(
  {
    id: 'text',
    conversation_id: 'text',
    seq: 'int',
    trigger: 'text',
    status: COMPACTION_STATUSES,
    strategy: 'text?',
    task_type: 'text?',
    focus: 'text?',
    base_version: 'int',
    base_item_count: 'int?',
    staged_version: 'int?',
    tokens_before: 'int?',
    tokens_after: 'int?',
    items_compacted: 'int?',
    summary_item_id: 'text?',
    reason: 'text?',
    attempts: 'int',
    timings: 'text',
    started_at: 'timestamp',
    finished_at: 'timestamp?',
  },
  (row, problem) => new MalformedRowError(`compaction ${String(row.id)}`, problem),
);
const decodeEvent = rowDecoder(
  { key: 'text', phase: 'text', data: 'text', created_at: 'timestamp' },
  (row, problem) => new MalformedRowError(`compaction event ${String(row.key)}`, problem),
);

/**
 * The conversation store of DESIGN.md §2. Items are append-only; a context is a version that lists
 * item ids in order; exactly one version per conversation is active. Every write is idempotent:
 * items by id, versions by an idempotency key, membership by (version, item).
 */
export class ConversationStore {
  constructor(readonly pool: Pool) {}

  /** Creates the conversation with a first active version holding `items` (its header). Idempotent. */
  async createConversation(conversationId: string, items: ContextItem[]): Promise<ContextTotals> {
    assertConversationId(conversationId);
    return inTransaction(this.pool, async (c) => {
      await prepared(c, 'insert into conversations (id) values ($1) on conflict (id) do nothing', [
        conversationId,
      ]);
      const conv = await this.lockConversation(c, conversationId);
      if (conv.active_version === null) {
        await this.insertItems(c, conversationId, items);
        const version = await this.insertVersion(c, conversationId, {
          status: 'active',
          baseVersion: null,
          origin: 'start',
          compactionId: null,
          idemKey: 'start',
          itemIds: items.map((i) => i.id),
        });
        await prepared(c, 'update conversations set active_version = $2 where id = $1', [
          conversationId,
          version,
        ]);
      }
      return this.totalsOf(c, conversationId);
    });
  }

  /** Whether the conversation exists. */
  async exists(conversationId: string): Promise<boolean> {
    const r = await prepared(this.pool, 'select 1 from conversations where id = $1', [conversationId]);
    return r.rowCount === 1;
  }

  /**
   * The highest round of the conversation's items (0 for none): the real user rounds already
   * stored, e.g. by `import`, after which a workflow continuing the conversation numbers its own.
   */
  async lastRound(conversationId: string): Promise<number> {
    const r = await prepared(
      this.pool,
      'select coalesce(max(round), 0)::int as round from items where conversation_id = $1',
      [conversationId],
    );
    return firstRow(r.rows, decodeRound)?.round ?? 0;
  }

  /**
   * Appends items to the archive and to the end of the active version, in order.
   * A retried call with the same items changes nothing.
   */
  async appendItems(conversationId: string, items: ContextItem[]): Promise<ContextTotals> {
    return inTransaction(this.pool, async (c) => {
      const conv = await this.lockConversation(c, conversationId);
      if (conv.status === 'ended') {
        throw new StoreError('CONVERSATION_ENDED', `conversation ${conversationId} has ended`);
      }
      const active = requireActive(conv, conversationId);
      await this.insertItems(c, conversationId, items);
      await this.addMembers(
        c,
        conversationId,
        active,
        items.map((i) => i.id),
      );
      return this.totalsOf(c, conversationId, active);
    });
  }

  /** Removes the ephemeral items from the active version (they were meant for one model call). */
  async dropEphemeral(conversationId: string): Promise<ContextTotals> {
    return inTransaction(this.pool, async (c) => {
      const conv = await this.lockConversation(c, conversationId);
      const active = requireActive(conv, conversationId);
      const removed = await prepared(
        c,
        `delete from context_version_items m using items i
          where m.conversation_id = $1 and m.version = $2 and i.id = m.item_id and i.ephemeral`,
        [conversationId, active],
      );
      if ((removed.rowCount ?? 0) > 0) await this.renumber(c, conversationId, active);
      return this.totalsOf(c, conversationId, active);
    });
  }

  /** The items of the active version, in order. */
  async getActiveContext(conversationId: string): Promise<{ version: number; items: ContextItem[] }> {
    // One round trip in the common case (asked before every model call); the checks below only
    // run to say why nothing came back.
    const r = await prepared(
      this.pool,
      `select c.active_version, ${ITEM_COLUMNS}
         from conversations c
         join context_version_items m on m.conversation_id = c.id and m.version = c.active_version
         join items i on i.id = m.item_id
        where c.id = $1 order by m.position`,
      [conversationId],
    );
    const first = firstRow(r.rows, decodeActiveItemsVersion);
    if (first) return { version: first.active_version, items: r.rows.map(rowToItem) };
    const conv = await prepared(this.pool, 'select active_version from conversations where id = $1', [
      conversationId,
    ]);
    const row = firstRow(conv.rows, decodeActiveVersion);
    if (!row) throw conversationNotFound(conversationId);
    if (row.active_version === null) {
      throw noActiveVersion(conversationId);
    }
    return {
      version: row.active_version,
      items: await this.getVersionItems(conversationId, row.active_version),
    };
  }

  /** The items of one version, in order. */
  async getVersionItems(conversationId: string, version: number): Promise<ContextItem[]> {
    const exists = await prepared(
      this.pool,
      'select 1 from context_versions where conversation_id = $1 and version = $2',
      [conversationId, version],
    );
    if (exists.rowCount !== 1) {
      throw new StoreError('VERSION_NOT_FOUND', `conversation ${conversationId} has no version ${version}`);
    }
    const r = await prepared(
      this.pool,
      `select ${ITEM_COLUMNS} from context_version_items m join items i on i.id = m.item_id
        where m.conversation_id = $1 and m.version = $2 order by m.position`,
      [conversationId, version],
    );
    return r.rows.map(rowToItem);
  }

  /** Items by id (any conversation), in the order asked; missing ids raise ITEM_NOT_FOUND. */
  async getItems(ids: string[]): Promise<ContextItem[]> {
    if (ids.length === 0) return [];
    const r = await prepared(this.pool, `select ${ITEM_COLUMNS} from items i where i.id = any($1)`, [ids]);
    const byId = new Map(
      r.rows.map((row) => {
        const item = rowToItem(row);
        return [item.id, item];
      }),
    );
    return ids.map((id) => {
      const item = byId.get(id);
      if (!item) throw new StoreError('ITEM_NOT_FOUND', `item ${id} does not exist`);
      return item;
    });
  }

  /** Items by id that exist, in the order asked; missing ids are left out. */
  async getItemsIfPresent(ids: string[]): Promise<ContextItem[]> {
    if (ids.length === 0) return [];
    const r = await prepared(this.pool, `select ${ITEM_COLUMNS} from items i where i.id = any($1)`, [ids]);
    const byId = new Map(
      r.rows.map((row) => {
        const item = rowToItem(row);
        return [item.id, item];
      }),
    );
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /** Every item ever appended to the conversation, in append order (the archive). */
  async getArchive(conversationId: string): Promise<ContextItem[]> {
    const r = await prepared(
      this.pool,
      `select ${ITEM_COLUMNS} from items i where i.conversation_id = $1 order by i.seq`,
      [conversationId],
    );
    return r.rows.map(rowToItem);
  }

  /** Totals of the active version (or of `version`). */
  async totals(conversationId: string, version?: number): Promise<ContextTotals> {
    const c = await this.pool.connect();
    try {
      return await this.totalsOf(c, conversationId, version);
    } finally {
      c.release();
    }
  }

  async listVersions(conversationId: string): Promise<VersionInfo[]> {
    const r = await prepared(
      this.pool,
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

  async conversationStatus(
    conversationId: string,
  ): Promise<{ status: 'open' | 'ended'; activeVersion: number | null } | null> {
    const r = await prepared(this.pool, 'select status, active_version from conversations where id = $1', [
      conversationId,
    ]);
    const row = firstRow(r.rows, decodeConversationStatus);
    return row ? { status: row.status, activeVersion: row.active_version } : null;
  }

  async endConversation(conversationId: string): Promise<void> {
    await prepared(
      this.pool,
      `update conversations set status = 'ended', ended_at = coalesce(ended_at, now()) where id = $1`,
      [conversationId],
    );
  }

  // ---- compaction -------------------------------------------------------------------------

  /**
   * Records the start of a compaction against the active version. Idempotent by id: a retry returns
   * the record as first written.
   */
  async beginCompaction(input: {
    id: string;
    conversationId: string;
    seq: number;
    trigger: string;
    focus?: string | null;
  }): Promise<CompactionRecord> {
    return inTransaction(this.pool, async (c) => {
      const existing = await this.compactionOn(c, input.id);
      if (existing) return existing;
      const conv = await this.lockConversation(c, input.conversationId);
      const active = requireActive(conv, input.conversationId);
      const totals = await this.totalsOf(c, input.conversationId, active);
      await prepared(
        c,
        `insert into compactions (id, conversation_id, seq, trigger, status, focus, base_version, base_item_count,
                                  tokens_before)
         values ($1, $2, $3, $4, 'running', $5, $6, $7, $8)`,
        [
          input.id,
          input.conversationId,
          input.seq,
          input.trigger,
          textColumn(input.focus ?? null),
          active,
          totals.itemCount,
          totals.tokens,
        ],
      );
      const record = await this.compactionOn(c, input.id);
      if (!record) throw new StoreError('COMPACTION_NOT_FOUND', `compaction ${input.id} vanished`);
      return record;
    });
  }

  /** Records a compaction that was skipped (cooldown, loop guard, rejected confirmation). Idempotent. */
  async recordSkippedCompaction(input: {
    id: string;
    conversationId: string;
    seq: number;
    trigger: string;
    reason: string;
  }): Promise<void> {
    await inTransaction(this.pool, async (c) => {
      const conv = await this.lockConversation(c, input.conversationId);
      const active = requireActive(conv, input.conversationId);
      await prepared(
        c,
        `insert into compactions (id, conversation_id, seq, trigger, status, base_version, reason, finished_at)
         values ($1, $2, $3, $4, 'skipped', $5, $6, now()) on conflict (id) do nothing`,
        [input.id, input.conversationId, input.seq, input.trigger, active, textColumn(input.reason)],
      );
    });
  }

  async getCompaction(id: string): Promise<CompactionRecord | null> {
    const c = await this.pool.connect();
    try {
      return await this.compactionOn(c, id);
    } finally {
      c.release();
    }
  }

  async listCompactions(conversationId: string): Promise<CompactionRecord[]> {
    const r = await prepared(this.pool, 'select * from compactions where conversation_id = $1 order by seq', [
      conversationId,
    ]);
    return r.rows.map(compactionFromRow);
  }

  /** Next compaction number for a conversation (1-based). */
  async nextCompactionSeq(conversationId: string): Promise<number> {
    const r = await prepared(
      this.pool,
      'select coalesce(max(seq), 0)::int + 1 as n from compactions where conversation_id = $1',
      [conversationId],
    );
    return firstRow(r.rows, decodeNextSeq)?.n ?? 1;
  }

  /**
   * Writes a staged version for a running compaction: inserts `newItems` into the archive and
   * lists `memberIds` (existing or new items) in order. Idempotent by `idemKey`.
   */
  async stageVersion(input: {
    compactionId: string;
    idemKey: string;
    baseVersion: number;
    newItems: ContextItem[];
    memberIds: string[];
  }): Promise<ContextTotals> {
    return inTransaction(this.pool, async (c) => {
      const comp = await this.lockRunningCompaction(c, input.compactionId);
      const conversationId = comp.conversationId;
      await this.lockConversation(c, conversationId);
      const key = `${input.compactionId}:${input.idemKey}`;
      const found = await prepared(
        c,
        'select version from context_versions where conversation_id = $1 and idem_key = $2',
        [conversationId, key],
      );
      let version = firstRow(found.rows, decodeVersionNumber)?.version;
      if (version === undefined) {
        await this.insertItems(c, conversationId, input.newItems);
        version = await this.insertVersion(c, conversationId, {
          status: 'staged',
          baseVersion: input.baseVersion,
          origin: 'compaction',
          compactionId: input.compactionId,
          idemKey: key,
          itemIds: input.memberIds,
        });
      }
      await prepared(c, 'update compactions set staged_version = $2 where id = $1', [
        input.compactionId,
        version,
      ]);
      return this.totalsOf(c, conversationId, version);
    });
  }

  /** Updates the descriptive fields of a running compaction (strategy, task type, attempts, timings...). */
  async updateCompaction(
    id: string,
    fields: Partial<{
      strategy: string;
      taskType: string;
      attempts: number;
      itemsCompacted: number;
      summaryItemId: string;
      tokensAfter: number;
      timings: Record<string, number>;
    }>,
  ): Promise<void> {
    const columns: Record<string, unknown> = {
      strategy: fields.strategy,
      task_type: fields.taskType,
      attempts: fields.attempts,
      items_compacted: fields.itemsCompacted,
      summary_item_id: fields.summaryItemId,
      tokens_after: fields.tokensAfter,
      timings: fields.timings === undefined ? undefined : JSON.stringify(fields.timings),
    };
    const set: string[] = [];
    const values: unknown[] = [id];
    for (const [column, value] of Object.entries(columns)) {
      if (value === undefined) continue;
      values.push(value);
      set.push(`${column} = $${values.length}`);
    }
    if (set.length === 0) return;
    await prepared(this.pool, `update compactions set ${set.join(', ')} where id = $1`, values);
  }

  /**
   * Commits a compaction in one transaction: the staged version becomes active if the active
   * version is still the base it was made from (and has not grown). Idempotent: committing a
   * committed compaction returns the same totals.
   */
  async commitCompaction(compactionId: string, stagedVersion?: number): Promise<ContextTotals> {
    return inTransaction(this.pool, async (c) => {
      const comp = await this.compactionOn(c, compactionId, true);
      if (!comp) throw compactionNotFound(compactionId);
      const conv = await this.lockConversation(c, comp.conversationId);
      if (comp.status === 'committed') return this.totalsOf(c, comp.conversationId);
      if (comp.status !== 'running') {
        throw compactionFinished(compactionId, comp.status);
      }
      const chosen = stagedVersion ?? comp.stagedVersion;
      if (chosen === null) {
        throw new StoreError(
          'VERSION_NOT_FOUND',
          `compaction ${compactionId} has no staged version to commit`,
        );
      }
      const stagedRow = await prepared(
        c,
        `select 1 from context_versions where conversation_id = $1 and version = $2 and compaction_id = $3
            and status = 'staged'`,
        [comp.conversationId, chosen, compactionId],
      );
      if (stagedRow.rowCount !== 1) {
        throw new StoreError(
          'VERSION_NOT_FOUND',
          `version ${chosen} is not a staged version of compaction ${compactionId}`,
        );
      }
      const active = requireActive(conv, comp.conversationId);
      const baseTotals = await this.totalsOf(c, comp.conversationId, active);
      if (active !== comp.baseVersion || baseTotals.itemCount !== comp.baseItemCount) {
        throw new StoreError(
          'BASE_VERSION_CHANGED',
          `compaction ${compactionId} was made from version ${comp.baseVersion} (${comp.baseItemCount} items) ` +
            `but the active version is now ${active} (${baseTotals.itemCount} items)`,
        );
      }
      const staged = await this.totalsOf(c, comp.conversationId, chosen);
      await prepared(
        c,
        `update context_versions set status = 'superseded' where conversation_id = $1 and version = $2`,
        [comp.conversationId, active],
      );
      await prepared(
        c,
        `update context_versions set status = case when version = $2 then 'active' else 'discarded' end
          where conversation_id = $1 and compaction_id = $3 and status = 'staged'`,
        [comp.conversationId, chosen, compactionId],
      );
      await prepared(c, 'update conversations set active_version = $2 where id = $1', [
        comp.conversationId,
        chosen,
      ]);
      await prepared(
        c,
        `update compactions set status = 'committed', staged_version = $3, tokens_after = $2, finished_at = now()
          where id = $1`,
        [compactionId, staged.tokens, chosen],
      );
      return staged;
    });
  }

  /**
   * Compensation: discards every staged version of a compaction and marks it rolled back with the
   * reason. Never touches the active version. Idempotent; a committed compaction is left as it is
   * (and reported), because rolling back a committed context is `restore`'s job.
   */
  async discardStaged(
    compactionId: string,
    reason: string,
    outcome: 'rolled_back' | 'skipped' = 'rolled_back',
  ): Promise<{ status: CompactionStatus }> {
    return inTransaction(this.pool, async (c) => {
      const comp = await this.compactionOn(c, compactionId, true);
      if (!comp) return { status: outcome };
      if (comp.status !== 'running') return { status: comp.status };
      await prepared(
        c,
        `update context_versions set status = 'discarded'
          where conversation_id = $1 and compaction_id = $2 and status = 'staged'`,
        [comp.conversationId, compactionId],
      );
      await prepared(
        c,
        `update compactions set status = $3, reason = $2, finished_at = now() where id = $1`,
        [compactionId, textColumn(reason), outcome],
      );
      return { status: outcome };
    });
  }

  /** Records a meta event of a compaction; the same key twice records it once. */
  async recordEvent(
    compactionId: string,
    key: string,
    phase: string,
    data: Record<string, unknown>,
  ): Promise<void> {
    await prepared(
      this.pool,
      `insert into compaction_events (compaction_id, key, phase, data) values ($1, $2, $3, $4)
       on conflict (compaction_id, key) do nothing`,
      [compactionId, key, phase, JSON.stringify(data)],
    );
  }

  async listEvents(compactionId: string): Promise<CompactionEvent[]> {
    const r = await prepared(
      this.pool,
      'select key, phase, data, created_at from compaction_events where compaction_id = $1 order by created_at, key',
      [compactionId],
    );
    return r.rows.map(decodeEvent).map((row) => ({
      key: row.key,
      phase: row.phase,
      data: jsonObject(
        row.data,
        (problem) => new MalformedRowError(`compaction event ${row.key}`, `data: ${problem}`),
      ),
      createdAt: row.created_at,
    }));
  }

  /**
   * Undo: makes the content of an earlier version active again, as a new version (so the history
   * of versions stays linear and inspectable). Idempotent by `idemKey`.
   */
  async restore(conversationId: string, version: number, idemKey: string): Promise<ContextTotals> {
    return inTransaction(this.pool, async (c) => {
      const conv = await this.lockConversation(c, conversationId);
      const active = requireActive(conv, conversationId);
      const key = `restore:${idemKey}`;
      const found = await prepared(
        c,
        'select version from context_versions where conversation_id = $1 and idem_key = $2',
        [conversationId, key],
      );
      const restored = firstRow(found.rows, decodeVersionNumber);
      if (restored) return this.totalsOf(c, conversationId, restored.version);
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
      const newVersion = await this.insertVersion(c, conversationId, {
        status: 'active',
        baseVersion: version,
        origin: 'restore',
        compactionId: null,
        idemKey: key,
        itemIds: members.rows.map((r) => decodeMember(r).item_id),
      });
      await prepared(
        c,
        `update context_versions set status = 'superseded' where conversation_id = $1 and version = $2`,
        [conversationId, active],
      );
      await prepared(c, 'update conversations set active_version = $2 where id = $1', [
        conversationId,
        newVersion,
      ]);
      return this.totalsOf(c, conversationId, newVersion);
    });
  }

  // ---- internals ---------------------------------------------------------------------------

  private async lockConversation(c: PoolClient, conversationId: string): Promise<ConversationLockRow> {
    const r = await prepared(
      c,
      'select active_version, status, next_seq, next_version from conversations where id = $1 for update',
      [conversationId],
    );
    const row = firstRow(r.rows, decodeConversation);
    if (!row) throw conversationNotFound(conversationId);
    return row;
  }

  private async lockRunningCompaction(c: PoolClient, compactionId: string): Promise<CompactionRecord> {
    const comp = await this.compactionOn(c, compactionId, true);
    if (!comp) throw compactionNotFound(compactionId);
    if (comp.status !== 'running') {
      throw compactionFinished(compactionId, comp.status);
    }
    return comp;
  }

  private async compactionOn(c: PoolClient, id: string, forUpdate = false): Promise<CompactionRecord | null> {
    const r = await prepared(c, `select * from compactions where id = $1${forUpdate ? ' for update' : ''}`, [
      id,
    ]);
    return firstRow(r.rows, compactionFromRow) ?? null;
  }

  /** Inserts items that are not in the archive yet, giving them the next sequence numbers. */
  private async insertItems(c: PoolClient, conversationId: string, items: ContextItem[]): Promise<void> {
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
    let seq = Number(firstRow(seqRow.rows, decodeNextItemSeq)?.next_seq ?? 1);
    const calls = await this.callsOf(c, conversationId, fresh);
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
  private async callsOf(
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

  private async insertVersion(
    c: PoolClient,
    conversationId: string,
    v: {
      status: 'active' | 'staged';
      baseVersion: number | null;
      origin: string;
      compactionId: string | null;
      idemKey: string;
      itemIds: string[];
    },
  ): Promise<number> {
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
  private async addMembers(
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
  private async renumber(c: PoolClient, conversationId: string, version: number): Promise<void> {
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

  private async totalsOf(c: PoolClient, conversationId: string, version?: number): Promise<ContextTotals> {
    let v = version;
    if (v === undefined) {
      const r = await prepared(c, 'select active_version from conversations where id = $1', [conversationId]);
      const active = firstRow(r.rows, decodeActiveVersion)?.active_version;
      if (active === undefined || active === null) {
        throw noActiveVersion(conversationId);
      }
      v = active;
    }
    const t = await prepared(
      c,
      `select coalesce(sum(i.tokens), 0)::int as tokens, count(*)::int as item_count
         from context_version_items m join items i on i.id = m.item_id
        where m.conversation_id = $1 and m.version = $2`,
      [conversationId, v],
    );
    const totals = firstRow(t.rows, decodeTotals);
    return { version: v, tokens: totals?.tokens ?? 0, itemCount: totals?.item_count ?? 0 };
  }
}

function requireActive(conv: { active_version: number | null }, conversationId: string): number {
  if (conv.active_version === null) {
    throw noActiveVersion(conversationId);
  }
  return conv.active_version;
}

function compactionFromRow(raw: QueryResultRow): CompactionRecord {
  const row = decodeCompaction(raw);
  const timings = jsonObject(
    row.timings,
    (problem) => new MalformedRowError(`compaction ${row.id}`, `timings: ${problem}`),
  );
  return {
    id: row.id,
    conversationId: row.conversation_id,
    seq: row.seq,
    trigger: row.trigger,
    status: row.status,
    strategy: row.strategy,
    taskType: row.task_type,
    focus: row.focus,
    baseVersion: row.base_version,
    baseItemCount: row.base_item_count,
    stagedVersion: row.staged_version,
    tokensBefore: row.tokens_before,
    tokensAfter: row.tokens_after,
    itemsCompacted: row.items_compacted,
    summaryItemId: row.summary_item_id,
    reason: row.reason,
    attempts: row.attempts,
    timings: timings as Record<string, number>,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}
