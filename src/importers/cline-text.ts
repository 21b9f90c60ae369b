/**
 * What Cline and Roo Code write as text in a task's messages, read as what it stands for and
 * written back as the text it was (`anthropic-messages.ts` reads their histories with it):
 * - a tool called in XML in the assistant's text (`xml-tool-use.ts`) → a `tool_use` block; the
 *   blocks one text was cut into keep that text's pieces, to be joined back into it;
 * - a tool's result written as a text block in the next user message, `[read_file for 'a.ts']
 *   Result:` and the output (the output in the blocks after it when the header stands alone), or
 *   the words that stand for a call not run → a `tool_result` answering the calls since the user
 *   spoke, in order; written back as the text blocks it was, its header put back when a cut took
 *   it off;
 * - Cline's reply to a message that called no tool → the agent's words, not the user's.
 *
 * Pure.
 */
import { AGENT_CONTEXT } from './claude-code-import';
import { isRecord, omit, type JsonObject } from './json';
import { hasXmlToolCall, splitXmlToolCalls, xmlOfCall } from './xml-tool-use';

/**
 * The start of a tool's result as Cline and Roo Code write it: `[name]`, or `[name for '…']` (`for
 * 3 files`, `to 'code' because: …`), then ` Result:`; or the words that stand for the result of a
 * call not run (a second call in one message, one after a call the user rejected). A tool's name
 * is lower case (`[TASK RESUMPTION]` is none).
 */
