/**
 * The context a compaction works on, step by step (DESIGN.md §5): the header (never touched), the
 * previous summaries (merged into a new summary once anything is removed), and the conversation's
 * units (`tool-blocks.ts`), each kept or removed whole. Steps call {@link WorkingContext.remove}
 * and {@link WorkingContext.cut}; the context knows its total at every moment, counting the
 * reserve of the summary that will stand for what was removed, so a step stops as soon as the
 * total is at or under the goal.
 *
 * A cut is decided on counts alone (a {@link PlannedCut} says its tokens); its text — a preview of
 * the original — is written only when the context is read ({@link WorkingContext.contextItems}),
 * so deciding costs no tokenizing.
 *
 * The header is the context's (`segments.ts`), except that a task too large for the window with
 * the rest of the header is not: it is compacted like any message; so are pinned messages, oldest
 * first, while the header without the task is still over the window.
 *
 * Protected units are never removed: pinned content; the latest tool call and its results, which
 * the model has not seen yet (a call whose result is not in yet would get it with no call; a result
 * that just came in must reach the next request with its call); and the current round's user
 * message when it fits the window with the header (DESIGN.md §5 invariants); results in after the
 * newest reply, whatever reply called for them, too. A latest tool call whose results are all in
 * may be cut (previews); one still waiting for a result keeps its calls whole (the last resort may
 * cut its reasoning text: `reasoningStep`, `selective-prune.ts`), unless the request right after
 * would otherwise be over the window, the carried state cut as far as that helps: then its
 * arguments are cut to previews, the calls kept for their results to come back to.
 *
 * Pure module.
 */
import type { AssistantMessageItem, ContextItem } from './items';
import { headerRoles, isRoundStart, type HeaderRole } from './segments';
import { groupUnits, type Unit } from './tool-blocks';
import { indexPairs, type PairIndex } from './tool-pairs';

/** The smallest summary budget worth asking for, in tokens. */
export const MIN_SUMMARY_TOKENS = 200;

/** A cut form decided on counts; its text is written when the context is read. */
export interface PlannedCut {
  /** The cut form's id (derived from the original's and the preview's size). */
  id: string;
  /** Tokens the cut form will have at most. */
  tokens: number;
  /** What it cuts: the tool-call arguments, or the text (a result's, a message's, a reply's reasoning). */
  of: 'arguments' | 'text';
  /** Writes the cut form (called once, when the context is read). */
  write(): ContextItem;
}

/** A conversation unit as a compaction sees it. */
export interface WorkingUnit {
  /** Position among the working units (context order). */
  index: number;
  kind: Unit['kind'];
  round: number;
  /** The items as the context had them. */
  originals: ContextItem[];
  /** Each original's index in the context. */
  positions: readonly number[];
  /** Cuts decided for some of them, by position. */
  cuts: (PlannedCut | undefined)[];
  /** Tokens of the unit as it stands (cut forms counted at their planned size). */
  tokens: number;
  removed: boolean;
  /** Which kind of step removed it: the prune's (`selective-prune.ts`) or a summary strategy's. */
  removedBy: 'prune' | 'strategy' | null;
  /** Never removed (see the module comment). */
  protected: boolean;
  /** Why it is protected, for tests and events. */
  protection: 'pinned' | 'pending_call' | 'fresh_results' | 'current_message' | null;
}

export interface WorkingContextOptions {
  /** The context window: the current user message is protected when it fits it with the header. */
  window: number;
  /**
   * Tokens reserved for the summary that will stand for what is removed (and replace the previous
   * summaries). Null: no summary will be written; the previous summaries stay.
   */
  summaryReserve: number | null;
  /** The items' pairing, when the caller has it already. */
  pairs?: PairIndex;
  /**
   * The fewest tokens a reply whose calls still wait can be kept in (its calls' arguments cut, as
   * the last resort may right before a request); default: its tokens.
   */
  leastOf?: (item: AssistantMessageItem) => number;
}

/**
 * Takes out of the header (`roles`, changed in place) what it cannot hold within the window: the
 * original task first (it is in the summary), then pinned messages, oldest first (a pin larger
 * than the window cannot be kept whole); then gives back those that fit after all, the pins first
 * (the newest first: the user asked for them to stay), then the task. Returns the pins taken out:
 * they are compacted like any message.
 */
