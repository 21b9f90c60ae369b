/**
 * Claude Code sessions written back (the mapping is described in `claude-code-import.ts`): every
 * line of the source in its place, items rebuilt from their parts (`line-slots.ts`). Pure.
 */
import type { ChatMessage, ContextItem, SessionFormat } from '../context/items';
import { putText } from './blocks';
import type { ClaudePart } from './claude-code-import';
import { unchangedRaw } from './common';
import { contentHash, isRecord, omit, type JsonObject } from './json';
import { slotValues, writeLineSlots, type LineSlot, type LineWriter } from './line-slots';

/** Separator of a message's text blocks (and of its thinking blocks) once joined into one string. */
export const TEXT_SEPARATOR = '\n';

function parseInput(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text; // changed since import (e.g. cut to a preview): kept as text
  }
}

/** The part's line with `content` as its message's content (a fragment when the part opens no line). */
function fill(part: ClaudePart | undefined, content: unknown): JsonObject {
  const line = part?.line;
  if (!line) return { message: { content } };
  const message = isRecord(line.message) ? line.message : {};
  return { ...line, message: { ...message, content } };
}

function toolUse(call: NonNullable<Extract<ChatMessage, { role: 'assistant' }>['tool_calls']>[number]) {
  return {
    type: 'tool_use',
    id: call.id,
    name: call.function.name,
    input: parseInput(call.function.arguments),
  };
}

/** An assistant message's lines: its text, thinking and calls put back into the parts' blocks. */
function assistantParts(
  message: Extract<ChatMessage, { role: 'assistant' }>,
  parts: readonly ClaudePart[],
): (JsonObject | null)[] {
  const counts = parts.map((p) => p.blocks?.length ?? 0);
  let blocks = putText(
    parts.flatMap((p) => p.blocks ?? []),
    'text',
    'text',
    message.content,
    TEXT_SEPARATOR,
  );
  blocks = putText(blocks, 'thinking', 'thinking', message.reasoning_content ?? null, TEXT_SEPARATOR);
  const calls = message.tool_calls ?? [];
  let next = 0;
  let fits = blocks.length === counts.reduce((a, b) => a + b, 0);
  blocks = blocks.flatMap((block) => {
    if (block.type !== 'tool_use') return [block];
    const call = calls[next++];
    if (!call) {
      fits = false;
      return [];
    }
    return [{ ...block, ...toolUse(call), type: block.type }];
  });
  if (next < calls.length) {
    fits = false;
    blocks.push(...calls.slice(next).map(toolUse));
  }
  if (!fits) return parts.map((part, i) => (i === 0 ? fill(part, blocks) : null));
  let at = 0;
  return parts.map((part, i) => {
    const mine = blocks.slice(at, at + (counts[i] as number));
    at += counts[i] as number;
    return mine.length > 0 ? fill(part, mine) : null;
  });
}

/** A tool message's line: its text put back into the `tool_result` block. */
function toolPart(message: Extract<ChatMessage, { role: 'tool' }>, part: ClaudePart | undefined): JsonObject {
  const block = part?.blocks?.[0] ?? { type: 'tool_result' };
  const layout = block.content;
  const content = Array.isArray(layout)
    ? putText(layout as JsonObject[], 'text', 'text', message.content, TEXT_SEPARATOR)
    : layout === undefined && message.content === ''
      ? undefined
      : message.content;
  const out: JsonObject = { ...block, tool_use_id: message.tool_call_id };
  if (content !== undefined) out.content = content;
  return fill(part, [out]);
}

/**
 * Whether an attachment is a message a person typed as a prompt while the agent worked (a
 * `queued_command` in prompt mode, from no other session): the user's own words.
 */
export function isTypedPrompt(attachment: unknown): boolean {
  if (!isRecord(attachment) || attachment.type !== 'queued_command') return false;
  const { commandMode, origin } = attachment;
  return (
    (commandMode === undefined || commandMode === 'prompt') &&
    (!isRecord(origin) || origin.kind === undefined || origin.kind === 'human')
  );
}

/** An attachment line changed as the user line in its place: meta but for a typed prompt. */
function attachmentAsUser(line: JsonObject): JsonObject {
  const typed = isTypedPrompt(line.attachment);
  return {
    ...omit(line, ['attachment']),
    type: 'user',
    ...(typed ? {} : { isMeta: true }),
    message: { role: 'user', content: 0 },
  };
}

/**
 * The lines of a message given its Claude Code side fields (null for a part that is gone), exactly
 * the source lines while the message is unchanged.
 */
