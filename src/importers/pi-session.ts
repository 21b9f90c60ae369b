/**
 * pi coding-agent sessions (JSONL, one entry a line; badlogic/pi-mono `session-manager.ts`).
 *
 * The items are the context pi itself would send at the session's leaf:
 * - the active path: every entry in a linear (v1) session; in a tree session (entries with `id` /
 *   `parentId`, v2+) the path from the last entry back to the root;
 * - after a compaction entry on the path: its summary (a COMPACTION_SUMMARY item holding the
 *   summary text), then the path's entries from `firstKeptEntryId` (v1: `firstKeptEntryIndex`),
 *   then those after the compaction;
 * - `message` entries: user (real user input), assistant (text blocks → content, thinking →
 *   `reasoning_content`, toolCall → `tool_calls`), toolResult (→ tool message, `toolName` as its
 *   `name`); assistant messages that ended in `error` or `aborted` are left out, as pi leaves them
 *   out of its requests. `custom` / `hookMessage` messages, `bashExecution` (unless excluded from
 *   context), `branchSummary`, `custom_message` and `branch_summary` entries become meta user
 *   messages.
 * Every other entry (session header, model and thinking-level changes, labels, custom state,
 * entries off the path or before the kept part of a compaction, unknown types) is kept as it is in
 * the document, so the exporter writes the file back whole. Pure.
 */
import type { ChatMessage, ContentPart, ContextItem, UserMessage } from '../context/items';
import { messageText } from '../context/items';
import { putText, takeText } from './blocks';
import {
  defaultIdPrefix,
  finishItems,
  makeItem,
  rawFields,
  unchangedRaw,
  type Converted,
  type ImportedSession,
  type ImportOptions,
  type PiSlot,
  type SessionDocument,
} from './common';
import { ImportError } from './errors';
import {
  contentHash,
  describe,
  isRecord,
  jsonEqual,
  omit,
  parseJsonLines,
  type JsonLine,
  type JsonObject,
} from './json';

/** Separator of a message's text blocks (and of its thinking blocks) once joined into one string. */
const BLOCK_SEPARATOR = '\n';
const DATA_URL = /^data:([^;,]+);base64,([\s\S]*)$/;

interface PiEntry {
  /** Position among the file's entries (blank lines not counted). */
  index: number;
  /** 1-based line in the file. */
  line: number;
  value: JsonObject;
}

interface PiConverted {
  converted: Converted;
  isMeta: boolean;
  fields: JsonObject;
}

function fail(detail: string, entry: PiEntry, field?: string): never {
  throw new ImportError(detail, field === undefined ? { line: entry.line } : { line: entry.line, field });
}

function blockList(value: unknown, entry: PiEntry, field: string): JsonObject[] {
  if (!Array.isArray(value)) fail(`expected a list of content blocks, got ${describe(value)}`, entry, field);
  return value.map((block, i) => {
    if (!isRecord(block) || typeof block.type !== 'string') {
      fail(`expected a content block with a string type, got ${describe(block)}`, entry, `${field}[${i}]`);
    }
    return block;
  });
}

/** pi user content (a string, or text and image blocks) as OpenAI user content. */
function userContent(value: unknown, entry: PiEntry, field: string): string | ContentPart[] {
  if (typeof value === 'string') return value;
  return blockList(value, entry, field).map((block): ContentPart => {
    if (block.type === 'image' && typeof block.data === 'string' && typeof block.mimeType === 'string') {
      return { type: 'image_url', image_url: { url: `data:${block.mimeType};base64,${block.data}` } };
    }
    return { ...block, type: block.type as string };
  });
}

/** Inverse of {@link userContent}. */
function userContentBack(content: UserMessage['content']): unknown {
  if (typeof content === 'string') return content;
  return content.map((part) => {
    const image = part.type === 'image_url' && isRecord(part.image_url) ? part.image_url : undefined;
    const match = typeof image?.url === 'string' ? DATA_URL.exec(image.url) : null;
    return match ? { type: 'image', data: match[2], mimeType: match[1] } : part;
  });
}

