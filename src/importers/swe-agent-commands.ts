/**
 * The SWE-agent 0.x command lines that a thought/action step's `action` holds: read into tool calls
 * by `swe-agent-import.ts`, written back from them by `swe-agent-export.ts`. Pure.
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
