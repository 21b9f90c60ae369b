/**
 * Lists of messages in Anthropic's Messages format: a JSON array, an object `{ messages, system?,
 * tools?, ... }` (an API request), or JSONL with one message a line — as Cline and Roo Code keep a
 * task's `api_conversation_history.json`. Such a message is what a Claude Code line holds under
 * `message`, so each is read as a Claude Code line without its envelope (`claude-code-import.ts`):
 * a user's text and image blocks → a user message, every `tool_result` → a tool message, an
 * assistant's text, thinking and `tool_use` blocks → one assistant message with its tool calls.
 * Written back the same way (`claude-code-export.ts`), the envelope taken off again: an unchanged
 * import gives back a deep-equal document.
 *
 * Two readings of this format's own:
 * - Cline writes a tool's result as a text block (`[read_file for 'src/a.ts'] Result:` and the
 *   output) in the user message after the call: such blocks answer that message's calls in order,
 *   as tool results, and are written back as the text blocks they were;
 * - the other blocks of a user message that carries results (Cline's `<environment_details>`, a
 *   reminder) are the agent's, not the user's: meta, so rounds follow the user's own messages.
 *
 * The top level's `system` (a string or text blocks), or a system message some logs put among the
 * messages, is the system prompt, and the top level's `tools` the tool definitions; all are written
 * back as they were. Pure.
 */
import type { ContextItem, ToolDefinition } from '../context/items';
import { blockIds } from './blocks';
import { itemsThroughClaudeCode } from './claude-code-import';
import { claudeCodeLinesOf } from './claude-code-export';
import {
  defaultIdPrefix,
  finishItems,
  type ImportedSession,
  type ImportOptions,
  type SessionDocument,
  toolsItem,
} from './common';
import { ImportError } from './errors';
import { describe, isRecord, jsonLines, parseJson, importJsonLines, type JsonLine } from './json';
import {
  isNoToolNag,
  isTextResult,
  joinXmlText,
  textsOf,
  withResultTexts,
  withTextResults,
  withXmlCalls,
} from './cline-text';
import { isTaskMarkdown, parseTaskMarkdown, writeTaskMarkdown } from './task-markdown';
import { hasXmlToolCall } from './xml-tool-use';

/**
 * Whether a content block is one only Anthropic's format has, in its shape there: a `tool_use`
 * with an id, a `tool_result` naming its call, `thinking` as a string (Mistral's OpenAI-compatible
 * lists have `thinking` blocks holding lists), `redacted_thinking`.
 */
function anthropicBlock(block: unknown): boolean {
  if (!isRecord(block)) return false;
  switch (block.type) {
    case 'tool_use':
      return typeof block.id === 'string';
    case 'tool_result':
      return typeof block.tool_use_id === 'string';
    case 'thinking':
      return typeof block.thinking === 'string';
    case 'redacted_thinking':
      return true;
    default:
      return false;
  }
}

type AnthropicDocument = Extract<SessionDocument, { format: 'anthropic' }>;

/** The roles of the messages: the API's two, and a system message some logs put first. */
const ROLES = ['user', 'assistant', 'system'];

/**
 * Whether parsed messages are a list in Anthropic's format: every one a user, assistant or system
 * message with none of OpenAI's tool fields, and some block one that only this format has — or,
 * as Cline and Roo Code kept tasks before they used the API's tool calls, an assistant's text
 * calling a tool in XML and a user's text answering with its result.
 */
export function isAnthropicMessages(messages: readonly unknown[]): boolean {
  let blocks = false;
  let xmlCall = false;
  let textResult = false;
  for (const message of messages) {
    if (!isRecord(message) || !ROLES.includes(message.role as string)) return false;
    if (message.tool_calls !== undefined || message.tool_call_id !== undefined) return false;
    const { content } = message;
    if (!blocks && Array.isArray(content)) blocks = content.some(anthropicBlock);
    if (blocks) continue;
    if (message.role === 'assistant' && !xmlCall) xmlCall = textsOf(content).some(hasXmlToolCall);
    if (message.role === 'user' && !textResult) textResult = textsOf(content).some(isTextResult);
  }
  return blocks || (xmlCall && textResult);
}

/** What stands where a message's role should be, for an error. */
function roleOf(message: unknown): string {
  if (!isRecord(message)) return describe(message);
  return typeof message.role === 'string' ? JSON.stringify(message.role) : describe(message.role);
}

/**
 * The messages as Claude Code lines, `line` the message's 1-based position (errors name it): a
 * user message's text blocks that are Cline results of the previous message's calls as
 * `tool_result` blocks, and a user message that carries results meta (the reminders and, rarely,
 * feedback beside them start no round).
 */
