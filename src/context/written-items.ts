/**
 * Messages a compaction wrote, read back as the items they were: a context written out as text (a
 * session file exported after a compaction, chat messages compacted by `chat-compaction`) holds
 * them as plain user messages, recognised here by their first line, so that compacting it again
 * merges the summary instead of summarizing it as a user message and replaces the carried state
 * instead of stacking a second copy (the trail's data is read back from its text,
 * `trailFromText`): the summary (`SUMMARY_MESSAGE_PREFIX`), the artifact trail, the open errors,
 * the git diff stat, task lists and memories.
 *
 * Pure module.
 */
import { MEMORY_PREFIX, TASK_LIST_PREFIX } from './agent-notes';
import { ARTIFACT_TRAIL_HEADING, isTrailText } from './artifact-trail';
import { GIT_DIFF_STAT_HEADING } from './carried-state';
import { EXTRACTIVE_LABEL } from './extractive-summary';
import { messageText, type ContextItem, type NoteItem } from './items';
import { isOpenErrorsText, OPEN_ERRORS_HEADING } from './open-errors';
import { SUMMARY_MESSAGE_PREFIX } from './post-compaction';

/** The first line of each message a compaction writes, and the item type it is read back as. */
const WRITTEN_BY_COMPACTION: readonly { prefix: string; type: 'COMPACTION_SUMMARY' | NoteItem['type'] }[] = [
  { prefix: SUMMARY_MESSAGE_PREFIX, type: 'COMPACTION_SUMMARY' },
  { prefix: ARTIFACT_TRAIL_HEADING, type: 'ARTIFACT_TRAIL' },
  { prefix: OPEN_ERRORS_HEADING, type: 'OPEN_ERRORS' },
  { prefix: GIT_DIFF_STAT_HEADING, type: 'GIT_DIFF_STAT' },
  { prefix: TASK_LIST_PREFIX, type: 'TASK_LIST' },
  { prefix: MEMORY_PREFIX, type: 'MEMORY' },
];

/** A task list's line as `formatTaskList` writes it. */
const TASK_LINE = /^\[[ x~]\] /;

/**
 * The type of item a compaction writes with this text, or null for a text it does not write: a
 * trail, open errors or a task list only when every line is one of theirs (a person who pasted one
 * and wrote on below it wrote a message of their own).
 */
export function writtenType(text: string): 'COMPACTION_SUMMARY' | NoteItem['type'] | null {
  const type = WRITTEN_BY_COMPACTION.find((w) => text.startsWith(w.prefix))?.type ?? null;
  if (type === 'ARTIFACT_TRAIL') return isTrailText(text) ? type : null;
  if (type === 'OPEN_ERRORS') return isOpenErrorsText(text) ? type : null;
  if (type === 'TASK_LIST')
    return text
      .slice(TASK_LIST_PREFIX.length)
      .split('\n')
      .every((line) => TASK_LINE.test(line))
      ? type
      : null;
  return type;
}

/** A user message a compaction wrote, typed back as the item it was (meta); any other item as it is. */
export function asWritten(item: ContextItem): ContextItem {
  if (item.type !== 'USER_MESSAGE') return item;
  const text = messageText(item.message);
  const type = writtenType(text);
  if (type === null) return item;
  const base = { ...item, isMeta: true };
  if (type === 'COMPACTION_SUMMARY') {
    return {
      ...base,
      type: 'COMPACTION_SUMMARY',
      summarizer: text.includes(EXTRACTIVE_LABEL) ? 'extractive' : 'llm',
    };
  }
  return { ...base, type };
}
