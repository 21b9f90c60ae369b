/**
 * Gemini CLI's chat recordings written back (the mapping is described in `gemini-cli.ts`): each
 * message from the Claude Code lines it was read as. A message whose lines are unchanged is written
 * as it was (an unchanged import gives back a deep-equal record; JSONL line for line); a changed one
 * is rebuilt from what it was — its text, its thoughts, its calls in place, each call's `args` and
 * `result` changed only where its item changed; the responses recorded again after it (v0.44 on)
 * follow its results. A new item is a message of its kind; new results go with the calls of the
 * message before them. Pure.
 */
import type { ContextItem } from '../context/items';
import { claudeCodeLinesOf } from './claude-code-export';
import { exportGeminiContents } from './gemini-contents';
import { isResponses, linesOf, MESSAGE, resultText, thoughtText, type GeminiDocument } from './gemini-cli';
import { argsOf, blocksOf, blocksText, partsOf, resultBlockText, responseWith } from './gemini-parts';
import { isRecord, jsonEqual, jsonLines, type JsonObject } from './json';

/** A content in the shape the original had: a string, or its text parts (the others kept). */
function contentLike(original: unknown, text: string): unknown {
  if (typeof original === 'string' || original === undefined) return text;
  const others = partsOf(original).filter(
    (part) => !(isRecord(part) && typeof part.text === 'string' && part.thought !== true),
  );
  return [...(text === '' ? [] : [{ text }]), ...others];
}

/** A call's result with its text changed: its own function response answers with the new text. */
function resultWith(call: JsonObject, text: string): unknown[] {
  const own = partsOf(call.result).find(
    (part) =>
      isRecord(part) && isRecord(part.functionResponse) && (part.functionResponse.id ?? call.id) === call.id,
  );
  const response = isRecord(own) && isRecord(own.functionResponse) ? own.functionResponse : {};
  return [
    {
      functionResponse: {
        id: call.id,
        name: call.name,
        ...response,
        response: responseWith(response.response, text),
      },
    },
  ];
}

/** A call answered by a result block (or by none): `result` kept where its text did not change. */
function answered(call: JsonObject, answer: JsonObject | undefined): JsonObject {
  if (!answer) return resultText(call) === null ? call : { ...call, result: null };
  const text = resultBlockText(answer.content);
  return text === resultText(call) ? call : { ...call, result: resultWith(call, text) };
}

/**
 * A gemini message rebuilt from what it was and its lines: its calls in order (the k-th call block
 * the k-th call it had), each answered by the result blocks of its id in order.
 */
function rebuilt(was: JsonObject, assistant: JsonObject, results: JsonObject | undefined): JsonObject {
  const blocks = blocksOf(assistant);
  const calls = Array.isArray(was.toolCalls) ? was.toolCalls.filter(isRecord) : [];
  const answers = new Map<unknown, JsonObject[]>();
  for (const block of blocksOf(results))
    answers.set(block.tool_use_id, [...(answers.get(block.tool_use_id) ?? []), block]);
  const toolCalls = blocks
    .filter((b) => b.type === 'tool_use')
    .map((use, k) => {
      const call =
        calls[k]?.id === use.id
          ? (calls[k] as JsonObject)
          : (calls.find((c) => c.id === use.id) ?? { id: use.id, name: use.name, status: 'success' });
      const args = jsonEqual(use.input, call.args) ? call.args : argsOf(use.input);
      return answered({ ...call, args }, answers.get(use.id)?.shift());
    });
  const thinking = blocksText(blocks, 'thinking');
  const thoughts =
    thinking === (thoughtText(was) ?? '')
      ? was.thoughts
      : thinking === ''
        ? []
        : [{ subject: '', description: thinking }];
  return {
    ...was,
    content: contentLike(was.content, blocksText(blocks, 'text')),
    ...(thoughts !== undefined ? { thoughts } : {}),
    ...(toolCalls.length > 0 || was.toolCalls !== undefined ? { toolCalls } : {}),
  };
}

/** The responses recorded again after a gemini message (v0.44 on), following its calls as they are now. */
function responsesAfter(was: JsonObject, gemini: JsonObject): JsonObject | null {
  const calls = Array.isArray(gemini.toolCalls) ? gemini.toolCalls.filter(isRecord) : [];
  const parts = partsOf(was.content).flatMap((part) => {
    const id = isRecord(part) && isRecord(part.functionResponse) ? part.functionResponse.id : undefined;
    const call = calls.find((c) => c.id === id);
    if (!call || call.result === null || call.result === undefined) return [];
    const own = partsOf(call.result).find(
      (p) => isRecord(p) && isRecord(p.functionResponse) && p.functionResponse.id === id,
    );
    return [own ?? part];
  });
  return parts.length === 0 ? null : { ...was, content: parts };
}

