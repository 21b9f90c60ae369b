/**
 * Gemini CLI's chat recordings (`~/.gemini/tmp/<project>/chats/session-*.json`): `{ sessionId,
 * projectHash, startTime, lastUpdated, messages, ... }`, or, from v0.39, the same as JSONL — the
 * record's metadata on the first line, then each message (written again in full, under its `id`,
 * when it changes), `{ "$set": … }` lines that change the metadata (`messages`: the whole list
 * replaced) and `{ "$rewindTo": id }` lines that drop that message and the ones after it.
 *
 * The messages as the CLI sends them to the model:
 * - `user` → a user message (its text parts joined);
 * - `gemini` → an assistant message: `content` its text, `thoughts` (`subject`, `description`) its
 *   reasoning, `toolCalls` its calls (`args` as JSON arguments); each call's `result` (the
 *   `functionResponse` parts the CLI sent back: their `output`, or `error`) → a tool message, an
 *   error when the call failed; a call without a result has none;
 * - `info`, `error`, `warning` (the CLI's own notices, never sent to the model) are left out of the
 *   context and kept in the document.
 * Each message is read as the Claude Code lines it amounts to (`claude-code-import.ts`): a gemini
 * message as an assistant line and a meta user line of its results. Written back the same way: a
 * message whose items are unchanged is written as it was (an unchanged import gives back a
 * deep-equal record; JSONL line for line), a changed one rebuilt from what it was and its items,
 * a new one as a message of its kind. With `wholeHistory` (`eval`), a `$set` that replaces the
 * messages (the CLI's own compression) is left out, so the whole history is replayed. Pure.
 */
import type { ContextItem } from '../context/items';
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
import {
  exportGeminiContents,
  geminiContentsFromValue,
  isGeminiContents,
  responseText,
} from './gemini-contents';
import {
  describe,
  isRecord,
  jsonEqual,
  jsonIndent,
  jsonLines,
  parseJsonLines,
  type JsonLine,
  type JsonObject,
} from './json';

type GeminiDocument = Extract<SessionDocument, { format: 'gemini' }>;

/** The key under which a line made of a message names it: its position, and whether it holds results. */
const MESSAGE = 'durable-compaction:gemini';
/** Separator of a message's text parts, and of its thoughts, once joined. */
const SEPARATOR = '\n';

/** Whether a parsed value is a chat recording: an object with a session id, a project hash and messages. */
export function isGeminiRecording(value: unknown): boolean {
  return (
    isRecord(value) &&
    typeof value.sessionId === 'string' &&
    typeof value.projectHash === 'string' &&
    Array.isArray(value.messages)
  );
}

/** Whether JSONL lines are a chat recording: its metadata (a session id and project hash, no `type`) first. */
export function isGeminiLines(lines: readonly JsonLine[]): boolean {
  const first = lines[0]?.value;
  return (
    isRecord(first) &&
    typeof first.sessionId === 'string' &&
    typeof first.projectHash === 'string' &&
    first.type === undefined
  );
}

/** The texts of a content (`PartListUnion`): a string, a part or a list of them; text parts only. */
function partTexts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  const parts = Array.isArray(content) ? content : [content];
  return parts.flatMap((part) =>
    typeof part === 'string' ? [part] : isRecord(part) && typeof part.text === 'string' ? [part.text] : [],
  );
}

/** A call's result as the model got it (its function responses and text parts), or null when it has none. */
function resultText(call: JsonObject): string | null {
  const { result } = call;
  if (result === undefined || result === null) {
    return typeof call.resultDisplay === 'string' ? call.resultDisplay : null;
  }
  const parts = Array.isArray(result) ? result : [result];
  const texts = parts.map((part) =>
    typeof part === 'string'
      ? part
      : isRecord(part) && isRecord(part.functionResponse)
        ? responseText(part.functionResponse.response)
        : isRecord(part) && typeof part.text === 'string'
          ? part.text
          : '',
  );
  return texts.join(SEPARATOR);
}

/** Whether a call failed: its status, or an `error` in a function response. */
function failed(call: JsonObject): boolean {
  if (call.status === 'error') return true;
  const parts = Array.isArray(call.result) ? call.result : [call.result];
  return parts.some(
    (part) =>
      isRecord(part) &&
      isRecord(part.functionResponse) &&
      isRecord(part.functionResponse.response) &&
      part.functionResponse.response.error !== undefined,
  );
}