function renderBash(message: JsonObject): string {
  const command = typeof message.command === 'string' ? message.command : '';
  const output = typeof message.output === 'string' ? message.output : '';
  let text = `Ran \`${command}\`\n\`\`\`\n${output}\n\`\`\``;
  if (message.cancelled === true) text += '\n(command cancelled)';
  else if (typeof message.exitCode === 'number' && message.exitCode !== 0) {
    text += `\nCommand exited with code ${message.exitCode}`;
  }
  if (message.truncated === true) text += '\n(output truncated)';
  return text;
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text; // changed since import (e.g. cut to a preview): kept as text
  }
}

function convertMessage(entry: PiEntry): PiConverted | undefined {
  const message = entry.value.message;
  if (!isRecord(message)) fail(`expected a message object, got ${describe(message)}`, entry, 'message');
  const role = message.role;
  if (typeof role !== 'string') fail(`expected a string, got ${describe(role)}`, entry, 'message.role');
  const envelope = omit(entry.value, ['message']);
  switch (role) {
    case 'user':
    case 'custom':
    case 'hookMessage':
      return {
        converted: {
          type: 'USER_MESSAGE',
          message: { role: 'user', content: userContent(message.content, entry, 'message.content') },
        },
        isMeta: role !== 'user',
        fields: { kind: 'message', entry: envelope, message: omit(message, ['content']) },
      };
    case 'assistant': {
      if (message.stopReason === 'error' || message.stopReason === 'aborted') return undefined;
      const blocks = blockList(message.content, entry, 'message.content');
      const text = takeText(blocks, 'text', 'text', BLOCK_SEPARATOR);
      const thinking = takeText(text.layout, 'thinking', 'thinking', BLOCK_SEPARATOR);
      const calls: NonNullable<Extract<ChatMessage, { role: 'assistant' }>['tool_calls']> = [];
      const layout = thinking.layout.map((block, i) => {
        if (block.type !== 'toolCall') return block;
        const field = `message.content[${i}]`;
        if (typeof block.id !== 'string')
          fail(`expected a string, got ${describe(block.id)}`, entry, `${field}.id`);
        if (typeof block.name !== 'string') {
          fail(`expected a string, got ${describe(block.name)}`, entry, `${field}.name`);
        }
        calls.push({
          id: block.id,
          type: 'function',
          function: { name: block.name, arguments: JSON.stringify(block.arguments ?? {}) },
        });
        // Placeholders keep the keys' order; the values come back from the tool call.
        return { ...block, id: 0, name: 0, arguments: 0 };
      });
      return {
        converted: {
          type: 'ASSISTANT_MESSAGE',
          message: {
            role: 'assistant',
            content: text.text,
            ...(calls.length > 0 ? { tool_calls: calls } : {}),
            ...(thinking.text !== null ? { reasoning_content: thinking.text } : {}),
          },
        },
        isMeta: false,
        fields: { kind: 'message', entry: envelope, message: omit(message, ['content']), blocks: layout },
      };
    }
    case 'toolResult': {
      if (typeof message.toolCallId !== 'string') {
        fail(`expected a string, got ${describe(message.toolCallId)}`, entry, 'message.toolCallId');
      }
      const text = takeText(
        blockList(message.content, entry, 'message.content'),
        'text',
        'text',
        BLOCK_SEPARATOR,
      );
      return {
        converted: {
          type: 'TOOL_RESULT',
          message: {
            role: 'tool',
            content: text.text ?? '',
            tool_call_id: message.toolCallId,
            ...(typeof message.toolName === 'string' ? { name: message.toolName } : {}),
          },
        },
        isMeta: false,
        fields: {
          kind: 'message',
          entry: envelope,
          message: omit(message, ['content']),
          blocks: text.layout,
        },
      };
    }
    case 'bashExecution': {
      if (message.excludeFromContext === true) return undefined;
      const converted: Converted = {
        type: 'USER_MESSAGE',
        message: { role: 'user', content: renderBash(message) },
      };
      // Rendered text cannot be parsed back: the entry is kept whole.
      return { converted, isMeta: true, fields: rawFields(entry.value, converted.message) };
    }
    case 'branchSummary':
    case 'compactionSummary': {
      if (typeof message.summary !== 'string') {
        fail(`expected a string, got ${describe(message.summary)}`, entry, 'message.summary');
      }
      const summary: UserMessage = { role: 'user', content: message.summary };
      return {
        converted:
          role === 'compactionSummary'
            ? { type: 'COMPACTION_SUMMARY', message: summary }
            : { type: 'USER_MESSAGE', message: summary },
        isMeta: true,
        fields: { kind: 'message', entry: envelope, message: omit(message, ['summary']), textKey: 'summary' },
      };
    }
    default:
      return undefined;
  }
}

