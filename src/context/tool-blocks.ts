/**
 * Tool blocks and units: the granularity at which anything is removed from a context.
 *
 * A tool block (seed 003) is an assistant message with tool calls plus every tool result that
 * answers one of those calls. A unit is a tool block or any other single item. Every policy keeps
 * or removes whole units, so a tool call never loses its result and a result never loses its call
 * (DESIGN.md §5 invariant). An orphan result (no call before it) is a unit of its own.
 *
 * Pure module.
 */
import type { ContextItem } from './items';
import { indexPairs, type PairIndex } from './tool-pairs';

export interface Unit {
  /** `block`: assistant tool calls + results; `item`: anything else; `orphan`: a result without its call. */
  kind: 'block' | 'item' | 'orphan';
  /** The unit's items, in context order. */
  items: ContextItem[];
  /** Index in the input of the unit's first item (units are ordered by it). */
  start: number;
  /** Index in the input of each of its items. */
  positions: number[];
  /** Round of the unit's first item. */
  round: number;
}

/** Tokens of a list of items (their stored counts). */
export function sumTokens(items: readonly ContextItem[]): number {
  let total = 0;
  for (const item of items) total += item.tokens;
  return total;
}

/**
 * Groups items into units, ordered by their first item. Every item is in exactly one unit.
 * `pairs`: the items' pairing when the caller has it already.
 */
export function groupUnits(items: readonly ContextItem[], pairs: PairIndex = indexPairs(items)): Unit[] {
  // The unit of each block's call item, by position.
  const blockAt = new Array<Unit | undefined>(items.length);
  const units: Unit[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as ContextItem;
    if (pairs.firstCall[i] !== -1) {
      const block: Unit = { kind: 'block', items: [item], start: i, positions: [i], round: item.round };
      blockAt[i] = block;
      units.push(block);
      continue;
    }
    const call = pairs.resultCall[i] as number;
    if (call !== -1) {
      const block = blockAt[pairs.callItem[call] as number] as Unit;
      block.items.push(item);
      block.positions.push(i);
    } else
      units.push({
        kind: item.type === 'TOOL_RESULT' ? 'orphan' : 'item',
        items: [item],
        start: i,
        positions: [i],
        round: item.round,
      });
  }
  return units;
}

/** The tool blocks among the units, oldest first. */
export function toolBlocks(units: readonly Unit[]): Unit[] {
  return units.filter((u) => u.kind === 'block');
}

/** Ids of the items of some units. */
export function unitIds(units: readonly Unit[]): Set<string> {
  const ids = new Set<string>();
  for (const unit of units) for (const item of unit.items) ids.add(item.id);
  return ids;
}
