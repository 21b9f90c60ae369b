/**
 * OpenCode exports written back (the mapping is described in `opencode.ts`): each message from the
 * Claude Code lines it was read as. A message whose lines are unchanged is written as it was (an
 * unchanged import gives back a deep-equal export); a changed one is rebuilt from what it was — a
 * step whose reply is gone goes with its parts, a step that stays keeps its frame (`step-start`,
 * `step-finish`) and its parts in place, each text, reasoning and tool part changed only where its
 * item changed; a message none of whose lines is left is gone. A new summary is written as
 * OpenCode writes its own compaction (a user message with a `compaction` part, answered by an
 * assistant message marked `summary`; what is written before it, the task and the pinned notes,
 * as the tail it keeps, `tail_start_id`), so OpenCode sends what the items hold; a new user or
 * assistant item is a message of its kind, new results answer the calls of the message before
 * them. New messages get ids that sort right after the message before them, as OpenCode orders a
 * session's messages by id. Pure.
 */
import type { ContextItem } from '../context/items';
import { claudeCodeLinesOf, TEXT_SEPARATOR } from './claude-code-export';
import { argsOf, blocksOf, blocksText, resultBlockText } from './gemini-parts';
import { isRecord, jsonEqual, omit, type JsonObject } from './json';
import {
  INTERRUPTED,
  linesOf,
  MESSAGE,
  messageOf,
  stepsOf,
  toolResult,
  userTexts,
  type OpenCodeDocument,
  type OpenCodeView,
} from './opencode';

interface Message {
  info: JsonObject;
  parts: JsonObject[];
}

/** A line's mark: the message it came from, its step, whether it holds results (null: a new line). */
function markOf(line: JsonObject): { index: number; step?: number; results?: boolean } | null {
  const mark = line[MESSAGE];
  return isRecord(mark) && typeof mark.index === 'number'
    ? (mark as { index: number; step?: number; results?: boolean })
    : null;
}

/** Makes the ids and frames of new messages and parts, each after the message written before it. */
class Fresh {
  private count = 0;
  constructor(
    private readonly document: OpenCodeDocument,
    private readonly sessionID: unknown,
  ) {}

  /** A message id after `previous` (before every other when there is none). */
  messageId(previous: Message | undefined): string {
    const after = typeof previous?.info.id === 'string' ? previous.info.id : 'msg_000000000000';
    return `${after}.${++this.count}`;
  }

  /** A part of a message (`fields`: its type and content). */
  part(messageID: string, k: number, fields: JsonObject): JsonObject {
    return {
      ...fields,
      id: `prt_${messageID.replace(/^msg_/, '')}.${String(k).padStart(3, '0')}`,
      sessionID: this.sessionID,
      messageID,
    };
  }

  /** The info of a new message of `role`, like the latest of that role in the source, at `previous`'s time. */
  info(role: 'user' | 'assistant', id: string, previous: Message | undefined): JsonObject {
    const like = [...this.document.messages]
      .reverse()
      .map((m) => (isRecord(m) && isRecord(m.info) ? m.info : null))
      .find((info) => info?.role === role);
    const time = isRecord(previous?.info.time) ? previous.info.time.created : undefined;
    const created = typeof time === 'number' ? time : 0;
    const base = omit(like ?? {}, ['id', 'sessionID', 'time', 'summary', 'error', 'parentID', 'finish']);
    return role === 'user'
      ? { ...base, role, time: { created }, id, sessionID: this.sessionID }
      : {
          ...base,
          role,
          time: { created, completed: created },
          cost: 0,
          tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
          id,
          sessionID: this.sessionID,
        };
  }
}

/**
 * Parts with the text of one type (`text` but not `ignored`, or `reasoning`) made `text`: as they
 * were when it is theirs joined, else the first such part holds it and the others go (all go for
 * no text; a new part before the closing frame when none was there).
 */
function withText(
  parts: readonly JsonObject[],
  type: 'text' | 'reasoning',
  text: string,
  make: (fields: JsonObject) => JsonObject,
): JsonObject[] {
  const own = parts.filter((p) => p.type === type && typeof p.text === 'string' && p.ignored !== true);
  if (own.map((p) => p.text).join(TEXT_SEPARATOR) === text) return [...parts];
  if (own.length === 0) {
    const at = closingFrame(parts);
    return [...parts.slice(0, at), make({ type, text }), ...parts.slice(at)];
  }
  return parts.flatMap((p) => {
    if (!own.includes(p)) return [p];
    return p === own[0] && text !== '' ? [{ ...p, text }] : [];
  });
}

/** Where a step's closing frame starts (its `step-finish` and what follows it). */
function closingFrame(parts: readonly JsonObject[]): number {
  const at = parts.findIndex((p) => p.type === 'step-finish');
  return at < 0 ? parts.length : at;
}

/**
 * A user message's parts with the text of its line's blocks: each sent part its block's, while the
 * blocks are still one a part; else all of it in its first text part (a summary's in its text).
 */
