/**
 * The JSONL lines of an agent's session and the items made of them, for formats where a line and
 * an item do not pair one to one (Claude Code, Codex; OpenHands, whose events are one JSON list
 * written back through {@link slotValues}): one API message split over several lines becomes one
 * item, one line holding several tool results becomes several items. The document keeps a slot
 * per line: the line itself when it became no item, else the parts of items it is made of; each
 * item keeps, in its side fields, one part per line it came from (that line with the item's text
 * taken out). Writing back walks the slots. Pure.
 */
import type { ChatMessage, ContextItem, SessionFormat } from '../context/items';
import { isRecord, jsonLines, type JsonObject } from './json';

/** A part of an item: the `part`-th line the item came from. */
export interface PartRef {
  itemId: string;
  part: number;
}

/**
 * A line of the file: kept as it was, or made of parts of items (`link`: the line's own id and the
 * id of the line it links to, as Claude Code's `uuid` and `parentUuid`, so that a line linking to
 * a line left out can be linked to that line's parent instead).
 */
export type LineSlot =
  | { entry: unknown }
  | {
      parts: PartRef[];
      link?: { id: string; parent: string | null };
      /**
       * A line made of several items: the line without their content, written around what is left
       * of them when the item whose part opened it is gone (see {@link LineWriter.join}).
       */
      shell?: JsonObject;
    };

/** An item's line in a slot: one line, several (a changed item grew), or none (it shrank). */
export type ItemPart = JsonObject | JsonObject[] | null;

/** How a format writes its lines back (see {@link writeLineSlots}). */
export interface LineWriter {
  format: SessionFormat;
  /**
   * The lines of an item of this format, one per part (null: the part is gone, e.g. a tool call
   * the compaction cut away; a list: lines the changed item needs in that place); exactly the
   * source lines while the item is unchanged.
   */
  partsOf(item: ContextItem): ItemPart[];
  /**
   * One line from the parts of items it is made of (in the source's order), when there are several
   * or the slot has a `shell` (the line's envelope, for when the part that opened it is gone).
   */
  join(parts: readonly JsonObject[], shell?: JsonObject): JsonObject;
  /** The lines of an item that has no part in the document (new, or of another format). */
  fresh(item: ContextItem, previous: JsonObject | undefined): JsonObject[];
  /** The keys of a line's own id and of the id of the line it links to, if lines link. */
  linkKeys?: { id: string; parent: string };
}

/**
 * The writer of a format whose lines each hold one item's part (Codex's lines, OpenHands' events):
 * an item's parts from its side fields when it came from `format` (`partsOf`), lines made afresh
 * otherwise (`fresh`, told whether the item is a compaction summary); tool definitions have none.
 */
export function onePartWriter(
  format: SessionFormat,
  partsOf: (message: ChatMessage, fields: JsonObject) => ItemPart[],
  fresh: (message: ChatMessage, previous: JsonObject | undefined, summary: boolean) => JsonObject[],
): LineWriter {
  return {
    format,
    partsOf: (item) =>
      item.type === 'TOOL_DEFINITIONS'
        ? []
        : partsOf(item.message, item.origin?.format === format ? item.origin.fields : {}),
    join: (parts) => parts[0] as JsonObject,
    fresh: (item, previous) =>
      item.type === 'TOOL_DEFINITIONS'
        ? []
        : fresh(item.message, previous, item.type === 'COMPACTION_SUMMARY'),
  };
}

/**
 * Writes the items back as the lines they came from: every kept line in its place, every item's
 * parts where its lines were (an unchanged import gives back the source line for line). For a
 * changed context: an item replaced by a truncated form (`sourceId`) that kept its source's side
 * fields takes its source's lines, the
 * lines of a dropped item are left out (lines that linked to them are relinked), a new item is
 * written after the last line of the item before it, TOOL_DEFINITIONS are left out.
 */
export function writeLineSlots(
  items: readonly ContextItem[],
  slots: readonly LineSlot[],
  writer: LineWriter,
): string {
  return jsonLines(slotValues(items, slots, writer));
}