function asLines(messages: readonly unknown[]): JsonLine[] {
  // The calls of the assistant messages since the last user message, not answered yet.
  let waiting: string[] = [];
  return messages.map((message, i) => {
    if (!isRecord(message) || !ROLES.includes(message.role as string)) {
      throw new ImportError(`expected a user, assistant or system message, got ${roleOf(message)}`, {
        line: i + 1,
        ...(isRecord(message) ? { field: 'message.role' } : {}),
      });
    }
    for (const key of ['tool_calls', 'tool_call_id'])
      if (message[key] !== undefined)
        throw new ImportError("an OpenAI tool field in a message of Anthropic's format", {
          line: i + 1,
          field: `message.${key}`,
        });
    // A system message is kept where it is; its text is the system prompt (importMessages).
    if (message.role === 'system') return { line: i + 1, value: { type: 'system-message', message } };
    if (message.role === 'assistant') {
      const withCalls = withXmlCalls(message, i + 1);
      waiting = [...waiting, ...blockIds(withCalls.content, 'tool_use')];
      return { line: i + 1, value: { type: 'assistant', message: withCalls } };
    }
    let content: unknown = message.content;
    let carries = false;
    if (Array.isArray(content)) {
      const answered = new Set<unknown>();
      for (const block of content)
        if (isRecord(block) && block.type === 'tool_result') answered.add(block.tool_use_id);
      // Cline's text results answer the calls no `tool_result` block of the message answers.
      const read = withTextResults(
        content,
        waiting.filter((id) => !answered.has(id)),
      );
      carries = answered.size > 0 || read.answered > 0;
      if (read.answered > 0) content = read.content;
    }
    waiting = [];
    return {
      line: i + 1,
      value: {
        type: 'user',
        ...(carries || isNoToolNag(content) ? { isMeta: true } : {}),
        message: content === message.content ? message : { ...message, content },
      },
    };
  });
}

/**
 * A message written back from its Claude Code line: the envelope off, an assistant's text joined
 * again around its calls in XML, and the results read off text blocks written as those blocks again.
 */
function messageOfLine(line: unknown): unknown {
  const message = isRecord(line) && isRecord(line.message) ? line.message : line;
  if (!isRecord(message) || !Array.isArray(message.content)) return message;
  return {
    ...message,
    content: message.role === 'assistant' ? joinXmlText(message.content) : withResultTexts(message.content),
  };
}

/** The text of a system prompt (`field`: where it is): a string, or its text blocks joined. */
function systemText(value: unknown, field: { line?: number; field?: string }): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    return value
      .map((block) => (isRecord(block) && typeof block.text === 'string' ? block.text : ''))
      .join('\n');
  }
  throw new ImportError(`expected a string or a list of text blocks, got ${describe(value)}`, field);
}

/** A system prompt item (not written back: its source stays where it was). */
function systemItem(id: string, content: string): ContextItem {
  return {
    id,
    type: 'SYSTEM_PROMPT',
    message: { role: 'system', content },
    tokens: 0,
    round: 0,
    isMeta: false,
    pinned: false,
    ephemeral: false,
  };
}

/** The top level's `tools` as function tools (`input_schema` as their parameters). */
function toolDefinitions(value: unknown): ToolDefinition[] {
  if (!Array.isArray(value))
    throw new ImportError(`expected a list, got ${describe(value)}`, { field: 'tools' });
  return value.map((tool, i) => {
    if (!isRecord(tool) || typeof tool.name !== 'string') {
      throw new ImportError('expected a tool with a string name', { field: `tools[${i}].name` });
    }
    return {
      type: 'function',
      function: {
        name: tool.name,
        ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
        ...(isRecord(tool.input_schema) ? { parameters: tool.input_schema } : {}),
      },
    };
  });
}

/**
 * Items of the messages, read as Claude Code lines. Errors name the message: `at(i)` gives the
 * line (JSONL) or field of message i; a field within it is named as in the message.
 */
function importMessages(
  messages: readonly unknown[],
  at: (i: number) => { line?: number; field?: string },
  options: ImportOptions,
  idPrefix: string,
): { items: ContextItem[]; slots: AnthropicDocument['slots'] } {
  // The system messages' texts first, as the system prompt.
  const system: ContextItem[] = [];
  messages.forEach((message, i) => {
    if (!isRecord(message) || message.role !== 'system') return;
    const where = at(i);
    const content = systemText(message.content, {
      ...(where.line !== undefined ? { line: where.line } : {}),
      field: [where.field, 'content'].filter(Boolean).join('.'),
    });
    system.push(systemItem(`${idPrefix}system${i}`, content));
  });
  try {
    // Each message is whole: none is merged into another with the same id, as Claude Code's lines are.
    // The items name this format: its exporter is the one to write them back.
    const { items, slots } = itemsThroughClaudeCode(asLines(messages), options, idPrefix, 'anthropic');
    return { items: [...system, ...items], slots };
  } catch (err) {
    if (!(err instanceof ImportError) || err.line === undefined) throw err;
    const where = at(err.line - 1);
    const inner = err.field?.replace(/^message\.?/, '') ?? '';
    const field = [where.field, inner].filter(Boolean).join('.');
    throw new ImportError(err.detail, {
      ...(where.line !== undefined ? { line: where.line } : {}),
      ...(field ? { field } : {}),
    });
  }
}

