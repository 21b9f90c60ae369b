/**
 * The two segments of a context (seed 002's context IR, DESIGN.md §5) and round numbering.
 *
 * The header is never compacted: system prompt (the latest of each kind an agent rewrites as its
 * settings change), tool definitions, subagent strategy, the original
 * task (the first real user message), pinned content, the latest task list, the last 10 memory
 * notes and the carried state of the latest compaction (artifact trail, open errors, git diff stat). Everything else is the conversation. Membership is derived
 * from the items (types, flags, order), never stored, so it cannot drift from them.
 *
 * Pure module.
 */
import type { ContextItem } from './items';

/** Memory notes kept in the header: the most recent ones (seed 001: the last 10 memories). */
export const HEADER_MEMORY_LIMIT = 10;

/**
 * Why an item is in the header. The order of this list is the order of the header in the request
 * (`lower()`), whatever the order of the items.
 */
export const HEADER_ROLES = [
  'system',
  'tools',
  'subagent',
  'task',
  'pinned',
  'task_list',
  'memory',
  'artifacts',
  'errors',
  'git',
] as const;
export type HeaderRole = (typeof HEADER_ROLES)[number];

export interface Segments {
  /** Header items in header order (by {@link HEADER_ROLES}, then by position). */
  header: ContextItem[];
  /** Everything else, in the order of the items. */
  conversation: ContextItem[];
}

/** Item types of which only the latest is in the header, and the role it has there. */
const LATEST_ONLY: Partial<Record<ContextItem['type'], HeaderRole>> = {
  TASK_LIST: 'task_list',
  ARTIFACT_TRAIL: 'artifacts',
  OPEN_ERRORS: 'errors',
  GIT_DIFF_STAT: 'git',
};

/** A real user message starts a round; meta messages (injected by the system) never do (seed 003). */
export function isRoundStart(item: ContextItem): boolean {
  return item.type === 'USER_MESSAGE' && !item.isMeta;
}

/** An item taking part in a tool call/result pair: moving it alone would split the pair. */
function isToolPairMember(item: ContextItem): boolean {
  return (
    item.type === 'TOOL_RESULT' ||
    (item.type === 'ASSISTANT_MESSAGE' && (item.message.tool_calls?.length ?? 0) > 0)
  );
}

/**
 * The header role of each item (`undefined`: conversation), by position.
 *
 * - SYSTEM_PROMPT, TOOL_DEFINITIONS, SUBAGENT_STRATEGY: always header, except a system prompt made
 *   of tagged sections alone that later ones replace, a section of each of its tags
 *   (`<permissions instructions>`, written again by the agent when the setting changes), and a
 *   note of what changed in a section that a later copy of it lists whole (Codex's `Approved
 *   command prefix saved:`): conversation, sent with the system prompts all the same (`lower.ts`).
 * - The first real (non-meta) USER_MESSAGE: the original task.
 * - Pinned items, except a TOOL_RESULT or an assistant message with tool calls: those stay in the
 *   conversation (still pinned: the rules never compact them) so the pair keeps its order.
 * - The latest TASK_LIST, ARTIFACT_TRAIL, OPEN_ERRORS and GIT_DIFF_STAT, the last
 *   {@link HEADER_MEMORY_LIMIT} MEMORY items; older ones are conversation.
 * - SKILL_PROMPT, SKILL_METADATA, COMPACTION_SUMMARY and the rest: conversation.
 */
export function headerRoles(items: readonly ContextItem[]): (HeaderRole | undefined)[] {
  const roles = new Array<HeaderRole | undefined>(items.length).fill(undefined);
  let memories = 0;
  const latest = new Set<HeaderRole>();
  // Backwards for the "latest" rules, then forwards for the original task.
  for (let i = items.length - 1; i >= 0; i--) {
    const type = (items[i] as ContextItem).type;
    if (type === 'USER_MESSAGE' || type === 'ASSISTANT_MESSAGE' || type === 'TOOL_RESULT') continue;
    const single = LATEST_ONLY[type];
    if (single !== undefined) {
      if (!latest.has(single)) {
        latest.add(single);
        roles[i] = single;
      }
    } else if (type === 'MEMORY' && memories < HEADER_MEMORY_LIMIT) {
      memories++;
      roles[i] = 'memory';
    }
  }
  let taskFound = false;
  const superseded = supersededPrompts(items);
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as ContextItem;
    const type = item.type;
    if (type === 'SYSTEM_PROMPT') roles[i] = superseded?.has(i) ? undefined : 'system';
    else if (type === 'TOOL_DEFINITIONS') roles[i] = 'tools';
    else if (type === 'SUBAGENT_STRATEGY') roles[i] = 'subagent';
    else if (!taskFound && type === 'USER_MESSAGE' && !item.isMeta) {
      taskFound = true;
      roles[i] = 'task';
    } else if (item.pinned && roles[i] === undefined && !isToolPairMember(item)) roles[i] = 'pinned';
  }
  return roles;
}

/**
 * A tagged section of a system prompt: `<name>` … `</name>` (words, no attributes), to the last
 * closing tag of its name (its text may mention the tag).
 */
