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
 * The top level's `system` (a string or text blocks) is the system prompt and its `tools` the tool
 * definitions; both are written back as they were. Pure.
 */
import type { ContextItem, ToolDefinition } from '../context/items';
import { claudeCodeFromLines } from './claude-code-import';
import { claudeCodeLineValues } from './claude-code-export';
import {
  defaultIdPrefix,
  finishItems,
  type ImportedSession,
  type ImportOptions,
  type SessionDocument,
} from './common';
import { ImportError } from './errors';
import { describe, isRecord, omit, parseJson, parseJsonLines, type JsonLine, type JsonObject } from './json';

/** Block types only Anthropic's format has (an OpenAI list has none of them). */
const ANTHROPIC_BLOCKS = new Set(['tool_use', 'tool_result', 'thinking', 'redacted_thinking']);

/**
 * The start of a tool's result as Cline writes it in a text block: `[name]` or `[name for '…']`,
 * then ` Result:`.
 */
const TEXT_RESULT = /^\[[\w.-]+(?: for [\s\S]*?)?\] Result:/;

/**
 * The key under which a result read off a text block keeps that block's other keys, until it is
 * written back as the text block it was.
 */
const TEXT_BLOCK = 'durable-compaction:text-block';

type AnthropicDocument = Extract<SessionDocument, { format: 'anthropic' }>;

/**
 * Whether parsed messages are a list in Anthropic's format: every one a user or assistant message,
 * and some block one that only this format has.
 */
export function isAnthropicMessages(messages: readonly unknown[]): boolean {
  let blocks = false;
  for (const message of messages) {
    if (!isRecord(message) || (message.role !== 'user' && message.role !== 'assistant')) return false;
    const { content } = message;
    if (!blocks && Array.isArray(content))
      blocks = content.some((block) => isRecord(block) && ANTHROPIC_BLOCKS.has(block.type as string));
  }
  return blocks;
}

/** The ids of an assistant message's tool calls, in order. */
function callIds(message: JsonObject): string[] {
  const { content } = message;
  if (!Array.isArray(content)) return [];
  return content.flatMap((block) =>
    isRecord(block) && block.type === 'tool_use' && typeof block.id === 'string' ? [block.id] : [],
  );
}

/**
 * The messages as Claude Code lines, `line` the message's 1-based position (errors name it): a
 * user message's text blocks that are Cline results of the previous message's calls as
 * `tool_result` blocks, and a user message that carries results meta (the reminders and, rarely,
 * feedback beside them start no round).
 */
function asLines(messages: readonly unknown[]): JsonLine[] {
  let waiting: string[] = [];
  return messages.map((message, i) => {
    if (!isRecord(message) || (message.role !== 'user' && message.role !== 'assistant')) {
      throw new ImportError(`expected a user or assistant message, got ${describe(message)}`, {
        line: i + 1,
      });
    }
    if (message.role === 'assistant') {
      waiting = callIds(message);
      return { line: i + 1, value: { type: 'assistant', message } };
    }
    let content: unknown = message.content;
    let carries = false;
    if (Array.isArray(content)) {
      carries = content.some((block) => isRecord(block) && block.type === 'tool_result');
      if (!carries && waiting.length > 0) {
        let next = 0;
        content = content.map((block: unknown) => {
          if (next >= waiting.length || !isRecord(block) || block.type !== 'text') return block;
          if (typeof block.text !== 'string' || !TEXT_RESULT.test(block.text)) return block;
          carries = true;
          return {
            type: 'tool_result',
            tool_use_id: waiting[next++],
            content: block.text,
            [TEXT_BLOCK]: omit(block, ['text']),
          };
        });
      }
    }
    waiting = [];
    return {
      line: i + 1,
      value: {
        type: 'user',
        ...(carries ? { isMeta: true } : {}),
        message: content === message.content ? message : { ...message, content },
      },
    };
  });
}

