/**
 * Conversations in the Gemini API's own shape, as Gemini CLI writes them with `/chat share`
 * (`[Content, …]`) and `/chat save` (`checkpoint-<tag>.json`: `{ history: [Content, …],
 * authType? }`, a bare list before v0.16): each `Content` is `{ role: 'user' | 'model', parts }`
 * (`gemini-parts.ts`).
 * - a model's parts → an assistant message: text parts its text, thought parts its reasoning,
 *   `functionCall` parts its calls (`args` as JSON arguments; a call with no id gets one made of
 *   its place);
 * - a user's `functionResponse` parts → tool messages answering the calls of the model before
 *   them: by id when the call has one, else the first waiting call of the same name, else the first
 *   waiting; their `output` (or `error`, an error) the text. A user's text parts → a user message,
 *   meta when it is the CLI's own setup ("This is the Gemini CLI. We are setting up the context…").
 * Each `Content` is read as the Claude Code line it amounts to (`itemsThroughClaudeCode`), every
 * block keeping the place of the part it came from; written back the same way: a `Content` whose
 * items are unchanged as it was (an unchanged import gives back a deep-equal document), a changed
 * one with its parts changed in place (a part no item stands for, as a lone `thoughtSignature`,
 * kept), a new one as a `Content` of its role. Pure.
 */
import type { ContextItem } from '../context/items';
import { claudeCodeLinesOf } from './claude-code-export';
import { itemsThroughClaudeCode } from './claude-code-import';
import { finishItems, type ImportedSession, type ImportOptions } from './common';
import type { GeminiDocument } from './gemini-cli';
import { ImportError } from './errors';
import {
  argsOf,
  blocksOf,
  resultBlockText,
  responseFailed,
  responseText,
  responseWith,
} from './gemini-parts';
import { describe, isRecord, jsonEqual, type JsonLine, type JsonObject } from './json';

/** The key under which a line names its `Content`, and a block the part it came from. */
const PLACE = 'durable-compaction:gemini-part';
/** The CLI's own first message, the context it sets up. */
const SETUP = /^This is the Gemini CLI\. We are setting up the context for our chat\./;

/** Whether an entry looks like a `Content`: a role and a list of parts. */
function isContentShaped(entry: unknown): boolean {
  return isRecord(entry) && typeof entry.role === 'string' && Array.isArray(entry.parts);
}

/**
 * Whether a value is a list of `Content` (bare, or a checkpoint's `history`): a checkpoint by its
 * `authType` beside `history`, or its entries' `parts`; a bare list by a `model` role in it (no
 * other format has one; its entries are checked when it is read, and named when they are not
 * `Content`).
 */
export function isGeminiContents(value: unknown): boolean {
  if (isRecord(value)) {
    if (!Array.isArray(value.history)) return false;
    return value.authType !== undefined || (value.history.length > 0 && value.history.every(isContentShaped));
  }
  return Array.isArray(value) && value.some((entry) => isRecord(entry) && entry.role === 'model');
}

/** A part's place, kept on the block made of it. */
const at = (part: number): JsonObject => ({ [PLACE]: { part } });

/** The contents checked: each a user or model role with a list of parts (`field`: where the list is). */
function checked(list: readonly unknown[], field: string): JsonObject[] {
  return list.map((entry, i) => {
    if (!isRecord(entry) || (entry.role !== 'user' && entry.role !== 'model')) {
      const role = isRecord(entry) ? describe(entry.role) : describe(entry);
      throw new ImportError(`expected a Content with role "user" or "model", got ${role}`, {
        field: `${field}[${i}].role`,
      });
    }
    if (!Array.isArray(entry.parts))
      throw new ImportError(`expected a list of parts, got ${describe(entry.parts)}`, {
        field: `${field}[${i}].parts`,
      });
    return entry;
  });
}

