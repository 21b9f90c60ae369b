/**
 * Open errors (DESIGN.md §5 carried state): errors a tool reported that no later step resolved.
 * An error is resolved when a later call of the same tool on the same target (a path, or a
 * command's first words) succeeds: a failed `npm test` stays open until `npm test` passes, a
 * failed edit of `src/tax.ts` until an edit of it goes through.
 *
 * Detection is deliberately strict, so that a file that merely contains the word "error" is not an
 * error: the tool said so (pi's `isError`, our tools' `Error: …`), a shell command exited non-zero,
 * a Python traceback, a failing test run, a command not found.
 *
 * Pure module.
 */
import { toolCallEffect } from './artifact-trail';
import { messageText, type ContextItem, type OpenError, type ToolResultItem } from './items';
import { pairToolCalls } from './tool-pairs';

/** Open errors kept by the carried state: the most recent ones. */
export const OPEN_ERRORS_LIMIT = 8;
/** Characters read at each end of a long tool output when looking for a failure. */
const SCAN_CHARS = 4000;
/** Longest error line kept, in characters. */
const MAX_ERROR_CHARS = 200;

/** Lines that report a failure, whatever the tool. */
const FAILURE_LINE =
  /^(\s*(error|fatal|exception)\b[:\s!]|\s*\w*(Error|Exception):\s|npm ERR!|Traceback \(most recent call last\)|.*\bcommand not found\b|.*\b(exit(ed)?|exit code|exit status)\s*(with\s*)?(code|status)?\s*[1-9]\d*\b|\s*FAIL\b|.*\b[1-9]\d* (failed|failing)\b|.*Your proposed edit has introduced new syntax error)/i;
/** Tools whose output is file content: only an explicit error counts there. */
const READ_TOOL = /(read|view|open|cat|get_file|show)/i;

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_ERROR_CHARS ? `${line.slice(0, MAX_ERROR_CHARS)}…` : line;
}

/** Whether the source format flagged this result as an error (pi's `isError`). */
function flaggedError(item: ToolResultItem): boolean {
  const message = item.origin?.fields?.message;
  return (
    typeof message === 'object' && message !== null && (message as { isError?: unknown }).isError === true
  );
}

/**
 * The line of a tool result that reports an error, or null when it reports none. `tool` is the name
 * of the tool that produced it (file-reading tools count only explicit errors).
 */
export function toolResultError(item: ToolResultItem, tool: string): string | null {
  const text = messageText(item.message);
  const head = text.trimStart();
  const explicit = /^(error|fatal)\b/i.test(head);
  if (flaggedError(item) || explicit)
    return oneLine(head.split('\n').find((l) => l.trim()) ?? head) || 'error';
  if (READ_TOOL.test(tool)) return null;
  // Failures are reported at the start or the end of an output: a long output is read there only.
  const scanned =
    text.length <= 2 * SCAN_CHARS ? text : `${text.slice(0, SCAN_CHARS)}\n${text.slice(-SCAN_CHARS)}`;
  for (const line of scanned.split('\n')) if (FAILURE_LINE.test(line)) return oneLine(line);
  return null;
}

/** What a call was applied to: its first path, else its command's first words, else ''. */
export function callTarget(name: string, argumentsText: string): string {
  const effect = toolCallEffect(name, argumentsText, null);
  const path = effect.touches[0]?.path;
  if (path) return path;
  if (effect.command) {
    const main = effect.command.replace(/^cd\s+\S+\s*(&&|;)\s*/, '').split(/\s*(\|\||&&|\||;)\s*/)[0] ?? '';
    return main.split(' ').slice(0, 3).join(' ');
  }
  return '';
}

/**
 * The open errors after `items`, starting from `previous` (the open errors a compaction carried):
 * every error a tool result reports is added, every later success of the same tool on the same
 * target resolves the errors before it. The most recent {@link OPEN_ERRORS_LIMIT} are returned,
 * oldest first.
 */
export function collectOpenErrors(
  items: readonly ContextItem[],
  previous: readonly OpenError[] = [],
): OpenError[] {
  const pairs = pairToolCalls(items);
  const callById = new Map<string, { name: string; args: string }>();
  for (const item of items) {
    if (item.type !== 'ASSISTANT_MESSAGE') continue;
    const calls = item.message.tool_calls ?? [];
    calls.forEach((call, index) =>
      callById.set(`${item.id}#${index}`, { name: call.function.name, args: call.function.arguments }),
    );
  }
  let open: OpenError[] = [...previous];
  for (const item of items) {
    if (item.type !== 'TOOL_RESULT') continue;
    const pair = pairs.byResult.get(item.id);
    const call = pair ? callById.get(`${pair.callItemId}#${pair.callIndex}`) : undefined;
    const tool = call?.name ?? item.message.name ?? 'tool';
    const error = toolResultError(item, tool);
    // The target is read (its arguments parsed) only where it decides something.
    if (error === null && !open.some((e) => e.tool === tool)) continue;
    const target = call ? callTarget(call.name, call.args) : '';
    if (error === null) {
      open = open.filter((e) => !(e.tool === tool && e.target === target));
    } else {
      open = open.filter((e) => !(e.tool === tool && e.target === target && e.text === error));
      open.push({ tool, target, round: item.round, text: error });
    }
  }
  return open.slice(-OPEN_ERRORS_LIMIT);
}

/** The first line of the open-errors item's text. */
export const OPEN_ERRORS_HEADING = '[Open errors] Reported by a tool and not seen resolved since';

/** The open errors as text ('' when none). */
export function renderOpenErrors(errors: readonly OpenError[]): string {
  if (errors.length === 0) return '';
  return [
    OPEN_ERRORS_HEADING,
    ...[...errors]
      .reverse()
      .map((e) => `- round ${e.round}, ${e.tool}${e.target ? ` ${e.target}` : ''}: ${e.text}`),
  ].join('\n');
}