function convertEntry(entry: PiEntry, isContextCompaction: boolean): PiConverted | undefined {
  const value = entry.value;
  switch (value.type) {
    case 'message':
      return convertMessage(entry);
    case 'custom_message':
      return {
        converted: {
          type: 'USER_MESSAGE',
          message: { role: 'user', content: userContent(value.content, entry, 'content') },
        },
        isMeta: true,
        fields: { kind: 'entry', entry: omit(value, ['content']) },
      };
    case 'branch_summary':
    case 'compaction': {
      const summary = value.summary;
      if (typeof summary !== 'string' || summary.length === 0) return undefined;
      if (value.type === 'compaction' && !isContextCompaction) return undefined;
      const message: UserMessage = { role: 'user', content: summary };
      return {
        converted:
          value.type === 'compaction'
            ? { type: 'COMPACTION_SUMMARY', message }
            : { type: 'USER_MESSAGE', message },
        isMeta: true,
        fields: { kind: 'entry', entry: omit(value, ['summary']), textKey: 'summary' },
      };
    }
    default:
      return undefined;
  }
}

/** The entries pi would build its context from (see the module comment), in order. */
function activePath(entries: readonly PiEntry[]): PiEntry[] {
  const body = entries.filter((entry) => entry.value.type !== 'session');
  const isTree = body.some((entry) => typeof entry.value.id === 'string' && 'parentId' in entry.value);
  if (!isTree) return body;
  const byId = new Map<string, PiEntry>();
  let leaf: PiEntry | undefined;
  for (const entry of body) {
    if (typeof entry.value.id !== 'string') continue;
    byId.set(entry.value.id, entry);
    leaf = entry;
  }
  const path: PiEntry[] = [];
  const seen = new Set<PiEntry>();
  for (let at = leaf; at && !seen.has(at);) {
    seen.add(at);
    path.push(at);
    const parent = at.value.parentId;
    at = typeof parent === 'string' ? byId.get(parent) : undefined;
  }
  return path.reverse();
}

/** The path's entries in context order: after the latest compaction, its summary first. */
function contextEntries(path: readonly PiEntry[]): { entries: PiEntry[]; compaction?: PiEntry } {
  let at = -1;
  for (let i = path.length - 1; i >= 0 && at < 0; i--)
    if ((path[i] as PiEntry).value.type === 'compaction') at = i;
  if (at < 0) return { entries: [...path] };
  const compaction = path[at] as PiEntry;
  const { firstKeptEntryId, firstKeptEntryIndex } = compaction.value;
  let first = path.findIndex(
    (entry, i) =>
      i < at &&
      ((typeof firstKeptEntryId === 'string' && entry.value.id === firstKeptEntryId) ||
        (typeof firstKeptEntryIndex === 'number' && entry.index === firstKeptEntryIndex)),
  );
  if (first < 0) first = at; // as pi: nothing before the compaction is kept
  return { entries: [compaction, ...path.slice(first, at), ...path.slice(at + 1)], compaction };
}