function fitHeader(
  items: readonly ContextItem[],
  roles: (HeaderRole | undefined)[],
  window: number,
): Set<ContextItem> {
  let fixed = 0;
  for (let i = 0; i < items.length; i++)
    if (roles[i] !== undefined) fixed += (items[i] as ContextItem).tokens;
  const out = new Set<ContextItem>();
  if (fixed <= window) return out;
  const task = roles.indexOf('task');
  const taken: number[] = [];
  if (task >= 0) {
    roles[task] = undefined;
    fixed -= (items[task] as ContextItem).tokens;
  }
  for (let i = 0; i < items.length && fixed > window; i++) {
    if (roles[i] !== 'pinned') continue;
    roles[i] = undefined;
    taken.push(i);
    fixed -= (items[i] as ContextItem).tokens;
  }
  for (const i of [...taken.reverse(), task]) {
    if (i < 0) continue;
    const tokens = (items[i] as ContextItem).tokens;
    if (fixed + tokens <= window) {
      roles[i] = i === task ? 'task' : 'pinned';
      fixed += tokens;
    } else if (i !== task) out.add(items[i] as ContextItem);
  }
  return out;
}

export class WorkingContext {
  readonly header: ContextItem[] = [];
  readonly summaries: ContextItem[] = [];
  readonly units: WorkingUnit[] = [];
  readonly headerTokens: number;
  readonly summaryTokens: number;
  private reserve: number | null;
  /** The context window the protections were decided for. */
  readonly windowTokens: number;
  private keptTokens = 0;
  private keptItems = 0;
  private itemLimit = Infinity;
  private itemsBinding = false;
  private removedCount = 0;
  /** Index in the context of each header item and summary, to put things back in order. */
  private readonly headerPositions: number[] = [];
  private readonly summaryPositions: number[] = [];
  /** See {@link WorkingContextOptions.leastOf}. */
  private readonly leastOf: (item: AssistantMessageItem) => number;
  /** Cut forms written so far (each is written once). */
  private readonly written = new Map<PlannedCut, ContextItem>();
  /** Each block's riders (see {@link WorkingContext.ridden}), and each rider's block. */
  private readonly riders = new Map<WorkingUnit, WorkingUnit[]>();
  private readonly riding = new Map<WorkingUnit, WorkingUnit>();

  constructor(
    readonly items: readonly ContextItem[],
    options: WorkingContextOptions,
  ) {
    this.reserve = options.summaryReserve;
    this.windowTokens = options.window;
    this.leastOf = options.leastOf ?? ((item) => item.tokens);
    const roles = headerRoles(items);
    const unpinned = fitHeader(items, roles, options.window);
    for (let i = 0; i < items.length; i++)
      if (roles[i] !== undefined) {
        this.header.push(items[i] as ContextItem);
        this.headerPositions.push(i);
      }
    for (const unit of groupUnits(items, options.pairs ?? indexPairs(items))) {
      const first = unit.items[0] as ContextItem;
      // Only a unit of one item can be header: no tool call or result ever is (`segments.ts`).
      if (unit.kind === 'item' && roles[unit.start] !== undefined) continue;
      if (unit.kind === 'item' && first.type === 'COMPACTION_SUMMARY') {
        this.summaries.push(first);
        this.summaryPositions.push(unit.start);
        continue;
      }
      let tokens = 0;
      let pinned = false;
      for (const item of unit.items) {
        tokens += item.tokens;
        if (item.pinned && !unpinned.has(item)) pinned = true;
      }
      // A system prompt in the conversation (one a later one replaced: `segments.ts`) is round 0;
      // it belongs to the round it was written in.
      const round = first.type === 'SYSTEM_PROMPT' ? (this.units.at(-1)?.round ?? unit.round) : unit.round;
      this.units.push({
        index: this.units.length,
        kind: unit.kind,
        round,
        originals: unit.items,
        positions: unit.positions,
        cuts: [],
        tokens,
        removed: false,
        removedBy: null,
        protected: pinned,
        protection: pinned ? 'pinned' : null,
      });
      this.keptTokens += tokens;
      this.keptItems += unit.items.length;
    }
    this.headerTokens = this.header.reduce((n, i) => n + i.tokens, 0);
    this.summaryTokens = this.summaries.reduce((n, i) => n + i.tokens, 0);
    this.findRiders();
    this.protectPending();
    this.protectLateResults();
    this.protectCurrentMessage();
  }

