/**
 * Carried state (DESIGN.md §5): deterministic header items a compaction builds from the whole
 * context before anything is pruned, merged with what the previous compaction carried, so that no
 * summarizer can lose them:
 * - the artifact trail: every file read, written or edited, with the operation and the last round
 *   (`artifact-trail.ts`), and the latest commands;
 * - the open errors (`open-errors.ts`): the latest 8 shown, the latest 32 kept in its data, so
 *   that an older error still open is shown again when later steps resolve newer ones;
 * - the workspace's `git diff --stat` when the workspace is a git repository (seed 001), refreshed
 *   at each compaction;
 * - the agent's notes read off tool calls that left no note item (another agent's `TodoWrite`, a
 *   replayed session's `remember`): the latest task list, memories and pins become the header items
 *   our own tools would have written. Only the latest task list stays: an older one is gone from
 *   the context (the calls that wrote it say what it was), as a model reading it after the latest
 *   would take the stale list for the current one.
 *
 * Budgets (tokens; `carriedStateRatio` × the target in all): open errors and the git diff stat a
 * quarter each at most (oldest errors and the stat's middle lines go first), the artifact trail the
 * rest (its own overflow rule keeps every path as long as any budget can). Where that would drop an
 * open error's text or collapse a path, the carried state grows, up to `carriedStateMaxRatio` × the
 * target: the errors to a quarter of it, the trail's paths (bare, without details) to the rest.
 * Errors that still do not fit take up to half of it (or of the budget, where a long header
 * leaves nothing to grow into) as long as the trail's paths, bare, still fit beside them.
 * Notes keep their full text, as the notes of our own tools do.
 *
 * Pure module.
 */
import {
  CARRIED_CUT_LINE,
  collectArtifactTrail,
  emptyTrail,
  renderTrailCounted,
  trailFromText,
  trailPathTokens,
  type ArtifactTrail,
} from './artifact-trail';
import {
  formatTaskList,
  MEMORY_PREFIX,
  pinMessageText,
  TASK_LIST_PREFIX,
  type CallNote,
} from './agent-notes';
import {
  messageText,
  type CallFacts,
  type ContextItem,
  type NoteItem,
  type OpenError,
  type UserMessageItem,
} from './items';
import { callFactsOf } from './item-facts';
import {
  collectOpenErrors,
  OPEN_ERRORS_LIMIT,
  OPEN_ERRORS_TRACKED,
  openErrorsFromText,
  renderOpenErrorsWithin,
} from './open-errors';
import { countItemTokens, MESSAGE_OVERHEAD_TOKENS } from './token-accounting';
import { fixedTextTokens, maxTokens, type Tokenizer } from './tokenizer';
import { indexPairs, movePairs, type PairIndex } from './tool-pairs';

/** Item types only a compaction writes, replaced by each one. */
export const CARRIED_TYPES = ['ARTIFACT_TRAIL', 'OPEN_ERRORS', 'GIT_DIFF_STAT'] as const;

const GIT_DIFF_STAT_SUFFIX = 'git-diff-stat';

/** The id of the git diff stat item a compaction writes (`idPrefix`: the compaction's id). */
export function gitDiffStatItemId(idPrefix: string): string {
  return `${idPrefix}:${GIT_DIFF_STAT_SUFFIX}`;
}

/** The first line of the git diff stat item. */
export const GIT_DIFF_STAT_HEADING = '[Workspace changes] git diff --stat at the last compaction';

export interface CarriedStateInput {
  /** The context being compacted, whole. */
  items: readonly ContextItem[];
  tokenizer: Tokenizer;
  /** Tokens the carried items may use together (artifact trail, open errors, git diff stat). */
  budgetTokens: number;
  /**
   * Tokens they may grow to, only to keep every touched path and every open error's text written
   * whole (default `budgetTokens`).
   */
  limitTokens?: number;
  /** Prefix of the new items' ids (the compaction's id): the same input gives the same items. */
  idPrefix: string;
  /**
   * `git diff --stat` of the workspace: a text refreshes the item, null removes it (not a git
   * repository, or no workspace), undefined keeps the one the context has.
   */
  gitDiffStat?: string | null | undefined;
  /** The items' pairing, when the caller has it already. */
  pairs?: PairIndex;
  /**
   * The budgets are caps the items keep to, whatever they hold (the request right after would
   * otherwise go over the window): no item gets its usual least share, and a text still over its
   * share is cut to it. The items' data stays whole: a later compaction with room writes it again.
   */
  hard?: boolean;
}

