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
 * the document, so the exporter (`pi-session-export.ts`) writes the file back whole. Pure.
 */
import type { ContentPart, ContextItem, UserMessage } from '../context/items';
import { takeText, takeToolCalls } from './blocks';
import {
  defaultIdPrefix,
  finishItems,
  makeItem,
  rawFields,
  type Converted,
  type ImportedSession,
  type ImportOptions,
  type PiSlot,
} from './common';
import { ImportError } from './errors';
import { describe, isRecord, jsonEqual, omit, importJsonLines, type JsonLine, type JsonObject } from './json';
import { BLOCK_SEPARATOR, entryFromItem } from './pi-session-export';
import { activePath, contextEntries, type PiEntry } from './pi-session-path';

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

/**
 * The blocks of an assistant or tool result message. pi writes a list; a string (as other tools
 * that write pi sessions do; pi's session loader checks no content shape) is one text block. Such an
 * entry does not map back exactly, so it is kept whole for export.
 */
function contentBlocks(value: unknown, entry: PiEntry, field: string): JsonObject[] {
  return typeof value === 'string' ? [{ type: 'text', text: value }] : blockList(value, entry, field);
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
      const blocks = contentBlocks(message.content, entry, 'message.content');
      const text = takeText(blocks, 'text', 'text', BLOCK_SEPARATOR);
      const thinking = takeText(text.layout, 'thinking', 'thinking', BLOCK_SEPARATOR);
      const { calls, layout } = takeToolCalls(thinking.layout, 'toolCall', 'arguments', (detail, field) =>
        fail(detail, entry, field),
      );
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
        contentBlocks(message.content, entry, 'message.content'),
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

/**
 * Refuses lines of objects with a `type` that are no pi session at all — no `session` header and
 * no `message` entry, as the JSONL of an agent not read here (Claude Code's and Codex's are
 * detected before) — naming the types seen, instead of importing nothing.
 */
function refuseOtherAgents(entries: readonly PiEntry[]): void {
  if (entries.length === 0 || entries.some((e) => e.value.type === 'session' || e.value.type === 'message'))
    return;
  const counts = new Map<string, number>();
  for (const { value } of entries)
    counts.set(value.type as string, (counts.get(value.type as string) ?? 0) + 1);
  const seen = [...counts]
    .slice(0, 8)
    .map(([type, n]) => `${JSON.stringify(type).slice(0, 40)} ×${n}`)
    .join(', ');
  const more = counts.size > 8 ? `, and ${counts.size - 8} more` : '';
  throw new ImportError(
    `not a pi session: no line has type "session" or "message" (types seen: ${seen}${more}); ` +
      'the formats read are pi session JSONL, Claude Code session JSONL, Codex rollout JSONL, OpenHands trajectories, ' +
      'OpenAI chat messages (JSON or JSONL) and SWE-agent trajectories',
    { line: (entries[0] as PiEntry).line },
  );
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
  refuseOtherAgents(entries);
  const { entries: context, compaction } = contextEntries(activePath(entries), options.wholeHistory === true);
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
  return importJsonLines(text, (lines) =>
    piFromLines(lines, options, options.idPrefix ?? defaultIdPrefix('pi', text)),
  );
}