  /**
   * The riders of each block: the agent's own messages right after its results, before anything
   * else (Cline's `<environment_details>` and reminders sent with each result, a hook's output):
   * they came in with the results and say something about that moment. Removed with the block.
   */
  private findRiders(): void {
    let block: WorkingUnit | null = null;
    let end = -1;
    for (const unit of this.units) {
      const first = unit.originals[0] as ContextItem;
      const at = unit.positions[0] as number;
      if (unit.kind === 'block') {
        [block, end] = [unit, unit.positions.at(-1) as number];
      } else if (block && at === end + 1 && first.type === 'USER_MESSAGE' && first.isMeta && !first.pinned) {
        const riders = this.riders.get(block);
        if (riders) riders.push(unit);
        else this.riders.set(block, [unit]);
        this.riding.set(unit, block);
        end = at;
      } else block = null;
    }
  }

  /**
   * The block a unit rides (see {@link findRiders}), if it rides one: removed with it, and not
   * brought back while it is removed. The prune and the strategies count a block's riders as part
   * of its results' message, which they were in the agent's request (Cline's, Claude Code's).
   */
  ridden(unit: WorkingUnit): WorkingUnit | undefined {
    return this.riding.get(unit);
  }

  /** A block's riders (see {@link findRiders}). */
  ridersOf(unit: WorkingUnit): readonly WorkingUnit[] {
    return this.riders.get(unit) ?? [];
  }

  /**
   * The latest assistant message's tool block: its calls are waiting for results, or its results
   * came in after the last request. Either way the model has not seen them yet. A call the user
   * spoke after (a real user message follows the block) waits for nothing: the agent dropped it
   * (Cline's interrupted tool, a request cancelled), and the request gives it a missing result
   * (`lower.ts`); the block is then kept only for the results it has. The blocks right before it
   * of the same reply are the model's unseen work too: one reply's parallel calls written as a
   * message each, their results after the last call (a block whose calls still wait, or whose
   * results came after the next block's call; calls still waiting up to what the window leaves
   * beside the header, the current message and the smallest summary, half the window at least,
   * each counted with its arguments cut to the shortest preview, as the last resort keeps it;
   * results in whatever their size, as one block's would be). A text of the reply written after
   * its calls, before their results, does not end them: calls still waiting behind it, and results
   * that came in after it, are kept (results before it were seen).
   */
  private protectPending(): void {
    let userAfter = false;
    /** Where the reply's text is when it came after its calls: results before it were seen. */
    let textAt = -1;
    /** The block after this one, once the latest is found. */
    let later: WorkingUnit | null = null;
    /** Tokens of the reply's blocks kept so far. */
    let run = 0;
    /**
     * What calls still waiting may take: what the window leaves beside the header, the current
     * message and the smallest summary; half the window at least.
     */
    const pendingCap = Math.max(
      this.windowTokens / 2,
      this.windowTokens - this.headerTokens - (this.currentMessage()?.tokens ?? 0) - MIN_SUMMARY_TOKENS,
    );
    for (let i = this.units.length - 1; i >= 0; i--) {
      const unit = this.units[i] as WorkingUnit;
      const first = unit.originals[0] as ContextItem;
      if (first.type !== 'ASSISTANT_MESSAGE') {
        const roundStart = unit.kind === 'item' && isRoundStart(first);
        // A reply's text after the user spoke answers the user, not its calls before.
        if (later || (roundStart && textAt !== -1)) return;
        userAfter ||= roundStart;
        continue;
      }
      if (unit.kind !== 'block') {
        // The reply's text written after its calls, before their results (lists converted from
        // Codex sessions): the calls before it may still wait.
        if (later || textAt !== -1 || first.message.tool_calls?.length) return;
        textAt = unit.positions[0] as number;
        continue;
      }
      const results = unit.originals.length - 1;
      const missing = results < (first.message.tool_calls?.length ?? 0);
      if (textAt !== -1 && !missing && (unit.positions[results] as number) < textAt) return;
      // A block still waiting takes at least its calls with their arguments cut (the last resort
      // cuts them rather than leave a result without its call).
      const least = missing ? unit.tokens - first.tokens + this.leastOf(first) : 0;
      if (later) {
        const sameReply = missing || (unit.positions[results] as number) > (later.positions[0] as number);
        // Calls still waiting, `pendingCap` at most: a list of calls that never got results is no
        // one reply. Results in are kept as one block's would be (cut to previews if need be).
        if (!sameReply || (missing && run + least > pendingCap)) return;
      }
      run += least;
      later = unit;
      if (unit.protected) continue;
      // Dropped with nothing in: nothing the model has not seen.
      if (missing && userAfter && results === 0) return;
      unit.protected = true;
      unit.protection = missing && !userAfter ? 'pending_call' : 'fresh_results';
    }
  }