/** A message's thoughts as one text: each `subject: description`. */
function thoughtText(thoughts: unknown): string | null {
  if (!Array.isArray(thoughts) || thoughts.length === 0) return null;
  return thoughts
    .map((t) => {
      if (!isRecord(t)) return '';
      const subject = typeof t.subject === 'string' ? t.subject : '';
      const description = typeof t.description === 'string' ? t.description : '';
      return subject && description ? `${subject}: ${description}` : subject || description;
    })
    .join(SEPARATOR);
}

/** The calls of a gemini message (`field`: where they are, for errors). */
function callsOf(message: JsonObject, field: string): JsonObject[] {
  const calls = message.toolCalls;
  if (calls === undefined || calls === null) return [];
  if (!Array.isArray(calls))
    throw new ImportError(`expected a list of tool calls, got ${describe(calls)}`, { field });
  return calls.map((call, k) => {
    if (!isRecord(call) || typeof call.id !== 'string' || typeof call.name !== 'string') {
      throw new ImportError('expected a tool call with a string id and name', { field: `${field}[${k}]` });
    }
    return call;
  });
}

/** The Claude Code lines of a message at `index` (`field`: its place, for errors). */
function linesOf(message: unknown, index: number, field: string): JsonObject[] {
  if (!isRecord(message) || typeof message.type !== 'string') {
    throw new ImportError(`expected a message with a string type, got ${describe(message)}`, { field });
  }
  const mark = { index };
  if (message.type === 'user') {
    const content = partTexts(message.content).map((text) => ({ type: 'text', text }));
    return [{ type: 'user', [MESSAGE]: mark, message: { role: 'user', content } }];
  }
  if (message.type !== 'gemini') return [{ type: 'gemini-notice', [MESSAGE]: mark }];
  const calls = callsOf(message, `${field}.toolCalls`);
  const thinking = thoughtText(message.thoughts);
  const text = partTexts(message.content).join(SEPARATOR);
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
  return [
    { type: 'assistant', [MESSAGE]: mark, message: { role: 'assistant', content: blocks } },
    ...(results.length > 0
      ? [
          {
            type: 'user',
            isMeta: true,
            [MESSAGE]: { index, results: true },
            message: { role: 'user', content: results },
          },
        ]
      : []),
  ];
}

/** The messages of JSONL lines, folded as the CLI reads them (see the module comment). */
function foldLines(lines: readonly JsonLine[], whole: boolean): { top: JsonObject; messages: unknown[] } {
  const [head, ...rest] = lines;
  let top: JsonObject = { ...(head?.value as JsonObject) };
  let messages: JsonObject[] = Array.isArray(top.messages) ? top.messages.filter(isRecord) : [];
  for (const { line, value } of rest) {
    if (!isRecord(value)) throw new ImportError(`expected a record, got ${describe(value)}`, { line });
    if (isRecord(value.$set)) {
      const { messages: replaced, ...keys } = value.$set;
      top = { ...top, ...keys };
      // The CLI's own compression replaces the list: the whole history keeps what it had.
      if (Array.isArray(replaced) && (!whole || messages.length === 0)) messages = replaced.filter(isRecord);
    } else if (typeof value.$rewindTo === 'string') {
      const at = messages.findIndex((m) => m.id === value.$rewindTo);
      if (at >= 0) messages = messages.slice(0, at);
    } else if (typeof value.id === 'string') {
      const at = messages.findIndex((m) => m.id === value.id);
      if (at >= 0) messages[at] = value;
      else messages.push(value);
    } else {
      throw new ImportError('expected a message (with an id), a $set or a $rewindTo record', { line });
    }
  }
  return { top, messages };
}

/** Items of a record's messages, read as Claude Code lines. */
function importRecording(
  messages: readonly unknown[],
  options: ImportOptions,
  idPrefix: string,
): { items: ContextItem[]; slots: GeminiDocument['slots'] } {
  const lines: JsonLine[] = messages.flatMap((message, i) =>
    linesOf(message, i, `messages[${i}]`).map((value) => ({ line: i + 1, value })),
  );
  const read = claudeCodeFromLines(lines, { ...options, wholeHistory: true }, idPrefix, false);
  if (read.document.format !== 'claude-code') throw new Error('unreachable: a Claude Code document');
  const items = read.items.map((item) =>
    item.origin ? { ...item, origin: { ...item.origin, format: 'gemini' as const } } : item,
  );
  return { items, slots: read.document.slots };
}

