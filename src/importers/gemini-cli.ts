/**
 * Gemini CLI's chat recordings (`~/.gemini/tmp/<project>/chats/session-*.json`): `{ sessionId,
 * projectHash, startTime, lastUpdated, messages, ... }`, or, from v0.39, the same as JSONL folded
 * as the CLI folds it — the record's metadata on the first line, then each message (written again
 * in full, under its `id`, when it changes: the last copy counts, in the first one's place),
 * `{ "$set": … }` lines that change the metadata (`messages`: the whole list replaced, on resuming,
 * compressing or rolling back a turn), `{ "$rewindTo": id }` lines that drop that message and the
 * ones after it (all of them when the id is unknown), and the metadata again on resuming.
 *
 * The messages as the CLI sends them to the model:
 * - `user` → a user message (its text parts joined);
 * - `gemini` → an assistant message: `content` its text (thought parts and `thoughts` its
 *   reasoning), `toolCalls` its calls (`args` as JSON arguments); each call's `result` — the
 *   `functionResponse` parts the CLI sent back for it (the one with its id, when the result holds
 *   its siblings' too) — a tool message, an error when the call failed; a call whose `result` is
 *   null got none;
 * - a `user` message of `functionResponse` parts alone (v0.44 on: the same responses recorded again,
 *   as sent), one the CLI never sends (a slash command, `?`, nothing) and the CLI's notices (`info`,
 *   `error`, `warning`) stay in the document and out of the context; the CLI's own context in a
 *   user message (`<session_context>`, `<hook_context>`) is meta.
 * Each message is read as the Claude Code lines it amounts to (`itemsThroughClaudeCode`): a gemini
 * message as an assistant line and a meta user line of its results. `gemini-cli-export.ts` writes
 * them back. With `wholeHistory` (`eval`), a `$set` that replaces the messages is left out, so the
 * whole history is replayed (the CLI's own compression, and a turn it rolled back, stay in).
 * Pure.
 */
import { itemsThroughClaudeCode } from './claude-code-import';
import {
  defaultIdPrefix,
  finishItems,
  type ImportedSession,
  type ImportOptions,
  type SessionDocument,
} from './common';
import { ImportError } from './errors';
import { geminiContentsFromValue, isGeminiContents } from './gemini-contents';
import { partsOf, partsText, responseFailed, responseText } from './gemini-parts';
import { describe, isRecord, jsonIndent, importJsonLines, type JsonLine, type JsonObject } from './json';

export type GeminiDocument = Extract<SessionDocument, { format: 'gemini' }>;

/** The key under which a line made of a message names it: its position, and what the line holds. */
export const MESSAGE = 'durable-compaction:gemini';

/** Where a message is, for errors: its field in a JSON record, its line in JSONL. */
type Where = { field?: string; line?: number };

/** Where a field of a message is: `sub` under the message's place. */
function within(where: Where, sub?: string): Where {
  const field = [where.field, sub].filter(Boolean).join('.');
  return { ...(where.line !== undefined ? { line: where.line } : {}), ...(field ? { field } : {}) };
}

/** Whether a parsed value is a chat recording: an object with a session id, a project hash and messages. */
export function isGeminiRecording(value: unknown): boolean {
  return (
    isRecord(value) &&
    typeof value.sessionId === 'string' &&
    typeof value.projectHash === 'string' &&
    Array.isArray(value.messages)
  );
}

/** Whether a line is a record's metadata: a session id and a project hash. */
function isMetadata(value: unknown): value is JsonObject {
  return isRecord(value) && typeof value.sessionId === 'string' && typeof value.projectHash === 'string';
}

/** Whether JSONL lines are a chat recording: its metadata first (no `type`). */
export function isGeminiLines(lines: readonly JsonLine[]): boolean {
  const first = lines[0]?.value;
  return isMetadata(first) && first.type === undefined;
}

/** The parts of a call's result that answer it: the one with its id, when the parts have ids. */
function ownParts(call: JsonObject): unknown[] {
  const parts = partsOf(call.result);
  const id = (part: unknown): unknown =>
    isRecord(part) && isRecord(part.functionResponse) ? part.functionResponse.id : undefined;
  return parts.some((part) => id(part) !== undefined) ? parts.filter((part) => id(part) === call.id) : parts;
}

/** A call's result as the model got it, or null when it got none. */
export function resultText(call: JsonObject): string | null {
  if (call.result === undefined || call.result === null) return null;
  return ownParts(call)
    .map((part) =>
      typeof part === 'string'
        ? part
        : isRecord(part) && isRecord(part.functionResponse)
          ? responseText(part.functionResponse.response)
          : isRecord(part) && typeof part.text === 'string'
            ? part.text
            : '',
    )
    .join('\n');
}

