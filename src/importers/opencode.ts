/**
 * OpenCode's sessions as `opencode export <session>` writes them: one JSON document `{ info,
 * messages: [{ info, parts }] }`, the session's info, then each message's info (`role` user or
 * assistant) and its parts in order.
 *
 * The messages as OpenCode sends them to the model (`MessageV2.toModelMessages`):
 * - a user message → a user message of its `text` parts but the `ignored` ones (meta when every
 *   one is OpenCode's own, `synthetic`), a file it attached whole as `[Attached <mime>: <name>]`
 *   (a text file or a directory was read into a synthetic part already), a `subtask` part as
 *   OpenCode words it; agent mentions and snapshots are left out;
 * - an assistant message → for each step (from a `step-start` part to the next) an assistant
 *   message: `reasoning` parts its reasoning, `text` parts its text, `tool` parts its calls
 *   (`callID`, `tool`, `state.input`), and a meta message of the calls' results: a completed
 *   call's `output`, a failed one's `error` (an error result; but an interrupted call's own
 *   output), a call still `pending` or `running` "[Tool execution was interrupted]", as OpenCode
 *   answers every call. A message OpenCode never sends again (its `error` set, but for an aborted
 *   one that says something) stays in the document, out of the context.
 * OpenCode's own compactions: a user message with a `compaction` part, answered by an assistant
 * message marked `summary`. The context is that summary as a COMPACTION_SUMMARY and what came after
 * (and the tail it kept, from `tail_start_id`), the outputs OpenCode cleared (`time.compacted`) as
 * it sends them; with `wholeHistory` (`eval`) every message, the compactions left out and the
 * outputs whole. Each message is read as the Claude Code lines it amounts to
 * (`itemsThroughClaudeCode`); `opencode-export.ts` writes them back. Pure.
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
import { describe, isRecord, jsonIndent, parseJson, type JsonLine, type JsonObject } from './json';

export type OpenCodeDocument = Extract<SessionDocument, { format: 'opencode' }>;

/** How a message is read: into the context, kept out of it, or as the summary of a compaction. */
export type OpenCodeView = 'context' | 'kept' | 'summary';

/** The key under which a line made of a message names it: its place, its step, whether it holds results. */
export const MESSAGE = 'durable-compaction:opencode';

/** What OpenCode answers a call it never finished with. */
export const INTERRUPTED = '[Tool execution was interrupted]';
/** What OpenCode sends for an output its prune cleared. */
export const CLEARED = '[Old tool result content cleared]';
/** What OpenCode sends for a compaction request (its user message's `compaction` part). */
const COMPACTION_REQUEST = 'What did we do so far?';
/** What OpenCode sends for a `subtask` part. */
const SUBTASK = 'The following tool was executed by the user';

/** Whether a parsed value is an OpenCode export: the session's info and messages of `info` and `parts`. */
export function isOpenCodeExport(value: unknown): boolean {
  if (!isRecord(value) || !isRecord(value.info) || !Array.isArray(value.messages)) return false;
  const { info } = value;
  // A mini-SWE-agent trajectory has `info` and `messages` too.
  if (value.trajectory_format !== undefined || info.mini_version !== undefined) return false;
  if (typeof info.version !== 'string' && !(typeof info.id === 'string' && info.id.startsWith('ses')))
    return false;
  // One message in the shape is enough: the others are checked when read, and named.
  return (
    value.messages.length === 0 ||
    value.messages.some((m) => isRecord(m) && (isRecord(m.info) || Array.isArray(m.parts)))
  );
}

/** A message's info and parts, checked. */
export function messageOf(value: unknown, index: number): { info: JsonObject; parts: JsonObject[] } {
  const field = `messages[${index}]`;
  if (!isRecord(value) || !isRecord(value.info))
    throw new ImportError(`expected a message with an info object, got ${describe(value)}`, { field });
  const { info, parts } = value;
  if (info.role !== 'user' && info.role !== 'assistant')
    throw new ImportError(`expected user or assistant, got ${describe(info.role)}`, {
      field: `${field}.info.role`,
    });
  if (!Array.isArray(parts))
    throw new ImportError(`expected a list of parts, got ${describe(parts)}`, { field: `${field}.parts` });
  parts.forEach((part, k) => {
    if (!isRecord(part) || typeof part.type !== 'string')
      throw new ImportError(`expected a part with a string type, got ${describe(part)}`, {
        field: `${field}.parts[${k}]`,
      });
    if (
      part.type === 'tool' &&
      (typeof part.callID !== 'string' || typeof part.tool !== 'string' || !isRecord(part.state))
    )
      throw new ImportError('expected a tool part with a string callID and tool, and a state', {
        field: `${field}.parts[${k}]`,
      });
  });
  return { info, parts: parts as JsonObject[] };
}