const SECTION = /<([A-Za-z][\w.:-]*(?: [A-Za-z][\w.:-]*){0,4})>[\s\S]*<\/\1>/g;

/**
 * Notes an agent writes between full copies of a section to say what changed in it, and the
 * section's tag: Codex's approved command prefixes, which it adds as such notes and lists again
 * whole (as "Approved command prefixes") in the next `<permissions instructions>` it sends (as it
 * does after its own compaction). Only a prompt that is such a note and nothing else.
 */
const SECTION_CHANGES: readonly { note: RegExp; tag: string }[] = [
  { note: /^\s*Approved command prefix saved:(?:\n- .*)*\s*$/, tag: 'permissions instructions' },
];

/**
 * The kinds of instruction a system prompt updates: the tags of its sections (`<permissions
 * instructions>`, `<collaboration_mode>`), and whether the prompt is made of those sections alone
 * (nothing outside them but white space); `change`: a note of what changed in a section (see
 * {@link SECTION_CHANGES}), which the section's next copy replaces but which replaces nothing. Null
 * for a prompt that opens with no tag.
 */
function promptSections(item: ContextItem): { tags: Set<string>; whole: boolean; change?: true } | null {
  const content = item.type === 'SYSTEM_PROMPT' ? item.message.content : null;
  if (typeof content !== 'string') return null;
  const change = SECTION_CHANGES.find((c) => c.note.test(content));
  if (change) return { tags: new Set([change.tag]), whole: true, change: true };
  if (!content.trimStart().startsWith('<')) return null;
  const tags = new Set<string>();
  let end = 0;
  let whole = true;
  for (const match of content.matchAll(SECTION)) {
    if (content.slice(end, match.index).trim().length > 0) whole = false;
    tags.add(match[1] as string);
    end = (match.index as number) + match[0].length;
  }
  if (content.slice(end).trim().length > 0) whole = false;
  return tags.size > 0 ? { tags, whole } : null;
}

/**
 * Positions of the system prompts that later ones replace (an agent that writes its settings into
 * the history as they change: the sandbox's permissions, a collaboration mode), or null when there
 * is none. A prompt is replaced when it is made of tagged sections alone and a later prompt has a
 * section of each of its tags; one with anything else in it (the user's own instructions beside
 * the settings) never is; nor is a note of what changed in a section (Codex's approved command
 * prefixes) until the section is sent again. Only the latest of a kind is header; the earlier ones
 * are conversation.
 */
function supersededPrompts(items: readonly ContextItem[]): Set<number> | null {
  let out: Set<number> | null = null;
  let later: Set<string> | null = null;
  for (let i = items.length - 1; i >= 0; i--) {
    if ((items[i] as ContextItem).type !== 'SYSTEM_PROMPT') continue;
    const sections = promptSections(items[i] as ContextItem);
    if (sections === null) continue;
    if (later && sections.whole && [...sections.tags].every((tag) => later?.has(tag)))
      (out ??= new Set()).add(i);
    if (sections.change) continue;
    for (const tag of sections.tags) (later ??= new Set()).add(tag);
  }
  return out;
}

/** Splits items into the header (in header order) and the conversation (in order). */
export function splitSegments(items: readonly ContextItem[]): Segments {
  const roles = headerRoles(items);
  const buckets = new Map<HeaderRole, ContextItem[]>(HEADER_ROLES.map((role) => [role, []]));
  const conversation: ContextItem[] = [];
  items.forEach((item, i) => {
    const role = roles[i];
    if (role === undefined) conversation.push(item);
    else buckets.get(role)?.push(item);
  });
  return { header: HEADER_ROLES.flatMap((role) => buckets.get(role) ?? []), conversation };
}

/** Whether each item is in the header, as a set of ids (for rules that must never touch them). */
export function headerIds(items: readonly ContextItem[]): Set<string> {
  const roles = headerRoles(items);
  return new Set(items.filter((_, i) => roles[i] !== undefined).map((item) => item.id));
}

export interface AssignRoundsOptions {
  /** Round of the items before the first real user message; the first one starts `startRound + 1`. Default 0. */
  startRound?: number;
}

/**
 * Numbers the rounds: a round starts at each real (non-meta) user message and runs to the next
 * one; items before the first are in round `startRound` (0 by default). SYSTEM_PROMPT,
 * TOOL_DEFINITIONS and SUBAGENT_STRATEGY items are always round 0. Returns new items where the
 * round changes (the input is not modified) and the same objects elsewhere.
 */
export function assignRounds(
  items: readonly ContextItem[],
  options: AssignRoundsOptions = {},
): ContextItem[] {
  let round = options.startRound ?? 0;
  return items.map((item) => {
    if (isRoundStart(item)) round++;
    const fixed =
      item.type === 'SYSTEM_PROMPT' || item.type === 'TOOL_DEFINITIONS' || item.type === 'SUBAGENT_STRATEGY';
    const wanted = fixed ? 0 : round;
    return item.round === wanted ? item : { ...item, round: wanted };
  });
}

/** Real user rounds in the items (the number of real user messages). */
export function countRounds(items: readonly ContextItem[]): number {
  return items.reduce((n, item) => (isRoundStart(item) ? n + 1 : n), 0);
}