export interface CarriedState {
  /**
   * The context with the previous carried items taken out and the new ones in: the trail, the open
   * errors and the diff stat at the end (the header puts them in place), notes read off tool calls
   * right after the call's unit.
   */
  items: ContextItem[];
  /** The items made here (to be stored). */
  added: ContextItem[];
  trail: ArtifactTrail;
  /** The open errors shown (the latest `OPEN_ERRORS_LIMIT`). */
  openErrors: OpenError[];
  /** The pairing of `items` (the carried items hold no tool call or result). */
  pairs: PairIndex;
}

/** Whether an item is carried state (replaced by each compaction). */
export function isCarried(item: ContextItem): boolean {
  return (CARRIED_TYPES as readonly string[]).includes(item.type);
}

function noteText(item: ContextItem): string {
  return item.type === 'TOOL_DEFINITIONS' ? '' : messageText(item.message);
}

/** The text cut to `budget` tokens with a marker, or itself when it fits (`tokens`: its count, when known). */
function fit(text: string, budget: number, tokenizer: Tokenizer, tokens?: number): string {
  if (maxTokens(text) <= budget || (tokens ?? tokenizer.countText(text)) <= budget) return text;
  // Room for the marker is taken only when the text must be cut; with no room for it, nothing.
  const marker = fixedTextTokens(`\n${CARRIED_CUT_LINE}`, tokenizer);
  if (budget < marker) return '';
  return `${tokenizer.prefix(text, budget - marker)}\n${CARRIED_CUT_LINE}`;
}

/** The stat's first lines and its summary line, within `budget`. */
function fitStat(stat: string, budget: number, tokenizer: Tokenizer): string {
  const lines = stat.trim().split('\n');
  const summary = lines.length > 1 ? (lines[lines.length - 1] as string) : '';
  let body = lines.slice(0, summary ? -1 : undefined);
  const render = (): string => [GIT_DIFF_STAT_HEADING, ...body, ...(summary ? [summary] : [])].join('\n');
  // The text's count, when its bytes alone do not say it fits.
  const counted = (text: string): number | undefined =>
    maxTokens(text) <= budget ? undefined : tokenizer.countText(text);
  let text = render();
  let tokens = counted(text);
  while (body.length > 0 && tokens !== undefined && tokens > budget) {
    body = body.slice(0, Math.max(0, body.length - Math.max(1, Math.floor(body.length / 4))));
    if (body.length > 0) body = [...body.slice(0, -1), '…'];
    text = render();
    tokens = counted(text);
  }
  return fit(text, budget, tokenizer, tokens);
}

interface NoteSource {
  note: CallNote;
  /** Index in the items of the unit the note follows (the call's last result, or the call). */
  after: number;
  round: number;
}

/** Notes made by tool calls, each placed after its call's result. */
function notesOfCalls(items: readonly ContextItem[], pairs: PairIndex): NoteSource[] {
  const out: NoteSource[] = [];
  for (let index = 0; index < items.length; index++) {
    const item = items[index] as ContextItem;
    const first = pairs.firstCall[index] as number;
    if (first === -1 || item.type !== 'ASSISTANT_MESSAGE') continue;
    const facts = callFactsOf(item);
    for (let i = 0; i < facts.length; i++) {
      const note = (facts[i] as CallFacts).note;
      if (!note) continue;
      const result = pairs.callResult[first + i] as number;
      out.push({ note, after: result === -1 ? index : result, round: item.round });
    }
  }
  return out;
}

/**
 * Note items for notes made by tool calls that the context holds no item for: the latest task list
 * (when no TASK_LIST item is as recent), memories and pins whose text no item holds.
 */
function derivedNotes(
  items: readonly ContextItem[],
  idPrefix: string,
  pairs: PairIndex,
): { after: number; item: ContextItem }[] {
  const sources = notesOfCalls(items, pairs);
  if (sources.length === 0) return [];
  const texts = new Set(items.map(noteText));
  let lastTaskListItem = -1;
  items.forEach((item, i) => {
    if (item.type === 'TASK_LIST') lastTaskListItem = i;
  });
  const lastTaskCall = sources.reduce((at, s, i) => (s.note.kind === 'task_list' ? i : at), -1);
  const out: { after: number; item: ContextItem }[] = [];
  sources.forEach((source, i) => {
    const base = { round: source.round, isMeta: true, pinned: false, ephemeral: false, tokens: 0 };
    const id = `${idPrefix}:note:${items[source.after]?.id ?? source.after}:${i}`;
    const { note } = source;
    if (note.kind === 'task_list') {
      if (i !== lastTaskCall || source.after < lastTaskListItem) return;
      const content = `${TASK_LIST_PREFIX}${formatTaskList(note.tasks)}`;
      if (texts.has(content)) return;
      const item: NoteItem = { ...base, id, type: 'TASK_LIST', message: { role: 'user', content } };
      out.push({ after: source.after, item });
    } else if (note.kind === 'memory') {
      const content = `${MEMORY_PREFIX}${note.text}`;
      if (texts.has(content)) return;
      texts.add(content);
      const item: NoteItem = { ...base, id, type: 'MEMORY', message: { role: 'user', content } };
      out.push({ after: source.after, item });
    } else {
      const content = pinMessageText(note.text);
      if (texts.has(content)) return;
      texts.add(content);
      const item: UserMessageItem = {
        ...base,
        id,
        pinned: true,
        type: 'USER_MESSAGE',
        message: { role: 'user', content },
      };
      out.push({ after: source.after, item });
    }
  });
  return out;
}