/** Import from a parsed record (a JSON file). */
export function geminiFromValue(
  value: unknown,
  options: ImportOptions,
  idPrefix: string,
  indent = 2,
): ImportedSession {
  if (!isGeminiRecording(value)) {
    throw new ImportError('expected a chat recording: an object with sessionId, projectHash and messages');
  }
  const record = value as JsonObject & { messages: unknown[] };
  const { items, slots } = importRecording(record.messages, options, idPrefix);
  return {
    format: 'gemini',
    items: finishItems(items, options.tokenizer),
    document: {
      format: 'gemini',
      layout: 'json',
      top: { ...record, messages: null },
      messages: record.messages,
      indent,
      slots,
    },
  };
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
  const { top, messages } = foldLines(lines, options.wholeHistory === true);
  const { items, slots } = importRecording(messages, options, idPrefix);
  return {
    format: 'gemini',
    items: finishItems(items, options.tokenizer),
    document: {
      format: 'gemini',
      layout: 'jsonl',
      top: { ...top, messages: null },
      messages,
      lines: lines.map((l) => l.value),
      indent: 0,
      slots,
    },
  };
}

/** Imports a chat recording, JSON or JSONL, or a list of `Content` (`gemini-contents.ts`). @throws ImportError naming the line or field of bad input */
export function importGeminiRecording(text: string, options: ImportOptions): ImportedSession {
  const idPrefix = options.idPrefix ?? defaultIdPrefix('gemini', text);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return geminiFromLines(parseJsonLines(text), options, idPrefix);
  }
  return isGeminiContents(value)
    ? geminiContentsFromValue(value, options, idPrefix, jsonIndent(text))
    : geminiFromValue(value, options, idPrefix, jsonIndent(text));
}

// ---- writing back ----

/** The blocks of a line's message (an empty list when it has none). */
function blocksOf(line: JsonObject | undefined): JsonObject[] {
  const message = line && isRecord(line.message) ? line.message : null;
  return message && Array.isArray(message.content) ? message.content.filter(isRecord) : [];
}

/** A content written in the shape the original had: a string, or text parts. */
function contentLike(original: unknown, text: string): unknown {
  if (typeof original === 'string' || original === undefined) return text;
  return text === '' ? [] : [{ text }];
}

/** A gemini message rebuilt from what it was and its lines (its calls, their results, its text). */
function rebuiltGemini(
  was: JsonObject,
  assistant: JsonObject | undefined,
  results: JsonObject | undefined,
): JsonObject {
  const blocks = blocksOf(assistant);
  const text = blocks
    .filter((b) => b.type === 'text')
    .map((b) => String(b.text ?? ''))
    .join(SEPARATOR);
  const thinking = blocks.find((b) => b.type === 'thinking');
  const calls = Array.isArray(was.toolCalls) ? was.toolCalls.filter(isRecord) : [];
  const answers = new Map(blocksOf(results).map((b) => [b.tool_use_id, b]));
  const toolCalls = blocks
    .filter((b) => b.type === 'tool_use')
    .map((use) => {
      const call = calls.find((c) => c.id === use.id) ?? { id: use.id, name: use.name, status: 'success' };
      const answer = answers.get(use.id);
      const output = answer
        ? typeof answer.content === 'string'
          ? answer.content
          : blocksText(answer.content)
        : null;
      const result =
        output === null
          ? null
          : output === resultText(call)
            ? call.result
            : [{ functionResponse: { id: use.id, name: use.name, response: { output } } }];
      return { ...call, args: isRecord(use.input) ? use.input : {}, result };
    });
  const thoughts =
    thinking && thinking.thinking !== thoughtText(was.thoughts)
      ? [{ subject: '', description: String(thinking.thinking ?? '') }]
      : was.thoughts;
  return {
    ...was,
    content: contentLike(was.content, text),
    ...(thoughts !== undefined ? { thoughts: thinking ? thoughts : [] } : {}),
    ...(toolCalls.length > 0 || was.toolCalls !== undefined ? { toolCalls } : {}),
  };
}