export function claudeParts(message: ChatMessage, fields: JsonObject): (JsonObject | null)[] {
  const kept = unchangedRaw(fields, message);
  if (Array.isArray(kept)) return kept as JsonObject[];
  let parts = Array.isArray(fields.parts) ? (fields.parts as ClaudePart[]) : [];
  if (parts.length === 0 && Array.isArray(fields.raw)) {
    // A line kept whole that changed: its envelope with the new content (an attachment's, a user line).
    parts = (fields.raw as unknown[]).filter(isRecord).map((line, i) => ({
      line:
        i !== 0
          ? null
          : line.type === 'attachment'
            ? attachmentAsUser(line)
            : { ...line, message: { ...(isRecord(line.message) ? line.message : {}), content: 0 } },
      blocks: null,
    }));
  }
  switch (message.role) {
    case 'assistant':
      if (parts.every((p) => p.blocks !== null)) return assistantParts(message, parts);
      return parts.map((part, i) =>
        i === 0 ? fill(part, (freshLine(message).message as JsonObject).content) : null,
      );
    case 'tool':
      return [toolPart(message, parts[0]), ...parts.slice(1).map(() => null)];
    case 'user':
    case 'system':
      return [fill(parts[0], message.content), ...parts.slice(1).map(() => null)];
  }
}

/** A line for a message that did not come from Claude Code. */
function freshLine(message: ChatMessage, summary = false): JsonObject {
  switch (message.role) {
    case 'system':
      return { type: 'user', isMeta: true, message: { role: 'user', content: message.content } };
    case 'user':
      return {
        type: 'user',
        ...(summary ? { isCompactSummary: true } : {}),
        message: { role: 'user', content: message.content },
      };
    case 'assistant': {
      const text = message.content ? [{ type: 'text', text: message.content }] : [];
      return {
        type: 'assistant',
        message: {
          role: 'assistant',
          content: [...text, ...(message.tool_calls ?? []).map(toolUse)],
        },
      };
    }
    case 'tool':
      return {
        type: 'user',
        message: {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: message.tool_call_id, content: message.content }],
        },
      };
  }
}

/**
 * Joins the parts of one line: the opening part's line (else the line's `shell`, when the item
 * that opened it is gone), every part's blocks in order.
 */
function joinParts(parts: readonly JsonObject[], shell?: JsonObject): JsonObject {
  const opening = parts.find((p) => typeof p.type === 'string') ?? shell ?? { type: 'user' };
  const content = parts.flatMap((part) => {
    const value = isRecord(part.message) ? part.message.content : undefined;
    if (Array.isArray(value)) return value as unknown[];
    return typeof value === 'string' ? [{ type: 'text', text: value }] : [];
  });
  const message = isRecord(opening.message) ? opening.message : { role: 'user' };
  return { ...opening, message: { ...message, content } };
}

const WRITER: LineWriter = {
  format: 'claude-code',
  partsOf: (item: ContextItem) =>
    item.type === 'TOOL_DEFINITIONS'
      ? []
      : claudeParts(item.message, item.origin?.format === 'claude-code' ? item.origin.fields : {}),
  join: joinParts,
  fresh(item, previous) {
    if (item.type === 'TOOL_DEFINITIONS') return [];
    const line = freshLine(item.message, item.type === 'COMPACTION_SUMMARY');
    if (!previous || typeof previous.uuid !== 'string') return [line];
    // Linked after the line before, as Claude Code links its lines, with an id derived from the item's.
    const uuid = contentHash(`${previous.uuid}/${item.id}`);
    return [
      {
        parentUuid: previous.uuid,
        isSidechain: false,
        ...(typeof previous.sessionId === 'string' ? { sessionId: previous.sessionId } : {}),
        ...line,
        uuid,
        ...(typeof previous.timestamp === 'string' ? { timestamp: previous.timestamp } : {}),
      },
    ];
  },
  linkKeys: { id: 'uuid', parent: 'parentUuid' },
};

/**
 * The Claude Code lines of items read through them (`itemsThroughClaudeCode`) as `format`'s, as
 * values: what {@link exportClaudeCodeSession} would write, for that format to turn back into its
 * own entries.
 */
export function claudeCodeLinesOf(
  items: readonly ContextItem[],
  slots: readonly LineSlot[],
  format: SessionFormat,
): JsonObject[] {
  const own = items.map((item) =>
    item.origin?.format === format
      ? { ...item, origin: { ...item.origin, format: 'claude-code' as const } }
      : item,
  );
  return slotValues(own, slots, WRITER).filter(isRecord);
}

/**
 * Writes items back as the Claude Code session they came from: every line of the source in its
 * place (an unchanged import gives back deep-equal lines, line for line); for a changed context see
 * `writeLineSlots`. New lines are linked into the chain (`uuid`, `parentUuid`), so the session reads
 * back the same; a system message is written as a meta user line (these files hold no system prompt).
 */
export function exportClaudeCodeSession(
  items: readonly ContextItem[],
  document: { slots: readonly LineSlot[] },
): string {
  return writeLineSlots(items, document.slots, WRITER);
}