/** Whether a call failed: its status, or an `error` in its function response. */
function failed(call: JsonObject): boolean {
  return (
    call.status === 'error' ||
    ownParts(call).some(
      (part) =>
        isRecord(part) && isRecord(part.functionResponse) && responseFailed(part.functionResponse.response),
    )
  );
}

/** A message's thoughts as one text: each `subject: description`; and its thought parts. */
export function thoughtText(message: JsonObject): string | null {
  const thoughts = Array.isArray(message.thoughts) ? message.thoughts : [];
  const texts = thoughts.map((t) => {
    if (!isRecord(t)) return '';
    const subject = typeof t.subject === 'string' ? t.subject : '';
    const description = typeof t.description === 'string' ? t.description : '';
    return subject && description ? `${subject}: ${description}` : subject || description;
  });
  const parts = partsText(message.content, true);
  const all = [...texts, ...(parts !== '' ? [parts] : [])];
  return all.length > 0 ? all.join('\n') : null;
}

/** The calls of a gemini message. */
function callsOf(message: JsonObject, where: Where): JsonObject[] {
  const calls = message.toolCalls;
  if (calls === undefined || calls === null) return [];
  if (!Array.isArray(calls))
    throw new ImportError(
      `expected a list of tool calls, got ${describe(calls)}`,
      within(where, 'toolCalls'),
    );
  return calls.map((call, k) => {
    if (!isRecord(call) || typeof call.id !== 'string' || typeof call.name !== 'string') {
      throw new ImportError(
        'expected a tool call with a string id and name',
        within(where, `toolCalls[${k}]`),
      );
    }
    return call;
  });
}

/**
 * User messages the CLI never sends to the model (it leaves them out of the history it resumes): a
 * slash command, `?`, nothing.
 */
const NOT_SENT = /^(?:\/|\?|$)/;
/** The CLI's own context in a user message: the model gets it, the user did not write it. */
const CLI_CONTEXT = /^<(?:session_context|hook_context)>/;

/** Whether a user message is function responses alone: the results of the calls before, recorded again. */
export function isResponses(message: JsonObject): boolean {
  const parts = partsOf(message.content);
  return parts.length > 0 && parts.every((part) => isRecord(part) && isRecord(part.functionResponse));
}

/** The Claude Code lines of the message at `index` (a notice: one line no item comes of). */
export function linesOf(message: unknown, index: number, where: Where): JsonObject[] {
  if (!isRecord(message) || typeof message.type !== 'string') {
    throw new ImportError(`expected a message with a string type, got ${describe(message)}`, within(where));
  }
  const mark = { index };
  const said = message.type === 'user' ? partsText(message.content).trim() : '';
  if (message.type === 'user' && !isResponses(message) && !NOT_SENT.test(said)) {
    const content = partsOf(message.content).flatMap((part) =>
      isRecord(part) && typeof part.text === 'string' && part.thought !== true
        ? [{ type: 'text', text: part.text }]
        : [],
    );
    const meta = CLI_CONTEXT.test(said) ? { isMeta: true } : {};
    return [{ type: 'user', ...meta, [MESSAGE]: mark, message: { role: 'user', content } }];
  }
  if (message.type !== 'gemini') return [{ type: 'gemini-kept', [MESSAGE]: mark }];
  const calls = callsOf(message, where);
  const thinking = thoughtText(message);
  const text = partsText(message.content);
  const blocks: JsonObject[] = [
    ...(thinking !== null ? [{ type: 'thinking', thinking }] : []),
    ...(text !== '' ? [{ type: 'text', text }] : []),
    ...calls.map((call) => ({
      type: 'tool_use',
      id: call.id,
      name: call.name,
      input: isRecord(call.args) ? call.args : {},
    })),
  ];
  const results = calls.flatMap((call) => {
    const output = resultText(call);
    if (output === null) return [];
    return [
      {
        type: 'tool_result',
        tool_use_id: call.id,
        content: output,
        ...(failed(call) ? { is_error: true } : {}),
      },
    ];
  });
  const assistant = { type: 'assistant', [MESSAGE]: mark, message: { role: 'assistant', content: blocks } };
  if (results.length === 0) return [assistant];
  const answers = {
    type: 'user',
    isMeta: true,
    [MESSAGE]: { index, results: true },
    message: { role: 'user', content: results },
  };
  return [assistant, answers];
}

