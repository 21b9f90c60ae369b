/**
 * Codex rollouts written back (the mapping is described in `codex-import.ts`): every line of the
 * source in its place, items rebuilt from their parts (`line-slots.ts`). Pure.
 */
import type { ChatMessage, ContextItem, ToolCall } from '../context/items';
import { messageText } from '../context/items';
import { putText } from './blocks';
import { unchangedRaw } from './common';
import { isRecord, type JsonObject } from './json';
import { onePartWriter, writeLineSlots, type ItemPart, type LineSlot } from './line-slots';

/** Separator of a message's text parts once joined into one string. */
export const TEXT_SEPARATOR = '\n';

/** A line's item: under `payload`, or the line itself (older rollouts). */
function itemOf(line: JsonObject): JsonObject {
  return isRecord(line.payload) ? line.payload : line;
}

function withItem(line: JsonObject, keys: JsonObject): JsonObject {
  const item = { ...itemOf(line), ...keys };
  return isRecord(line.payload) ? { ...line, payload: item } : item;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A call's line given the line it came from (its placeholders), or a new `function_call` line. */
function callLine(call: ToolCall, part: JsonObject | undefined): JsonObject {
  const type = part ? itemOf(part).type : 'function_call';
  const args = parsed(call.function.arguments);
  if (part && type === 'custom_tool_call') {
    const input = isRecord(args) && typeof args.input === 'string' ? args.input : call.function.arguments;
    return withItem(part, { name: call.function.name, input, call_id: call.id });
  }
  if (part && type === 'local_shell_call' && isRecord(args)) {
    const id = 'call_id' in itemOf(part) ? { call_id: call.id } : { id: call.id };
    return withItem(part, { ...id, action: args });
  }
  const item = { name: call.function.name, arguments: call.function.arguments, call_id: call.id };
  return part && type === 'function_call'
    ? withItem(part, item)
    : withItem(part ?? { type: 'function_call' }, { type: 'function_call', ...item });
}

/** A message's `content` parts with its text put back (`input_text` or `output_text`). */
function contentParts(layout: unknown, type: string, text: string | null): JsonObject[] {
  return putText(Array.isArray(layout) ? (layout as JsonObject[]) : [], type, 'text', text, TEXT_SEPARATOR);
}

/**
 * The lines of a message given its Codex side fields (null for a part that is gone), exactly the
 * source lines while the message is unchanged.
 */
export function codexParts(message: ChatMessage, fields: JsonObject): ItemPart[] {
  const kept = unchangedRaw(fields, message);
  if (Array.isArray(kept)) return kept as JsonObject[];
  const parts = Array.isArray(fields.parts) ? (fields.parts as JsonObject[]) : [];
  if (parts.length === 0) {
    // Kept whole and changed since: the new message in the first line's place.
    const first = Array.isArray(fields.raw) ? (fields.raw as unknown[]).find(isRecord) : undefined;
    const count = Array.isArray(fields.raw) ? fields.raw.length : 1;
    return [freshLines(message, first), ...Array.from({ length: count - 1 }, () => null)];
  }
  switch (message.role) {
    case 'assistant': {
      const calls = message.tool_calls ?? [];
      let next = 0;
      const out: ItemPart[] = parts.map((part) => {
        const item = itemOf(part);
        if (item.type === 'message') {
          return withItem(part, { content: contentParts(item.content, 'output_text', message.content) });
        }
        const call = calls[next++];
        return call ? callLine(call, part) : null;
      });
      // Calls added since: after the last line, in its shape.
      const last = parts[parts.length - 1] as JsonObject;
      const extra = calls
        .slice(next)
        .map((call) =>
          isRecord(last.payload)
            ? { ...last, payload: itemOf(callLine(call, undefined)) }
            : itemOf(callLine(call, undefined)),
        );
      if (extra.length > 0) out[out.length - 1] = [...[out[out.length - 1] ?? []].flat(), ...extra];
      // Text added to calls that had none: a message line before them.
      if (message.content && !parts.some((p) => itemOf(p).type === 'message')) {
        out[0] = [
          ...freshLines({ role: 'assistant', content: message.content }, parts[0]),
          ...[out[0] ?? []].flat(),
        ];
      }
      return out;
    }
    case 'tool': {
      const part = parts[0] as JsonObject;
      const output = itemOf(part).output;
      const text = Array.isArray(output)
        ? contentParts(output, 'input_text', message.content)
        : isRecord(output)
          ? JSON.stringify({ ...output, output: message.content })
          : message.content;
      return [withItem(part, { call_id: message.tool_call_id, output: text })];
    }
    case 'user':
    case 'system': {
      const part = parts[0] as JsonObject;
      const item = itemOf(part);
      if (item.type === 'message') {
        return [withItem(part, { content: contentParts(item.content, 'input_text', messageText(message)) })];
      }
      // The summary of a `compacted` line.
      return [withItem(part, { message: messageText(message) })];
    }
  }
}

/** Lines for a message that did not come from Codex, in the shape of the line before (`previous`). */
function freshLines(message: ChatMessage, previous: JsonObject | undefined, summary = false): JsonObject[] {
  const wrapped = !previous || isRecord(previous.payload);
  const stamp = previous && typeof previous.timestamp === 'string' ? { timestamp: previous.timestamp } : {};
  const line = (item: JsonObject): JsonObject =>
    wrapped ? { ...stamp, type: 'response_item', payload: item } : item;
  switch (message.role) {
    case 'system':
      return [
        line({
          type: 'message',
          role: 'developer',
          content: [{ type: 'input_text', text: message.content }],
        }),
      ];
    case 'user':
      if (summary) return [{ ...stamp, type: 'compacted', payload: { message: messageText(message) } }];
      return [
        line({
          type: 'message',
          role: 'user',
          content: [{ type: 'input_text', text: messageText(message) }],
        }),
      ];
    case 'assistant': {
      const text = message.content
        ? [
            line({
              type: 'message',
              role: 'assistant',
              content: [{ type: 'output_text', text: message.content }],
            }),
          ]
        : [];
      return [...text, ...(message.tool_calls ?? []).map((call) => line(itemOf(callLine(call, undefined))))];
    }
    case 'tool':
      return [line({ type: 'function_call_output', call_id: message.tool_call_id, output: message.content })];
  }
}

/**
 * A Codex line holds one item's part, but for a developer message read as one system prompt per
 * section (`codex-import.ts`): its sections' parts joined back into the one line, their content
 * parts in order.
 */
const WRITER = {
  ...onePartWriter('codex', codexParts, freshLines),
  join: (parts: readonly JsonObject[]): JsonObject => {
    const [first] = parts as [JsonObject];
    if (parts.length === 1) return first;
    const content = parts.flatMap((part) => {
      const list = itemOf(part).content;
      return Array.isArray(list) ? (list as unknown[]) : [];
    });
    return isRecord(first.payload)
      ? { ...first, payload: { ...first.payload, content } }
      : { ...first, content };
  },
};

/**
 * Writes items back as the Codex rollout they came from: every line of the source in its place (an
 * unchanged import gives back deep-equal lines, line for line); for a changed context see
 * `writeLineSlots`. New items are written as `response_item` lines (bare items in an older rollout),
 * a system message as a developer message, a new summary as a `compacted` line.
 */
export function exportCodexRollout(
  items: readonly ContextItem[],
  document: { slots: readonly LineSlot[] },
): string {
  return writeLineSlots(items, document.slots, WRITER);
}