/**
 * The lines {@link writeLineSlots} writes, as values: for a format that keeps its entries in one
 * JSON list rather than one per line (OpenHands' events).
 */
export function slotValues(
  items: readonly ContextItem[],
  slots: readonly LineSlot[],
  writer: LineWriter,
): unknown[] {
  const slotsOf = new Map<string, number[]>();
  slots.forEach((slot, i) => {
    if (!('parts' in slot)) return;
    for (const ref of slot.parts) slotsOf.set(ref.itemId, [...(slotsOf.get(ref.itemId) ?? []), i]);
  });
  // Which item now stands for each source item id, and which items come after which slot.
  const standing = new Map<string, ContextItem>();
  const after = new Map<number, ContextItem[]>();
  const head: ContextItem[] = [];
  let previous = -1;
  for (const item of items) {
    if (item.type === 'TOOL_DEFINITIONS') continue;
    // Only an item that keeps its lines' side fields can take their place.
    const key =
      item.origin?.format === writer.format
        ? [item.id, item.sourceId].find(
            (id): id is string => id !== undefined && slotsOf.has(id) && !standing.has(id),
          )
        : undefined;
    if (key !== undefined) {
      standing.set(key, item);
      previous = Math.max(previous, ...(slotsOf.get(key) as number[]));
    } else if (previous < 0) head.push(item);
    else after.set(previous, [...(after.get(previous) ?? []), item]);
  }
  const partsCache = new Map<string, ItemPart[]>();
  const partOf = (ref: PartRef): ItemPart => {
    const item = standing.get(ref.itemId);
    if (!item) return null;
    let parts = partsCache.get(ref.itemId);
    if (!parts) {
      parts = writer.partsOf(item);
      partsCache.set(ref.itemId, parts);
    }
    return parts[ref.part] ?? null;
  };
  const out: unknown[] = [];
  // The last line written (with an id, when lines link), and where links to a line now go: to its
  // parent when it was left out, to the last new line when new lines were written after it ('':
  // new lines written before the first line, which had no parent).
  let last: JsonObject | undefined;
  const relinked = new Map<string, string>();
  const keys = writer.linkKeys;
  const emit = (line: unknown): void => {
    let written = line;
    if (keys && isRecord(line) && typeof line[keys.id] === 'string' && relinked.size > 0) {
      const own = line[keys.parent];
      let parent: unknown = typeof own === 'string' ? own : '';
      const seen = new Set<string>();
      while (typeof parent === 'string' && relinked.has(parent) && !seen.has(parent)) {
        seen.add(parent);
        parent = relinked.get(parent);
      }
      if (parent === '') parent = typeof own === 'string' ? null : own;
      if (parent !== own) written = { ...line, [keys.parent]: parent };
      if (typeof own !== 'string') relinked.delete('');
    }
    out.push(written);
    if (isRecord(written) && (!keys || typeof written[keys.id] === 'string')) last = written;
  };
  const emitNew = (list: readonly ContextItem[]): void => {
    const before = keys && last ? (last[keys.id] as string) : '';
    for (const item of list) for (const line of writer.fresh(item, last)) emit(line);
    const after = keys && last ? (last[keys.id] as string) : '';
    if (keys && after !== before) relinked.set(before, after);
  };
  const firstItemSlot = slots.findIndex((slot) => 'parts' in slot);
  slots.forEach((slot, i) => {
    if (i === firstItemSlot) emitNew(head);
    if ('entry' in slot) emit(slot.entry);
    else {
      const parts = slot.parts.map(partOf).filter((p): p is JsonObject | JsonObject[] => p !== null);
      if (parts.length === 0) {
        if (slot.link !== undefined) relinked.set(slot.link.id, slot.link.parent ?? '');
      } else if (parts.length === 1 && (slot.shell === undefined || Array.isArray(parts[0])))
        for (const line of [parts[0] as JsonObject | JsonObject[]].flat()) emit(line);
      else emit(writer.join(parts.flat(), slot.shell));
    }
    emitNew(after.get(i) ?? []);
  });
  if (firstItemSlot < 0) emitNew(head);
  return out;
}