/** A reply's parts of one type (`text` or `reasoning`), each a block. */
function textParts(parts: readonly JsonObject[], type: 'text' | 'reasoning'): JsonObject[] {
  return parts.filter((p) => p.type === type && typeof p.text === 'string');
}

/** Whether a message is OpenCode's compaction request (a user message with a `compaction` part). */
export function isCompactionRequest(message: { info: JsonObject; parts: readonly JsonObject[] }): boolean {
  return message.info.role === 'user' && message.parts.some((p) => p.type === 'compaction');
}

/** Whether a message is a compaction's summary (an assistant message marked `summary`, finished well). */
function isSummary(info: JsonObject): boolean {
  return info.role === 'assistant' && info.summary === true && !info.error;
}

/** Whether OpenCode sends an assistant message again: no error, or an aborted one that says something. */
function isSent(info: JsonObject, parts: readonly JsonObject[]): boolean {
  if (info.error === undefined || info.error === null) return true;
  const aborted = isRecord(info.error) && info.error.name === 'MessageAbortedError';
  return aborted && parts.some((p) => p.type !== 'step-start' && p.type !== 'reasoning');
}

/** The steps of an assistant message: its parts' positions, a new step at each `step-start`. */
export function stepsOf(parts: readonly JsonObject[]): number[][] {
  const steps: number[][] = [];
  parts.forEach((part, k) => {
    if (part.type === 'step-start' || steps.length === 0) steps.push([]);
    (steps[steps.length - 1] as number[]).push(k);
  });
  return steps;
}

/** The parts of a user message OpenCode sends, each with its text as sent. */
export function userTexts(parts: readonly JsonObject[]): { part: JsonObject; text: string }[] {
  return parts.flatMap((part) => {
    // OpenCode leaves out a text that is empty or marked ignored.
    if (part.type === 'text' && typeof part.text === 'string' && part.text !== '' && part.ignored !== true)
      return [{ part, text: part.text }];
    if (part.type === 'file' && part.mime !== 'text/plain' && part.mime !== 'application/x-directory') {
      const name = String(part.filename ?? part.url ?? '');
      return [{ part, text: `[Attached ${String(part.mime ?? 'file')}: ${name}]` }];
    }
    if (part.type === 'subtask') return [{ part, text: SUBTASK }];
    return part.type === 'compaction' ? [{ part, text: COMPACTION_REQUEST }] : [];
  });
}

/**
 * Whether a user message is OpenCode's own: what it sends is its own (`synthetic` texts, a
 * compaction request) and nothing in it is the user's doing (a file or an agent named with `@`, a
 * subtask).
 */
function isOwnMessage(parts: readonly JsonObject[], sent: readonly { part: JsonObject }[]): boolean {
  const own = (part: JsonObject): boolean =>
    (part.type === 'text' && part.synthetic === true) || part.type === 'compaction';
  return (
    sent.every((s) => own(s.part)) &&
    !parts.some((p) => p.type === 'file' || p.type === 'agent' || p.type === 'subtask')
  );
}

/** What a call's result says, and whether it is an error (`whole`: outputs OpenCode cleared, whole). */
export function toolResult(state: JsonObject, whole: boolean): { text: string; error: boolean } {
  const metadata = isRecord(state.metadata) ? state.metadata : {};
  switch (state.status) {
    case 'completed': {
      const cleared = !whole && isRecord(state.time) && state.time.compacted !== undefined;
      return { text: cleared ? CLEARED : String(state.output ?? ''), error: false };
    }
    case 'error':
      return metadata.interrupted === true && typeof metadata.output === 'string'
        ? { text: metadata.output, error: false }
        : { text: String(state.error ?? ''), error: true };
    default:
      return { text: INTERRUPTED, error: true };
  }
}

/** The Claude Code lines of one step of an assistant message: the reply, and its results when it calls tools. */
function stepLines(parts: readonly JsonObject[], index: number, step: number, whole: boolean): JsonObject[] {
  const blocks: JsonObject[] = [];
  const results: JsonObject[] = [];
  for (const part of textParts(parts, 'reasoning')) blocks.push({ type: 'thinking', thinking: part.text });
  for (const part of textParts(parts, 'text')) blocks.push({ type: 'text', text: part.text });
  for (const part of parts) {
    if (part.type !== 'tool') continue;
    const state = part.state as JsonObject;
    blocks.push({
      type: 'tool_use',
      id: part.callID,
      name: part.tool,
      input: isRecord(state.input) ? state.input : {},
    });
    const { text, error } = toolResult(state, whole);
    results.push({
      type: 'tool_result',
      tool_use_id: part.callID,
      content: text,
      ...(error ? { is_error: true } : {}),
    });
  }
  if (blocks.length === 0) return [];
  const mark = { index, step };
  const reply = { type: 'assistant', [MESSAGE]: mark, message: { role: 'assistant', content: blocks } };
  if (results.length === 0) return [reply];
  return [
    reply,
    {
      type: 'user',
      isMeta: true,
      [MESSAGE]: { ...mark, results: true },
      message: { role: 'user', content: results },
    },
  ];
}