function userParts(
  was: Message,
  blocks: readonly JsonObject[],
  make: (fields: JsonObject) => JsonObject,
): JsonObject[] {
  const sent = was.info.role === 'user' ? userTexts(was.parts) : [];
  if (sent.length > 0 && blocks.length === sent.length && blocks.every((b) => b.type === 'text'))
    return was.parts.map((part) => {
      const k = sent.findIndex((s) => s.part === part);
      const text = k < 0 || part.type !== 'text' ? undefined : (blocks[k] as JsonObject).text;
      return text === undefined || text === part.text ? part : { ...part, text };
    });
  return withText(was.parts, 'text', blocksText(blocks, 'text'), make);
}

/** A tool part answered by a call block and its result block, changed only where they changed. */
function toolPartWith(
  part: JsonObject,
  use: JsonObject,
  answer: JsonObject | undefined,
  whole: boolean,
): JsonObject {
  const state = part.state as JsonObject;
  let next = jsonEqual(use.input, state.input) ? state : { ...state, input: argsOf(use.input) };
  const text = answer ? resultBlockText(answer.content) : null;
  const was = toolResult(state, whole);
  if (text !== null && text !== was.text) {
    const metadata = isRecord(state.metadata) ? state.metadata : {};
    if (state.status === 'completed')
      next = {
        ...next,
        output: text,
        ...(isRecord(state.time) ? { time: omit(state.time, ['compacted']) } : {}),
      };
    else if (state.status === 'error')
      next = was.error ? { ...next, error: text } : { ...next, metadata: { ...metadata, output: text } };
    else if (text !== INTERRUPTED)
      next = { ...next, status: 'completed', output: text, title: '', metadata: {} };
  }
  return next === state ? part : { ...part, state: next };
}

/** A new tool part for a call block no part had, answered by its result block. */
function newToolPart(use: JsonObject, answer: JsonObject | undefined): JsonObject {
  const input = argsOf(use.input);
  const state: JsonObject = answer
    ? answer.is_error === true
      ? { status: 'error', input, error: resultBlockText(answer.content) }
      : { status: 'completed', input, output: resultBlockText(answer.content), title: '', metadata: {} }
    : { status: 'pending', input, raw: '' };
  return { type: 'tool', callID: use.id, tool: use.name, state };
}

/** A step's parts rebuilt from its reply and results lines (see the module comment). */
function rebuiltStep(
  own: readonly JsonObject[],
  reply: JsonObject,
  results: JsonObject | undefined,
  whole: boolean,
  make: (fields: JsonObject) => JsonObject,
): JsonObject[] {
  const blocks = blocksOf(reply);
  const answers = new Map<unknown, JsonObject>();
  for (const block of blocksOf(results))
    if (block.type === 'tool_result') answers.set(block.tool_use_id, block);
  const uses = blocks.filter((b) => b.type === 'tool_use');
  let parts = withText(own, 'reasoning', blocksText(blocks, 'thinking'), make);
  parts = withText(parts, 'text', blocksText(blocks, 'text'), make);
  const seen = new Set<unknown>();
  parts = parts.flatMap((part) => {
    if (part.type !== 'tool') return [part];
    const use = uses.find((u) => u.id === part.callID && !seen.has(u.id));
    if (!use) return [];
    seen.add(use.id);
    return [toolPartWith(part, use, answers.get(use.id), whole)];
  });
  const fresh = uses.filter((u) => !seen.has(u.id)).map((u) => make(newToolPart(u, answers.get(u.id))));
  const at = closingFrame(parts);
  return [...parts.slice(0, at), ...fresh, ...parts.slice(at)];
}

/**
 * A message rebuilt from its lines now (`group`, in order), or null when none of its content is
 * left. `source`: the lines it was read as.
 */
function rebuilt(
  was: Message,
  group: readonly JsonObject[],
  source: readonly JsonObject[],
  whole: boolean,
  fresh: Fresh,
): Message | null {
  const messageID = String(was.info.id ?? '');
  let k = 0;
  const make = (fields: JsonObject): JsonObject => fresh.part(messageID, ++k, fields);
  const line = (lines: readonly JsonObject[], step: number | undefined, results: boolean) =>
    lines.find((l) => markOf(l)?.step === step && (markOf(l)?.results === true) === results);
  if (was.info.role === 'user' || source.some((l) => l.isCompactSummary === true)) {
    const now = group[0];
    return now ? { ...was, parts: userParts(was, blocksOf(now), make) } : null;
  }
  const parts: JsonObject[] = [];
  stepsOf(was.parts).forEach((positions, step) => {
    const own = positions.map((p) => was.parts[p] as JsonObject);
    const sourceReply = line(source, step, false);
    // A step that gave no line (its frame alone) stays with the message.
    if (!sourceReply) return void parts.push(...own);
    const reply = line(group, step, false);
    if (!reply) return;
    const results = line(group, step, true);
    const unchanged =
      jsonEqual(reply.message, sourceReply.message) &&
      jsonEqual(results?.message ?? null, line(source, step, true)?.message ?? null);
    parts.push(...(unchanged ? own : rebuiltStep(own, reply, results, whole, make)));
  });
  return parts.some((p) => p.type !== 'step-start' && p.type !== 'step-finish') ? { ...was, parts } : null;
}

