/**
 * Which lines of a Claude Code session its conversation is made of: the active chain of `uuid` /
 * `parentUuid` links ending at the last message line, without subagents' `isSidechain` lines (unless
 * the file is a subagent's own, with nothing else); the message lines in file order when no line
 * links to another. A compaction of Claude Code's starts a chain of
 * its own (a `compact_boundary` line with no parent, its `logicalParentUuid` naming the line before);
 * with `whole` the chain goes on through it to the history before. Pure.
 */
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
    at = parent === undefined ? undefined : byId.get(parent);
  }
  return chain.reverse();
}
