/**
 * OpenAI chat lists: a JSON array of messages, an object `{ messages, tools?, ...other keys }`, or
 * JSONL with one message per line. Pure: takes text, returns items (written back by
 * `openai-chat-export.ts`).
 */
import type { ContextItem, ToolDefinition } from '../context/items';
import { chatMessageFromJson } from './chat-messages-import';
import {
  defaultIdPrefix,
  finishItems,
  makeItem,
  type AsideMessage,
  type ImportedSession,
  type ImportOptions,
  type OpenAILayout,
  type SessionDocument,
  toolsItem,
} from './common';
import { ImportError } from './errors';
import { describe, isRecord, parseJson, importJsonLines, type JsonObject } from './json';

function toolDefinitions(value: unknown): ToolDefinition[] {
  if (!Array.isArray(value))
    throw new ImportError(`expected a list, got ${describe(value)}`, { field: 'tools' });
  value.forEach((tool, i) => {
    const fn = isRecord(tool) ? tool.function : undefined;
    if (!isRecord(fn) || typeof fn.name !== 'string') {
      throw new ImportError('expected a function tool with a string name', {
        field: `tools[${i}].function.name`,
      });
    }
  });
  return value as ToolDefinition[];
}

/**
 * A subagent's message written into the main list (converters of Claude Code sessions give it the
 * role `assistant-subagent-<agent id>`, whatever its own role was): another conversation, which the
 * main agent's model never saw.
 */
function isSubagentMessage(raw: unknown): boolean {
  return isRecord(raw) && typeof raw.role === 'string' && raw.role.startsWith('assistant-subagent-');
}

/** The document's `aside` field: the subagents' messages with their positions, when the list has any. */
function withAside(messages: readonly unknown[]): { aside?: AsideMessage[] } {
  const aside = messages.flatMap((message, index) =>
    isSubagentMessage(message) ? [{ index, message }] : [],
  );
  return aside.length > 0 ? { aside } : {};
}

/** Items from parsed messages (`where(i)` names message i in errors); subagents' messages give none. */
function itemsFromMessages(
  messages: readonly unknown[],
  where: (i: number) => { field: string; line?: number },
  idPrefix: string,
): ContextItem[] {
  return messages.flatMap((raw, i) => {
    if (isSubagentMessage(raw)) return [];
    const at = where(i);
    try {
      const { fields, ...converted } = chatMessageFromJson(raw, at.field, 'openai');
      return makeItem(converted, {
        id: `${idPrefix}${i}`,
        isMeta: false,
        origin: { format: 'openai', index: i, fields },
      });
    } catch (err) {
      // JSONL: name the line as well as the field.
      if (err instanceof ImportError && at.line !== undefined && err.line === undefined) {
        throw new ImportError(err.detail, { line: at.line, field: err.field });
      }
      throw err;
    }
  });
}

/** Block types of Anthropic's Messages format, which an OpenAI list does not have. */
const ANTHROPIC_BLOCKS = ['tool_use', 'tool_result'];

/** The ids of a message's OpenAI tool calls (`tool_calls`). */
function toolCallIds(message: JsonObject): Set<unknown> {
  const ids = new Set<unknown>();
  if (Array.isArray(message.tool_calls))
    for (const call of message.tool_calls) if (isRecord(call) && call.id !== undefined) ids.add(call.id);
  return ids;
}

/**
 * A warning when messages hold Anthropic tool blocks: a list that mixes the two formats (an OpenAI
 * `tool` message or `tool_calls` among them), or one read as OpenAI's on request. The OpenAI
 * reading keeps them for export only, so the model would see none of those calls and results. A
 * `tool_use` block that repeats one of its message's own `tool_calls` (a converter writing each
 * call twice, the block with the same id) is read through that call: no loss. A `tool_result`
 * block is no repeat of anything (its output is not the message's text).
 */
function anthropicBlocksWarning(messages: readonly unknown[]): string[] {
  const counts = new Map<string, number>();
  for (const message of messages) {
    if (!isRecord(message) || !Array.isArray(message.content)) continue;
    const calls = toolCallIds(message);
    for (const part of message.content) {
      const type = isRecord(part) ? part.type : undefined;
      if (typeof type !== 'string' || !ANTHROPIC_BLOCKS.includes(type)) continue;
      const block = part as JsonObject;
      if (type === 'tool_use' && (calls.has(block.id) || calls.has(block.tool_call_id))) continue;
      counts.set(type, (counts.get(type) ?? 0) + 1);
    }
  }
  if (counts.size === 0) return [];
  const found = [...counts].map(([type, n]) => `${n} ${type}`).join(' and ');
  return [
    `${found} content block(s) of Anthropic's Messages format, read as an OpenAI list: they are kept ` +
      'for export but are not tool calls or results here — the model sees none of them, and no file or ' +
      "error of theirs is tracked. Anthropic's format is read when no message has OpenAI's tool fields " +
      '(`tool_calls`, `tool_call_id`, the `tool` role): `--format anthropic` names the first that does.',
  ];
}

