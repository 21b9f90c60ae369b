/**
 * OpenAI Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): lines
 * `{ timestamp, type, payload }`, or, in older rollouts, a header object and then bare items.
 *
 * The items are the history Codex would send next (the Responses API items it recorded):
 * - `response_item` messages: user (`input_text` parts joined) → a user message, meta when Codex
 *   wrote it itself (`<environment_context>`, `<user_instructions>`, `# AGENTS.md instructions`,
 *   `<turn_aborted>`, `<user_shell_command>`); developer and system → SYSTEM_PROMPT items (as the
 *   OpenAI importer reads developer messages); assistant (`output_text` parts) → an assistant
 *   message;
 * - `function_call` (`arguments` as they are), `custom_tool_call` (freeform `input`, e.g.
 *   `apply_patch`, as `{"input": …}`) and `local_shell_call` (its `action`, as `local_shell`) → tool
 *   calls of the assistant message before them (consecutive calls, with the message that opens
 *   them, are one assistant message, as the chat API wants them);
 * - `function_call_output` / `custom_tool_call_output` → tool messages (`call_id` →
 *   `tool_call_id`); an output that is the JSON `{ output, metadata: { exit_code } }` is read as its
 *   `output`, and a non-zero exit code (there, or in a leading `Exit code: N` line) is marked as an
 *   error for the open errors;
 * - after a `compacted` line (Codex's own compaction), its summary as a COMPACTION_SUMMARY, then
 *   what came after; with `wholeHistory` (`eval`) every item, the compactions left out;
 * - an `event_msg` `thread_rolled_back` (the user undid the last `num_turns` turns) drops those
 *   turns, from the user's message on, with the context updates just before it, as Codex drops them
 *   from the history it sends next (in `eval` too: no later call saw them); their lines stay in the
 *   document.
 * Left out of the context and kept as they are in the document, so the exporter
 * (`codex-export.ts`) writes the file back whole: `session_meta` (its base instructions are the
 * API's `instructions`, not history), `turn_context`, `event_msg` (the UI's copy of the same
 * turns), `reasoning` (encrypted, never sent back as text), the older header and state lines,
 * web searches, ghost snapshots and unknown types. Pure.
 */
import type { ToolCall } from '../context/items';
import { takeText } from './blocks';
import { codexParts, TEXT_SEPARATOR } from './codex-export';
import {
  defaultIdPrefix,
  finishItems,
  itemsOfLines,
  type Converted,
  type ImportedSession,
  type ImportOptions,
} from './common';
import { ImportError } from './errors';
import { describe, isRecord, jsonEqual, importJsonLines, type JsonLine, type JsonObject } from './json';

