/**
 * Figure 8: recall (issue 24). An archive of about 1M tokens — the shared pi-large-session stored
 * as one conversation as many times as it takes (each copy its own items), everything but the
 * system prompt archived by a committed compaction — searched with the queries a model would
 * write about it (the paths it read, the commands it ran, the words of its errors: the eval's probe
 * queries over the whole session), as the recall tool searches (ranking, the calls of results,
 * snippets); then pages read by handle. Prints latency p50/p99 and the index's size per archived
 * token. Goal: p50 under 50 ms. Runs on DATABASE_URL, else an embedded PostgreSQL of its own.
 *
 * `npx tsx bench/recall-latency.ts [--tokens 1000000] [--queries 300]` prints the figure alone;
 * `npm run bench -- --only=8` puts it into bench/RESULTS.md.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { importSession } from '../src/importers';
import type { ContextItem } from '../src/context/items';
import { handleOf } from '../src/context/recall-handle';
import { recallProbes } from '../src/eval/recall-probes';
import { connectPostgres } from '../src/infra/postgres';
import { Recall } from '../src/recall';
import { ConversationStore } from '../src/store';
import { tokenCounterForModel } from '../src/tokens';
import { readSessionText } from './fixtures';
import type { Figure } from './report';
import { fmt, now, summarize, type Summary } from './stats';

export interface RecallBenchOptions {
  /** Tokens of the archive (about). */
  tokens: number;
  /** Searches timed (the queries cycle). */
  queries: number;
}

/** A table row of latency figures, in ms. */
function latencyRow(operation: string, s: Summary): (string | number)[] {
  return [operation, s.n, fmt(s.p50), fmt(s.p95), fmt(s.p99), fmt(s.max)];
}

export interface RecallBenchResult {
  archivedItems: number;
  archivedTokens: number;
  copies: number;
  storeMs: number;
  search: ReturnType<typeof summarize>;
  read: ReturnType<typeof summarize>;
  distinctQueries: number;
  /** Bytes of the `search` column of the conversation's items and of the GIN index (whole table). */
  vectorBytes: number;
  ginBytes: number;
  ginTableItems: number;
}

export async function measureRecall(pool: Pool, options: RecallBenchOptions): Promise<RecallBenchResult> {
  const tokenizer = tokenCounterForModel('gpt-4o');
  const session = importSession(readSessionText('pi-large-session.jsonl'), {
    fileName: 'pi-large-session.jsonl',
    tokenizer,
  }).items;
  const sessionTokens = session.reduce((n, i) => n + i.tokens, 0);
  const copies = Math.max(1, Math.ceil(options.tokens / sessionTokens));
  const id = `bench-recall-${randomUUID().slice(0, 8)}`;
  const store = new ConversationStore(pool);
  const [system, ...rest] = session;
  const header = system ? [{ ...system, id: `${id}/system` }] : [];
  const started = now();
  await store.createConversation(id, header);
  const archive: ContextItem[] = [];
  for (let copy = 0; copy < copies; copy++) {
    const items = rest.map((i) => ({
      ...i,
      id: `${id}/${copy}/${i.id}`,
      ...(i.sourceId !== undefined ? { sourceId: `${id}/${copy}/${i.sourceId}` } : {}),
    }));
    for (let at = 0; at < items.length; at += 200) await store.appendItems(id, items.slice(at, at + 200));
    archive.push(...items);
  }
  const compactionId = `${id}/compaction-1`;
  const comp = await store.beginCompaction({
    id: compactionId,
    conversationId: id,
    seq: 1,
    trigger: 'manual',
  });
  await store.stageVersion({
    compactionId,
    idemKey: 'bench',
    baseVersion: comp.baseVersion,
    newItems: [],
    memberIds: header.map((i) => i.id),
  });
  await store.commitCompaction(compactionId);
  const storeMs = now() - started;
  await pool.query('analyze items');

  const queries = [...new Set(recallProbes(session, []).map((p) => p.query))];
  // recallProbes keeps 3 per kind: add every read path and command of the session.
  for (const item of session) {
    if (item.type !== 'ASSISTANT_MESSAGE') continue;
    for (const call of item.message.tool_calls ?? []) {
      const args = call.function.arguments;
      const path = /"(?:path|file_path)"\s*:\s*"([^"]+)"/.exec(args)?.[1];
      const command = /"command"\s*:\s*"([^"]{1,120})"/.exec(args)?.[1];
      for (const q of [path, command]) if (q && !queries.includes(q)) queries.push(q);
    }
  }
  const recall = new Recall(pool);
  // Warm-up: the first searches load the index into memory.
  for (const q of queries.slice(0, 5)) await recall.search(id, q, 5);
  const searchMs: number[] = [];
  for (let i = 0; i < options.queries; i++) {
    const q = queries[i % queries.length] ?? 'src';
    const t = now();
    await recall.search(id, q, 5);
    searchMs.push(now() - t);
  }
  const readMs: number[] = [];
  for (let i = 0; i < Math.min(100, archive.length); i++) {
    const item = archive[Math.floor((i * archive.length) / 100)] as ContextItem;
    const t = now();
    await recall.read(id, handleOf(item.id), 0, 2000, tokenizer);
    readMs.push(now() - t);
  }
  const sizes = await pool.query<{ vector: string; gin: string; items: string }>(
    `select (select coalesce(sum(pg_column_size(search)), 0) from items where conversation_id = $1)::text as vector,
            pg_relation_size('items_search_idx')::text as gin,
            (select count(*) from items)::text as items`,
    [id],
  );
  const row = sizes.rows[0];
  return {
    archivedItems: archive.length,
    archivedTokens: archive.reduce((n, i) => n + i.tokens, 0),
    copies,
    storeMs,
    search: summarize(searchMs),
    read: summarize(readMs),
    distinctQueries: queries.length,
    vectorBytes: Number(row?.vector ?? 0),
    ginBytes: Number(row?.gin ?? 0),
    ginTableItems: Number(row?.items ?? 0),
  };
}

