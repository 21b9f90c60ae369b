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
import type { ContextItem, OpenError } from './items';
import { callFactsOf, resultErrorOf } from './item-facts';
import { pairToolCalls, type ToolPairs } from './tool-pairs';

/** Open errors kept by the carried state: the most recent ones. */
export const OPEN_ERRORS_LIMIT = 8;
/**
 * The open errors after `items`, starting from `previous` (the open errors a compaction carried):
 * every error a tool result reports is added, every later success of the same tool on the same
 * target resolves the errors before it. The most recent {@link OPEN_ERRORS_LIMIT} are returned,
 * oldest first.
 */
export function collectOpenErrors(
  items: readonly ContextItem[],
  previous: readonly OpenError[] = [],
  pairs: ToolPairs = pairToolCalls(items),
): OpenError[] {
  let open: OpenError[] = [...previous];
  for (const item of items) {
    if (item.type !== 'TOOL_RESULT') continue;
    const pair = pairs.byResult.get(item.id);
    const tool =
      pair?.callItem.message.tool_calls?.[pair.callIndex]?.function.name ?? item.message.name ?? 'tool';
    const error = resultErrorOf(item, tool);
    if (error === null && !open.some((e) => e.tool === tool)) continue;
    const target = pair ? (callFactsOf(pair.callItem)[pair.callIndex]?.target ?? '') : '';
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
