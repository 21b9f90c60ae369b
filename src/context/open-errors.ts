/**
 * Open errors (DESIGN.md §5 carried state): errors a tool reported that no later step resolved.
 * An error is resolved when a later call of the same tool on the same target (a path, or a
 * command's first words) succeeds: a failed `npm test` stays open until `npm test` passes, a
 * failed edit of `src/tax.ts` until an edit of it goes through. A later failure of the same call
 * (the same command, whole) replaces it: `python repro.py` failing on a missing module, then, once
 * it is installed, on a type error, has the type error open.
 *
 * Detection is deliberately strict, so that a file that merely contains the word "error" is not an
 * error: the tool said so (pi's `isError`, our tools' `Error: …`), a shell command exited non-zero,
 * a Python traceback, a failing test run, a command not found.
 *
 * Pure module.
 */
import { carriedLines } from './artifact-trail';
import type { AssistantMessageItem, ContextItem, OpenError } from './items';
import { callFactsOf, resultErrorOf } from './item-facts';
import { maxTokens, type Tokenizer } from './tokenizer';
import { indexPairs, type PairIndex } from './tool-pairs';

/**
 * The error of a call cut short before it ended (OpenCode's and Claude Code's words, a user's
 * abort): it says nothing of how the call would have turned out.
 */
const INTERRUPTED =
  /^\W*(?:tool execution was interrupted|request interrupted|interrupted by (?:the )?user|aborted|cancell?ed)\b/i;

/** Open errors the carried state shows: the most recent ones. */
export const OPEN_ERRORS_LIMIT = 8;
/**
 * Open errors the carried state keeps in its data, for the next compaction to go on from: more
 * than it shows, so that when later steps resolve some of the errors shown, the older ones still
 * open take their place, as they would in the whole history.
 */
export const OPEN_ERRORS_TRACKED = 32;
/**
 * The open errors after `items`, starting from `previous` (the open errors a compaction carried):
 * every error a tool result reports is added, every later success of the same tool on the same
 * target resolves the errors before it. The most recent `limit` are returned, oldest first.
 * `from`: the position of the first item `previous` does not cover (a compaction's kept items are
 * in its errors already).
 */
export function collectOpenErrors(
  items: readonly ContextItem[],
  previous: readonly OpenError[] = [],
  pairs: PairIndex = indexPairs(items),
  limit = OPEN_ERRORS_LIMIT,
  from = 0,
): OpenError[] {
  const open: OpenError[] = [...previous];
  for (let position = from; position < items.length; position++) {
    const item = items[position] as ContextItem;
    if (item.type !== 'TOOL_RESULT') continue;
    const call = pairs.resultCall[position] as number;
    const callItem =
      call === -1 ? undefined : (items[pairs.callItem[call] as number] as AssistantMessageItem);
    const callIndex = callItem ? call - (pairs.firstCall[pairs.callItem[call] as number] as number) : -1;
    const tool = callItem?.message.tool_calls?.[callIndex]?.function.name ?? item.message.name ?? 'tool';
    const facts = callItem ? callFactsOf(callItem)[callIndex] : undefined;
    const error = resultErrorOf(item, tool, facts?.printsOnly === true);
    if (error === null && !open.some((e) => e.tool === tool)) continue;
    const target = facts?.target ?? '';
    const whole = facts ? (facts.command ?? target) : '';
    // A success resolves the tool's errors on the target. A failure replaces the same error there,
    // and those of the same call: what is open for a call is its latest outcome (the first failure
    // is behind it). Another command that shares the target (`python -c "…"`, `ssh -o …`) replaces
    // nothing, and a call cut short (interrupted, aborted) is no outcome.
    const outcome = error !== null && whole !== '' && !INTERRUPTED.test(error);
    for (let i = open.length - 1; i >= 0; i--) {
      const e = open[i] as OpenError;
      if (e.tool !== tool || e.target !== target) continue;
      if (error === null || e.text === error || (outcome && e.call === whole)) open.splice(i, 1);
    }
    if (error !== null)
      open.push({ tool, target, round: item.round, text: error, ...(whole ? { call: whole } : {}) });
  }
  return open.slice(-limit);
}

/** The first line of the open-errors item's text. */
export const OPEN_ERRORS_HEADING = '[Open errors] Reported by a tool and not seen resolved since';

/** One open error as a line of the item's text. */
function errorLine(error: OpenError): string {
  return `- round ${error.round}, ${error.tool}${error.target ? ` ${error.target}` : ''}: ${error.text}`;
}

/** The open errors as text, one line each, newest first ('' when none). */
export function renderOpenErrors(errors: readonly OpenError[]): string {
  if (errors.length === 0) return '';
  return [OPEN_ERRORS_HEADING, ...[...errors].reverse().map(errorLine)].join('\n');
}

