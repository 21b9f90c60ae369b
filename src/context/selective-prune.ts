/**
 * Selective prune (seeds 002 and 003): the deterministic first phase of every compaction.
 *
 * 1. Tool blocks (seed 003): keep the newest `toolBlocksKeepRecent` (5) blocks, drop older ones
 *    whole; in kept blocks cut arguments over `toolCallThreshold` (500) tokens and results over
 *    `toolResultThreshold` (600) tokens to their first `previewTokens` (200) tokens plus
 *    `[TRUNCATED original~N tokens]`.
 * 2. Per-type rules (seed 002), from the lowest priority up, stopping as soon as the context is at
 *    or under the target: DROP removes every item of the type, TRUNCATE keeps the `keepRecent`
 *    newest (for TOOL_RESULT: the newest tool blocks, whole), NONE never touches it.
 *
 * Never touched: header items (system prompt, tool definitions, the original task, pinned content,
 * the latest task list, the last 10 memories, the artifact trail), pinned items, user and
 * assistant messages of the newest `protectedRounds` (12) rounds (seed 003). A cut item is a new
 * item whose `sourceId` points at the original (DESIGN.md §2); its id is derived from the
 * original's, so running the prune again yields the same ids, and a cut form is never cut again.
 *
 * Pure module: the tokenizer is an argument.
 */
import { selectiveRules, type CompactionConfig, type SelectiveRule } from './config';
import type { AssistantMessageItem, ContextItem, ItemType, ToolResultItem } from './items';
import { headerIds } from './segments';
import { countItemTokens } from './token-accounting';
import type { Tokenizer } from './tokenizer';
import { groupUnits, sumTokens, toolBlocks, type Unit } from './tool-blocks';

/** Seed 003's marker after a cut field. */
export function truncationMarker(originalTokens: number): string {
  return `[TRUNCATED original~${originalTokens} tokens]`;
}

/** Stats of the prune (seed 003's meta event fields). */
export interface PruneStats {
  toolBlocksKept: number;
  toolBlocksDropped: number;
  toolCallsTruncated: number;
  toolResultsTruncated: number;
  /** Items removed, by type. */
  itemsDropped: Partial<Record<ItemType, number>>;
  /** Rules that ran, in order (`tool_blocks` first). */
  rulesApplied: string[];
}

export interface PruneResult {
  /** The pruned context, in the order of the input. */
  items: ContextItem[];
  /** Items made by the prune (cut forms); each has `sourceId`. */
  newItems: ContextItem[];
  tokensBefore: number;
  tokensAfter: number;
  stats: PruneStats;
}

/** The newest `protectedRounds` distinct rounds among real rounds (seed 003). */
function protectedRoundSet(items: readonly ContextItem[], protectedRounds: number): Set<number> {
  const rounds = [...new Set(items.filter((i) => i.round > 0).map((i) => i.round))].sort((a, b) => a - b);
  return new Set(protectedRounds > 0 ? rounds.slice(-protectedRounds) : []);
}

function isUntouchable(item: ContextItem, header: Set<string>): boolean {
  return header.has(item.id) || item.pinned;
}

/** A unit can be removed when none of its items is in the header or pinned. */
function removable(unit: Unit, header: Set<string>): boolean {
  return unit.items.every((item) => !isUntouchable(item, header));
}

/**
 * `text` cut to its first `previewTokens` tokens plus the marker when it has more than `threshold`
 * tokens; `undefined` when it has not.
 */
function cutIfOver(
  text: string,
  threshold: number,
  tokenizer: Tokenizer,
  previewTokens: number,
): string | undefined {
  // A token is at least one byte and a UTF-16 unit at most three: a short text is never over.
  if (text.length * 3 <= threshold) return undefined;
  // One pass: cutting counts the whole text, which is also what decides whether it is over.
  const cut = tokenizer.truncate(text, previewTokens);
  if (cut.originalTokens <= threshold) return undefined;
  return `${cut.text}\n${truncationMarker(cut.originalTokens)}`;
}

/**
 * The item with oversized arguments or content cut, or the item itself when nothing is over or it
 * is already a cut form (`sourceId` set). A cut form is never cut again: its preview plus marker
 * may be over a threshold set just above `previewTokens`, and cutting it again would replace the
 * marker's original size with the cut form's own and break idempotence.
 */
function truncateInBlock(
  item: ContextItem,
  config: CompactionConfig,
  tokenizer: Tokenizer,
  stats: PruneStats,
): ContextItem {
  if (item.sourceId !== undefined) return item;
  if (item.type === 'ASSISTANT_MESSAGE' && item.message.tool_calls) {
    let changed = false;
    const calls = item.message.tool_calls.map((call) => {
      const cut = cutIfOver(
        call.function.arguments,
        config.toolCallThreshold,
        tokenizer,
        config.previewTokens,
      );
      if (cut === undefined) return call;
      changed = true;
      stats.toolCallsTruncated++;
      return { ...call, function: { ...call.function, arguments: cut } };
    });
    if (!changed) return item;
    const next: AssistantMessageItem = {
      ...item,
      id: `${item.id}~cut${config.previewTokens}`,
      sourceId: item.id,
      message: { ...item.message, tool_calls: calls },
    };
    return { ...next, tokens: countItemTokens(next, tokenizer) };
  }
  if (item.type === 'TOOL_RESULT') {
    const cut = cutIfOver(item.message.content, config.toolResultThreshold, tokenizer, config.previewTokens);
    if (cut === undefined) return item;
    stats.toolResultsTruncated++;
    const next: ToolResultItem = {
      ...item,
      id: `${item.id}~cut${config.previewTokens}`,
      sourceId: item.id,
      message: { ...item.message, content: cut },
    };
    return { ...next, tokens: countItemTokens(next, tokenizer) };
  }
  return item;
}