export const TEXT_RESULT =
  /^(?:\[([a-z][a-z0-9_]*)(?: (?:for|to) [\s\S]*?)?\] Result:|Tool \[[a-z][a-z0-9_]*(?: (?:for|to) [\s\S]*?)?\] was (?:not executed|interrupted)|Skipping tool \[[a-z][a-z0-9_]*)/;
/** Cline's reply to a message that called no tool. */
const NO_TOOL_NAG = /^\s*\[ERROR\] You did not use a tool/;

/**
 * The key under which a result read off a text block keeps that block's other keys (and the
 * header it started with), until it is written back as the text block it was.
 */
const TEXT_BLOCK = 'durable-compaction:text-block';
/**
 * The key under which the blocks one text block (or a string content) was cut into — its words
 * and the tool calls it wrote as XML — keep what they were, until written back as that text.
 */
const XML_TEXT = 'durable-compaction:xml-text';

/** The texts of a message's content: a string, or its text blocks'. */
export function textsOf(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((block) =>
    isRecord(block) && block.type === 'text' && typeof block.text === 'string' ? [block.text] : [],
  );
}

/** Whether a text is a tool's result as Cline writes it. */
export function isTextResult(text: string): boolean {
  return TEXT_RESULT.test(text);
}

/** Whether a user message's words (its text but the agent's context blocks) are only Cline's nag. */
export function isNoToolNag(content: unknown): boolean {
  const texts = textsOf(content).filter((text) => !AGENT_CONTEXT.test(text));
  return texts.length > 0 && texts.every((text) => NO_TOOL_NAG.test(text));
}

/** The white space a text starts and ends with. */
function around(text: string): [string, string] {
  const body = text.trim();
  if (body === '') return [text, ''];
  const start = text.indexOf(body);
  return [text.slice(0, start), text.slice(start + body.length)];
}

/**
 * An assistant message with the tool calls its text writes as XML as `tool_use` blocks, their ids
 * made of `line` (the message's 1-based position) and their order. Each block made of one text
 * keeps, under `XML_TEXT`, which text it was cut from (`group`), what it was (`raw`) and the rest
 * of the text block (or that the content was a string); words are trimmed, and the space between
 * a call and the next words is the call's.
 */
export function withXmlCalls(message: JsonObject, line: number): JsonObject {
  const { content } = message;
  const isString = typeof content === 'string';
  const blocks: unknown[] = isString
    ? [{ type: 'text', text: content }]
    : Array.isArray(content)
      ? content
      : [];
  const xml = (block: unknown): block is JsonObject & { text: string } =>
    isRecord(block) && block.type === 'text' && typeof block.text === 'string' && hasXmlToolCall(block.text);
  if (!blocks.some(xml)) return message;
  let calls = 0;
  const out = blocks.flatMap((block, group) => {
    if (!xml(block)) return [block];
    const source = isString ? { string: true } : { block: omit(block, ['text']) };
    const pieces: JsonObject[] = [];
    for (const piece of splitXmlToolCalls(block.text)) {
      const last = pieces[pieces.length - 1];
      const mark = last?.[XML_TEXT] as JsonObject | undefined;
      if (piece.kind === 'text' && piece.text.trim() === '' && last && mark) {
        mark.raw = `${String(mark.raw)}${piece.text}`;
      } else if (piece.kind === 'text') {
        pieces.push({
          type: 'text',
          text: piece.text.trim(),
          [XML_TEXT]: { group, raw: piece.text, ...source },
        });
      } else {
        pieces.push({
          type: 'tool_use',
          id: `xml-${line}-${++calls}`,
          name: piece.name,
          input: piece.input,
          [XML_TEXT]: { group, raw: piece.raw, ...source },
        });
      }
    }
    return pieces;
  });
  return { ...message, content: out };
}

/**
 * The text a block cut from an assistant's text stands for: what it was while it is unchanged,
 * else its new words or its call written as XML from its input — with the white space the piece
 * had around it, so a call still starts a line.
 */
function xmlTextOf(block: JsonObject, mark: JsonObject): string {
  const raw = typeof mark.raw === 'string' ? mark.raw : '';
  const [lead, trail] = around(raw);
  if (block.type === 'text') {
    const text = typeof block.text === 'string' ? block.text : '';
    return text === raw.trim() ? raw : `${lead}${text}${trail}`;
  }
  const [was] = splitXmlToolCalls(raw.trim());
  const same =
    was?.kind === 'call' &&
    was.name === block.name &&
    JSON.stringify(was.input) === JSON.stringify(block.input);
  return same ? raw : `${lead}${xmlOfCall(String(block.name), block.input)}${trail}`;
}

/**
 * An assistant message's content with the blocks cut from one text (`withXmlCalls`) joined into
 * that text again: a string if it was one. A call always starts a line.
 */
export function joinXmlText(content: readonly unknown[]): unknown {
  const out: unknown[] = [];
  let group: unknown = null;
  let string = false;
  for (const block of content) {
    const mark = isRecord(block) && isRecord(block[XML_TEXT]) ? block[XML_TEXT] : null;
    if (!isRecord(block) || !mark) {
      out.push(block);
      group = null;
      continue;
    }
    const text = xmlTextOf(block, mark);
    const last = out[out.length - 1];
    if (group !== null && mark.group === group && isRecord(last)) {
      const before = String(last.text);
      const newline = block.type === 'tool_use' && before !== '' && !before.endsWith('\n') ? '\n' : '';
      last.text = `${before}${newline}${text}`;
    } else out.push({ ...(isRecord(mark.block) ? mark.block : { type: 'text' }), text });
    group = mark.group;
    string = mark.string === true;
  }
  const [only] = out;
  return string && out.length === 1 && isRecord(only) ? only.text : out;
}

/** A result's header with nothing after it: the output is in the text and image blocks that follow. */
function headerOnly(text: string): boolean {
  const match = TEXT_RESULT.exec(text);
  return match !== null && match[1] !== undefined && text.slice(match[0].length).trim() === '';
}

/**
 * A user message's content with Cline's text results as `tool_result` blocks answering `open`
 * (the calls since the user spoke that no `tool_result` block of the message answers), in order;
 * a header alone takes the text and image blocks after it as its output, up to another result or
 * a block of the agent's context. `answered`: how many it answered.
 */
export function withTextResults(
  content: readonly unknown[],
  open: readonly string[],
): { content: unknown[]; answered: number } {
  const out: unknown[] = [];
  let next = 0;
  let output: unknown[] | null = null;
  for (const block of content) {
    const text =
      isRecord(block) && block.type === 'text' && typeof block.text === 'string' ? block.text : null;
    const result = text !== null && TEXT_RESULT.test(text);
    const joins =
      isRecord(block) && (block.type === 'image' || (text !== null && !result && !AGENT_CONTEXT.test(text)));
    if (output && joins) {
      output.push(block);
      continue;
    }
    output = null;
    if (!result || next >= open.length || !isRecord(block) || text === null) {
      out.push(block);
      continue;
    }
    if (headerOnly(text)) output = [{ type: 'text', text }];
    // The header to put back if a cut takes it off: the tool's name alone (Cline's headers hold a
    // call's whole argument).
    const match = TEXT_RESULT.exec(text);
    const header = match?.[1] !== undefined ? `[${match[1]}] Result:` : (match?.[0] ?? '');
    out.push({
      type: 'tool_result',
      tool_use_id: open[next++],
      content: output ?? text,
      [TEXT_BLOCK]: { ...omit(block, ['text']), [TEXT_BLOCK]: header },
    });
  }
  return { content: next > 0 ? out : [...content], answered: next };
}

/**
 * A user message's content written back: each result read off text blocks as those blocks again
 * (a header that stood alone and its output after it; a result a cut took the header off with its
 * header put back, so it reads back as the result it is, never as a `tool_result` of a call that
 * exists only as text).
 */
export function withResultTexts(content: readonly unknown[]): unknown[] {
  return content.flatMap((block) => {
    if (!isRecord(block) || !isRecord(block[TEXT_BLOCK])) return [block];
    const { [TEXT_BLOCK]: header, ...keys } = block[TEXT_BLOCK];
    const parts = Array.isArray(block.content) ? block.content : [];
    const [head, ...rest] = parts;
    if (isRecord(head) && typeof head.text === 'string' && headerOnly(head.text))
      return [{ ...keys, text: head.text }, ...rest];
    const text =
      typeof block.content === 'string'
        ? block.content
        : parts.map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : '')).join('\n');
    return [
      { ...keys, text: TEXT_RESULT.test(text) ? text : `${String(header || '[tool] Result:')}\n${text}` },
    ];
  });
}
