/**
 * What Gemini's parts say and how they are written again, for both shapes Gemini CLI keeps a chat
 * in (`gemini-cli.ts`, `gemini-contents.ts`): a part is `{ text }` (a thought when marked
 * `thought`), `{ functionCall: { id?, name, args } }`, `{ functionResponse: { id?, name, response:
 * { output } | { error } } }`, or data no item stands for (`inlineData`, a lone `thoughtSignature`).
 * Pure.
 */
import { TEXT_SEPARATOR } from './claude-code-export';
import { isRecord, stringFieldsOf, type JsonObject } from './json';

/** The parts of a content (`PartListUnion`): a string is a text part, a part a list of one. */
export function partsOf(content: unknown): unknown[] {
  if (typeof content === 'string') return [{ text: content }];
  if (Array.isArray(content)) return content;
  return content === undefined || content === null ? [] : [content];
}

/** The text of a content's text parts that are no thoughts, or the thoughts' (`thought`), joined. */
export function partsText(content: unknown, thought = false): string {
  return partsOf(content)
    .flatMap((part) =>
      typeof part === 'string'
        ? thought
          ? []
          : [part]
        : isRecord(part) && typeof part.text === 'string' && (part.thought === true) === thought
          ? [part.text]
          : [],
    )
    .join(TEXT_SEPARATOR);
}

/** What a function response says: its `output`, else its `error`, else the response as JSON. */
export function responseText(response: unknown): string {
  if (!isRecord(response)) return typeof response === 'string' ? response : JSON.stringify(response ?? null);
  if (typeof response.output === 'string') return response.output;
  if (typeof response.error === 'string') return response.error;
  return JSON.stringify(response);
}

/** Whether a function response reports an error. */
export function responseFailed(response: unknown): boolean {
  return isRecord(response) && response.error !== undefined;
}

/** A function response with its text changed, under the key it had (`error` stays an error). */
export function responseWith(response: unknown, text: string): JsonObject {
  return isRecord(response) && response.error !== undefined && response.output === undefined
    ? { error: text }
    : { output: text };
}

/**
 * A call's input as Gemini's `args`, which must be an object: arguments a cut made no JSON (a
 * preview and its marker) give the string fields they still hold.
 */
export function argsOf(input: unknown): JsonObject {
  if (isRecord(input)) return input;
  return typeof input === 'string' ? Object.fromEntries(stringFieldsOf(input)) : {};
}

/** The text of a tool result block's content: a string, or its text blocks joined. */
export function resultBlockText(content: unknown): string {
  if (typeof content === 'string') return content;
  return Array.isArray(content)
    ? content.map((b) => (isRecord(b) && typeof b.text === 'string' ? b.text : '')).join(TEXT_SEPARATOR)
    : '';
}

/** The blocks of a Claude Code line's message: a string content as one text block, none when it has none. */
export function blocksOf(line: JsonObject | undefined): JsonObject[] {
  const message = line && isRecord(line.message) ? line.message : null;
  if (!message) return [];
  if (typeof message.content === 'string') return [{ type: 'text', text: message.content }];
  return Array.isArray(message.content) ? message.content.filter(isRecord) : [];
}

/** The text of a line's blocks of one kind (`text` or `thinking`), joined. */
export function blocksText(blocks: readonly JsonObject[], type: 'text' | 'thinking'): string {
  return blocks
    .filter((b) => b.type === type)
    .map((b) => String(b[type] ?? ''))
    .join(TEXT_SEPARATOR);
}
