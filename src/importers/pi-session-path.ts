/**
 * Which entries of a pi session its context is built from, as pi builds it: the active path, and
 * after the latest compaction on it the compaction, its kept entries and those after it (see
 * `pi-session-import.ts`). Pure.
 */
import type { JsonObject } from './json';

/** A session entry as read from the file. */
export interface PiEntry {
  /** Position among the file's entries (blank lines not counted). */
  index: number;
  /** 1-based line in the file. */
  line: number;
  value: JsonObject;
}

/** The entries pi would build its context from (see the module comment), in order. */
export function activePath(entries: readonly PiEntry[]): PiEntry[] {
  const body = entries.filter((entry) => entry.value.type !== 'session');
  const isTree = body.some((entry) => typeof entry.value.id === 'string' && 'parentId' in entry.value);
  if (!isTree) return body;
  const byId = new Map<string, PiEntry>();
  let leaf: PiEntry | undefined;
  for (const entry of body) {
    if (typeof entry.value.id !== 'string') continue;
    byId.set(entry.value.id, entry);
    leaf = entry;
  }
  const path: PiEntry[] = [];
  const seen = new Set<PiEntry>();
  for (let at = leaf; at && !seen.has(at);) {
    seen.add(at);
    path.push(at);
    const parent = at.value.parentId;
    at = typeof parent === 'string' ? byId.get(parent) : undefined;
  }
  return path.reverse();
}

/**
 * The path's entries in context order: after the latest compaction, its summary first. `whole`:
 * every entry of the path but the compactions.
 */
export function contextEntries(
  path: readonly PiEntry[],
  whole = false,
): { entries: PiEntry[]; compaction?: PiEntry } {
  if (whole) return { entries: path.filter((entry) => entry.value.type !== 'compaction') };
  let at = -1;
  for (let i = path.length - 1; i >= 0 && at < 0; i--)
    if ((path[i] as PiEntry).value.type === 'compaction') at = i;
  if (at < 0) return { entries: [...path] };
  const compaction = path[at] as PiEntry;
  const { firstKeptEntryId, firstKeptEntryIndex } = compaction.value;
  let first = path.findIndex(
    (entry, i) =>
      i < at &&
      ((typeof firstKeptEntryId === 'string' && entry.value.id === firstKeptEntryId) ||
        (typeof firstKeptEntryIndex === 'number' && entry.index === firstKeptEntryIndex)),
  );
  if (first < 0) first = at; // as pi: nothing before the compaction is kept
  return { entries: [compaction, ...path.slice(first, at), ...path.slice(at + 1)], compaction };
}
