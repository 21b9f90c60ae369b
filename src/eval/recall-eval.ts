/**
 * Recall probes scored on a real store (issue 24): a replay's committed compactions written to
 * PostgreSQL as the activities write them (the context before appended, the context after staged
 * and committed), then, right after each, its probes (`recall-probes.ts`) searched as the recall
 * tool searches: a probe is found when one of the top 3 results holds its line (recall@3).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import type { ContextItem } from '../context/items';
import { ArchiveSearch } from '../store/archive-search';
import { ConversationStore } from '../store/conversation-store';
import { readableText } from '../store/search-document';
import { PROBE_KINDS, recallProbes, type ProbeKind } from './recall-probes';
import type { ReplayCompaction } from './replay';

/** Results a probe may be among. */
export const RECALL_AT = 3;

export interface RecallScore {
  probes: number;
  found: number;
  byKind: Record<ProbeKind, { probes: number; found: number }>;
  /** Median search time, ms. */
  msMedian: number;
  /** Up to 10 probes not found: kind, query, the line. */
  misses: string[];
}

/** Scores the recall probes of a replay's committed compactions (a conversation of its own in `pool`). */
export async function scoreRecall(
  pool: Pool,
  compactions: readonly ReplayCompaction[],
): Promise<RecallScore> {
  const store = new ConversationStore(pool);
  const archive = new ArchiveSearch(pool);
  const conversationId = `eval-recall-${randomUUID().slice(0, 8)}`;
  // Item ids are global in the store: each replay's are its own.
  const key = (id: string): string => `${conversationId}/${id}`;
  const rekey = (item: ContextItem): ContextItem => ({
    ...item,
    id: key(item.id),
    ...(item.sourceId !== undefined ? { sourceId: key(item.sourceId) } : {}),
  });
  await store.createConversation(conversationId, []);
  const stored = new Set<string>();
  const byKind = Object.fromEntries(
    PROBE_KINDS.map((k) => [k, { probes: 0, found: 0 }]),
  ) as RecallScore['byKind'];
  const times: number[] = [];
  const misses: string[] = [];
  for (const c of compactions) {
    if (c.status !== 'committed') continue;
    const fresh = c.before.filter((i) => !stored.has(i.id));
    await store.appendItems(conversationId, fresh.map(rekey));
    for (const i of fresh) stored.add(i.id);
    const compactionId = `${conversationId}/compaction-${c.seq}`;
    const comp = await store.beginCompaction({
      id: compactionId,
      conversationId,
      seq: c.seq,
      trigger: c.trigger,
    });
    const added = c.after.filter((i) => !stored.has(i.id));
    await store.stageVersion({
      compactionId,
      idemKey: 'eval',
      baseVersion: comp.baseVersion,
      newItems: added.map(rekey),
      memberIds: c.after.map((i) => key(i.id)),
    });
    for (const i of added) stored.add(i.id);
    await store.commitCompaction(compactionId);
    for (const probe of recallProbes(c.before, c.after)) {
      const started = performance.now();
      const found = await archive.search(conversationId, probe.query, RECALL_AT).catch(() => null);
      times.push(performance.now() - started);
      const hit = found?.hits.some((h) => readableText(h.item).includes(probe.expected)) ?? false;
      byKind[probe.kind].probes++;
      if (hit) byKind[probe.kind].found++;
      else if (misses.length < 10) {
        const top = (found?.hits ?? []).map(
          (h) => `${h.type === 'TOOL_RESULT' ? (h.tool ?? 'tool') : h.type} r${h.round}`,
        );
        misses.push(
          `${probe.kind}: ${JSON.stringify(probe.query)} → ${probe.expected.slice(0, 80)} (top: ${top.join(', ') || 'none'})`,
        );
      }
    }
  }
  const sorted = [...times].sort((a, b) => a - b);
  return {
    probes: PROBE_KINDS.reduce((n, k) => n + byKind[k].probes, 0),
    found: PROBE_KINDS.reduce((n, k) => n + byKind[k].found, 0),
    byKind,
    msMedian: sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] as number),
    misses,
  };
}