/** A warning when subagents' messages were kept out of the context (the document's `aside`). */
function subagentWarning(aside: readonly AsideMessage[]): string[] {
  if (aside.length === 0) return [];
  const agents = new Set(aside.map(({ message }) => (message as JsonObject).role)).size;
  return [
    `${aside.length} message(s) of ${agents} subagent(s) (role "assistant-subagent-…") are another conversation ` +
      "written into the list: kept for export where they were, not in the context (the main agent's model never saw them)",
  ];
}

/** The session, with the warnings its messages give. */
function withWarnings(session: ImportedSession, messages: readonly unknown[]): ImportedSession {
  const warnings = [
    ...subagentWarning((session.document.format === 'openai' && session.document.aside) || []),
    ...anthropicBlocksWarning(messages.filter((m) => !isSubagentMessage(m))),
  ];
  return warnings.length > 0 ? { ...session, warnings } : session;
}

/** Import from an already parsed value: an array of messages or an object with `messages`. */
export function openAIFromValue(value: unknown, options: ImportOptions, idPrefix: string): ImportedSession {
  let items: ContextItem[];
  let document: SessionDocument;
  if (Array.isArray(value)) {
    items = itemsFromMessages(value, (i) => ({ field: `[${i}]` }), idPrefix);
    document = { format: 'openai', layout: 'array', ...withAside(value) };
  } else if (isRecord(value) && Array.isArray(value.messages)) {
    items = itemsFromMessages(value.messages, (i) => ({ field: `messages[${i}]` }), idPrefix);
    const top: JsonObject = { ...value, messages: null };
    if (value.tools !== undefined) {
      top.tools = null;
      const tools = toolDefinitions(value.tools);
      // After the leading system messages, where a request's tools conceptually sit.
      const at = items.findIndex((item) => item.type !== 'SYSTEM_PROMPT');
      items.splice(at < 0 ? items.length : at, 0, toolsItem(`${idPrefix}tools`, tools));
    }
    document = { format: 'openai', layout: 'object', top, ...withAside(value.messages) };
  } else {
    throw new ImportError(`expected a list of messages or an object with one, got ${describe(value)}`, {
      field: 'messages',
    });
  }
  const messages = Array.isArray(value) ? value : (value.messages as unknown[]);
  return withWarnings({ format: 'openai', items: finishItems(items, options.tokenizer), document }, messages);
}

/** Import from parsed JSONL lines, one message each. */
export function openAIFromLines(
  lines: readonly { line: number; value: unknown }[],
  options: ImportOptions,
  idPrefix: string,
): ImportedSession {
  const items = itemsFromMessages(
    lines.map((l) => l.value),
    (i) => ({ field: 'message', line: (lines[i] as { line: number }).line }),
    idPrefix,
  );
  return withWarnings(
    {
      format: 'openai',
      items: finishItems(items, options.tokenizer),
      document: { format: 'openai', layout: 'jsonl', ...withAside(lines.map((l) => l.value)) },
    },
    lines.map((l) => l.value),
  );
}

/**
 * Imports an OpenAI chat list: a JSON array of messages, `{ messages: [...], tools?: [...] }`
 * (other top-level keys are kept for export), or JSONL of messages (`layout: 'jsonl'`, or when the
 * text is not one JSON value). Roles: system and developer (SYSTEM_PROMPT), user, assistant, tool;
 * keys beyond the item model's (`refusal`, `annotations`, ...) are kept as side fields.
 * @throws ImportError naming the line (JSONL) or field
 */
export function importOpenAIChat(
  text: string,
  options: ImportOptions & { layout?: OpenAILayout },
): ImportedSession {
  const idPrefix = options.idPrefix ?? defaultIdPrefix('openai', text);
  if (options.layout === 'jsonl')
    return importJsonLines(text, (lines) => openAIFromLines(lines, options, idPrefix));
  const trimmed = text.trim();
  if (options.layout === undefined && !trimmed.startsWith('[') && trimmed.includes('\n')) {
    let single = true;
    try {
      JSON.parse(trimmed);
    } catch {
      single = false;
    }
    if (!single) return importJsonLines(text, (lines) => openAIFromLines(lines, options, idPrefix));
  }
  return openAIFromValue(parseJson(text), options, idPrefix);
}