/**
 * A message written back from its Claude Code line: the envelope off, and the results read off
 * text blocks written as those blocks again.
 */
function messageOfLine(line: unknown): unknown {
  const message = isRecord(line) && isRecord(line.message) ? line.message : line;
  if (!isRecord(message) || !Array.isArray(message.content)) return message;
  return {
    ...message,
    content: message.content.map((block: unknown) => {
      if (!isRecord(block) || !isRecord(block[TEXT_BLOCK])) return block;
      const { content } = block;
      const text = Array.isArray(content)
        ? content.map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : '')).join('')
        : typeof content === 'string'
          ? content
          : '';
      return { ...block[TEXT_BLOCK], text };
    }),
  };
}

/** The text of the top level's `system`: a string, or its text blocks joined. */
function systemText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    return value
      .map((block) => (isRecord(block) && typeof block.text === 'string' ? block.text : ''))
      .join('\n');
  }
  throw new ImportError(`expected a string or a list of text blocks, got ${describe(value)}`, {
    field: 'system',
  });
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
  try {
    const read = claudeCodeFromLines(asLines(messages), { ...options, wholeHistory: true }, idPrefix);
    if (read.document.format !== 'claude-code') throw new Error('unreachable: a Claude Code document');
    // The items name this format: its exporter is the one to write them back.
    const items = read.items.map((item) =>
      item.origin ? { ...item, origin: { ...item.origin, format: 'anthropic' as const } } : item,
    );
    return { items, slots: read.document.slots };
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
  const base = { tokens: 0, round: 0, isMeta: false, pinned: false, ephemeral: false };
  if (value.system !== undefined) {
    const content = systemText(value.system);
    head.push({
      ...base,
      id: `${idPrefix}system`,
      type: 'SYSTEM_PROMPT',
      message: { role: 'system', content },
    });
  }
  if (value.tools !== undefined) {
    head.push({
      ...base,
      id: `${idPrefix}tools`,
      type: 'TOOL_DEFINITIONS',
      tools: toolDefinitions(value.tools),
    });
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

/**
 * Imports a list of messages in Anthropic's format (see the module comment): a JSON array, an
 * object with `messages`, or JSONL.
 * @throws ImportError naming the line (JSONL) or field of malformed input
 */
export function importAnthropicMessages(text: string, options: ImportOptions): ImportedSession {
  const idPrefix = options.idPrefix ?? defaultIdPrefix('anthropic', text);
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) return anthropicFromValue(parseJson(text), options, idPrefix);
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return anthropicFromLines(parseJsonLines(text), options, idPrefix);
  }
  // One message on one line is JSONL too.
  return isRecord(value) && typeof value.role === 'string'
    ? anthropicFromLines([{ line: 1, value }], options, idPrefix)
    : anthropicFromValue(value, options, idPrefix);
}

/**
 * Writes the items back as the list they came from: every message in its place (an unchanged
 * import gives back a deep-equal document); a changed context as Claude Code's lines are written
 * (`writeLineSlots`), new messages in this format's shape. The top level's system prompt and tools
 * stay as they were.
 */
export function exportAnthropicMessages(items: readonly ContextItem[], document: AnthropicDocument): string {
  const own = items
    .filter((item) => item.type !== 'SYSTEM_PROMPT' || item.origin !== undefined)
    .map((item) =>
      item.origin?.format === 'anthropic'
        ? { ...item, origin: { ...item.origin, format: 'claude-code' as const } }
        : item,
    );
  const messages = claudeCodeLineValues(own, document.slots).map(messageOfLine);
  switch (document.layout) {
    case 'array':
      return `${JSON.stringify(messages)}\n`;
    case 'object':
      return `${JSON.stringify({ ...document.top, messages })}\n`;
    case 'jsonl':
      return (
        messages.map((message) => JSON.stringify(message)).join('\n') + (messages.length > 0 ? '\n' : '')
      );
  }
}
