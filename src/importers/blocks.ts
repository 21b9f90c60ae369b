/**
 * Taking the texts out of a list of content blocks and putting them back.
 *
 * Source formats hold text in lists of blocks (OpenAI content parts, pi's text/thinking blocks);
 * the item's message holds it as one string. `takeText` joins the texts and leaves a layout: the
 * blocks with each text replaced by its length, so the text is not stored twice. `putText` splits
 * the (possibly changed) string back into the layout; when it no longer fits (the item was
 * truncated), the whole text goes into the first text block. `takeToolCalls` does the same for
 * tool-call blocks (pi's `toolCall`, Anthropic's `tool_use`). Pure.
 */
import type { ToolCall } from '../context/items';
import { describe, isRecord, type JsonObject } from './json';

export interface TakenText {
  /** The texts joined with the separator, or `null` when there is no block of that type. */
  text: string | null;
  /** The blocks, texts replaced by their lengths. */
  layout: JsonObject[];
}

function isTextBlock(block: JsonObject, type: string, key: string, holds: 'string' | 'number'): boolean {
  return block.type === type && typeof block[key] === holds;
}

/** Joins the `key` field of every block of `type` (string values only) with `separator`. */
export function takeText(
  blocks: readonly JsonObject[],
  type: string,
  key: string,
  separator: string,
): TakenText {
  const texts: string[] = [];
  const layout = blocks.map((block) => {
    if (!isTextBlock(block, type, key, 'string')) return block;
    const text = block[key] as string;
    texts.push(text);
    return { ...block, [key]: text.length };
  });
  return { text: texts.length > 0 ? texts.join(separator) : null, layout };
}

/** Inverse of {@link takeText}: the blocks with `text` put back (see the module comment). */
export function putText(
  layout: readonly JsonObject[],
  type: string,
  key: string,
  text: string | null,
  separator: string,
): JsonObject[] {
  const slots = layout.flatMap((block, i) => (isTextBlock(block, type, key, 'number') ? [i] : []));
  if (slots.length === 0) {
    return text === null || text === '' ? [...layout] : [{ type, [key]: text }, ...layout];
  }
  const lengths = slots.map((i) => (layout[i] as JsonObject)[key] as number);
  const pieces = text === null ? null : split(text, lengths, separator);
  if (pieces) {
    const out = [...layout];
    slots.forEach((slot, n) => {
      out[slot] = { ...(layout[slot] as JsonObject), [key]: pieces[n] };
    });
    return out;
  }
  // The text changed shape: all of it in the first text block, the other text blocks dropped.
  const first = slots[0] as number;
  return layout.flatMap((block, i) => {
    if (i === first) return text === null ? [] : [{ ...block, [key]: text }];
    return slots.includes(i) ? [] : [block];
  });
}

/** Cuts `text` into pieces of the given lengths joined by `separator`, or `null` if it does not fit. */
function split(text: string, lengths: readonly number[], separator: string): string[] | null {
  const total = lengths.reduce((a, b) => a + b, 0) + separator.length * (lengths.length - 1);
  if (total !== text.length) return null;
  const pieces: string[] = [];
  let at = 0;
  for (let i = 0; i < lengths.length; i++) {
    if (i > 0) {
      if (text.slice(at, at + separator.length) !== separator) return null;
      at += separator.length;
    }
    const length = lengths[i] as number;
    pieces.push(text.slice(at, at + length));
    at += length;
  }
  return pieces;
}

/**
 * The tool calls of every block of `type` (arguments under `argumentsKey`, serialized), and the
 * blocks with each call's id, name and arguments replaced by placeholders that keep the keys'
 * order (the values come back from the tool call). A call block whose id or name is no string is
 * passed to `invalid` with what was found and the field (`message.content[i].id`).
 */
export function takeToolCalls(
  blocks: readonly JsonObject[],
  type: string,
  argumentsKey: string,
  invalid: (detail: string, field: string) => never,
): { calls: ToolCall[]; layout: JsonObject[] } {
  const calls: ToolCall[] = [];
  const layout = blocks.map((block, i) => {
    if (block.type !== type) return block;
    const field = `message.content[${i}]`;
    if (typeof block.id !== 'string') invalid(`expected a string, got ${describe(block.id)}`, `${field}.id`);
    if (typeof block.name !== 'string')
      invalid(`expected a string, got ${describe(block.name)}`, `${field}.name`);
    calls.push({
      id: block.id,
      type: 'function',
      function: { name: block.name, arguments: JSON.stringify(block[argumentsKey] ?? {}) },
    });
    return { ...block, id: 0, name: 0, [argumentsKey]: 0 };
  });
  return { calls, layout };
}

/** The ids of the `tool_use` blocks (or what the `tool_result` blocks answer) of a content list. */
export function blockIds(content: unknown, type: 'tool_use' | 'tool_result'): string[] {
  if (!Array.isArray(content)) return [];
  const key = type === 'tool_use' ? 'id' : 'tool_use_id';
  return content.flatMap((block) =>
    isRecord(block) && block.type === type && typeof block[key] === 'string' ? [block[key]] : [],
  );
}
