/**
 * Tool calls written as XML in an assistant's text, as Cline, Roo Code and their forks had the
 * model call tools before they used the API's own tool calls:
 *
 *     <read_file>
 *     <path>src/a.ts</path>
 *     </read_file>
 *
 * A call opens with the tag of one of these agents' tools, at the start of a line or right before
 * one of its parameters (`<read_file><path>…`): a tag in a sentence is no call. Its parameters are
 * these agents' parameter tags inside it, read in order, each value trimmed; other tags are part of
 * the values. A value that is free text (a file's `content`, a `diff`, Roo Code's nested `args`)
 * runs to the last closing tag of its name before the call closes, so that text may hold its own
 * closing tag or the call's; Roo Code's `<args><file><path>…</path></file>…</args>` also gives the
 * paths as `files`. The call closes with its tag after its parameters; a call the text breaks off
 * in (a reply cut short) runs to the end of the text, and so does a value left open.
 *
 * Pure; each text is read in one pass (every search goes forward, but for a free-text value's
 * last closing tag).
 */

import { isRecord, stringFieldsOf } from './json';

/** The tools of Cline, Roo Code and Kilo Code that models wrote as XML. */
const TOOLS = [
  'access_mcp_resource',
  'apply_diff',
  'ask_followup_question',
  'attempt_completion',
  'browser_action',
  'codebase_search',
  'condense',
  'execute_command',
  'fetch_instructions',
  'generate_image',
  'insert_content',
  'list_code_definition_names',
  'list_files',
  'load_mcp_documentation',
  'new_rule',
  'new_task',
  'plan_mode_respond',
  'read_file',
  'replace_in_file',
  'report_bug',
  'run_slash_command',
  'search_and_replace',
  'search_files',
  'summarize_task',
  'switch_mode',
  'update_todo_list',
  'use_mcp_tool',
  'web_fetch',
  'write_to_file',
];

/** The parameters of those tools. */
const PARAMETERS = [
  'action',
  'additional_context',
  'api_request_output',
  'args',
  'arguments',
  'command',
  'content',
  'context',
  'coordinate',
  'cwd',
  'diff',
  'end_line',
  'file_pattern',
  'follow_up',
  'ignore_case',
  'image',
  'line',
  'message',
  'mode',
  'mode_slug',
  'operations',
  'options',
  'path',
  'prompt',
  'query',
  'question',
  'reason',
  'recursive',
  'regex',
  'replace',
  'requires_approval',
  'response',
  'result',
  'search',
  'server_name',
  'size',
  'start_line',
  'steps_to_reproduce',
  'task_progress',
  'text',
  'title',
  'todos',
  'tool_name',
  'uri',
  'url',
  'use_regex',
  'what_happened',
];

/** A tool's opening tag: at the start of a line, or anywhere right before a parameter's tag. */
const OPENING = new RegExp(
  `^[ \\t]*<(${TOOLS.join('|')})>|<(${TOOLS.join('|')})>(?=\\s*<(?:${PARAMETERS.join('|')})>)`,
  'gm',
);
/** A parameter's opening tag. */
const PARAMETER = new RegExp(`<(${PARAMETERS.join('|')})>`, 'g');
/** Parameters whose value is free text: it runs to the last closing tag of its name in the call. */
const FREE_TEXT = new Set([
  'content',
  'diff',
  'args',
  'result',
  'question',
  'todos',
  'response',
  'task_progress',
]);

/** A piece of an assistant's text: words, or a tool call written as XML (`raw`: its text). */
export type XmlPiece =
  | { kind: 'text'; text: string }
  | { kind: 'call'; name: string; input: Record<string, unknown>; raw: string };

/** A call's parameters and where it ends, read from `from` (just after its opening tag). */
function readCall(text: string, name: string, from: number): { input: Record<string, unknown>; end: number } {
  const closing = `</${name}>`;
  const input: Record<string, unknown> = {};
  let at = from;
  for (;;) {
    PARAMETER.lastIndex = at;
    const open = PARAMETER.exec(text);
    const close = text.indexOf(closing, at);
    // The call closes before its next parameter opens (or has none left).
    if (!open || (close !== -1 && close < open.index)) {
      return { input, end: close === -1 ? text.length : close + closing.length };
    }
    const key = open[1] as string;
    const start = open.index + open[0].length;
    const keyClosing = `</${key}>`;
    let valueEnd = text.indexOf(keyClosing, start);
    if (valueEnd !== -1 && FREE_TEXT.has(key)) {
      // The last closing tag of its name before the call's closing tag after it.
      const callEnd = text.indexOf(closing, valueEnd);
      valueEnd = text.lastIndexOf(keyClosing, callEnd === -1 ? text.length : callEnd);
    }
    if (!(key in input)) input[key] = text.slice(start, valueEnd === -1 ? text.length : valueEnd).trim();
    if (valueEnd === -1) return { input, end: text.length };
    at = valueEnd + keyClosing.length;
  }
}

/** Roo Code's nested `args`: the paths of its files, as `files`. */
function withFiles(input: Record<string, unknown>): Record<string, unknown> {
  if (typeof input.args !== 'string') return input;
  const files = [...input.args.matchAll(/<path>([^<]*)<\/path>/g)].map((m) => ({
    path: (m[1] as string).trim(),
  }));
  return files.length > 0 ? { ...input, files } : input;
}

/**
 * The text cut into its words and its XML tool calls, in order: joining every piece's text (a
 * call's `raw`) gives the text back. Text with no call is one text piece.
 */
export function splitXmlToolCalls(text: string): XmlPiece[] {
  const pieces: XmlPiece[] = [];
  let from = 0;
  OPENING.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = OPENING.exec(text)) !== null) {
    const name = (match[1] ?? match[2]) as string;
    const { input, end } = readCall(text, name, match.index + match[0].length);
    if (match.index > from) pieces.push({ kind: 'text', text: text.slice(from, match.index) });
    pieces.push({ kind: 'call', name, input: withFiles(input), raw: text.slice(match.index, end) });
    from = end;
    OPENING.lastIndex = end;
  }
  if (from < text.length || pieces.length === 0) pieces.push({ kind: 'text', text: text.slice(from) });
  return pieces;
}

/** Whether the text holds a tool call written as XML. */
export function hasXmlToolCall(text: string): boolean {
  OPENING.lastIndex = 0;
  return OPENING.test(text);
}

/**
 * A call written as XML from its input: each parameter a line, a value that is not a string as
 * JSON (Roo Code's `files`, read off `args`, left out beside it). `input` a string (arguments cut
 * to a preview, no longer JSON): the string values it still holds, in order, the last one cut.
 */
export function xmlOfCall(name: string, input: unknown): string {
  const entries =
    typeof input === 'string'
      ? stringFieldsOf(input)
      : Object.entries(isRecord(input) ? input : {}).filter(
          ([key]) => key !== 'files' || !('args' in (input as object)),
        );
  const lines = entries.map(
    ([key, value]) => `<${key}>${typeof value === 'string' ? value : JSON.stringify(value)}</${key}>`,
  );
  return [`<${name}>`, ...lines, `</${name}>`].join('\n');
}
