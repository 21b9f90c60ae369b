/**
 * pi sessions written back (the mapping is described in `pi-session-import.ts`): every line of the
 * source in its place, items rebuilt from their side fields. Pure.
 */
import type { ChatMessage, ContextItem, UserMessage } from '../context/items';
import { messageText } from '../context/items';
import { putText } from './blocks';
import { unchangedRaw, type SessionDocument } from './common';
import { contentHash, isRecord, jsonLines, omit, type JsonObject } from './json';

/** Separator of a message's text blocks (and of its thinking blocks) once joined into one string. */
export const BLOCK_SEPARATOR = '\n';
const DATA_URL = /^data:([^;,]+);base64,([\s\S]*)$/;

/** Inverse of `userContent` (`pi-session-import.ts`). */
function userContentBack(content: UserMessage['content']): unknown {
  if (typeof content === 'string') return content;
  return content.map((part) => {
    const image = part.type === 'image_url' && isRecord(part.image_url) ? part.image_url : undefined;
    const match = typeof image?.url === 'string' ? DATA_URL.exec(image.url) : null;
    return match ? { type: 'image', data: match[2], mimeType: match[1] } : part;
  });
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text; // changed since import (e.g. cut to a preview): kept as text
  }
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
export function entryFromItem(message: ChatMessage, fields: JsonObject): JsonObject {
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
  return jsonLines(out);
}
