/**
 * `durable-compaction inspect <id> [--compaction N]`: from PostgreSQL, the conversation's context
 * versions and compactions; for one compaction, what it dropped, truncated, summarized and kept,
 * item by item with token counts, and the summary text.
 */
import type { Command } from 'commander';
import type { ContextItem } from '../../context/items';
import type { CompactionEvent, CompactionRecord, ConversationStore, VersionInfo } from '../../store';
import { action, intArgument, printJson, UsageError, withStore } from '../client';
import { formatTokens } from '../format';
import { diffCompaction, formatCompactionDiff, type CompactionDiff } from '../inspect-view';

export interface ConversationOverview {
  conversationId: string;
  status: 'open' | 'ended';
  activeVersion: number | null;
  versions: VersionInfo[];
  compactions: CompactionRecord[];
}

export interface CompactionInspection {
  record: CompactionRecord;
  /** The versions it read and wrote: where it started, what the prune staged, what it ended with. */
  versions: { base: number; pruned: number | null; final: number | null };
  /** Null for a compaction that staged nothing (skipped, or failed before the prune). */
  diff: CompactionDiff | null;
  events: CompactionEvent[];
}

/** @throws UsageError `no conversation <id>` */
async function requireStored(
  store: ConversationStore,
  id: string,
): Promise<{ status: 'open' | 'ended'; activeVersion: number | null }> {
  const status = await store.conversationStatus(id);
  if (!status) throw new UsageError(`no conversation ${id}`);
  return status;
}

/** The versions and compactions of a conversation. */
export async function inspectConversation(
  store: ConversationStore,
  options: { id: string },
): Promise<ConversationOverview> {
  const status = await requireStored(store, options.id);
  return {
    conversationId: options.id,
    status: status.status,
    activeVersion: status.activeVersion,
    versions: await store.listVersions(options.id),
    compactions: await store.listCompactions(options.id),
  };
}

/**
 * One compaction (by its number, 1-based) item by item.
 * @throws UsageError when the conversation or the compaction does not exist
 */
export async function inspectCompaction(
  store: ConversationStore,
  options: { id: string; seq: number },
): Promise<CompactionInspection> {
  await requireStored(store, options.id);
  const records = await store.listCompactions(options.id);
  const record = records.find((r) => r.seq === options.seq);
  if (!record) {
    const known = records.map((r) => r.seq).join(', ') || 'none yet';
    throw new UsageError(
      `conversation ${options.id} has no compaction #${options.seq} (compactions: ${known})`,
    );
  }
  const own = (await store.listVersions(options.id))
    .filter((v) => v.compactionId === record.id)
    .sort((a, b) => a.version - b.version);
  const pruned = own.find((v) => v.baseVersion === record.baseVersion)?.version ?? null;
  const final = record.stagedVersion ?? own.at(-1)?.version ?? null;
  let diff: CompactionDiff | null = null;
  if (final !== null) {
    const read = (version: number): Promise<ContextItem[]> => store.getVersionItems(options.id, version);
    const [base, prunedItems, finalItems] = await Promise.all([
      read(record.baseVersion),
      pruned !== null && pruned !== final ? read(pruned) : Promise.resolve(null),
      read(final),
    ]);
    diff = diffCompaction(base, prunedItems, finalItems);
  }
  return {
    record,
    versions: { base: record.baseVersion, pruned, final },
    diff,
    events: await store.listEvents(record.id),
  };
}

/** A compaction record on one line. */
export function formatCompactionRecord(r: CompactionRecord): string {
  const tokens =
    r.tokensBefore !== null && r.tokensAfter !== null
      ? `${formatTokens(r.tokensBefore)} → ${formatTokens(r.tokensAfter)} tokens` +
        (r.tokensBefore > 0 ? `, saved ${Math.round((1 - r.tokensAfter / r.tokensBefore) * 100)}%` : '')
      : '';
  return [
    `#${r.seq}`,
    r.trigger,
    r.status,
    r.strategy ?? '-',
    tokens,
    r.attempts > 1 ? `${r.attempts} attempts` : '',
    r.focus ? `focus: ${r.focus}` : '',
    r.reason ? `reason: ${r.reason}` : '',
  ]
    .filter(Boolean)
    .join('  ');
}

/** The overview as lines. */
export function formatOverview(o: ConversationOverview): string[] {
  const seqOf = new Map(o.compactions.map((c) => [c.id, c.seq]));
  const lines = [`${o.conversationId} · ${o.status} · active version ${o.activeVersion ?? '-'}`, 'versions:'];
  for (const v of o.versions) {
    const origin = v.compactionId ? `compaction #${seqOf.get(v.compactionId) ?? '?'}` : v.origin;
    lines.push(
      `  v${String(v.version).padEnd(4)} ${v.status.padEnd(10)} ${origin.padEnd(16)} ` +
        `${v.baseVersion !== null ? `from v${v.baseVersion}`.padEnd(9) : ''.padEnd(9)} ` +
        `${String(v.itemCount).padStart(5)} items ${formatTokens(v.tokens).padStart(9)} tokens  ${v.createdAt.toISOString()}`,
    );
  }
  lines.push(o.compactions.length > 0 ? 'compactions:' : 'compactions: none');
  for (const c of o.compactions) lines.push(`  ${formatCompactionRecord(c)}`);
  return lines;
}

/** One compaction as lines. */
export function formatInspection(i: CompactionInspection): string[] {
  const { base, pruned, final } = i.versions;
  const lines = [
    formatCompactionRecord(i.record),
    `versions: from v${base}${pruned !== null ? ` · pruned v${pruned}` : ''}${final !== null ? ` · result v${final}` : ''}`,
  ];
  if (i.diff) lines.push(...formatCompactionDiff(i.diff));
  else lines.push('it staged no version: nothing was changed');
  if (i.events.length > 0) {
    lines.push('events:');
    for (const e of i.events)
      lines.push(`  ${e.createdAt.toISOString()}  ${e.phase}  ${JSON.stringify(e.data)}`);
  }
  return lines;
}

export function registerInspect(program: Command): void {
  program
    .command('inspect')
    .description('list versions and compactions from PostgreSQL; --compaction N shows one item by item')
    .argument('<id>', 'conversation id')
    .option('--compaction <n>', 'show compaction #n: dropped, truncated, summarized, kept, and the summary')
    .option('--json', 'print as JSON')
    .addHelpText(
      'after',
      '\nNeeds DATABASE_URL.\nExit codes: 0 shown, 1 failure, 2 unknown conversation or compaction.',
    )
    .action(
      action(async (id: string, opts: { compaction?: string; json?: boolean }) => {
        const seq = opts.compaction === undefined ? undefined : intArgument('--compaction', opts.compaction);
        await withStore(async (store) => {
          if (seq === undefined) {
            const overview = await inspectConversation(store, { id });
            if (opts.json) printJson(overview);
            else for (const line of formatOverview(overview)) console.log(line);
          } else {
            const inspection = await inspectCompaction(store, { id, seq });
            if (opts.json) printJson(inspection);
            else for (const line of formatInspection(inspection)) console.log(line);
          }
        });
      }),
    );
}