/**
 * Applies the selective rules until the context is at or under `targetTokens` (the tool-block
 * pass always runs). Tokens never grow; the order of the items is kept; applying it to its own
 * output changes nothing.
 */
export function selectivePrune(
  input: readonly ContextItem[],
  config: CompactionConfig,
  tokenizer: Tokenizer,
  targetTokens: number,
): PruneResult {
  const stats: PruneStats = {
    toolBlocksKept: 0,
    toolBlocksDropped: 0,
    toolCallsTruncated: 0,
    toolResultsTruncated: 0,
    itemsDropped: {},
    rulesApplied: [],
  };
  const header = headerIds(input);
  const byId = new Map(input.map((item) => [item.id, item]));
  const tokensBefore = sumTokens(input);
  const removed = new Set<string>();
  const replaced = new Map<string, ContextItem>();
  // Tokens of current(), kept up to date by remove() and the cuts (one pass per rule, not two).
  let liveTokens = tokensBefore;
  const current = (): ContextItem[] =>
    input.filter((item) => !removed.has(item.id)).map((item) => replaced.get(item.id) ?? item);
  const remove = (unit: Pick<Unit, 'items'>): void => {
    for (const item of unit.items) {
      if (removed.has(item.id)) continue;
      removed.add(item.id);
      liveTokens -= (replaced.get(item.id) ?? item).tokens;
      stats.itemsDropped[item.type] = (stats.itemsDropped[item.type] ?? 0) + 1;
    }
  };

  // 1. Tool blocks (seed 003).
  const units = groupUnits(input);
  const blocks = toolBlocks(units).filter((b) => removable(b, header));
  const keptBlocks = config.toolBlocksKeepRecent > 0 ? blocks.slice(-config.toolBlocksKeepRecent) : [];
  for (const block of blocks.slice(0, blocks.length - keptBlocks.length)) {
    remove(block);
    stats.toolBlocksDropped++;
  }
  for (const block of keptBlocks) {
    for (const item of block.items) {
      const cut = truncateInBlock(item, config, tokenizer, stats);
      if (cut !== item && cut.tokens < item.tokens) {
        replaced.set(item.id, cut);
        liveTokens -= item.tokens - cut.tokens;
      }
    }
  }
  stats.rulesApplied.push('tool_blocks');

  // The units of current(), without grouping it again: units are only ever removed whole, and
  // removing a whole unit never changes how the others pair (a result answers the latest open
  // call with its id, so a call and its results leave the pairing together). Grouping once keeps
  // the prune linear in the context's size.
  const liveUnits = (): Unit[] => {
    const out: Unit[] = [];
    for (const unit of units) {
      if (!unit.items.some((item) => removed.has(item.id) || replaced.has(item.id))) {
        out.push(unit);
        continue;
      }
      const items = unit.items
        .filter((item) => !removed.has(item.id))
        .map((item) => replaced.get(item.id) ?? item);
      if (items.length > 0) out.push({ ...unit, items });
    }
    return out;
  };

  // 2. Per-type rules, lowest priority first, until under the target (seed 002).
  const protectedRounds = protectedRoundSet(input, config.protectedRounds);
  const rules = Object.entries(selectiveRules(config))
    .filter(
      (entry): entry is [ItemType, SelectiveRule] => entry[1] !== undefined && entry[1].strategy !== 'none',
    )
    .sort((a, b) => a[1].priority - b[1].priority || a[0].localeCompare(b[0]));
  for (const [type, rule] of rules) {
    if (liveTokens <= targetTokens) break;
    const live = liveUnits().filter((u) => removable(u, header));
    let candidates: Unit[];
    if (type === 'TOOL_RESULT') {
      // Results go with their calls: the rule counts whole blocks; orphan results are always dropped.
      const liveBlocks = live.filter((u) => u.kind === 'block');
      const keep = rule.strategy === 'truncate' ? Math.min(rule.keepRecent ?? 0, liveBlocks.length) : 0;
      candidates = [
        ...liveBlocks.slice(0, liveBlocks.length - keep),
        ...live.filter((u) => u.kind === 'orphan'),
      ];
    } else {
      const ofType = live.filter((u) => {
        if (u.kind !== 'item') return false;
        const item = u.items[0] as ContextItem;
        if (item.type !== type) return false;
        const dialogue = type === 'USER_MESSAGE' || type === 'ASSISTANT_MESSAGE';
        return !(dialogue && protectedRounds.has(item.round));
      });
      const keep = rule.strategy === 'truncate' ? Math.min(rule.keepRecent ?? 0, ofType.length) : 0;
      candidates = ofType.slice(0, ofType.length - keep);
    }
    if (candidates.length === 0) continue;
    for (const unit of candidates) {
      // An item cut in step 1 is removed under its original id.
      remove({
        items: unit.items.map((i) =>
          i.sourceId !== undefined && replaced.has(i.sourceId) ? (byId.get(i.sourceId) ?? i) : i,
        ),
      });
      if (unit.kind === 'block') stats.toolBlocksDropped++;
    }
    stats.rulesApplied.push(`${type}:${rule.strategy}`);
  }

  const items = current();
  stats.toolBlocksKept = toolBlocks(liveUnits()).length;
  return {
    items,
    newItems: [...replaced.values()].filter((item) => !removed.has(item.sourceId ?? '')),
    tokensBefore,
    tokensAfter: sumTokens(items),
    stats,
  };
}
