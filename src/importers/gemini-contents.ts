/**
 * Conversations in the Gemini API's own shape, as Gemini CLI writes them with `/chat share`
 * (`[Content, …]`) and `/chat save` (`checkpoint-<tag>.json`: `{ history: [Content, …],
 * authType? }`, a bare list before v0.16): each `Content` is `{ role: 'user' | 'model', parts }`.
 * - a model's parts → an assistant message: text parts its text, parts marked `thought` its
 *   reasoning, `functionCall` parts its calls (`args` as JSON arguments; a call with no id gets
 *   one made of its place);
 * - a user's `functionResponse` parts → tool messages answering the calls of the model before
 *   them: by id when the call has one, else the first waiting call of the same name, else the first
 *   waiting; their `output` (or `error`, an error) the text. A user's text parts → a user message,
 *   meta when it is the CLI's own setup ("This is the Gemini CLI. We are setting up the context…").
 * Each `Content` is read as the Claude Code line it amounts to (`claude-code-import.ts`), every
 * block keeping the place of the part it came from; written back the same way: a `Content` whose
 * items are unchanged as it was (an unchanged import gives back a deep-equal document), a changed
 * one with its parts changed in place (a part no item stands for, as a lone `thoughtSignature`,
 * kept), a new one as a `Content` of its role. Pure.
 */
import type { ContextItem } from '../context/items';
import { claudeCodeFromLines } from './claude-code-import';
import { claudeCodeLineValues } from './claude-code-export';
import { finishItems, type ImportedSession, type ImportOptions, type SessionDocument } from './common';
import { ImportError } from './errors';
import { isRecord, jsonEqual, type JsonLine, type JsonObject } from './json';

type GeminiDocument = Extract<SessionDocument, { format: 'gemini' }>;

/** What a function response says: its `output`, else its `error`, else the response as JSON. */
export function responseText(response: unknown): string {
  if (!isRecord(response)) return typeof response === 'string' ? response : JSON.stringify(response ?? null);
  if (typeof response.output === 'string') return response.output;
  if (typeof response.error === 'string') return response.error;
  return JSON.stringify(response);
}

/** The key under which a line names its `Content`, and a block the part it came from. */
const PLACE = 'durable-compaction:gemini-part';
/** The CLI's own first message, the context it sets up. */
const SETUP = /^This is the Gemini CLI\. We are setting up the context for our chat\./;

/** Whether a value is a list of `Content`: each a user or model role with a list of parts, a model among them. */
export function isGeminiContents(value: unknown): boolean {
  const list = isRecord(value) && Array.isArray(value.history) ? value.history : value;
  if (!Array.isArray(list) || list.length === 0) return false;
  return (
    list.every((c) => isRecord(c) && (c.role === 'user' || c.role === 'model') && Array.isArray(c.parts)) &&
    list.some((c) => isRecord(c) && c.role === 'model')
  );
}

/** A part's place, kept on the block made of it. */
const at = (part: number): JsonObject => ({ [PLACE]: { part } });

/** The Claude Code lines of the contents, calls paired with the responses after them. */
function linesOf(contents: readonly JsonObject[]): JsonLine[] {
  // The calls of the model since the last responses: id and name, not answered yet.
  let waiting: { id: string; name: string }[] = [];
  return contents.map((content, index) => {
    const parts = (content.parts as unknown[]).map((p) => (isRecord(p) ? p : {}));
    const mark = { [PLACE]: { index } };
    if (content.role === 'model') {
      const blocks: JsonObject[] = [];
      parts.forEach((part, j) => {
        if (isRecord(part.functionCall)) {
          const call = part.functionCall;
          const id = typeof call.id === 'string' ? call.id : `gemini-${index}-${j}`;
          const name = typeof call.name === 'string' ? call.name : 'tool';
          waiting.push({ id, name });
          blocks.push({ type: 'tool_use', id, name, input: isRecord(call.args) ? call.args : {}, ...at(j) });
        } else if (typeof part.text === 'string') {
          blocks.push(
            part.thought === true
              ? { type: 'thinking', thinking: part.text, ...at(j) }
              : { type: 'text', text: part.text, ...at(j) },
          );
        }
      });
      return {
        line: index + 1,
        value: { type: 'assistant', ...mark, message: { role: 'assistant', content: blocks } },
      };
    }
    const blocks: JsonObject[] = [];
    let answers = false;
    parts.forEach((part, j) => {
      if (isRecord(part.functionResponse)) {
        const response = part.functionResponse;
        let k = waiting.findIndex((w) => w.id === response.id);
        if (k < 0) k = waiting.findIndex((w) => w.name === response.name);
        if (k < 0) k = 0;
        const call = waiting.splice(k, 1)[0];
        if (!call) return;
        answers = true;
        const body = response.response;
        const failed = isRecord(body) && body.error !== undefined;
        blocks.push({
          type: 'tool_result',
          tool_use_id: call.id,
          content: responseText(body),
          ...(failed ? { is_error: true } : {}),
          ...at(j),
        });
      } else if (typeof part.text === 'string') blocks.push({ type: 'text', text: part.text, ...at(j) });
    });
    if (answers) waiting = [];
    const setup = blocks.length > 0 && blocks.every((b) => b.type === 'text' && SETUP.test(String(b.text)));
    return {
      line: index + 1,
      value: {
        type: 'user',
        ...(answers || setup ? { isMeta: true } : {}),
        ...mark,
        message: { role: 'user', content: blocks },
      },
    };
  });
}