/** Whether a line is results alone. */
function onlyResults(line: JsonObject): boolean {
  const blocks = blocksOf(line);
  return line.type === 'user' && blocks.length > 0 && blocks.every((b) => b.type === 'tool_result');
}

/** New results answering the calls of a message written before them (a call no part has is left unanswered). */
function answered(message: Message, results: JsonObject, whole: boolean): Message {
  const parts = message.parts.map((part) => {
    if (part.type !== 'tool') return part;
    const answer = blocksOf(results).find((b) => b.tool_use_id === part.callID);
    if (!answer) return part;
    const state = part.state as JsonObject;
    const use = { id: part.callID, input: state.input };
    return state.status !== 'completed' && state.status !== 'error'
      ? { ...part, state: newToolPart(use, answer).state }
      : toolPartWith(part, use, answer, whole);
  });
  return { ...message, parts };
}

/** The messages of new lines: a summary as OpenCode's compaction (two messages), else one of the line's kind. */
function freshMessages(line: JsonObject, written: readonly Message[], fresh: Fresh): Message[] {
  const previous = written[written.length - 1];
  const blocks = blocksOf(line);
  const id = fresh.messageId(previous);
  let k = 0;
  const make = (messageID: string) => (fields: JsonObject) => fresh.part(messageID, ++k, fields);
  if (line.isCompactSummary === true) {
    const answer = fresh.messageId(previous);
    const request: Message = {
      info: fresh.info('user', id, previous),
      // What stays before the summary (the task, pinned notes) is the tail OpenCode keeps with it.
      parts: [
        make(id)({
          type: 'compaction',
          auto: true,
          ...(written.length > 0 ? { tail_start_id: (written[0] as Message).info.id } : {}),
        }),
      ],
    };
    const summary: Message = {
      info: {
        ...fresh.info('assistant', answer, previous),
        parentID: id,
        mode: 'compaction',
        agent: 'compaction',
        summary: true,
        finish: 'stop',
      },
      parts: [make(answer)({ type: 'text', text: blocksText(blocks, 'text') })],
    };
    return [request, summary];
  }
  if (line.type !== 'assistant')
    return [
      {
        info: fresh.info('user', id, previous),
        parts: [
          make(id)({
            type: 'text',
            text: blocksText(blocks, 'text'),
            ...(line.isMeta === true ? { synthetic: true } : {}),
          }),
        ],
      },
    ];
  const part = make(id);
  const thinking = blocksText(blocks, 'thinking');
  const text = blocksText(blocks, 'text');
  return [
    {
      info: { ...fresh.info('assistant', id, previous), finish: 'stop' },
      parts: [
        part({ type: 'step-start' }),
        ...(thinking !== '' ? [part({ type: 'reasoning', text: thinking })] : []),
        ...(text !== '' ? [part({ type: 'text', text })] : []),
        ...blocks.filter((b) => b.type === 'tool_use').map((use) => part(newToolPart(use, undefined))),
        part({
          type: 'step-finish',
          reason: 'stop',
          cost: 0,
          tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
        }),
      ],
    },
  ];
}

/** Writes items back as the OpenCode export they came from (see the module comment). */
export function exportOpenCodeSession(items: readonly ContextItem[], document: OpenCodeDocument): string {
  const lines = claudeCodeLinesOf(items, document.slots, 'opencode');
  const fresh = new Fresh(document, isRecord(document.top.info) ? document.top.info.id : undefined);
  const messages: Message[] = [];
  // The lines of each message (a new item may have come between them: a note after a call).
  const groups = new Map<number, JsonObject[]>();
  for (const line of lines) {
    const index = markOf(line)?.index;
    if (index !== undefined) groups.set(index, [...(groups.get(index) ?? []), line]);
  }
  for (const line of lines) {
    const mark = markOf(line);
    const previous = messages[messages.length - 1];
    if (!mark) {
      if (onlyResults(line) && previous)
        messages[messages.length - 1] = answered(previous, line, document.whole);
      else messages.push(...freshMessages(line, messages, fresh));
      continue;
    }
    // A message is written where its first line is.
    const group = groups.get(mark.index);
    if (!group || group[0] !== line) continue;
    const value = document.messages[mark.index];
    const was = messageOf(value, mark.index);
    const view = document.views[mark.index] as OpenCodeView;
    const source = linesOf(value, mark.index, view, document.whole);
    const unchanged =
      group.length === source.length && group.every((l, k) => jsonEqual(l.message, source[k]?.message));
    const now = unchanged || view === 'kept' ? was : rebuilt(was, group, source, document.whole, fresh);
    if (now) messages.push(now === was ? (value as Message) : now);
  }
  return `${JSON.stringify({ ...document.top, messages }, null, document.indent)}\n`;
}