  /**
   * Results in after the newest reply, whatever reply made their calls (a call's result that came
   * late, after a later reply's call and result): the model has not seen them either, and they stay
   * with their calls (cut to previews if need be).
   */
  private protectLateResults(): void {
    let replyAt = -1;
    for (const unit of this.units)
      if ((unit.originals[0] as ContextItem).type === 'ASSISTANT_MESSAGE')
        replyAt = Math.max(replyAt, unit.positions[0] as number);
    for (const unit of this.units) {
      if (unit.kind !== 'block' || unit.protected) continue;
      if ((unit.positions.at(-1) as number) < replyAt || unit.positions.length < 2) continue;
      const first = unit.originals[0] as ContextItem;
      const calls = first.type === 'ASSISTANT_MESSAGE' ? (first.message.tool_calls?.length ?? 0) : 0;
      unit.protected = true;
      // Some of its calls still waiting: they stay whole as the latest reply's would.
      unit.protection = unit.originals.length - 1 < calls ? 'pending_call' : 'fresh_results';
    }
  }

  /** The newest real user message, when it fits the window with the header (it then stays). */
  private currentMessage(): WorkingUnit | null {
    for (let i = this.units.length - 1; i >= 0; i--) {
      const unit = this.units[i] as WorkingUnit;
      if (unit.kind !== 'item' || !isRoundStart(unit.originals[0] as ContextItem)) continue;
      return this.headerTokens + unit.tokens <= this.windowTokens ? unit : null;
    }
    return null;
  }

  /** Protects the newest real user message, when it fits the window with the header. */
  private protectCurrentMessage(): void {
    const unit = this.currentMessage();
    if (unit && !unit.protected) {
      unit.protected = true;
      unit.protection = 'current_message';
    }
  }

  /** Tokens reserved for the summary (null: no summary will be written). */
  get summaryReserve(): number | null {
    return this.reserve;
  }

  /** Sets the summary's reserve, once the header is known and before any step runs. */
  reserveSummary(tokens: number): void {
    if (this.removedCount > 0) throw new Error('the summary reserve is set before anything is removed');
    this.reserve = tokens;
  }

  /** Whether anything was removed (a summary will then stand for it). */
  get removedAny(): boolean {
    return this.removedCount > 0;
  }

  /** Tokens the context would have now: header, kept units, and the summaries or the new summary's reserve. */
  total(): number {
    const summary =
      this.summaryReserve !== null && this.removedAny ? this.summaryReserve : this.summaryTokens;
    return this.headerTokens + this.keptTokens + summary;
  }

  /**
   * {@link total} with each planned cut counted as written (a plan's tokens are a bound on them):
   * writes the kept units' cut forms.
   */
  writtenTotal(): number {
    let kept = 0;
    for (const unit of this.units) {
      if (unit.removed) continue;
      for (const item of this.unitItems(unit)) kept += item.tokens;
    }
    return this.total() - this.keptTokens + kept;
  }

  /** Items the context would have now (the new summary counted as one once anything is removed). */
  itemCount(): number {
    const summaries = this.summaryReserve !== null && this.removedAny ? 1 : this.summaries.length;
    return this.header.length + this.keptItems + summaries;
  }

  /** The most items the context may have at the goal (the events trigger counts items). */
  limitItems(items: number): void {
    this.itemLimit = items;
  }

  /** Whether the context is at or under `goal` tokens and at or under its item limit. */
  reached(goal: number): boolean {
    const tokens = this.total() <= goal;
    const items = this.itemCount() <= this.itemLimit;
    if (tokens && !items) this.itemsBinding = true;
    return tokens && items;
  }

  /** Whether the item limit, with the tokens already at the goal, made a step go on. */
  get itemBound(): boolean {
    return this.itemsBinding;
  }