/** Import from parsed JSONL lines. */
export function piFromLines(
  lines: readonly JsonLine[],
  options: ImportOptions,
  idPrefix: string,
): ImportedSession {
  const entries: PiEntry[] = lines.map(({ line, value }, index) => {
    if (!isRecord(value))
      throw new ImportError(`expected a session entry object, got ${describe(value)}`, { line });
    if (typeof value.type !== 'string') {
      throw new ImportError(`expected a string, got ${describe(value.type)}`, { line, field: 'type' });
    }
    return { index, line, value };
  });
  const { entries: context, compaction } = contextEntries(activePath(entries));
  const items: ContextItem[] = [];
  const itemIds = new Map<number, string>();
  for (const entry of context) {
    const converted = convertEntry(entry, entry === compaction);
    if (!converted) continue;
    const id = `${idPrefix}${entry.index}`;
    // The mapping covers the shapes pi writes; anything else is kept whole.
    const fields =
      'raw' in converted.fields ||
      jsonEqual(entryFromItem(converted.converted.message, converted.fields), entry.value)
        ? converted.fields
        : rawFields(entry.value, converted.converted.message);
    items.push(
      makeItem(converted.converted, {
        id,
        isMeta: converted.isMeta,
        origin: { format: 'pi', index: entry.index, fields },
      }),
    );
    itemIds.set(entry.index, id);
  }
  const slots: PiSlot[] = entries.map((entry) => {
    const itemId = itemIds.get(entry.index);
    return itemId === undefined ? { entry: entry.value } : { itemId };
  });
  return { format: 'pi', items: finishItems(items, options.tokenizer), document: { format: 'pi', slots } };
}

/**
 * Imports a pi session (JSONL).
 * @throws ImportError naming the line and, for a bad entry, the field
 */
export function importPiSession(text: string, options: ImportOptions): ImportedSession {
  return piFromLines(parseJsonLines(text), options, options.idPrefix ?? defaultIdPrefix('pi', text));
}

/** The assistant's blocks: the layout with text, thinking and tool calls put back. */
function assistantBlocks(
  message: Extract<ChatMessage, { role: 'assistant' }>,
  layout: JsonObject[],
): JsonObject[] {
  let blocks = putText(layout, 'text', 'text', message.content, BLOCK_SEPARATOR);
  blocks = putText(blocks, 'thinking', 'thinking', message.reasoning_content ?? null, BLOCK_SEPARATOR);
  const calls = message.tool_calls ?? [];
  let next = 0;
  const out = blocks.flatMap((block) => {
    if (block.type !== 'toolCall') return [block];
    const call = calls[next++];
    if (!call) return [];
    return [
      { ...block, id: call.id, name: call.function.name, arguments: parseArguments(call.function.arguments) },
    ];
  });
  for (const call of calls.slice(next)) {
    out.push({
      type: 'toolCall',
      id: call.id,
      name: call.function.name,
      arguments: parseArguments(call.function.arguments),
    });
  }
  return out;
}

/** A pi entry for a message that did not come from pi (or whose kept entry no longer matches). */
function freshEntry(message: ChatMessage): JsonObject {
  switch (message.role) {
    case 'system':
      return { type: 'message', message: { role: 'user', content: message.content } };
    case 'user':
      return { type: 'message', message: { role: 'user', content: userContentBack(message.content) } };
    case 'assistant': {
      const calls = message.tool_calls ?? [];
      return {
        type: 'message',
        message: {
          role: 'assistant',
          content: assistantBlocks(message, []),
          stopReason: calls.length > 0 ? 'toolUse' : 'stop',
        },
      };
    }
    case 'tool':
      return {
        type: 'message',
        message: {
          role: 'toolResult',
          toolCallId: message.tool_call_id,
          toolName: message.name ?? '',
          content: [{ type: 'text', text: message.content }],
          isError: false,
        },
      };
  }
}