/** The messages of JSONL lines, folded as the CLI folds them (see the module comment), and each one's line. */
function foldLines(
  lines: readonly JsonLine[],
  whole: boolean,
): { top: JsonObject; messages: JsonObject[]; lineOf: number[] } {
  const [head, ...rest] = lines;
  let top: JsonObject = { ...(head?.value as JsonObject) };
  // Message by id, in the order the CLI keeps them (a message written again keeps its place).
  let byId = new Map<string, { value: JsonObject; line: number }>();
  const replace = (list: unknown, line: number): void => {
    byId = new Map();
    if (Array.isArray(list))
      for (const m of list) if (isRecord(m) && typeof m.id === 'string') byId.set(m.id, { value: m, line });
  };
  replace(top.messages, head?.line ?? 1);
  for (const { line, value } of rest) {
    if (!isRecord(value)) throw new ImportError(`expected a record, got ${describe(value)}`, { line });
    if (isRecord(value.$set)) {
      const { messages, ...keys } = value.$set;
      top = { ...top, ...keys };
      if (Array.isArray(messages) && (!whole || byId.size === 0)) replace(messages, line);
    } else if (typeof value.$rewindTo === 'string') {
      const ids = [...byId.keys()];
      const at = ids.indexOf(value.$rewindTo);
      for (const id of at < 0 ? ids : ids.slice(at)) byId.delete(id);
    } else if (typeof value.id === 'string') {
      byId.set(value.id, { value, line });
    } else if (isMetadata(value)) {
      top = { ...top, ...value };
    } else {
      throw new ImportError('expected a message (with an id), a $set or a $rewindTo record', { line });
    }
  }
  const folded = [...byId.values()];
  return { top, messages: folded.map((m) => m.value), lineOf: folded.map((m) => m.line) };
}

/**
 * The session of a record's messages, read as Claude Code lines (`at`: where message i is, for
 * errors; `document`: how the record is written back, but for its lines' slots).
 */
function importRecording(
  messages: readonly unknown[],
  at: (i: number) => Where,
  options: ImportOptions,
  idPrefix: string,
  document: Omit<GeminiDocument, 'format' | 'messages' | 'slots'>,
): ImportedSession {
  const lines: JsonLine[] = messages.flatMap((message, i) =>
    linesOf(message, i, at(i)).map((value) => ({ line: i + 1, value })),
  );
  const { items, slots } = itemsThroughClaudeCode(lines, options, idPrefix, 'gemini');
  return {
    format: 'gemini',
    items: finishItems(items, options.tokenizer),
    document: { format: 'gemini', ...document, messages: [...messages], slots },
  };
}

/** Import from a parsed value: a chat recording, or a list of `Content` (`gemini-contents.ts`). */
export function geminiFromValue(
  value: unknown,
  options: ImportOptions,
  idPrefix: string,
  indent = 2,
): ImportedSession {
  if (isGeminiContents(value)) return geminiContentsFromValue(value, options, idPrefix, indent);
  if (!isGeminiRecording(value)) {
    throw new ImportError(
      'expected a chat recording (an object with sessionId, projectHash and messages) or a list of Content',
    );
  }
  const record = value as JsonObject & { messages: unknown[] };
  return importRecording(record.messages, (i) => ({ field: `messages[${i}]` }), options, idPrefix, {
    layout: 'json',
    top: { ...record, messages: null },
    indent,
  });
}

/** Import from parsed JSONL lines (v0.39 on). */
export function geminiFromLines(
  lines: readonly JsonLine[],
  options: ImportOptions,
  idPrefix: string,
): ImportedSession {
  if (!isGeminiLines(lines)) {
    throw new ImportError('expected the record’s metadata (sessionId, projectHash) on the first line', {
      line: 1,
    });
  }
  const { top, messages, lineOf } = foldLines(lines, options.wholeHistory === true);
  return importRecording(messages, (i) => ({ line: lineOf[i] as number }), options, idPrefix, {
    layout: 'jsonl',
    top: { ...top, messages: null },
    lines: lines.map((l) => l.value),
    indent: 0,
  });
}

/**
 * Imports what Gemini CLI keeps a chat in: a chat recording, JSON or JSONL, or a list of `Content`.
 * @throws ImportError naming the line or field of bad input
 */
export function importGeminiRecording(text: string, options: ImportOptions): ImportedSession {
  const idPrefix = options.idPrefix ?? defaultIdPrefix('gemini', text);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return importJsonLines(text, (lines) => geminiFromLines(lines, options, idPrefix));
  }
  // One metadata line is JSONL too.
  return isMetadata(value) && !Array.isArray(value.messages)
    ? geminiFromLines([{ line: 1, value }], options, idPrefix)
    : geminiFromValue(value, options, idPrefix, jsonIndent(text));
}