/** Payload types of the Responses API items a rollout records. */
export const RESPONSE_ITEM_TYPES = new Set([
  'message',
  'reasoning',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'local_shell_call',
  'web_search_call',
  'ghost_snapshot',
  'compaction',
  'compaction_summary',
]);
/** Line types of the rollouts that wrap items in `{ timestamp, type, payload }`. */
export const ROLLOUT_LINE_TYPES = new Set([
  'session_meta',
  'response_item',
  'event_msg',
  'turn_context',
  'compacted',
]);
const CALL_TYPES = new Set(['function_call', 'custom_tool_call', 'local_shell_call']);
const OUTPUT_TYPES = new Set(['function_call_output', 'custom_tool_call_output']);
/** User text that Codex writes into the history itself. */
const AGENT_WRITTEN =
  /^\s*(<environment_context>|<user_instructions>|# AGENTS\.md instructions|<turn_aborted>|<user_shell_command>)/;

interface CodexLine {
  index: number;
  line: number;
  value: JsonObject;
  /** The Responses API item the line holds, if any (the payload, or the bare line). */
  item: JsonObject | null;
}

function fail(detail: string, line: CodexLine, field: string): never {
  throw new ImportError(detail, { line: line.line, field });
}

/** Where a line's item sits: under `payload`, or the line itself (older rollouts). */
function itemField(line: CodexLine, key: string): string {
  return line.item === line.value ? key : `payload.${key}`;
}

function readLine({ line, value }: JsonLine, index: number): CodexLine {
  if (!isRecord(value))
    throw new ImportError(`expected a rollout line object, got ${describe(value)}`, { line });
  if (value.type === 'response_item') {
    if (!isRecord(value.payload) || typeof value.payload.type !== 'string') {
      const got = isRecord(value.payload) ? describe(value.payload.type) : describe(value.payload);
      throw new ImportError(`expected a response item with a string type, got ${got}`, {
        line,
        field: isRecord(value.payload) ? 'payload.type' : 'payload',
      });
    }
    return { index, line, value, item: value.payload };
  }
  const bare = typeof value.type === 'string' && RESPONSE_ITEM_TYPES.has(value.type) && !('payload' in value);
  return { index, line, value, item: bare ? value : null };
}

/**
 * The text of a list of parts of one type (a message's `content`, or another `key` holding one),
 * and their layout (texts replaced by lengths).
 */
function partsText(
  line: CodexLine,
  type: string,
  key = 'content',
): { text: string | null; layout: JsonObject[] } {
  const content = (line.item as JsonObject)[key];
  const field = itemField(line, key);
  if (!Array.isArray(content))
    fail(`expected a list of content parts, got ${describe(content)}`, line, field);
  const parts = content.map((part, i) => {
    if (!isRecord(part) || typeof part.type !== 'string') {
      fail(`expected a content part with a string type, got ${describe(part)}`, line, `${field}[${i}]`);
    }
    return part;
  });
  return takeText(parts, type, 'text', TEXT_SEPARATOR);
}

/** The line with its item's keys replaced (placeholders keep the keys' order). */
function withItem(line: CodexLine, keys: JsonObject): JsonObject {
  const item = { ...(line.item as JsonObject), ...keys };
  return line.item === line.value ? item : { ...line.value, payload: item };
}

function stringField(line: CodexLine, key: string): string {
  const value = (line.item as JsonObject)[key];
  if (typeof value !== 'string')
    fail(`expected a string, got ${describe(value)}`, line, itemField(line, key));
  return value;
}

/** A call line as a tool call, and its line with the call taken out. */
function readCall(line: CodexLine): { call: ToolCall; part: JsonObject } {
  const item = line.item as JsonObject;
  switch (item.type) {
    case 'function_call':
      return {
        call: {
          id: stringField(line, 'call_id'),
          type: 'function',
          function: { name: stringField(line, 'name'), arguments: stringField(line, 'arguments') },
        },
        part: withItem(line, { name: 0, arguments: 0, call_id: 0 }),
      };
    case 'custom_tool_call':
      return {
        call: {
          id: stringField(line, 'call_id'),
          type: 'function',
          function: {
            name: stringField(line, 'name'),
            arguments: JSON.stringify({ input: stringField(line, 'input') }),
          },
        },
        part: withItem(line, { name: 0, input: 0, call_id: 0 }),
      };
    default: {
      const id = typeof item.call_id === 'string' ? item.call_id : stringField(line, 'id');
      if (!isRecord(item.action)) {
        fail(`expected an object, got ${describe(item.action)}`, line, itemField(line, 'action'));
      }
      return {
        call: {
          id,
          type: 'function',
          function: { name: 'local_shell', arguments: JSON.stringify(item.action) },
        },
        part: withItem(
          line,
          typeof item.call_id === 'string' ? { call_id: 0, action: 0 } : { id: 0, action: 0 },
        ),
      };
    }
  }
}

/** Whether an output starts by saying its command exited with a non-zero code. */
function failedExit(text: string): boolean {
  const code = /^(?:Exit code:|Process exited with code) (-?\d+)/.exec(text);
  return code !== null && Number(code[1]) !== 0;
}

/** A tool output's text, whether it failed, and its line with the text taken out. */
function readOutput(line: CodexLine): { text: string; isError: boolean; part: JsonObject } {
  const output = (line.item as JsonObject).output;
  if (Array.isArray(output)) {
    // Newer rollouts (a `wait` call's output): a list of `input_text` parts, read as their text.
    const { text, layout } = partsText(line, 'input_text', 'output');
    return {
      text: text ?? '',
      isError: failedExit(text ?? ''),
      part: withItem(line, { call_id: 0, output: layout }),
    };
  }
  if (typeof output !== 'string') {
    fail(
      `expected a string or a list of content parts, got ${describe(output)}`,
      line,
      itemField(line, 'output'),
    );
  }
  let wrapped: unknown;
  try {
    wrapped = output.trimStart().startsWith('{') ? JSON.parse(output) : undefined;
  } catch {
    wrapped = undefined;
  }
  if (isRecord(wrapped) && typeof wrapped.output === 'string' && JSON.stringify(wrapped) === output) {
    const code = isRecord(wrapped.metadata) ? wrapped.metadata.exit_code : undefined;
    return {
      text: wrapped.output,
      isError: typeof code === 'number' && code !== 0,
      part: withItem(line, { call_id: 0, output: { ...wrapped, output: 0 } }),
    };
  }
  return {
    text: output,
    isError: failedExit(output),
    part: withItem(line, { call_id: 0, output: 0 }),
  };
}

/** The summary text of a `compacted` line: its message, else the messages of its replacement history. */
function compactedText(line: CodexLine): string {
  const payload = line.value.payload;
  if (!isRecord(payload)) return '';
  if (typeof payload.message === 'string' && payload.message.trim()) return payload.message;
  if (!Array.isArray(payload.replacement_history)) return '';
  return payload.replacement_history
    .flatMap((item) =>
      isRecord(item) && item.type === 'message' && Array.isArray(item.content)
        ? item.content.flatMap((p) => (isRecord(p) && typeof p.text === 'string' ? [p.text] : []))
        : [],
    )
    .join('\n\n');
}

/** The turns a `thread_rolled_back` event undoes, or null when the line is none. */
function rolledBackTurns(line: CodexLine): number | null {
  const payload = line.value.payload;
  if (line.value.type !== 'event_msg' || !isRecord(payload) || payload.type !== 'thread_rolled_back')
    return null;
  const turns = payload.num_turns;
  if (typeof turns !== 'number' || !Number.isInteger(turns) || turns < 0)
    fail(`expected a whole number of turns, got ${describe(turns)}`, line, 'payload.num_turns');
  return turns;
}

/** A message the user wrote (a turn starts there), not one Codex wrote into the history. */
function startsTurn(item: Pending): boolean {
  return item.converted.type === 'USER_MESSAGE' && !item.isMeta;
}

/**
 * Drops the last `turns` turns of `pending` (all of them when it holds fewer, keeping what came
 * before the first), each from the user's message on, with the context updates Codex wrote just
 * before the first dropped one (environment, permissions), as Codex's rollback does.
 */
function rollBack(pending: Pending[], turns: number): void {
  const starts: number[] = [];
  pending.forEach((item, i) => {
    if (startsTurn(item)) starts.push(i);
  });
  const first = starts[0];
  if (turns === 0 || first === undefined) return;
  let cut = turns >= starts.length ? first : (starts[starts.length - turns] as number);
  const isUpdate = (item: Pending): boolean =>
    item.isMeta && (item.converted.type === 'USER_MESSAGE' || item.converted.type === 'SYSTEM_PROMPT');
  while (cut > first && isUpdate(pending[cut - 1] as Pending)) cut--;
  pending.length = cut;
}

interface Pending {
  converted: Converted;
  isMeta: boolean;
  parts: JsonObject[];
  lines: CodexLine[];
  isError?: boolean;
  /** Kept whole (a shape the parts cannot rebuild). */
  raw?: boolean;
  /** One section of a developer message split by {@link sectionItems}: its part checked there. */
  section?: boolean;
}

/** A text made of one tagged section and nothing else (`<permissions instructions>…</…>`). */
const ONE_SECTION = /^\s*<([A-Za-z][\w.:-]*(?: [A-Za-z][\w.:-]*){0,4})>[\s\S]*<\/\1>\s*$/;

/**
 * A developer (or system) message whose `input_text` parts are each one tagged section (Codex
 * 0.142 on writes its settings as one such bundle: permissions, collaboration mode, apps, plugins,
 * skills) as a system prompt per section, so that a section a later message sends again is
 * conversation and the others stay header (`segments.ts`); null for any other message, or when a
 * part would not be written back as it was. Each item's part is the line with its one part.
 */
function sectionItems(line: CodexLine): Pending[] | null {
  const content = (line.item as JsonObject).content;
  if (!Array.isArray(content) || content.length < 2) return null;
  const out: Pending[] = [];
  for (const part of content) {
    if (!isRecord(part) || part.type !== 'input_text' || typeof part.text !== 'string') return null;
    if (!ONE_SECTION.test(part.text)) return null;
    const { text, layout } = takeText([part], 'input_text', 'text', TEXT_SEPARATOR);
    if (text !== part.text) return null;
    const message = { role: 'system' as const, content: text };
    const written = withItem(line, { content: layout });
    const back = codexParts(message, { parts: [written] })[0];
    if (!jsonEqual(back, withItem(line, { content: [part] }))) return null;
    out.push({
      converted: { type: 'SYSTEM_PROMPT', message },
      isMeta: true,
      parts: [written],
      lines: [line],
      section: true,
    });
  }
  return out;
}

/** Import from parsed JSONL lines. */
export function codexFromLines(
  jsonLines: readonly JsonLine[],
  options: ImportOptions,
  idPrefix: string,
): ImportedSession {
  const lines = jsonLines.map(readLine);
  const whole = options.wholeHistory === true;
  let start = 0;
  if (!whole) {
    for (let i = lines.length - 1; i >= 0 && start === 0; i--)
      if ((lines[i] as CodexLine).value.type === 'compacted') start = i;
  }
  const pending: Pending[] = [];
  /** The assistant message that the next tool calls join, while no other message came. */
  let open: Pending | undefined;
  for (const line of lines.slice(start)) {
    const undone = rolledBackTurns(line);
    if (undone !== null) {
      rollBack(pending, undone);
      open = undefined;
      continue;
    }
    if (line.value.type === 'compacted') {
      if (whole) continue;
      const text = compactedText(line);
      if (!text) continue;
      const simple = isRecord(line.value.payload) && line.value.payload.message === text;
      pending.push({
        converted: { type: 'COMPACTION_SUMMARY', message: { role: 'user', content: text } },
        isMeta: true,
        parts: [
          simple ? { ...line.value, payload: { ...(line.value.payload as JsonObject), message: 0 } } : {},
        ],
        lines: [line],
        ...(simple ? {} : { raw: true }),
      });
      continue;
    }
    const item = line.item;
    if (!item) continue;
    const type = item.type as string;
    if (type === 'message') {
      const role = stringField(line, 'role');
      open = undefined;
      if (role === 'assistant') {
        const { text, layout } = partsText(line, 'output_text');
        open = {
          converted: { type: 'ASSISTANT_MESSAGE', message: { role: 'assistant', content: text } },
          isMeta: false,
          parts: [withItem(line, { content: layout })],
          lines: [line],
        };
        pending.push(open);
      } else if (role === 'user' || role === 'developer' || role === 'system') {
        const sections = role === 'user' ? null : sectionItems(line);
        if (sections) {
          pending.push(...sections);
          continue;
        }
        const { text, layout } = partsText(line, 'input_text');
        const content = text ?? '';
        pending.push({
          converted:
            role === 'user'
              ? { type: 'USER_MESSAGE', message: { role: 'user', content } }
              : { type: 'SYSTEM_PROMPT', message: { role: 'system', content } },
          isMeta: role !== 'user' || AGENT_WRITTEN.test(content),
          parts: [withItem(line, { content: layout })],
          lines: [line],
        });
      } else {
        fail(
          `expected one of user, assistant, developer, system, got ${JSON.stringify(role)}`,
          line,
          itemField(line, 'role'),
        );
      }
    } else if (CALL_TYPES.has(type)) {
      const { call, part } = readCall(line);
      if (!open) {
        open = {
          converted: { type: 'ASSISTANT_MESSAGE', message: { role: 'assistant', content: null } },
          isMeta: false,
          parts: [],
          lines: [],
        };
        pending.push(open);
      }
      const message = open.converted.message as Extract<Converted, { type: 'ASSISTANT_MESSAGE' }>['message'];
      message.tool_calls = [...(message.tool_calls ?? []), call];
      open.parts.push(part);
      open.lines.push(line);
    } else if (OUTPUT_TYPES.has(type)) {
      open = undefined;
      const { text, isError, part } = readOutput(line);
      pending.push({
        converted: {
          type: 'TOOL_RESULT',
          message: { role: 'tool', content: text, tool_call_id: stringField(line, 'call_id') },
        },
        isMeta: false,
        parts: [part],
        lines: [line],
        ...(isError ? { isError } : {}),
      });
    }
  }
  // The mapping covers the shapes Codex writes; lines it does not rebuild are kept whole.
  const { items, slots } = itemsOfLines(
    pending,
    (item) => item.lines,
    lines,
    { format: 'codex', idPrefix },
    (item, parts) => (item.section ? null : item.raw ? [] : codexParts(item.converted.message, parts)),
  );
  return {
    format: 'codex',
    items: finishItems(items, options.tokenizer),
    document: { format: 'codex', slots },
  };
}

/**
 * Imports a Codex CLI rollout (JSONL).
 * @throws ImportError naming the line and, for a bad item, the field
 */
export function importCodexRollout(text: string, options: ImportOptions): ImportedSession {
  return importJsonLines(text, (lines) =>
    codexFromLines(lines, options, options.idPrefix ?? defaultIdPrefix('codex', text)),
  );
}
