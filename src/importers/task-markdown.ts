/**
 * The Markdown a task is exported as by Cline and Roo Code ("Export task"): each message of the
 * task's API history as `**User:**` or `**Assistant:**`, a blank line, its content and a blank
 * line, the messages joined by `---` lines. A content that was several blocks is their texts
 * joined by line breaks (an image as `[Image]`, a native tool call as `[Tool Use: name]`). Read
 * back as that list of messages — a user's content cut again into its blocks where a tool's result
 * or the agent's context (`<environment_details>`) starts a line, an assistant's left whole — it is
 * read as any list in Anthropic's format (`anthropic-messages.ts`), and written back the same way.
 *
 * The export marks nothing else: a message whose text holds a blank line, `---`, a blank line and
 * `**User:**` (a task that read an earlier export) is read as several messages. It is still written
 * back byte for byte.
 *
 * Pure.
 */
import { AGENT_CONTEXT } from './claude-code-import';
import { isTextResult } from './cline-text';
import { isRecord, type JsonObject } from './json';

/** What is around the messages, to write the file back as it was. */
export interface MarkdownFrame {
  /** What comes before the first message (a byte order mark). */
  head: string;
  /** The white space after the last message's content. */
  tail: string;
  /** The line break the file uses. */
  eol: '\n' | '\r\n';
}

/** The line between two messages, before the next one's heading. */
const SEPARATOR = /\n\n---\n\n(?=\*\*(?:User|Assistant):\*\*\n\n)/g;
/** Characters of a line looked at for the start of a block. */
const BLOCK_START_CHARS = 4000;

/** Whether a text is such an export: it starts with a message's heading. */
export function isTaskMarkdown(text: string): boolean {
  return /^\uFEFF?\s*\*\*(User|Assistant):\*\*\r?\n\r?\n/.test(text);
}

/** A user's content as the text blocks it was: cut where a result or the agent's context starts a line. */
function userBlocks(content: string): JsonObject[] {
  const starts = [0];
  for (let at = content.indexOf('\n'); at !== -1; at = content.indexOf('\n', at + 1)) {
    const c = content[at + 1];
    if (c !== '[' && c !== 'T' && c !== 'S' && c !== '<') continue;
    const line = content.slice(at + 1, at + 1 + BLOCK_START_CHARS);
    if (isTextResult(line) || AGENT_CONTEXT.test(line)) starts.push(at + 1);
  }
  return starts.map((start, i) => ({
    type: 'text',
    text: content.slice(start, i + 1 < starts.length ? (starts[i + 1] as number) - 1 : content.length),
  }));
}

/**
 * The messages of an export (`lines`: the line each starts on) and what is around them.
 * The text must be one (`isTaskMarkdown`).
 */
export function parseTaskMarkdown(text: string): {
  messages: JsonObject[];
  lines: number[];
  frame: MarkdownFrame;
} {
  // Windows line breaks only when every line break is one: a file that mixes them stays as it is.
  const breaks = text.split('\n').length - 1;
  const eol = breaks > 0 && text.split('\r\n').length - 1 === breaks ? '\r\n' : '\n';
  const body = eol === '\n' ? text : text.replace(/\r\n/g, '\n');
  const start = body.indexOf('**');
  const end = body.trimEnd().length;
  const frame = { head: body.slice(0, start), tail: body.slice(end), eol } as const;
  const messages: JsonObject[] = [];
  const lines: number[] = [];
  let from = start;
  const chunks: [number, number][] = [];
  for (const match of body.slice(0, end).matchAll(SEPARATOR)) {
    chunks.push([from, match.index]);
    from = match.index + match[0].length;
  }
  chunks.push([from, end]);
  // The line each message starts on, counted on from the previous one's.
  let line = 1;
  let last = 0;
  for (const [a, b] of chunks) {
    line += countLines(body, last, a);
    last = a;
    const chunk = body.slice(a, b);
    // Every chunk starts with a heading: the first by isTaskMarkdown, the others by SEPARATOR.
    const role = chunk.startsWith('**User:**') ? 'user' : 'assistant';
    const content = chunk.slice(role === 'user' ? '**User:**\n\n'.length : '**Assistant:**\n\n'.length);
    messages.push({ role, content: role === 'user' ? userBlocks(content) : content });
    lines.push(line);
  }
  return { messages, lines, frame };
}

/** The line breaks of `text` from `from` to `to`. */
function countLines(text: string, from: number, to: number): number {
  let n = 0;
  for (let at = text.indexOf('\n', from); at !== -1 && at < to; at = text.indexOf('\n', at + 1)) n++;
  return n;
}

/** The text of a content block as the export writes it. */
function blockText(block: unknown): string {
  if (!isRecord(block)) return '';
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : '';
    case 'image':
      return '[Image]';
    case 'thinking':
      return `[Thinking]\n${typeof block.thinking === 'string' ? block.thinking : ''}`;
    case 'tool_use': {
      const input = isRecord(block.input) ? block.input : {};
      const args = Object.entries(input).map(
        ([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`,
      );
      return [`[Tool Use: ${String(block.name)}]`, ...args].join('\n');
    }
    case 'tool_result': {
      const { content } = block;
      const text = Array.isArray(content) ? content.map(blockText).join('\n') : String(content ?? '');
      return `[Tool${block.is_error === true ? ' (Error)' : ''}]\n${text}`;
    }
    default:
      return '';
  }
}

/** The export of the messages, in the frame they were read from. */
export function writeTaskMarkdown(messages: readonly unknown[], frame: MarkdownFrame): string {
  const text = messages
    .map((message) => {
      const m = isRecord(message) ? message : {};
      const content = Array.isArray(m.content)
        ? m.content.map(blockText).join('\n')
        : String(m.content ?? '');
      return `**${m.role === 'user' ? 'User' : 'Assistant'}:**\n\n${content}`;
    })
    .join('\n\n---\n\n');
  const whole = `${frame.head}${text}${frame.tail}`;
  return frame.eol === '\n' ? whole : whole.replace(/\n/g, '\r\n');
}