/** The Claude Code lines of the contents, calls paired with the responses after them. */
function linesOf(contents: readonly JsonObject[]): JsonLine[] {
  // The calls of the model since the last responses: id and name, not answered yet.
  let waiting: { id: string; name: string }[] = [];
  return contents.map((content, index) => {
    const parts = (content.parts as unknown[]).map((p) => (isRecord(p) ? p : {}));
    const mark = { [PLACE]: { index } };
    if (content.role === 'model') {
      const blocks = parts.flatMap((part, j): JsonObject[] => {
        if (isRecord(part.functionCall)) {
          const call = part.functionCall;
          const id = typeof call.id === 'string' ? call.id : `gemini-${index}-${j}`;
          const name = typeof call.name === 'string' ? call.name : 'tool';
          waiting.push({ id, name });
          return [{ type: 'tool_use', id, name, input: isRecord(call.args) ? call.args : {}, ...at(j) }];
        }
        if (typeof part.text !== 'string') return [];
        return [
          part.thought === true
            ? { type: 'thinking', thinking: part.text, ...at(j) }
            : { type: 'text', text: part.text, ...at(j) },
        ];
      });
      return {
        line: index + 1,
        value: { type: 'assistant', ...mark, message: { role: 'assistant', content: blocks } },
      };
    }
    let answers = false;
    const blocks = parts.flatMap((part, j): JsonObject[] => {
      if (!isRecord(part.functionResponse))
        return typeof part.text === 'string' ? [{ type: 'text', text: part.text, ...at(j) }] : [];
      const response = part.functionResponse;
      let k = waiting.findIndex((w) => w.id === response.id);
      if (k < 0) k = waiting.findIndex((w) => w.name === response.name);
      if (k < 0) k = 0;
      const call = waiting.splice(k, 1)[0];
      if (!call) return [];
      answers = true;
      return [
        {
          type: 'tool_result',
          tool_use_id: call.id,
          content: responseText(response.response),
          ...(responseFailed(response.response) ? { is_error: true } : {}),
          ...at(j),
        },
      ];
    });
    if (answers) waiting = [];
    const setup = blocks.length > 0 && blocks.every((b) => b.type === 'text' && SETUP.test(String(b.text)));
    const meta = answers || setup ? { isMeta: true } : {};
    return {
      line: index + 1,
      value: { type: 'user', ...meta, ...mark, message: { role: 'user', content: blocks } },
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
  if (!isGeminiContents(value))
    throw new ImportError('expected a list of Content: each a user or model role with its parts');
  const checkpoint = isRecord(value);
  const contents = checked((checkpoint ? value.history : value) as unknown[], checkpoint ? 'history' : '');
  const { items, slots } = itemsThroughClaudeCode(linesOf(contents), options, idPrefix, 'gemini');
  return {
    format: 'gemini',
    items: finishItems(items, options.tokenizer),
    document: {
      format: 'gemini',
      layout: checkpoint ? 'checkpoint' : 'contents',
      top: checkpoint ? { ...value, history: null } : {},
      messages: contents,
      indent,
      slots,
    },
  };
}

/** The part a block stands for, changed in place from the part it came from (`was`, if any); `names`: the calls' names by id. */
function partOf(
  block: JsonObject,
  was: JsonObject | undefined,
  names: ReadonlyMap<unknown, unknown>,
): JsonObject | null {
  switch (block.type) {
    case 'text':
      return { ...was, text: block.text };
    case 'thinking':
      return { ...was, text: block.thinking, thought: true };
    case 'tool_use': {
      const call = isRecord(was?.functionCall) ? was.functionCall : { id: block.id, name: block.name };
      const args = jsonEqual(block.input, call.args) ? call.args : argsOf(block.input);
      return { ...was, functionCall: { ...call, args } };
    }
    case 'tool_result': {
      const response = isRecord(was?.functionResponse)
        ? was.functionResponse
        : { id: block.tool_use_id, name: names.get(block.tool_use_id) ?? 'tool' };
      const text = resultBlockText(block.content);
      const same = text === responseText(response.response);
      return {
        ...was,
        functionResponse: same ? response : { ...response, response: responseWith(response.response, text) },
      };
    }
    default:
      return null;
  }
}

/** The place of the part a block came from, or null for a new block. */
function placeOf(block: JsonObject): number | null {
  const place = block[PLACE];
  return isRecord(place) && typeof place.part === 'number' ? place.part : null;
}

/** A `Content` from its line: the parts its blocks stand for, in place, and the parts no block stands for. */
function contentOf(
  line: JsonObject,
  was: JsonObject | undefined,
  names: ReadonlyMap<unknown, unknown>,
): JsonObject {
  const blocks = blocksOf(line);
  const parts = was && Array.isArray(was.parts) ? (was.parts as unknown[]) : [];
  const byPart = new Map(
    blocks.flatMap((b) => (placeOf(b) === null ? [] : [[placeOf(b) as number, b] as const])),
  );
  const kept = parts.flatMap((part, j) => {
    const block = byPart.get(j);
    if (block) return [partOf(block, isRecord(part) ? part : undefined, names)].filter(isRecord);
    // A part no item stands for (a lone signature, inline data) stays; one whose item is gone goes.
    const stood =
      isRecord(part) && (typeof part.text === 'string' || part.functionCall || part.functionResponse);
    return stood ? [] : [part];
  });
  const fresh = blocks
    .filter((b) => placeOf(b) === null)
    .flatMap((b) => [partOf(b, undefined, names)].filter(isRecord));
  const role = line.type === 'assistant' ? 'model' : 'user';
  return { ...(was ?? { role }), parts: [...kept, ...fresh] };
}

/** Writes items back as the list of `Content` (or the checkpoint) they came from. */
export function exportGeminiContents(items: readonly ContextItem[], document: GeminiDocument): string {
  const source = linesOf(document.messages.filter(isRecord));
  const names = new Map<unknown, unknown>();
  const contents = claudeCodeLinesOf(items, document.slots, 'gemini').map((line) => {
    for (const block of blocksOf(line)) if (block.type === 'tool_use') names.set(block.id, block.name);
    const place = line[PLACE];
    const index = isRecord(place) && typeof place.index === 'number' ? place.index : null;
    const was = index === null ? undefined : document.messages[index];
    if (
      index !== null &&
      isRecord(was) &&
      jsonEqual(line.message, (source[index]?.value as JsonObject).message)
    )
      return was;
    return contentOf(line, isRecord(was) ? was : undefined, names);
  });
  const value = document.layout === 'checkpoint' ? { ...document.top, history: contents } : contents;
  return `${JSON.stringify(value, null, document.indent)}\n`;
}
