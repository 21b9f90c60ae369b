import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withFacts } from '../../../src/context/item-facts';
import type { ContextItem } from '../../../src/context/items';
import { ConversationStore, StoreError } from '../../../src/store';
import { testDatabaseUrl } from '../../support/harness';

let pool: Pool;
let store: ConversationStore;

beforeAll(() => {
  pool = new Pool({ connectionString: testDatabaseUrl(), max: 4 });
  store = new ConversationStore(pool);
});
afterAll(async () => {
  await pool.end();
});

function user(id: string, text: string, round: number): ContextItem {
  return {
    id,
    type: 'USER_MESSAGE',
    message: { role: 'user', content: text },
    tokens: Math.ceil(text.length / 4) + 3,
    round,
    isMeta: false,
    pinned: false,
    ephemeral: false,
  };
}

function system(id: string, text: string): ContextItem {
  return {
    id,
    type: 'SYSTEM_PROMPT',
    message: { role: 'system', content: text },
    tokens: Math.ceil(text.length / 4) + 3,
    round: 0,
    isMeta: false,
    pinned: false,
    ephemeral: false,
  };
}

function newId(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

async function count(sql: string, params: unknown[]): Promise<number> {
  const r = await pool.query<{ n: number }>(`select count(*)::int as n from (${sql}) t`, params);
  return r.rows[0]?.n ?? -1;
}

describe('conversation store', () => {
  it('creates a conversation once, with its header as version 1', async () => {
    const id = newId('conv');
    const header = [system(`${id}:sys`, 'You are helpful.')];
    const first = await store.createConversation(id, header);
    const again = await store.createConversation(id, header);
    expect(first).toEqual(again);
    expect(first.version).toBe(1);
    expect(first.itemCount).toBe(1);
    expect(await count('select 1 from context_versions where conversation_id = $1', [id])).toBe(1);
  });

  it('appends idempotently and keeps order', async () => {
    const id = newId('conv');
    await store.createConversation(id, [system(`${id}:sys`, 'sys')]);
    const a = user(`${id}:a`, 'first message', 1);
    const b = user(`${id}:b`, 'second message', 2);
    await store.appendItems(id, [a]);
    const once = await store.appendItems(id, [b]);
    const twice = await store.appendItems(id, [b]);
    expect(twice).toEqual(once);
    const { items } = await store.getActiveContext(id);
    expect(items.map((i) => i.id)).toEqual([`${id}:sys`, a.id, b.id]);
    expect(await count('select 1 from items where conversation_id = $1', [id])).toBe(3);
  });

  it('appends several items in one call: archive order, attributes, totals, a partly repeated call', async () => {
    const id = newId('conv');
    await store.createConversation(id, [system(`${id}:sys`, 'sys')]);
    const [a, b, c] = [1, 2, 3].map((n) => ({
      ...user(`${id}:m${n}`, `message ${n} `.repeat(n * 5), n),
      pinned: n === 2,
      ...(n === 3 ? { sourceId: `${id}:m1` } : {}),
    })) as [ContextItem, ContextItem, ContextItem];
    const first = await store.appendItems(id, [a, b]);
    const second = await store.appendItems(id, [b, c]); // b is stored already: only c is new
    expect(second).toEqual(await store.totals(id));
    expect(second.itemCount).toBe(4);
    expect(second.tokens - first.tokens).toBe(c.tokens);
    const rows = await pool.query<{ id: string; seq: string }>(
      'select id, seq from items where conversation_id = $1 order by seq',
      [id],
    );
    expect(rows.rows.map((r) => r.id)).toEqual([`${id}:sys`, a.id, b.id, c.id]);
    expect(rows.rows.map((r) => Number(r.seq))).toEqual([1, 2, 3, 4]);
    const { items } = await store.getActiveContext(id);
    expect(items).toEqual([expect.objectContaining({ id: `${id}:sys` }), a, b, c]);
  });

  it('keeps an item’s facts and a carried item’s data, and reads rows without them as before', async () => {
    const id = `facts-${randomUUID().slice(0, 8)}`;
    await store.createConversation(id, [system(`${id}:s`, 'sys')]);
    const call = withFacts<ContextItem>({
      id: `${id}:c`,
      type: 'ASSISTANT_MESSAGE',
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'k', type: 'function', function: { name: 'edit', arguments: '{"path":"src/a.ts"}' } },
        ],
      },
      tokens: 20,
      round: 1,
      isMeta: false,
      pinned: false,
      ephemeral: false,
    });
    const result = withFacts<ContextItem>(
      {
        id: `${id}:r`,
        type: 'TOOL_RESULT',
        message: { role: 'tool', tool_call_id: 'k', content: 'Error: old text not found' },
        tokens: 9,
        round: 1,
        isMeta: false,
        pinned: false,
        ephemeral: false,
      },
      { tool: 'edit', printsOnly: false },
    );
    const trail: ContextItem = {
      id: `${id}:t`,
      type: 'ARTIFACT_TRAIL',
      message: { role: 'user', content: '[Artifact trail] …' },
      carried: {
        kind: 'artifact_trail',
        files: [{ path: 'src/a.ts', ops: ['edit'], lastRound: 1 }],
        commands: [],
      },
      tokens: 9,
      round: 1,
      isMeta: true,
      pinned: false,
      ephemeral: false,
    };
    await store.appendItems(id, [call, result, trail, user(`${id}:u`, 'plain', 2)]);
    const items = await store.getItems([`${id}:c`, `${id}:r`, `${id}:t`, `${id}:u`]);
    expect(items[0]?.facts?.calls?.[0]).toMatchObject({
      touches: [{ path: 'src/a.ts', op: 'edit' }],
      target: 'src/a.ts',
    });
    expect(items[1]?.facts).toEqual({ error: 'Error: old text not found' });
    expect(items[2]).toStrictEqual(trail);
    expect(items[3]).not.toHaveProperty('facts');
  });

  it('stores any string byte for byte: NUL, lone surrogates, SQL metacharacters', async () => {
    const id = newId('conv');
    await store.createConversation(id, []);
    const nasty = "nul:\u0000 lone:\ud800 quote:'; drop table items; -- emoji:🙂";
    await store.appendItems(id, [user(`${id}:x`, nasty, 1)]);
    const [item] = await store.getItems([`${id}:x`]);
    expect(item?.type === 'USER_MESSAGE' && item.message.content).toBe(nasty);
  });

  it('refuses conversation ids that are not safe identifiers', async () => {
    await expect(store.createConversation("x'; drop table items; --", [])).rejects.toThrow(
      /invalid conversation id/,
    );
    await expect(store.createConversation('', [])).rejects.toThrow(/invalid conversation id/);
  });

  it('stages, commits once, and rolls back without touching the active version', async () => {
    const id = newId('conv');
    await store.createConversation(id, [system(`${id}:sys`, 'sys')]);
    const msgs = [1, 2, 3, 4].map((r) => user(`${id}:u${r}`, `message ${r} `.repeat(20), r));
    await store.appendItems(id, msgs);
    const before = await store.getActiveContext(id);

    // A compaction that gets rolled back.
    const c1 = newId('comp');
    await store.beginCompaction({ id: c1, conversationId: id, seq: 1, trigger: 'manual' });
    const staged1 = await store.stageVersion({
      compactionId: c1,
      idemKey: 'prune',
      baseVersion: before.version,
      newItems: [],
      memberIds: [`${id}:sys`, `${id}:u4`],
    });
    const staged1Again = await store.stageVersion({
      compactionId: c1,
      idemKey: 'prune',
      baseVersion: before.version,
      newItems: [],
      memberIds: [`${id}:sys`, `${id}:u4`],
    });
    expect(staged1Again.version).toBe(staged1.version);
    await store.discardStaged(c1, 'summary failed: content_none');
    await store.discardStaged(c1, 'summary failed: content_none');
    const afterRollback = await store.getActiveContext(id);
    expect(afterRollback).toEqual(before);
    expect((await store.getCompaction(c1))?.status).toBe('rolled_back');
    expect((await store.getCompaction(c1))?.reason).toBe('summary failed: content_none');

    // A compaction that commits.
    const c2 = newId('comp');
    await store.beginCompaction({ id: c2, conversationId: id, seq: 2, trigger: 'precheck' });
    const summary: ContextItem = {
      id: `${c2}:summary`,
      type: 'COMPACTION_SUMMARY',
      summarizer: 'extractive',
      message: {
        role: 'user',
        content: '[System] Context cleared. Summary of previous conversation:\nsummary',
      },
      tokens: 20,
      round: 4,
      isMeta: true,
      pinned: false,
      ephemeral: false,
    };
    const staged2 = await store.stageVersion({
      compactionId: c2,
      idemKey: 'summary',
      baseVersion: before.version,
      newItems: [summary],
      memberIds: [`${id}:sys`, summary.id, `${id}:u4`],
    });
    const committed = await store.commitCompaction(c2, staged2.version);
    const committedAgain = await store.commitCompaction(c2, staged2.version);
    expect(committedAgain).toEqual(committed);
    const after = await store.getActiveContext(id);
    expect(after.version).toBe(staged2.version);
    expect(after.items.map((i) => i.id)).toEqual([`${id}:sys`, summary.id, `${id}:u4`]);
    // Nothing is lost: the archive still holds every item.
    const archive = await store.getArchive(id);
    expect(archive.map((i) => i.id)).toEqual([`${id}:sys`, ...msgs.map((m) => m.id), summary.id]);
    // Compensation after commit leaves the committed context alone.
    expect((await store.discardStaged(c2, 'late')).status).toBe('committed');
    expect((await store.getActiveContext(id)).version).toBe(staged2.version);

    // Undo: restore version 1's content as a new active version.
    const restored = await store.restore(id, before.version, 'r1');
    const restoredAgain = await store.restore(id, before.version, 'r1');
    expect(restoredAgain).toEqual(restored);
    expect((await store.getActiveContext(id)).items.map((i) => i.id)).toEqual(before.items.map((i) => i.id));
  });

  it('refuses to commit when the base version changed since the compaction read it', async () => {
    const id = newId('conv');
    await store.createConversation(id, [system(`${id}:sys`, 'sys')]);
    await store.appendItems(id, [user(`${id}:u1`, 'hello', 1)]);
    const c = newId('comp');
    await store.beginCompaction({ id: c, conversationId: id, seq: 1, trigger: 'manual' });
    const staged = await store.stageVersion({
      compactionId: c,
      idemKey: 'x',
      baseVersion: 1,
      newItems: [],
      memberIds: [`${id}:sys`],
    });
    await store.appendItems(id, [user(`${id}:u2`, 'arrived meanwhile', 2)]);
    const err = await store.commitCompaction(c, staged.version).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).kind).toBe('BASE_VERSION_CHANGED');
    expect((await store.getActiveContext(id)).items.map((i) => i.id)).toEqual([
      `${id}:sys`,
      `${id}:u1`,
      `${id}:u2`,
    ]);
  });

  it('refuses to restore a version that does not exist', async () => {
    const id = newId('conv');
    await store.createConversation(id, []);
    await expect(store.restore(id, 99, 'r')).rejects.toThrow(/has no version 99/);
  });

  it('drops ephemeral items from the active version but keeps them in the archive', async () => {
    const id = newId('conv');
    await store.createConversation(id, []);
    const eph: ContextItem = { ...user(`${id}:e`, 'one-shot hint', 1), ephemeral: true };
    await store.appendItems(id, [user(`${id}:u1`, 'hi', 1), eph, user(`${id}:u2`, 'again', 2)]);
    await store.dropEphemeral(id);
    expect((await store.getActiveContext(id)).items.map((i) => i.id)).toEqual([`${id}:u1`, `${id}:u2`]);
    expect((await store.getArchive(id)).map((i) => i.id)).toContain(`${id}:e`);
    // Appends after a drop keep dense positions.
    await store.appendItems(id, [user(`${id}:u3`, 'more', 3)]);
    const positions = await pool.query<{ position: number }>(
      `select m.position from context_version_items m join conversations c on c.id = m.conversation_id
        and c.active_version = m.version where m.conversation_id = $1 order by position`,
      [id],
    );
    expect(positions.rows.map((r) => r.position)).toEqual([0, 1, 2]);
  });

  it('records each meta event once even when written twice', async () => {
    const id = newId('conv');
    await store.createConversation(id, []);
    const c = newId('comp');
    await store.beginCompaction({ id: c, conversationId: id, seq: 1, trigger: 'manual' });
    await store.recordEvent(c, 'selective_start', 'selective_start', { tokensBefore: 10 });
    await store.recordEvent(c, 'selective_start', 'selective_start', { tokensBefore: 10 });
    expect(await store.listEvents(c)).toHaveLength(1);
  });
});