/** A line of one error, read back: round, tool, target (optional), text. */
const ERROR_LINE = /^- round (\d+), ([^\s:]+)(?: (.*?))?: (.*)$/;
/** A line of errors reporting the same text, read back: text, tools, count, latest round, targets. */
const GROUP_LINE = /^- (.*) \(([^()]*), (\d+)×, latest round (\d+)\)(?:: (.*))?$/;

/**
 * Whether a text is an open-errors text as this module writes it: its heading, then only lines of
 * errors (see `carriedLines` for a text cut to fit).
 */
export function isOpenErrorsText(text: string): boolean {
  const lines = carriedLines(text, OPEN_ERRORS_HEADING);
  return lines?.every((line) => GROUP_LINE.test(line) || ERROR_LINE.test(line)) ?? false;
}

/**
 * The open errors an open-errors text shows (the text of an OPEN_ERRORS item whose data is gone: a
 * context written to a session file or sent as chat messages, and read back), oldest first: each
 * line of one error as it was; a line of errors reporting the same text as one error per target it
 * names (its tool the first named, its round the latest), or one with no target.
 */
export function openErrorsFromText(text: string): OpenError[] {
  const newest: OpenError[] = [];
  for (const line of text.split('\n').slice(1)) {
    const group = GROUP_LINE.exec(line);
    if (group) {
      const tool = ((group[2] as string).split(', ')[0] as string).trim();
      const round = Number(group[4]);
      const targets = group[5] ? group[5].split('; ') : [''];
      for (const target of targets) newest.push({ tool, target, round, text: group[1] as string });
      continue;
    }
    const one = ERROR_LINE.exec(line);
    if (one)
      newest.push({
        tool: one[2] as string,
        target: one[3] ?? '',
        round: Number(one[1]),
        text: one[4] as string,
      });
  }
  return newest.reverse();
}

/** Errors that report the same text, newest first (a group's position is its newest error's). */
interface ErrorGroup {
  text: string;
  errors: OpenError[];
}

function groupByText(errors: readonly OpenError[]): ErrorGroup[] {
  const groups = new Map<string, ErrorGroup>();
  for (let i = errors.length - 1; i >= 0; i--) {
    const error = errors[i] as OpenError;
    const group = groups.get(error.text);
    if (group) group.errors.push(error);
    else groups.set(error.text, { text: error.text, errors: [error] });
  }
  return [...groups.values()];
}

function groupLine(group: ErrorGroup, targets: boolean): string {
  const newest = group.errors[0] as OpenError;
  if (group.errors.length === 1 && targets) {
    return errorLine(newest);
  }
  const tools = [...new Set(group.errors.map((e) => e.tool))].join(', ');
  const head = `- ${group.text} (${tools}, ${group.errors.length}×, latest round ${newest.round})`;
  if (!targets) return head;
  const on = group.errors.map((e) => e.target).filter(Boolean);
  return on.length > 0 ? `${head}: ${on.join('; ')}` : head;
}

/**
 * The open errors as text within `budgetTokens` ('' when none). Overflow rule, applied in order
 * until the text fits, so that every error's text stays findable as long as any budget can:
 * 1. one line per error, newest first ({@link renderOpenErrors});
 * 2. errors reporting the same text on one line, with what each was applied to;
 * 3. those lines without the targets (the tools, the count, the latest round);
 * 4. the oldest lines dropped; the newest always shows.
 * `complete`: every error's text is in the text; `tokens`: its count, when it was counted on the way.
 */
export function renderOpenErrorsWithin(
  errors: readonly OpenError[],
  budgetTokens: number,
  tokenizer: Tokenizer,
): { text: string; complete: boolean; tokens?: number } {
  if (errors.length === 0) return { text: '', complete: true, tokens: 0 };
  let tokens: number | undefined;
  /** Whether the text fits; `tokens` is its count when it had to be counted. */
  const fits = (text: string): boolean => {
    tokens = maxTokens(text) <= budgetTokens ? undefined : tokenizer.countText(text);
    return tokens === undefined || tokens <= budgetTokens;
  };
  const each = renderOpenErrors(errors);
  if (fits(each)) return { text: each, complete: true, ...(tokens === undefined ? {} : { tokens }) };
  const groups = groupByText(errors);
  for (const targets of [true, false]) {
    const text = [OPEN_ERRORS_HEADING, ...groups.map((g) => groupLine(g, targets))].join('\n');
    if (fits(text)) return { text, complete: true, ...(tokens === undefined ? {} : { tokens }) };
  }
  let lines = groups.map((g) => groupLine(g, false));
  let text = [OPEN_ERRORS_HEADING, ...lines].join('\n');
  let fitting = fits(text);
  while (lines.length > 1 && !fitting) {
    lines = lines.slice(0, -1);
    text = [OPEN_ERRORS_HEADING, ...lines].join('\n');
    fitting = fits(text);
  }
  return {
    text,
    complete: lines.length === groups.length && fitting,
    ...(tokens === undefined ? {} : { tokens }),
  };
}