/** The figure, on DATABASE_URL or an embedded PostgreSQL started for it. */
export async function recallFigure(options: RecallBenchOptions): Promise<Figure> {
  const postgres = await connectPostgres({ poolSize: 2 });
  try {
    const r = await measureRecall(postgres.pool, options);
    const perToken = (bytes: number): string => fmt(bytes / r.archivedTokens, 2);
    return {
      id: '8',
      title: 'Recall: search and read latency over an archive of ~1M tokens, index size',
      notes: [
        `pi-large-session stored ${r.copies}× as one conversation (${r.archivedItems.toLocaleString('en-US')} archived items, ` +
          `${r.archivedTokens.toLocaleString('en-US')} tokens; stored in ${fmt(r.storeMs / 1000, 1)} s), then searched ` +
          `${r.search.n} times with ${r.distinctQueries} distinct queries a model would write about it (paths it read, ` +
          'commands it ran, words of its errors), 5 results each, exactly as the recall tool searches (ranking, the calls ' +
          `of results, snippets); then ${r.read.n} items read by handle, a 2,000-token page each. Goal: p50 under 50 ms.`,
        `Index: the \`search\` tsvector column holds ${perToken(r.vectorBytes)} bytes per archived token; the GIN index ` +
          `${perToken(r.ginBytes)} bytes per archived token (the whole table's index: ${r.ginTableItems.toLocaleString('en-US')} items` +
          `${r.ginTableItems > r.archivedItems + 1 ? ', other conversations included' : ''}).`,
      ],
      tables: [
        {
          columns: ['operation', 'n', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'],
          rows: [
            latencyRow('search (5 results)', r.search),
            latencyRow('read by handle (2,000-token page)', r.read),
          ],
        },
      ],
      data: r,
    };
  } finally {
    await postgres.shutdown();
  }
}

if (require.main === module) {
  const arg = (name: string, fallback: number): number => {
    const at = process.argv.indexOf(name);
    return at >= 0 ? Number(process.argv[at + 1]) : fallback;
  };
  recallFigure({ tokens: arg('--tokens', 1_000_000), queries: arg('--queries', 300) })
    .then((figure) => {
      console.log(figure.title);
      for (const note of figure.notes) console.log(`- ${note}`);
      for (const table of figure.tables) {
        console.log(table.columns.join(' | '));
        for (const row of table.rows) console.log(row.join(' | '));
      }
    })
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