/** Import from a parsed list of `Content`, bare or a checkpoint's `history`. */
export function geminiContentsFromValue(
  value: unknown,
  options: ImportOptions,
  idPrefix: string,
  indent: number,
): ImportedSession {
  if (!isGeminiContents(value)) {
    throw new ImportError('expected a list of Content: each a user or model role with its parts');
  }
  const checkpoint = isRecord(value);
  const contents = (checkpoint ? value.history : value) as JsonObject[];
  const read = claudeCodeFromLines(linesOf(contents), { ...options, wholeHistory: true }, idPrefix, false);
  if (read.document.format !== 'claude-code') throw new Error('unreachable: a Claude Code document');
  const items = read.items.map((item) =>
    item.origin ? { ...item, origin: { ...item.origin, format: 'gemini' as const } } : item,
  );
  return {
    format: 'gemini',
    items: finishItems(items, options.tokenizer),
    document: {
      format: 'gemini',
      layout: checkpoint ? 'checkpoint' : 'contents',
      top: checkpoint ? { ...value, history: null } : {},
      messages: contents,
      indent,
      slots: read.document.slots,
    },
  };
}

/** The part a block stands for, changed in place from the part it came from (`was`, if any). */
function partOf(block: JsonObject, was: JsonObject | undefined): JsonObject | null {
  switch (block.type) {
    case 'text':
      return { ...was, text: block.text };
    case 'thinking':
      return { ...was, text: block.thinking, thought: true };
    case 'tool_use': {
      const call = isRecord(was?.functionCall) ? was.functionCall : { name: block.name };
      return { ...was, functionCall: { ...call, args: isRecord(block.input) ? block.input : {} } };
    }
    case 'tool_result': {
      const response = isRecord(was?.functionResponse) ? was.functionResponse : { name: 'tool' };
      const text = typeof block.content === 'string' ? block.content : '';
      const same = text === responseText(response.response);
      return { ...was, functionResponse: same ? response : { ...response, response: { output: text } } };
    }
    default:
      return null;
  }
}

/** A `Content` from its line: the parts its blocks stand for, in place, and the parts no block stands for. */
function contentOf(line: JsonObject, was: JsonObject | undefined): JsonObject {
  const message = isRecord(line.message) ? line.message : {};
  const blocks = Array.isArray(message.content) ? message.content.filter(isRecord) : [];
  const parts = was && Array.isArray(was.parts) ? (was.parts as unknown[]) : [];
  const placeOf = (b: JsonObject): number | null => {
    const place = b[PLACE];
    return isRecord(place) && typeof place.part === 'number' ? place.part : null;
  };
  const byPart = new Map(
    blocks.flatMap((b) => (placeOf(b) === null ? [] : [[placeOf(b) as number, b] as const])),
  );
  const kept = parts.flatMap((part, j) => {
    const block = byPart.get(j);
    if (block) return [partOf(block, isRecord(part) ? part : undefined)].filter(isRecord);
    // A part no item stands for (a lone signature, inline data) stays; one whose item is gone goes.
    const stood =
      isRecord(part) && (typeof part.text === 'string' || part.functionCall || part.functionResponse);
    return stood ? [] : [part];
  });
  const fresh = blocks
    .filter((b) => placeOf(b) === null)
    .flatMap((b) => [partOf(b, undefined)].filter(isRecord));
  const role = line.type === 'assistant' ? 'model' : 'user';
  return { ...(was ?? { role }), parts: [...kept, ...fresh] };
}

/** Writes items back as the list of `Content` (or the checkpoint) they came from. */
export function exportGeminiContents(items: readonly ContextItem[], document: GeminiDocument): string {
  const own = items.map((item) =>
    item.origin?.format === 'gemini'
      ? { ...item, origin: { ...item.origin, format: 'claude-code' as const } }
      : item,
  );
  const source = linesOf(document.messages.filter(isRecord));
  const contents = claudeCodeLineValues(own, document.slots)
    .filter(isRecord)
    .map((line) => {
      const place = line[PLACE];
      const index = isRecord(place) && typeof place.index === 'number' ? place.index : null;
      const was = index === null ? undefined : document.messages[index];
      if (
        index !== null &&
        isRecord(was) &&
        jsonEqual(line.message, (source[index]?.value as JsonObject).message)
      )
        return was;
      return contentOf(line, isRecord(was) ? was : undefined);
    });
  const value = document.layout === 'checkpoint' ? { ...document.top, history: contents } : contents;
  return `${JSON.stringify(value, null, document.indent)}\n`;
}
