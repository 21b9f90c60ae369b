/**
 * Which lines of a Claude Code session its conversation is made of: the active chain of `uuid` /
 * `parentUuid` links ending at the last message line, without subagents' `isSidechain` lines (unless
 * the file is a subagent's own, with nothing else); the message lines in file order when no line
 * links to another. A compaction of Claude Code's starts a chain of
 * its own (a `compact_boundary` line with no parent, its `logicalParentUuid` naming the line before);
 * with `whole` the chain goes on through it to the history before. A link to a line the file does
 * not hold goes on from the message line before in the file (not across a boundary, but in the
 * whole history). The results of parallel tool
 * calls that hang off the chain are put back in it (`withParallelResults`). Pure.
 */
import { blockIds } from './blocks';
import type { JsonObject } from './json';

/** A line of the file as read. */
export interface ClaudeLine {
  /** Position among the file's lines (blank lines not counted). */
  index: number;
  /** 1-based line in the file. */
  line: number;
  value: JsonObject;
}

/** A line holding a user or assistant message. */
export function isMessageLine(line: ClaudeLine): boolean {
  const { type, message } = line.value;
  return (type === 'user' || type === 'assistant') && typeof message === 'object' && message !== null;
}

/** The lines of the conversation, in order (see the module comment). */
export function activeChain(lines: readonly ClaudeLine[], whole: boolean): ClaudeLine[] {
  const main = lines.filter((l) => l.value.isSidechain !== true);
  const pool = main.some(isMessageLine) ? main : lines;
  const messages = pool.filter(isMessageLine);
  const leaf = messages[messages.length - 1];
  if (!leaf) return [];
  // Lines that link to nothing make no chain (written by hand, or by a tool that leaves the links
  // out): the conversation is the file's order.
  const linked = pool.some(
    (l) => typeof l.value.parentUuid === 'string' || typeof l.value.logicalParentUuid === 'string',
  );
  if (!linked || !pool.some((l) => typeof l.value.uuid === 'string')) return messages;
  const byId = new Map<string, ClaudeLine>();
  for (const line of pool) if (typeof line.value.uuid === 'string') byId.set(line.value.uuid, line);
  // Where a link to a line the file does not hold goes on from (file order).
  const stops = pool.filter((line) => isMessageLine(line) || isBoundary(line));
  const chain: ClaudeLine[] = [];
  const seen = new Set<ClaudeLine>();
  for (let at: ClaudeLine | undefined = leaf; at && !seen.has(at);) {
    seen.add(at);
    chain.push(at);
    const { parentUuid, logicalParentUuid } = at.value as {
      parentUuid?: unknown;
      logicalParentUuid?: unknown;
    };
    const parent: string | undefined =
      typeof parentUuid === 'string'
        ? parentUuid
        : whole && typeof logicalParentUuid === 'string'
          ? logicalParentUuid
          : undefined;
    const from: ClaudeLine = at;
    // A parent the file does not hold (a line Claude Code did not write: 2.1.41's compaction
    // boundary names one as its logical parent): the message line before it in the file, or the
    // compaction boundary before it (its context starts there; the whole history goes on through).
    at = parent === undefined ? undefined : (byId.get(parent) ?? lastBefore(stops, from.index));
    if (at && !whole && isBoundary(at)) at = undefined;
  }
  return withParallelResults(chain.reverse(), pool);
}

/** Whether a line is a compaction boundary of Claude Code's. */
function isBoundary(line: ClaudeLine): boolean {
  return line.value.type === 'system' && line.value.subtype === 'compact_boundary';
}

/** The last of `lines` (in file order) before the line at `index` (a binary search). */
function lastBefore(lines: readonly ClaudeLine[], index: number): ClaudeLine | undefined {
  let low = 0;
  let high = lines.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((lines[middle] as ClaudeLine).index < index) low = middle + 1;
    else high = middle;
  }
  return low > 0 ? lines[low - 1] : undefined;
}

/** The ids of the `tool_use` (or `tool_result`) blocks of a message line. */
function lineBlockIds(line: ClaudeLine, type: 'tool_use' | 'tool_result'): string[] {
  return blockIds((line.value.message as { content?: unknown } | undefined)?.content, type);
}

/**
 * The chain with the results of parallel tool calls that hang off it: Claude Code (2.1) writes
 * each call of one reply on a line of its own, each line the parent of the next, and each call's
 * result as a child of its own call's line, so the chain from the last line passes through the
 * last call's result only. A user line whose parent is on the chain, holding only results of the
 * chain's calls that the chain does not answer, goes in where the file has it among the chain's
 * lines after its parent (Claude Code puts them back the same way when it resumes). Another branch
 * (an edited prompt, a retried reply) holds no such results, and stays out.
 */
function withParallelResults(chain: ClaudeLine[], pool: readonly ClaudeLine[]): ClaudeLine[] {
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const line of chain) {
    if (line.value.type === 'assistant') for (const id of lineBlockIds(line, 'tool_use')) calls.add(id);
    else if (line.value.type === 'user') for (const id of lineBlockIds(line, 'tool_result')) answered.add(id);
  }
  if (![...calls].some((id) => !answered.has(id))) return chain;
  const at = new Map<string, number>();
  chain.forEach((line, i) => {
    if (typeof line.value.uuid === 'string') at.set(line.value.uuid, i);
  });
  const onChain = new Set(chain);
  // The lines to put back, each before the chain's line at `before` (the first after its parent
  // that the file has after it), in file order.
  const back = new Map<number, ClaudeLine[]>();
  for (const line of pool) {
    if (onChain.has(line) || line.value.type !== 'user' || !isMessageLine(line)) continue;
    const parent = line.value.parentUuid;
    const from = typeof parent === 'string' ? at.get(parent) : undefined;
    if (from === undefined) continue;
    const results = lineBlockIds(line, 'tool_result');
    if (results.length === 0 || !results.every((id) => calls.has(id) && !answered.has(id))) continue;
    for (const id of results) answered.add(id);
    let before = from + 1;
    while (before < chain.length && (chain[before] as ClaudeLine).index < line.index) before++;
    const group = back.get(before);
    if (group) group.push(line);
    else back.set(before, [line]);
  }
  if (back.size === 0) return chain;
  const out: ClaudeLine[] = [];
  for (let i = 0; i <= chain.length; i++) {
    const group = back.get(i);
    if (group) out.push(...group.sort((a, b) => a.index - b.index));
    if (i < chain.length) out.push(chain[i] as ClaudeLine);
  }
  return out;
}
