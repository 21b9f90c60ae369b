/**
 * The conversation store of DESIGN.md §2, as one object the activities, the CLI and recall hold:
 * each method is one operation of the modules beside this file, run on its pool. What a method
 * promises is written on the function it calls.
 */
import type { Pool } from 'pg';
import type { ContextItem } from '../context/items';
import {
  beginCompaction,
  getCompaction,
  listCompactions,
  listEvents,
  nextCompactionSeq,
  recordEvent,
  recordSkippedCompaction,
  updateCompaction,
  type CompactionEvent,
  type CompactionFields,
  type CompactionRecord,
  type CompactionStart,
  type CompactionStatus,
} from './compactions';
import {
  appendItems,
  conversationExists,
  conversationStatus,
  createConversation,
  dropEphemeral,
  endConversation,
  lastRound,
  restore,
} from './conversations';
import { getActiveContext, getArchive, getItems, getItemsIfPresent, getVersionItems } from './items';
import { commitCompaction, discardStaged, stageVersion, type StagedVersion } from './staging';
import { listVersions, totalsOf, type ContextTotals, type VersionInfo } from './versions';

export type { CompactionEvent, CompactionRecord, CompactionStatus } from './compactions';
export type { ContextTotals, VersionInfo } from './versions';

/**
 * Items are append-only; a context is a version that lists item ids in order; exactly one version
 * per conversation is active. Every write is idempotent: items by id, versions by an idempotency
 * key, membership by (version, item).
 */
export class ConversationStore {
  constructor(readonly pool: Pool) {}

  /** Creates the conversation with a first active version holding `items` (its header). Idempotent. */
  createConversation(conversationId: string, items: ContextItem[]): Promise<ContextTotals> {
    return createConversation(this.pool, conversationId, items);
  }

  /** Whether the conversation exists. */
  exists(conversationId: string): Promise<boolean> {
    return conversationExists(this.pool, conversationId);
  }

  /** The highest round of the conversation's items (0 for none). */
  lastRound(conversationId: string): Promise<number> {
    return lastRound(this.pool, conversationId);
  }

  /** Appends items to the archive and to the end of the active version, in order. Idempotent. */
  appendItems(conversationId: string, items: ContextItem[]): Promise<ContextTotals> {
    return appendItems(this.pool, conversationId, items);
  }

  /** Removes the ephemeral items from the active version (they were meant for one model call). */
  dropEphemeral(conversationId: string): Promise<ContextTotals> {
    return dropEphemeral(this.pool, conversationId);
  }

  /** The items of the active version, in order. */
  getActiveContext(conversationId: string): Promise<{ version: number; items: ContextItem[] }> {
    return getActiveContext(this.pool, conversationId);
  }

  /** The items of one version, in order. */
  getVersionItems(conversationId: string, version: number): Promise<ContextItem[]> {
    return getVersionItems(this.pool, conversationId, version);
  }

  /** Items by id (any conversation), in the order asked; missing ids raise ITEM_NOT_FOUND. */
  getItems(ids: string[]): Promise<ContextItem[]> {
    return getItems(this.pool, ids);
  }

  /** Items by id that exist, in the order asked; missing ids are left out. */
  getItemsIfPresent(ids: string[]): Promise<ContextItem[]> {
    return getItemsIfPresent(this.pool, ids);
  }

  /** Every item ever appended to the conversation, in append order (the archive). */
  getArchive(conversationId: string): Promise<ContextItem[]> {
    return getArchive(this.pool, conversationId);
  }

  /** Totals of the active version (or of `version`). */
  totals(conversationId: string, version?: number): Promise<ContextTotals> {
    return totalsOf(this.pool, conversationId, version);
  }

  /** Every version of the conversation with its totals, oldest first. */
  listVersions(conversationId: string): Promise<VersionInfo[]> {
    return listVersions(this.pool, conversationId);
  }

  /** The conversation's status and active version, or null when it does not exist. */
  conversationStatus(
    conversationId: string,
  ): Promise<{ status: 'open' | 'ended'; activeVersion: number | null } | null> {
    return conversationStatus(this.pool, conversationId);
  }

  /** Ends the conversation: appends are refused from then on. */
  endConversation(conversationId: string): Promise<void> {
    return endConversation(this.pool, conversationId);
  }

  /** Undo: makes an earlier version's content active again, as a new version. Idempotent by `idemKey`. */
  restore(conversationId: string, version: number, idemKey: string): Promise<ContextTotals> {
    return restore(this.pool, conversationId, version, idemKey);
  }

  // ---- compaction -------------------------------------------------------------------------

  /** Records the start of a compaction against the active version. Idempotent by id. */
  beginCompaction(input: CompactionStart): Promise<CompactionRecord> {
    return beginCompaction(this.pool, input);
  }

  /** Records a compaction that was skipped (cooldown, loop guard, rejected confirmation). Idempotent. */
  recordSkippedCompaction(input: Omit<CompactionStart, 'focus'> & { reason: string }): Promise<void> {
    return recordSkippedCompaction(this.pool, input);
  }

  /** The compaction's record, or null. */
  getCompaction(id: string): Promise<CompactionRecord | null> {
    return getCompaction(this.pool, id);
  }

  /** The conversation's compactions, by number. */
  listCompactions(conversationId: string): Promise<CompactionRecord[]> {
    return listCompactions(this.pool, conversationId);
  }

  /** Next compaction number for a conversation (1-based). */
  nextCompactionSeq(conversationId: string): Promise<number> {
    return nextCompactionSeq(this.pool, conversationId);
  }

  /** Writes a staged version for a running compaction. Idempotent by `idemKey`. */
  stageVersion(input: StagedVersion): Promise<ContextTotals> {
    return stageVersion(this.pool, input);
  }

  /** Updates the descriptive fields of a running compaction (strategy, task type, attempts, timings...). */
  updateCompaction(id: string, fields: CompactionFields): Promise<void> {
    return updateCompaction(this.pool, id, fields);
  }

  /** Makes the staged version active if the active version is still its base. Idempotent. */
  commitCompaction(compactionId: string, stagedVersion?: number): Promise<ContextTotals> {
    return commitCompaction(this.pool, compactionId, stagedVersion);
  }

  /** Compensation: discards a compaction's staged versions and records why. Idempotent. */
  discardStaged(
    compactionId: string,
    reason: string,
    outcome: 'rolled_back' | 'skipped' = 'rolled_back',
  ): Promise<{ status: CompactionStatus }> {
    return discardStaged(this.pool, compactionId, reason, outcome);
  }

  /** Records a meta event of a compaction; the same key twice records it once. */
  recordEvent(
    compactionId: string,
    key: string,
    phase: string,
    data: Record<string, unknown>,
  ): Promise<void> {
    return recordEvent(this.pool, compactionId, key, phase, data);
  }

  /** The compaction's meta events, in the order they were recorded. */
  listEvents(compactionId: string): Promise<CompactionEvent[]> {
    return listEvents(this.pool, compactionId);
  }
}