/** The entry of an item's message given its pi side fields (exactly the source when unchanged). */
function entryFromItem(message: ChatMessage, fields: JsonObject): JsonObject {
  const kept = unchangedRaw(fields, message);
  if (isRecord(kept)) return kept;
  const envelope = isRecord(fields.entry) ? fields.entry : undefined;
  if (!envelope) {
    const fresh = freshEntry(message);
    // A kept message entry that changed: its envelope (id, parentId, timestamp) with the new message.
    return isRecord(fields.raw) && fields.raw.type === 'message'
      ? { ...omit(fields.raw, ['message']), message: fresh.message }
      : fresh;
  }
  const textKey = typeof fields.textKey === 'string' ? fields.textKey : undefined;
  if (fields.kind === 'entry') {
    const content = textKey
      ? messageText(message)
      : message.role === 'user'
        ? userContentBack(message.content)
        : messageText(message);
    return { ...envelope, [textKey ?? 'content']: content };
  }
  const out: JsonObject = { ...(isRecord(fields.message) ? fields.message : {}) };
  const layout = Array.isArray(fields.blocks) ? (fields.blocks as JsonObject[]) : [];
  if (textKey) out[textKey] = messageText(message);
  else if (message.role === 'user') out.content = userContentBack(message.content);
  else if (message.role === 'assistant') out.content = assistantBlocks(message, layout);
  else if (message.role === 'tool') {
    out.content = putText(layout, 'text', 'text', message.content, BLOCK_SEPARATOR);
    out.toolCallId = message.tool_call_id;
    if (message.name !== undefined) out.toolName = message.name;
  } else out.content = message.content;
  return { ...envelope, message: out };
}

/**
 * Writes items back as the pi session they came from: every line of the source in its place,
 * items rebuilt from their side fields (an unchanged import gives back deep-equal entries, line for
 * line). For a changed context: an item replaced by a truncated form (`sourceId`) takes its
 * source's line, a dropped item's line is left out, a new item is written after the line of the
 * item before it (linked into the tree with a derived id when the session has ids), SYSTEM_PROMPT
 * and TOOL_DEFINITIONS items without a pi origin are left out (pi sessions hold neither).
 */
export function exportPiSession(
  items: readonly ContextItem[],
  document: Extract<SessionDocument, { format: 'pi' }>,
): string {
  const slotOf = new Map<string, number>();
  document.slots.forEach((slot, i) => {
    if ('itemId' in slot) slotOf.set(slot.itemId, i);
  });
  const assigned = new Map<number, ContextItem>();
  const after = new Map<number, ContextItem[]>();
  const head: ContextItem[] = [];
  let previous = -1;
  for (const item of items) {
    let slot = slotOf.get(item.id);
    if (slot === undefined && item.sourceId !== undefined) slot = slotOf.get(item.sourceId);
    if (slot !== undefined && !assigned.has(slot)) {
      assigned.set(slot, item);
      previous = slot;
    } else if (previous < 0) head.push(item);
    else after.set(previous, [...(after.get(previous) ?? []), item]);
  }
  const hasIds = document.slots.some(
    (slot) => 'entry' in slot && isRecord(slot.entry) && typeof slot.entry.id === 'string',
  );
  const out: unknown[] = [];
  let lastId: string | null = null;
  const emit = (entry: unknown): void => {
    out.push(entry);
    if (isRecord(entry) && typeof entry.id === 'string') lastId = entry.id;
  };
  const emitNew = (list: readonly ContextItem[]): void => {
    for (const item of list) {
      if (item.type === 'TOOL_DEFINITIONS' || item.type === 'SYSTEM_PROMPT') continue;
      const fields = item.origin?.format === 'pi' ? item.origin.fields : {};
      const entry = entryFromItem(item.message, fields);
      emit(
        hasIds && !item.origin ? { ...entry, id: contentHash(item.id).slice(0, 8), parentId: lastId } : entry,
      );
    }
  };
  const firstItemSlot = document.slots.findIndex((slot) => 'itemId' in slot);
  document.slots.forEach((slot, i) => {
    if (i === firstItemSlot) emitNew(head);
    if ('entry' in slot) emit(slot.entry);
    else {
      const item = assigned.get(i);
      if (item && item.type !== 'TOOL_DEFINITIONS') {
        emit(entryFromItem(item.message, item.origin?.format === 'pi' ? item.origin.fields : {}));
      }
    }
    emitNew(after.get(i) ?? []);
  });
  if (firstItemSlot < 0) emitNew(head);
  return out.map((entry) => JSON.stringify(entry)).join('\n') + (out.length > 0 ? '\n' : '');
}
