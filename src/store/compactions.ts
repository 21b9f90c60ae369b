/**
 * Compaction records (DESIGN.md §2): one `compactions` row per compaction — begun against the
 * active version, described as it runs, finished by `staging.ts` — and its meta events. This
 * module owns those rows; it never changes a context version.
 */
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { compactionFinished, compactionNotFound, malformed, MalformedRowError, StoreError } from './errors';
import { firstRow, jsonObject, rowDecoder } from './row-decoder';
import { inTransaction, prepared, textColumn, type Db } from './sql';
import { lockConversation, requireActive, totalsOf } from './versions';

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

/** What a compaction starts with (its id is the idempotency key). */
export interface CompactionStart {
  id: string;
  conversationId: string;
  seq: number;
  trigger: string;
  focus?: string | null;
}

/** The descriptive fields of a running compaction that `updateCompaction` sets. */
export type CompactionFields = Partial<{
  strategy: string;
  taskType: string;
  attempts: number;
  itemsCompacted: number;
  summaryItemId: string;
  tokensAfter: number;
  timings: Record<string, number>;
}>;

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
const decodeNextSeq = rowDecoder({ n: 'int' }, malformed('next compaction number'));

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

/** The compaction's record, or null; `forUpdate` locks its row until the transaction ends. */
export async function getCompaction(db: Db, id: string, forUpdate = false): Promise<CompactionRecord | null> {
  const r = await prepared(db, `select * from compactions where id = $1${forUpdate ? ' for update' : ''}`, [
    id,
  ]);
  return firstRow(r.rows, compactionFromRow) ?? null;
}

/**
 * Locks a running compaction's row.
 * @throws StoreError COMPACTION_NOT_FOUND, COMPACTION_FINISHED
 */
export async function lockRunningCompaction(c: PoolClient, compactionId: string): Promise<CompactionRecord> {
  const comp = await getCompaction(c, compactionId, true);
  if (!comp) throw compactionNotFound(compactionId);
  if (comp.status !== 'running') {
    throw compactionFinished(compactionId, comp.status);
  }
  return comp;
}

/**
 * Records the start of a compaction against the active version. Idempotent by id: a retry returns
 * the record as first written.
 */
export async function beginCompaction(pool: Pool, input: CompactionStart): Promise<CompactionRecord> {
  return inTransaction(pool, async (c) => {
    const existing = await getCompaction(c, input.id);
    if (existing) return existing;
    const conv = await lockConversation(c, input.conversationId);
    const active = requireActive(conv, input.conversationId);
    const totals = await totalsOf(c, input.conversationId, active);
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
    const record = await getCompaction(c, input.id);
    if (!record) throw new StoreError('COMPACTION_NOT_FOUND', `compaction ${input.id} vanished`);
    return record;
  });
}

/** Records a compaction that was skipped (cooldown, loop guard, rejected confirmation). Idempotent. */
export async function recordSkippedCompaction(
  pool: Pool,
  input: Omit<CompactionStart, 'focus'> & { reason: string },
): Promise<void> {
  await inTransaction(pool, async (c) => {
    const conv = await lockConversation(c, input.conversationId);
    const active = requireActive(conv, input.conversationId);
    await prepared(
      c,
      `insert into compactions (id, conversation_id, seq, trigger, status, base_version, reason, finished_at)
         values ($1, $2, $3, $4, 'skipped', $5, $6, now()) on conflict (id) do nothing`,
      [input.id, input.conversationId, input.seq, input.trigger, active, textColumn(input.reason)],
    );
  });
}

/** The conversation's compactions, by number. */
export async function listCompactions(db: Db, conversationId: string): Promise<CompactionRecord[]> {
  const r = await prepared(db, 'select * from compactions where conversation_id = $1 order by seq', [
    conversationId,
  ]);
  return r.rows.map(compactionFromRow);
}

/** Next compaction number for a conversation (1-based). */
export async function nextCompactionSeq(db: Db, conversationId: string): Promise<number> {
  const r = await prepared(
    db,
    'select coalesce(max(seq), 0)::int + 1 as n from compactions where conversation_id = $1',
    [conversationId],
  );
  return firstRow(r.rows, decodeNextSeq)?.n ?? 1;
}

/** Updates the descriptive fields of a running compaction (strategy, task type, attempts, timings...). */
export async function updateCompaction(db: Db, id: string, fields: CompactionFields): Promise<void> {
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
  await prepared(db, `update compactions set ${set.join(', ')} where id = $1`, values);
}

/** Records a meta event of a compaction; the same key twice records it once. */
export async function recordEvent(
  db: Db,
  compactionId: string,
  key: string,
  phase: string,
  data: Record<string, unknown>,
): Promise<void> {
  await prepared(
    db,
    `insert into compaction_events (compaction_id, key, phase, data) values ($1, $2, $3, $4)
       on conflict (compaction_id, key) do nothing`,
    [compactionId, key, phase, JSON.stringify(data)],
  );
}

/** The compaction's meta events, in the order they were recorded. */
export async function listEvents(db: Db, compactionId: string): Promise<CompactionEvent[]> {
  const r = await prepared(
    db,
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