function blocksText(content: unknown): string {
  return Array.isArray(content)
    ? content.map((b) => (isRecord(b) && typeof b.text === 'string' ? b.text : '')).join('')
    : '';
}

/** A message for lines that did not come from the record (`previous`: the message before, for its time). */
function freshMessage(line: JsonObject, previous: JsonObject | undefined, n: number): JsonObject {
  const stamp =
    previous && typeof previous.timestamp === 'string' ? previous.timestamp : new Date(0).toISOString();
  const base = { id: `durable-compaction-${n}`, timestamp: stamp };
  const blocks = blocksOf(line);
  if (line.type === 'assistant') {
    const text = blocks
      .filter((b) => b.type === 'text')
      .map((b) => String(b.text ?? ''))
      .join(SEPARATOR);
    const calls = blocks
      .filter((b) => b.type === 'tool_use')
      .map((b) => ({
        id: b.id,
        name: b.name,
        args: isRecord(b.input) ? b.input : {},
        result: null,
        status: 'success',
      }));
    return { ...base, type: 'gemini', content: text, ...(calls.length > 0 ? { toolCalls: calls } : {}) };
  }
  const content = isRecord(line.message) ? line.message.content : '';
  const text = typeof content === 'string' ? content : blocksText(content);
  return { ...base, type: 'user', content: [{ text }] };
}

/**
 * Writes items back as the chat recording they came from (see the module comment): JSON with the
 * record's keys, or JSONL — its lines as they were when no message changed, else its metadata and
 * a line per message.
 */
export function exportGeminiRecording(items: readonly ContextItem[], document: GeminiDocument): string {
  if (document.layout === 'contents' || document.layout === 'checkpoint')
    return exportGeminiContents(items, document);
  const own = items.map((item) =>
    item.origin?.format === 'gemini'
      ? { ...item, origin: { ...item.origin, format: 'claude-code' as const } }
      : item,
  );
  const lines = claudeCodeLineValues(own, document.slots).filter(isRecord);
  const messages: JsonObject[] = [];
  let fresh = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as JsonObject;
    const mark = isRecord(line[MESSAGE]) ? line[MESSAGE] : null;
    const was = mark && typeof mark.index === 'number' ? document.messages[mark.index] : undefined;
    if (!mark || !isRecord(was)) {
      // A new item's results go with the calls of the message before them.
      const last = messages[messages.length - 1];
      if (
        line.type === 'user' &&
        blocksOf(line).every((b) => b.type === 'tool_result') &&
        last?.type === 'gemini'
      ) {
        messages[messages.length - 1] = rebuiltGemini(last, linesOf(last, 0, '')[0], line);
      } else messages.push(freshMessage(line, last, ++fresh));
      continue;
    }
    if (line.type === 'gemini-notice') {
      messages.push(was);
      continue;
    }
    const source = linesOf(was, mark.index as number, '');
    if (line.type === 'user' && mark.results !== true) {
      const text = blocksOf(line)
        .map((b) => String(b.text ?? ''))
        .join(SEPARATOR);
      messages.push(
        jsonEqual(line.message, source[0]?.message)
          ? was
          : { ...was, content: contentLike(was.content, text) },
      );
      continue;
    }
    // A gemini message: its assistant line, and the line of its results after it. Results whose
    // calls are gone go with them.
    if (mark.results === true) continue;
    const next = lines[i + 1];
    const nextMark = next && isRecord(next[MESSAGE]) ? next[MESSAGE] : null;
    let results: JsonObject | undefined;
    if (next && nextMark && nextMark.index === mark.index && nextMark.results === true) {
      results = next;
      i++;
    }
    const unchanged =
      jsonEqual(line.message, source[0]?.message) &&
      jsonEqual(results?.message ?? null, source[1]?.message ?? null);
    messages.push(unchanged ? was : rebuiltGemini(was, line, results));
  }
  if (document.layout === 'jsonl') {
    if (document.lines && jsonEqual(messages, document.messages)) return jsonLines(document.lines);
    return jsonLines([{ ...document.top, messages: [] }, ...messages]);
  }
  return `${JSON.stringify({ ...document.top, messages }, null, document.indent)}\n`;
}
