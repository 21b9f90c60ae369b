/**
 * A compaction's staged versions (DESIGN.md §2, "never replace history before the replacement is
 * validated"): writing one beside the active version, committing it if the active version is
 * still its base, or discarding it as compensation. Each is one transaction that locks the
 * compaction's row first and then, to stage or commit, the conversation's.
 */
import type { Pool } from 'pg';
import type { ContextItem } from '../context/items';
import { compactionFinished, compactionNotFound, StoreError } from './errors';
import { getCompaction, lockRunningCompaction, type CompactionStatus } from './compactions';
import { insertItems } from './items';
import { inTransaction, prepared, textColumn } from './sql';
import {
  insertVersion,
  lockConversation,
  requireActive,
  setActiveVersion,
  supersede,
  totalsOf,
  versionByIdemKey,
  type ContextTotals,
} from './versions';

/** A staged version to write: its new items and its members in order (existing or new items). */
export interface StagedVersion {
  compactionId: string;
  idemKey: string;
  baseVersion: number;
  newItems: ContextItem[];
  memberIds: string[];
}

/**
 * Writes a staged version for a running compaction: inserts `newItems` into the archive and
 * lists `memberIds` (existing or new items) in order. Idempotent by `idemKey`.
 * @throws StoreError COMPACTION_NOT_FOUND, COMPACTION_FINISHED
 */
export async function stageVersion(pool: Pool, input: StagedVersion): Promise<ContextTotals> {
  return inTransaction(pool, async (c) => {
    const comp = await lockRunningCompaction(c, input.compactionId);
    const conversationId = comp.conversationId;
    await lockConversation(c, conversationId);
    const key = `${input.compactionId}:${input.idemKey}`;
    let version = await versionByIdemKey(c, conversationId, key);
    if (version === undefined) {
      await insertItems(c, conversationId, input.newItems);
      version = await insertVersion(c, conversationId, {
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
    return totalsOf(c, conversationId, version);
  });
}

/**
 * Commits a compaction in one transaction: the staged version becomes active if the active
 * version is still the base it was made from (and has not grown). Idempotent: committing a
 * committed compaction returns the same totals.
 * @throws StoreError COMPACTION_NOT_FOUND, COMPACTION_FINISHED (rolled back or skipped),
 * VERSION_NOT_FOUND (nothing staged), BASE_VERSION_CHANGED
 */
export async function commitCompaction(
  pool: Pool,
  compactionId: string,
  stagedVersion?: number,
): Promise<ContextTotals> {
  return inTransaction(pool, async (c) => {
    const comp = await getCompaction(c, compactionId, true);
    if (!comp) throw compactionNotFound(compactionId);
    const conv = await lockConversation(c, comp.conversationId);
    if (comp.status === 'committed') return totalsOf(c, comp.conversationId);
    if (comp.status !== 'running') {
      throw compactionFinished(compactionId, comp.status);
    }
    const chosen = stagedVersion ?? comp.stagedVersion;
    if (chosen === null) {
      throw new StoreError('VERSION_NOT_FOUND', `compaction ${compactionId} has no staged version to commit`);
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
    const baseTotals = await totalsOf(c, comp.conversationId, active);
    if (active !== comp.baseVersion || baseTotals.itemCount !== comp.baseItemCount) {
      throw new StoreError(
        'BASE_VERSION_CHANGED',
        `compaction ${compactionId} was made from version ${comp.baseVersion} (${comp.baseItemCount} items) ` +
          `but the active version is now ${active} (${baseTotals.itemCount} items)`,
      );
    }
    const staged = await totalsOf(c, comp.conversationId, chosen);
    await supersede(c, comp.conversationId, active);
    await prepared(
      c,
      `update context_versions set status = case when version = $2 then 'active' else 'discarded' end
          where conversation_id = $1 and compaction_id = $3 and status = 'staged'`,
      [comp.conversationId, chosen, compactionId],
    );
    await setActiveVersion(c, comp.conversationId, chosen);
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
export async function discardStaged(
  pool: Pool,
  compactionId: string,
  reason: string,
  outcome: 'rolled_back' | 'skipped' = 'rolled_back',
): Promise<{ status: CompactionStatus }> {
  return inTransaction(pool, async (c) => {
    const comp = await getCompaction(c, compactionId, true);
    if (!comp) return { status: outcome };
    if (comp.status !== 'running') return { status: comp.status };
    await prepared(
      c,
      `update context_versions set status = 'discarded'
          where conversation_id = $1 and compaction_id = $2 and status = 'staged'`,
      [comp.conversationId, compactionId],
    );
    await prepared(c, `update compactions set status = $3, reason = $2, finished_at = now() where id = $1`, [
      compactionId,
      textColumn(reason),
      outcome,
    ]);
    return { status: outcome };
  });
}
