/**
 * Tool calls written as XML in an assistant's text, as Cline, Roo Code and their forks had the
 * model call tools before they used the API's own tool calls:
 *
 *     <read_file>
 *     <path>src/a.ts</path>
 *     </read_file>
 *
 * The tool is a tag that starts a line, named as one of these agents' tools; its parameters are the
 * tags inside it, each value trimmed. A value that is free text (a file's `content`, a `diff`,
 * Roo Code's nested `args`) runs to the last closing tag of its name, so that text may hold the
 * tag itself; Roo Code's `<args><file><path>…</path></file>…</args>` also gives the paths as
 * `files`. A call the text breaks off in (a reply cut short) runs to the end of the text.
 *
 * Pure.
 */

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

/** A tool's opening tag at the start of a line (leading spaces allowed). */
const OPENING = new RegExp(`^[ \\t]*<(${TOOLS.join('|')})>`, 'gm');
/** A parameter's opening tag. */
const PARAMETER = /<([A-Za-z_][\w-]*)>/g;
/** Parameters whose value is free text, running to the last closing tag of their name. */
const FREE_TEXT = new Set(['content', 'diff', 'args', 'result', 'question', 'todos']);

/** A piece of an assistant's text: words, or a tool call written as XML (`raw`: its text). */
export type XmlPiece =
  | { kind: 'text'; text: string }
  | { kind: 'call'; name: string; input: Record<string, unknown>; raw: string };

/** The parameters of a call's body (the text between its tags). */
function parameters(body: string): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  PARAMETER.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = PARAMETER.exec(body)) !== null) {
    const name = match[1] as string;
    const start = match.index + match[0].length;
    const closing = `</${name}>`;
    const end = FREE_TEXT.has(name) ? body.lastIndexOf(closing) : body.indexOf(closing, start);
    if (end < start) continue;
    if (!(name in input)) input[name] = body.slice(start, end).trim();
    PARAMETER.lastIndex = end + closing.length;
  }
  if (typeof input.args === 'string') {
    const files = [...input.args.matchAll(/<path>([\s\S]*?)<\/path>/g)].map((m) => ({
      path: (m[1] as string).trim(),
    }));
    if (files.length > 0) input.files = files;
  }
  return input;
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
    const name = match[1] as string;
    const bodyStart = match.index + match[0].length;
    const closing = `</${name}>`;
    const close = text.indexOf(closing, bodyStart);
    const end = close === -1 ? text.length : close + closing.length;
    if (match.index > from) pieces.push({ kind: 'text', text: text.slice(from, match.index) });
    pieces.push({
      kind: 'call',
      name,
      input: parameters(text.slice(bodyStart, close === -1 ? text.length : close)),
      raw: text.slice(match.index, end),
    });
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
