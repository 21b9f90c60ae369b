/**
 * What the bad-input corpus shares: a snapshot of everything the store holds for one conversation
 * (read with plain SQL, so a store bug cannot hide itself), a way to write a session file, and the
 * assertion that a failing call left the store as it was.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { expect } from 'vitest';

/** Every row the store holds for a conversation, in a stable order (timestamps left out). */
export interface StoreSnapshot {
  conversation: unknown[];
  items: unknown[];
  versions: unknown[];
  members: unknown[];
  compactions: unknown[];
  events: unknown[];
}

/** Reads every row of the conversation `id` from each table of the store. */
export async function storeSnapshot(pool: Pool, id: string): Promise<StoreSnapshot> {
  const rows = async (sql: string): Promise<unknown[]> => (await pool.query(sql, [id])).rows;
  return {
    conversation: await rows(
      'select id, active_version, status, next_seq, next_version from conversations where id = $1',
    ),
    items: await rows(
      `select id, seq, type, role, body, tokens, round, is_meta, pinned, ephemeral, source_id, attrs
         from items where conversation_id = $1 order by seq`,
    ),
    versions: await rows(
      `select version, status, base_version, origin, compaction_id, idem_key
         from context_versions where conversation_id = $1 order by version`,
    ),
    members: await rows(
      `select version, position, item_id from context_version_items
        where conversation_id = $1 order by version, position`,
    ),
    compactions: await rows(
      `select id, seq, trigger, status, focus, base_version, staged_version, reason
         from compactions where conversation_id = $1 order by seq`,
    ),
    events: await rows(
      `select e.compaction_id, e.key, e.phase, e.data from compaction_events e
         join compactions c on c.id = e.compaction_id where c.conversation_id = $1 order by e.compaction_id, e.key`,
    ),
  };
}

/** Rows in every table of the store (a refused write must not add any, under any id). */
export async function tableCounts(pool: Pool): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of [
    'conversations',
    'items',
    'context_versions',
    'context_version_items',
    'compactions',
    'compaction_events',
  ]) {
    const r = await pool.query<{ n: number }>(`select count(*)::int as n from ${table}`);
    out[table] = r.rows[0]?.n ?? -1;
  }
  return out;
}

/**
 * Runs `act`, which must fail with an error matching `message`, and checks that the conversation's
 * rows are exactly what they were before. Returns the error for further checks.
 */
export async function expectRefusedUnchanged(
  pool: Pool,
  conversationId: string,
  act: () => Promise<unknown>,
  message: RegExp | string,
): Promise<Error> {
  const before = await storeSnapshot(pool, conversationId);
  let caught: unknown;
  try {
    await act();
  } catch (err) {
    caught = err;
  }
  expect(caught, 'the call should have failed').toBeInstanceOf(Error);
  expect((caught as Error).message).toMatch(message);
  expect(await storeSnapshot(pool, conversationId)).toStrictEqual(before);
  return caught as Error;
}

/** An empty snapshot: what the store holds for an id it has never seen. */
export const NOTHING: StoreSnapshot = {
  conversation: [],
  items: [],
  versions: [],
  members: [],
  compactions: [],
  events: [],
};

let dir: string | undefined;
/** Writes `text` to a fresh file named `name` in a temporary directory; returns its path. */
export function sessionFile(name: string, text: string): string {
  dir ??= mkdtempSync(join(tmpdir(), 'dc-bad-input-'));
  const path = join(dir, `${Date.now()}-${Math.random().toString(36).slice(2, 8)}-${name}`);
  writeFileSync(path, text);
  return path;
}

/** Removes the files {@link sessionFile} wrote (call it in `afterAll`). */
export function removeSessionFiles(): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
}

/** The innermost failure of a Temporal error chain (workflow → activity → application failure). */
export function innermostFailure(err: unknown): { type: string | undefined; message: string } {
  let at: unknown = err;
  while (typeof at === 'object' && at !== null && 'cause' in at && at.cause) at = at.cause;
  const failure = at as { type?: string; message?: string };
  return { type: failure.type, message: failure.message ?? String(at) };
}

/** Waits for `promise` to reject and returns its error (fails the test if it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection, but the call succeeded');
}
