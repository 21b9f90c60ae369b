import { MEMORY_PREFIX, pinMessageText, TASK_LIST_PREFIX } from '../src/context/agent-notes';
import type { NoteItem, UserMessageItem } from '../src/context/items';
import type { ToolNote } from './tools/registry';

/**
 * The header item a tool note becomes: a memory note, the latest task list, or pinned content
 * (seed 001's key information kept through every compaction). Token count is filled by the caller.
 */
export function noteItem(id: string, round: number, note: ToolNote): NoteItem | UserMessageItem {
  const base = { id, round, isMeta: true, pinned: false, ephemeral: false, tokens: 0 };
  switch (note.kind) {
    case 'memory':
      return { ...base, type: 'MEMORY', message: { role: 'user', content: `${MEMORY_PREFIX}${note.text}` } };
    case 'task_list':
      return {
        ...base,
        type: 'TASK_LIST',
        message: { role: 'user', content: `${TASK_LIST_PREFIX}${note.text}` },
      };
    case 'pin':
      return {
        ...base,
        pinned: true,
        type: 'USER_MESSAGE',
        message: { role: 'user', content: pinMessageText(note.text) },
      };
  }
}