/** A message for lines that did not come from the record (`previous`: the message before, for its time). */
function freshMessage(line: JsonObject, previous: JsonObject | undefined, n: number): JsonObject {
  const stamp = previous && typeof previous.timestamp === 'string' ? { timestamp: previous.timestamp } : {};
  const base = { id: `durable-compaction-${n}`, ...stamp };
  const blocks = blocksOf(line);
  if (line.type !== 'assistant')
    return { ...base, type: 'user', content: [{ text: blocksText(blocks, 'text') }] };
  const calls = blocks
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({
      id: b.id,
      name: b.name,
      args: argsOf(b.input),
      result: null,
      status: 'success',
      ...stamp,
    }));
  return {
    ...base,
    type: 'gemini',
    content: blocksText(blocks, 'text'),
    ...(calls.length > 0 ? { toolCalls: calls } : {}),
  };
}

/** Whether a line of new items is results alone (for the calls of the message before). */
function onlyResults(line: JsonObject): boolean {
  const blocks = blocksOf(line);
  return line.type === 'user' && blocks.length > 0 && blocks.every((b) => b.type === 'tool_result');
}

/**
 * Writes items back as what Gemini CLI kept them in (see the module comment): a chat recording as
 * JSON with the record's keys, or as JSONL — its lines as they were when no message changed, else
 * its metadata and a line per message; a list of `Content` by `gemini-contents.ts`.
 */
export function exportGeminiRecording(items: readonly ContextItem[], document: GeminiDocument): string {
  if (document.layout === 'contents' || document.layout === 'checkpoint')
    return exportGeminiContents(items, document);
  const lines = claudeCodeLinesOf(items, document.slots, 'gemini');
  const messages: JsonObject[] = [];
  // The gemini messages written, by their place in the source.
  const written = new Map<number, JsonObject>();
  let fresh = 0;
  lines.forEach((line, i) => {
    const mark = isRecord(line[MESSAGE]) ? line[MESSAGE] : null;
    const was = mark && typeof mark.index === 'number' ? document.messages[mark.index] : undefined;
    if (!mark || !isRecord(was)) {
      const previous = messages[messages.length - 1];
      if (onlyResults(line) && previous?.type === 'gemini') {
        // The message's own lines (its place does not matter here), and the new results after its own.
        const [assistant, own] = linesOf(previous, -1, {});
        const now = rebuilt(previous, assistant as JsonObject, {
          message: { content: [...blocksOf(own), ...blocksOf(line)] },
        });
        messages[messages.length - 1] = now;
      } else messages.push(freshMessage(line, previous, ++fresh));
      return;
    }
    if (mark.results === true) return; // written with its calls
    const source = linesOf(was, mark.index as number, {});
    if (line.type === 'gemini-kept') {
      if (!isResponses(was)) messages.push(was);
      else {
        // Responses recorded again: as the calls of the gemini message before them are now (gone
        // with it when it is gone).
        const index = mark.index as number;
        let g = index - 1;
        while (g >= 0 && (document.messages[g] as JsonObject | undefined)?.type !== 'gemini') g--;
        const calls = written.get(g);
        const now =
          calls === undefined ? null : calls === document.messages[g] ? was : responsesAfter(was, calls);
        if (now) messages.push(now);
      }
      return;
    }
    if (line.type === 'user') {
      messages.push(
        jsonEqual(line.message, source[0]?.message)
          ? was
          : { ...was, content: contentLike(was.content, blocksText(blocksOf(line), 'text')) },
      );
      return;
    }
    const next = lines[i + 1];
    const nextMark = next && isRecord(next[MESSAGE]) ? next[MESSAGE] : null;
    const results = nextMark && nextMark.index === mark.index && nextMark.results === true ? next : undefined;
    const unchanged =
      jsonEqual(line.message, source[0]?.message) &&
      jsonEqual(results?.message ?? null, source[1]?.message ?? null);
    const now = unchanged ? was : rebuilt(was, line, results);
    messages.push(now);
    written.set(mark.index as number, now);
  });
  if (document.layout === 'jsonl') {
    if (document.lines && jsonEqual(messages, document.messages)) return jsonLines(document.lines);
    return jsonLines([{ ...document.top, messages: [] }, ...messages]);
  }
  return `${JSON.stringify({ ...document.top, messages }, null, document.indent)}\n`;
}