/** Import from an already parsed value: an array of messages or an object with `messages`. */
export function anthropicFromValue(
  value: unknown,
  options: ImportOptions,
  idPrefix: string,
): ImportedSession {
  if (Array.isArray(value)) {
    const { items, slots } = importMessages(value, (i) => ({ field: `[${i}]` }), options, idPrefix);
    return {
      format: 'anthropic',
      items: finishItems(items, options.tokenizer),
      document: { format: 'anthropic', layout: 'array', slots },
    };
  }
  if (!isRecord(value) || !Array.isArray(value.messages)) {
    throw new ImportError(`expected a list of messages or an object with one, got ${describe(value)}`, {
      field: 'messages',
    });
  }
  const { items, slots } = importMessages(
    value.messages,
    (i) => ({ field: `messages[${i}]` }),
    options,
    idPrefix,
  );
  const head: ContextItem[] = [];
  if (value.system !== undefined)
    head.push(systemItem(`${idPrefix}system`, systemText(value.system, { field: 'system' })));
  if (value.tools !== undefined) {
    head.push(toolsItem(`${idPrefix}tools`, toolDefinitions(value.tools)));
  }
  return {
    format: 'anthropic',
    items: finishItems([...head, ...items], options.tokenizer),
    document: { format: 'anthropic', layout: 'object', top: { ...value, messages: null }, slots },
  };
}

/** Import from parsed JSONL lines, one message each. */
export function anthropicFromLines(
  lines: readonly JsonLine[],
  options: ImportOptions,
  idPrefix: string,
): ImportedSession {
  const { items, slots } = importMessages(
    lines.map((l) => l.value),
    (i) => ({ line: (lines[i] as JsonLine).line }),
    options,
    idPrefix,
  );
  return {
    format: 'anthropic',
    items: finishItems(items, options.tokenizer),
    document: { format: 'anthropic', layout: 'jsonl', slots },
  };
}

/** Import from a task Cline or Roo Code exported as Markdown (`task-markdown.ts`). */
export function anthropicFromMarkdown(
  text: string,
  options: ImportOptions,
  idPrefix: string,
): ImportedSession {
  const { messages, lines, frame } = parseTaskMarkdown(text);
  const { items, slots } = importMessages(messages, (i) => ({ line: lines[i] as number }), options, idPrefix);
  return {
    format: 'anthropic',
    items: finishItems(items, options.tokenizer),
    document: { format: 'anthropic', layout: 'markdown', frame, slots },
  };
}

/**
 * Imports a list of messages in Anthropic's format (see the module comment): a JSON array, an
 * object with `messages`, JSONL, or a task exported as Markdown.
 * @throws ImportError naming the line (JSONL, Markdown) or field of malformed input
 */
export function importAnthropicMessages(text: string, options: ImportOptions): ImportedSession {
  const idPrefix = options.idPrefix ?? defaultIdPrefix('anthropic', text);
  if (isTaskMarkdown(text)) return anthropicFromMarkdown(text, options, idPrefix);
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) return anthropicFromValue(parseJson(text), options, idPrefix);
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return importJsonLines(text, (lines) => anthropicFromLines(lines, options, idPrefix));
  }
  // One message on one line is JSONL too.
  return isRecord(value) && typeof value.role === 'string'
    ? anthropicFromLines([{ line: 1, value }], options, idPrefix)
    : anthropicFromValue(value, options, idPrefix);
}

/**
 * Writes the items back as the list they came from: every message in its place (an unchanged
 * import gives back a deep-equal document); a changed context as Claude Code's lines are written
 * (`writeLineSlots`), new messages in this format's shape. The system prompt and tools stay as
 * they were, at the top level or as system messages; a system prompt added since is not written
 * (the format has no place of its own for one).
 */
export function exportAnthropicMessages(items: readonly ContextItem[], document: AnthropicDocument): string {
  const own = items.filter((item) => item.type !== 'SYSTEM_PROMPT' || item.origin !== undefined);
  const messages = claudeCodeLinesOf(own, document.slots, 'anthropic').map(messageOfLine);
  switch (document.layout) {
    case 'array':
      return `${JSON.stringify(messages)}\n`;
    case 'object':
      return `${JSON.stringify({ ...document.top, messages })}\n`;
    case 'jsonl':
      return jsonLines(messages);
    case 'markdown':
      return writeTaskMarkdown(messages, document.frame ?? { head: '', tail: '\n\n', eol: '\n' });
  }
}