/** The Claude Code lines of the message at `index` read as `view` (a message kept out: one line no item comes of). */
export function linesOf(value: unknown, index: number, view: OpenCodeView, whole: boolean): JsonObject[] {
  const { info, parts } = messageOf(value, index);
  const kept = [{ type: 'opencode-kept', [MESSAGE]: { index } }];
  if (view === 'kept') return kept;
  if (view === 'summary') {
    const text = textParts(parts, 'text')
      .map((p) => p.text as string)
      .join('\n');
    return [
      {
        type: 'user',
        isCompactSummary: true,
        [MESSAGE]: { index },
        message: { role: 'user', content: text },
      },
    ];
  }
  if (info.role === 'user') {
    const texts = userTexts(parts);
    if (texts.length === 0) return kept;
    const meta = isOwnMessage(parts, texts) ? { isMeta: true } : {};
    const content = texts.map(({ text }) => ({ type: 'text', text }));
    return [{ type: 'user', ...meta, [MESSAGE]: { index }, message: { role: 'user', content } }];
  }
  if (!isSent(info, parts)) return kept;
  const lines = stepsOf(parts).flatMap((positions, step) =>
    stepLines(
      positions.map((k) => parts[k] as JsonObject),
      index,
      step,
      whole,
    ),
  );
  return lines.length > 0 ? lines : kept;
}

/**
 * How each message is read (see the module comment): the latest compaction's summary and what came
 * after (with the tail it kept) in the context, the rest kept out; with `whole`, every message but
 * the compactions' requests and summaries.
 */
export function viewsOf(messages: readonly unknown[], whole: boolean): OpenCodeView[] {
  const read = messages.map((m, i) => messageOf(m, i));
  const views = read.map((m): OpenCodeView =>
    whole && (isCompactionRequest(m) || isSummary(m.info)) ? 'kept' : 'context',
  );
  if (whole) return views;
  // The latest summary whose request is in the session, as OpenCode finds it walking back.
  for (let s = read.length - 1; s >= 0; s--) {
    const summary = read[s] as { info: JsonObject; parts: JsonObject[] };
    if (!isSummary(summary.info) || summary.info.finish === undefined) continue;
    const request = read.findIndex((m) => m.info.id === summary.info.parentID && isCompactionRequest(m));
    if (request < 0) continue;
    const part = (read[request] as { parts: JsonObject[] }).parts.find((p) => p.type === 'compaction');
    const tail = read.findIndex((m) => m.info.id === part?.tail_start_id);
    for (let i = 0; i <= request; i++) views[i] = 'kept';
    for (let i = tail < 0 || tail > request ? request : tail; i < request; i++) views[i] = 'context';
    views[s] = 'summary';
    break;
  }
  return views;
}

/** Import from a parsed export. */
export function openCodeFromValue(
  value: unknown,
  options: ImportOptions,
  idPrefix: string,
  indent = 2,
): ImportedSession {
  if (!isOpenCodeExport(value)) {
    throw new ImportError(
      'expected an OpenCode export (an object with the session’s info and messages of info and parts)',
    );
  }
  const record = value as JsonObject & { messages: unknown[] };
  const whole = options.wholeHistory === true;
  const views = viewsOf(record.messages, whole);
  const lines: JsonLine[] = record.messages.flatMap((message, i) =>
    linesOf(message, i, views[i] as OpenCodeView, whole).map((line) => ({ line: i + 1, value: line })),
  );
  const { items, slots } = itemsThroughClaudeCode(lines, options, idPrefix, 'opencode', whole);
  return {
    format: 'opencode',
    items: finishItems(items, options.tokenizer),
    document: {
      format: 'opencode',
      top: { ...record, messages: null },
      messages: [...record.messages],
      views,
      whole,
      slots,
      indent,
    },
  };
}

/**
 * Imports an OpenCode session as `opencode export` writes it.
 * @throws ImportError naming the field of bad input
 */
export function importOpenCodeSession(text: string, options: ImportOptions): ImportedSession {
  const idPrefix = options.idPrefix ?? defaultIdPrefix('opencode', text);
  return openCodeFromValue(parseJson(text), options, idPrefix, jsonIndent(text));
}
