/**
 * The SWE-agent command lines that a thought/action step's `action` holds (0.x commands, and 1.x's
 * `str_replace_editor`): read into tool calls by `swe-agent-import.ts`, written back from them by
 * `swe-agent-export.ts`. Pure.
 */

/** SWE-agent commands of one line: their argument keys in order and how many are required. */
export const COMMANDS: Record<string, { keys: readonly string[]; required: number }> = {
  open: { keys: ['path', 'line_number'], required: 1 },
  create: { keys: ['path'], required: 1 },
  goto: { keys: ['line_number'], required: 1 },
  scroll_up: { keys: [], required: 0 },
  scroll_down: { keys: [], required: 0 },
  // The CTF configs submit a flag.
  submit: { keys: ['flag'], required: 0 },
  find_file: { keys: ['file_name', 'dir'], required: 1 },
  search_file: { keys: ['search_term', 'path'], required: 1 },
  search_dir: { keys: ['search_term', 'dir'], required: 1 },
};
/** `edit <start>:<end>` (or `edit` alone, which replaces between the cursors in the cursor configs). */
export const EDIT_HEAD = /^edit(?:[ \t]+(\d+):(\d+))?[ \t]*$/;
export const EDIT_END = 'end_of_edit';

/**
 * SWE-agent 1.x's file editor (its `edit_anthropic` tool bundle) as a command line:
 * `str_replace_editor <command> <path> [--file_text T] [--old_str T] [--new_str T]
 * [--insert_line N] [--view_range A B]`. Read into the arguments the function-calling layout gives
 * the same tool (`{ command, path, old_str, ..., view_range: [A, B] }`).
 */
export const EDITOR = {
  name: 'str_replace_editor',
  commands: ['view', 'create', 'str_replace', 'insert', 'undo_edit'],
  /** Each option and what it takes: a text, a line number, or a range of two line numbers. */
  options: {
    file_text: 'text',
    old_str: 'text',
    new_str: 'text',
    insert_line: 'line',
    view_range: 'range',
  } as Record<string, 'text' | 'line' | 'range' | undefined>,
} as const;