  /** Tokens of the kept conversation units. */
  conversationTokens(): number {
    return this.keptTokens;
  }

  /** Kept units that a step may remove, in order. */
  candidates(): WorkingUnit[] {
    return this.units.filter((u) => !u.removed && !u.protected);
  }

  /** Kept units whose tool arguments and results may be cut, in order. */
  cuttable(): WorkingUnit[] {
    return this.units.filter((u) => !u.removed && (!u.protected || u.protection === 'fresh_results'));
  }

  /** Removes a unit (no-op for a protected or removed one); `by`: the kind of step removing it. */
  remove(unit: WorkingUnit, by: 'prune' | 'strategy'): void {
    if (unit.removed || unit.protected) return;
    unit.removed = true;
    unit.removedBy = by;
    this.keptTokens -= unit.tokens;
    this.keptItems -= unit.originals.length;
    this.removedCount++;
    for (const rider of this.riders.get(unit) ?? []) this.remove(rider, by);
  }

  /** The item at `position` as it stands: its planned cut's tokens, or the original's. */
  tokensAt(unit: WorkingUnit, position: number): number {
    return unit.cuts[position]?.tokens ?? (unit.originals[position] as ContextItem).tokens;
  }

  /** Plans a cut of the item at `position` of a kept unit (replacing any earlier plan for it). */
  cut(unit: WorkingUnit, position: number, cut: PlannedCut): void {
    const delta = cut.tokens - this.tokensAt(unit, position);
    unit.cuts[position] = cut;
    unit.tokens += delta;
    if (!unit.removed) this.keptTokens += delta;
  }

  /** Drops the planned cut of the item at `position`: the item stays as the context had it. */
  uncut(unit: WorkingUnit, position: number): void {
    const delta = (unit.originals[position] as ContextItem).tokens - this.tokensAt(unit, position);
    unit.cuts[position] = undefined;
    unit.tokens += delta;
    if (!unit.removed) this.keptTokens += delta;
  }

  /** The removed units, in order. */
  removedUnits(): WorkingUnit[] {
    return this.units.filter((u) => u.removed);
  }

  /** A unit's items as they stand: cut forms written. */
  unitItems(unit: WorkingUnit): ContextItem[] {
    return unit.originals.map((_, i) => this.itemAt(unit, i));
  }

  /** The item at `position` of a unit as it stands: its cut form written (once), else the original. */
  itemAt(unit: WorkingUnit, position: number): ContextItem {
    const cut = unit.cuts[position];
    if (!cut) return unit.originals[position] as ContextItem;
    let written = this.written.get(cut);
    if (!written) {
      written = cut.write();
      this.written.set(cut, written);
    }
    return written;
  }

  /**
   * The context: every kept item in the context's order (cut forms in their originals' places), with
   * `summary` right before the first kept conversation unit — or, when there is none, the previous
   * summaries unless a new summary will replace them (`keepSummaries` keeps them anyway). Nothing
   * else moves: which task list, memories and carried state are the latest stays what it was (the
   * request puts the header first, `lower()`). `keep` chooses the units (default: the kept ones).
   */
  contextItems(
    summary: ContextItem | null,
    options: { keepSummaries?: boolean; keep?: (unit: WorkingUnit) => boolean } = {},
  ): ContextItem[] {
    const keep = options.keep ?? ((u: WorkingUnit) => !u.removed);
    const replaced = this.summaryReserve !== null && this.removedAny && !options.keepSummaries;
    const entries: { rank: number; item: ContextItem }[] = [];
    this.header.forEach((item, i) => entries.push({ rank: this.headerPositions[i] as number, item }));
    if (!summary && !replaced)
      this.summaries.forEach((item, i) => entries.push({ rank: this.summaryPositions[i] as number, item }));
    let firstUnit = Infinity;
    for (const unit of this.units) {
      if (!keep(unit)) continue;
      firstUnit = Math.min(firstUnit, unit.positions[0] as number);
      // A cut form takes its original's place.
      this.unitItems(unit).forEach((item, i) => {
        entries.push({ rank: unit.positions[i] as number, item });
      });
    }
    if (summary)
      entries.push({ rank: Number.isFinite(firstUnit) ? firstUnit - 0.5 : Infinity, item: summary });
    return entries.sort((a, b) => a.rank - b.rank).map((e) => e.item);
  }
}