/** What the context holds of earlier compactions' carried state, read in one pass. */
interface PreviousCarried {
  /** The data of the latest artifact trail and open-errors items. */
  trail: ArtifactTrail;
  errors: OpenError[];
  /** The latest git diff stat item. */
  stat: ContextItem | undefined;
  /** Whether the context holds any carried item (each is replaced). */
  any: boolean;
  /** The latest round of the context. */
  round: number;
  /** The position of the latest task list, and how many the context holds. */
  taskList: number;
  taskLists: number;
  /**
   * The position of the first item the previous trail and errors do not cover: right after the
   * last carried item a compaction wrote with its data (a compaction puts them after the items it
   * kept, and new items come after them); 0 when any was read back from its text (its place is then
   * the header's, not the compaction's).
   */
  from: number;
}

function previousCarried(items: readonly ContextItem[]): PreviousCarried {
  const previous: PreviousCarried = {
    trail: emptyTrail(),
    errors: [],
    stat: undefined,
    any: false,
    round: 0,
    taskList: -1,
    taskLists: 0,
    from: 0,
  };
  let readBack = false;
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as ContextItem;
    if (item.round > previous.round) previous.round = item.round;
    if (item.type === 'TASK_LIST') [previous.taskList, previous.taskLists] = [i, previous.taskLists + 1];
    if (item.type !== 'ARTIFACT_TRAIL' && item.type !== 'OPEN_ERRORS' && item.type !== 'GIT_DIFF_STAT')
      continue;
    previous.any = true;
    if (item.type === 'GIT_DIFF_STAT') previous.stat = item;
    const data = item.carried;
    if (data) previous.from = i + 1;
    else if (item.type !== 'GIT_DIFF_STAT') readBack = true;
    if (data?.kind === 'artifact_trail')
      previous.trail =
        typeof data.workspace === 'string'
          ? { files: data.files, commands: data.commands, workspace: data.workspace }
          : { files: data.files, commands: data.commands };
    else if (data?.kind === 'open_errors') previous.errors = data.errors;
    // Written out as text and read back (a session file, chat messages): what the text shows.
    else if (item.type === 'ARTIFACT_TRAIL') previous.trail = trailFromText(messageText(item.message));
    else if (item.type === 'OPEN_ERRORS') previous.errors = openErrorsFromText(messageText(item.message));
  }
  if (readBack) previous.from = 0;
  return previous;
}

/** Builds the carried state of a compaction (see the module comment). */
export function buildCarriedState(input: CarriedStateInput): CarriedState {
  const { items, tokenizer, idPrefix } = input;
  const previous = previousCarried(items);
  const pairs = input.pairs ?? indexPairs(items);
  const trail = collectArtifactTrail(items, previous.trail, pairs, previous.from);
  const trackedErrors = collectOpenErrors(items, previous.errors, pairs, OPEN_ERRORS_TRACKED, previous.from);
  const openErrors = trackedErrors.slice(-OPEN_ERRORS_LIMIT);
  const round = previous.round;
  const budget = Math.max(0, input.budgetTokens);
  const quarter = Math.floor(budget / 4);
  /** An item's least share of the budget, but under a hard cap. */
  const least = (tokens: number): number => (input.hard ? Math.min(tokens, quarter) : tokens);
  /** Under a hard cap, what an item's share leaves its text: the share less the message's framing. */
  const framing = input.hard ? MESSAGE_OVERHEAD_TOKENS : 0;
  const note = (
    type: NoteItem['type'],
    suffix: string,
    content: string,
    carried?: NoteItem['carried'],
    contentTokens?: number,
  ): NoteItem => {
    const item: NoteItem = {
      id: `${idPrefix}:${suffix}`,
      type,
      message: { role: 'user', content },
      tokens: 0,
      round,
      isMeta: true,
      pinned: false,
      ephemeral: false,
      ...(carried ? { carried } : {}),
    };
    // A user message costs its content and the framing (no name): no need to count again. One cut
    // to nothing under a hard cap is not sent (`lower()`): it keeps its data, for the next
    // compaction, and costs nothing.
    const tokens =
      content === ''
        ? 0
        : contentTokens === undefined
          ? countItemTokens(item, tokenizer)
          : contentTokens + MESSAGE_OVERHEAD_TOKENS;
    return { ...item, tokens };
  };

  const carried: ContextItem[] = [];
  let used = 0;
  const limit = Math.max(budget, input.limitTokens ?? budget);
  if (openErrors.length > 0) {
    let errorBudget = Math.max(0, Math.max(quarter, least(40)) - framing);
    let rendered = renderOpenErrorsWithin(openErrors, errorBudget, tokenizer);
    if (!rendered.complete && !input.hard) {
      // A quarter of what the carried state may use (grown where it may grow), to keep every
      // error's text; up to half where the trail's paths written bare still fit beside them
      // (every path first, then every open error, then the trail's details).
      const stat =
        input.gitDiffStat === undefined
          ? (previous.stat?.tokens ?? 0)
          : input.gitDiffStat
            ? Math.max(quarter, 40)
            : 0;
      const besidePaths = limit - trailPathTokens(trail, tokenizer) - stat - 2 * MESSAGE_OVERHEAD_TOKENS;
      errorBudget = Math.max(
        errorBudget,
        Math.floor(limit / 4),
        Math.min(Math.floor(limit / 2), besidePaths),
      );
      rendered = renderOpenErrorsWithin(openErrors, errorBudget, tokenizer);
    }
    const fitted = fit(rendered.text, errorBudget, tokenizer, rendered.tokens);
    const item = note(
      'OPEN_ERRORS',
      'open-errors',
      fitted,
      { kind: 'open_errors', errors: trackedErrors },
      fitted === rendered.text ? rendered.tokens : undefined,
    );
    carried.push(item);
    used += item.tokens;
  }
  const previousStat = previous.stat;
  if (input.gitDiffStat === undefined) {
    // Under a hard cap, kept only as far as its share goes (a new item of its cut text).
    const stat =
      previousStat && input.hard && previousStat.tokens - MESSAGE_OVERHEAD_TOKENS > quarter
        ? note(
            'GIT_DIFF_STAT',
            GIT_DIFF_STAT_SUFFIX,
            fit(noteText(previousStat), quarter - framing, tokenizer),
          )
        : previousStat;
    if (stat) {
      carried.push(stat);
      used += stat.tokens;
    }
  } else if (input.gitDiffStat !== null && input.gitDiffStat.trim().length > 0) {
    const item = note(
      'GIT_DIFF_STAT',
      GIT_DIFF_STAT_SUFFIX,
      fitStat(input.gitDiffStat, Math.max(quarter, least(40)) - framing, tokenizer),
    );
    carried.push(item);
    used += item.tokens;
  }
  let counted = trail;
  if (trail.files.length > 0 || trail.commands.length > 0) {
    const trailBudget = Math.max(budget - used - framing, input.hard ? 0 : 60);
    const rendered = renderTrailCounted(trail, trailBudget, tokenizer, Math.max(limit - used, trailBudget));
    // The trail keeps the counts of its lines, for the next compaction.
    counted = rendered.trail;
    const text = input.hard ? fit(rendered.text, trailBudget, tokenizer, rendered.tokens) : rendered.text;
    carried.unshift(
      note(
        'ARTIFACT_TRAIL',
        'artifact-trail',
        text,
        { kind: 'artifact_trail', ...counted },
        text === rendered.text ? rendered.tokens : undefined,
      ),
    );
  }

  const notes = derivedNotes(items, idPrefix, pairs)
    .map(({ after, item }) => ({ after, item: { ...item, tokens: countItemTokens(item, tokenizer) } }))
    .sort((a, b) => a.after - b.after);
  // The items in place (the previous carried items and older task lists out, the notes after their
  // calls, the new carried items at the end), and each one's new position for the pairing. A task
  // list read off a call is newer than any the context holds.
  const taskList = notes.some((n) => n.item.type === 'TASK_LIST') ? -1 : previous.taskList;
  const out: ContextItem[] = [];
  const moved =
    previous.any || notes.length > 0 || previous.taskLists > 1 ? new Int32Array(items.length) : null;
  let next = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as ContextItem;
    const gone = isCarried(item) || (item.type === 'TASK_LIST' && i !== taskList);
    if (moved) moved[i] = gone ? -1 : out.length;
    if (!gone) out.push(item);
    while (next < notes.length && (notes[next] as { after: number }).after === i) {
      out.push((notes[next] as { item: ContextItem }).item);
      next++;
    }
  }
  out.push(...carried);
  const added = [...notes.map((n) => n.item), ...carried.filter((c) => c !== previousStat)];
  return { items: out, added, trail: counted, openErrors, pairs: movePairs(pairs, moved, out.length) };
}
