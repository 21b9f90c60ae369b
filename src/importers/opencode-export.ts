/**
 * OpenCode exports written back (the mapping is described in `opencode.ts`): each message from the
 * Claude Code lines it was read as. A message whose lines are unchanged is written as it was (an
 * unchanged import gives back a deep-equal export); a changed one is rebuilt from what it was — a
 * step whose reply is gone goes with its parts, a step that stays keeps its frame (`step-start`,
 * `step-finish`) and its parts in place, each text, reasoning and tool part changed only where its
 * item changed; a message none of whose lines is left is gone. A new summary is written as
 * OpenCode writes its own compaction (a user message with a `compaction` part, answered by an
 * assistant message marked `summary`; what is written before it in the context, the task and the
 * pinned notes, as the tail it keeps, `tail_start_id`), so OpenCode sends what the items hold; a
 * new user or assistant item is a message of its kind (what a compaction wrote, such as the
 * artifact trail, a `synthetic` text: OpenCode's own), new results answer the calls of the message
 * before them, a new call's state is complete with its times; a request of OpenCode's own
 * compaction whose summary was merged into a new one goes with it. OpenCode orders a session's messages
 * and a message's parts by id: a new one gets the id of the one before it (the last message read
 * from the file, the part before it) and a counter, so it sorts right after it. Pure.
 */
import type { ContextItem } from '../context/items';
import { writtenType } from '../context/written-items';
import { claudeCodeLinesOf, TEXT_SEPARATOR } from './claude-code-export';
import { argsOf, blocksOf, blocksText, resultBlockText } from './gemini-parts';
import { isRecord, jsonEqual, omit, type JsonObject } from './json';
import {
  INTERRUPTED,
  isCompactionRequest,
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

/** A counter as written in a new id: fixed width, so that ids sort by it. */
function counter(n: number): string {
  return String(n).padStart(6, '0');
}

/** Makes new messages: their ids (after the last message read from the file) and their info. */
class Fresh {
  private count = 0;
  /** The id of the last message written that came from the file. */
  anchor = 'msg_000000000000';
  /** Creation time of the last message written (new ones take it). */
  time = 0;
  /** The info a new message of each role starts from: the latest of that role in the source, its ids and outcome left out. */
  private readonly like: Record<'user' | 'assistant', JsonObject>;
  constructor(
    document: OpenCodeDocument,
    readonly sessionID: unknown,
  ) {
    const infos = document.messages.map((m) => (isRecord(m) && isRecord(m.info) ? m.info : null));
    const latest = (role: string): JsonObject =>
      omit([...infos].reverse().find((info) => info?.role === role) ?? {}, [
        'id',
        'sessionID',
        'time',
        'summary',
        'error',
        'parentID',
        'finish',
      ]);
    this.like = { user: latest('user'), assistant: latest('assistant') };
  }

  /** A message id that sorts after every one written so far and before the file's next. */
  messageId(): string {
    return `${this.anchor}.${counter(++this.count)}`;
  }

  /** The info of a new message of `role`, like the latest of that role in the source. */
  info(role: 'user' | 'assistant', id: string, extra: JsonObject = {}): JsonObject {
    const base = this.like[role];
    const created = this.time;
    return role === 'user'
      ? { ...base, role, time: { created }, ...extra, id, sessionID: this.sessionID }
      : {
          ...base,
          role,
          time: { created, completed: created },
          cost: 0,
          tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
          ...extra,
          id,
          sessionID: this.sessionID,
        };
  }
}

/**
 * A message with ids for its new parts (those without one), each after the part before it — the
 * message's own id for one that opens it — and its session and message ids.
 */
function withPartIds(message: Message, sessionID: unknown): Message {
  const messageID = String(message.info.id ?? '');
  let before = `prt_${messageID.replace(/^msg_/, '')}`;
  let n = 0;
  const parts = message.parts.map((part) => {
    if (typeof part.id === 'string') {
      before = part.id;
      n = 0;
      return part;
    }
    return { ...part, id: `${before}.${counter(++n)}`, sessionID, messageID };
  });
  return { ...message, parts };
}

/**
 * Parts with the text of one type (`text` or `reasoning`) made `text`: as they were when it is
 * theirs joined, else the first such part holds it and the others go (all go for no text; a new
 * part before the closing frame when none was there).
 */
function withText(parts: readonly JsonObject[], type: 'text' | 'reasoning', text: string): JsonObject[] {
  const own = parts.filter((p) => p.type === type && typeof p.text === 'string');
  if (own.map((p) => p.text).join(TEXT_SEPARATOR) === text) return [...parts];
  if (own.length === 0) {
    const at = closingFrame(parts);
    return text === '' ? [...parts] : [...parts.slice(0, at), { type, text }, ...parts.slice(at)];
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
 * A user message's parts with the text of its line's blocks: each part OpenCode sends its block's
 * while the blocks are still one a part (a text part its text; a file or another part whose text
 * changed, a text part of it); else one text part of all of it in place of the parts sent (a
 * summary's in its text part).
 */
function userParts(was: Message, blocks: readonly JsonObject[]): JsonObject[] {
  const sent = was.info.role === 'user' ? userTexts(was.parts) : [];
  if (sent.length > 0 && blocks.length === sent.length && blocks.every((b) => b.type === 'text'))
    return was.parts.map((part) => {
      const k = sent.findIndex((s) => s.part === part);
      if (k < 0) return part;
      const text = String((blocks[k] as JsonObject).text ?? '');
      if (text === (sent[k] as { text: string }).text) return part;
      return part.type === 'text' ? { ...part, text } : { type: 'text', text };
    });
  if (sent.length === 0) return withText(was.parts, 'text', blocksText(blocks, 'text'));
  const text = blocksText(blocks, 'text');
  const first = sent[0]?.part as JsonObject;
  return was.parts.flatMap((part) => {
    if (part !== first) return sent.some((s) => s.part === part) ? [] : [part];
    return part.type === 'text' ? [{ ...part, text }] : [{ type: 'text', text }];
  });
}

/** A tool part answered by a call block and its result block, changed only where they changed. */
function toolPartWith(
  part: JsonObject,
  use: JsonObject,
  answer: JsonObject | undefined,
  whole: boolean,
  time: number,
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
    else if (text !== INTERRUPTED) {
      const start = isRecord(state.time) && typeof state.time.start === 'number' ? state.time.start : time;
      next = {
        ...next,
        status: 'completed',
        output: text,
        title: '',
        metadata: {},
        time: { start, end: start },
      };
    }
  }
  return next === state ? part : { ...part, state: next };
}

/** A new tool part for a call block no part had, answered by its result block, at `time`. */
function newToolPart(use: JsonObject, answer: JsonObject | undefined, time: number): JsonObject {
  const input = argsOf(use.input);
  const span = { start: time, end: time };
  const state: JsonObject = answer
    ? answer.is_error === true
      ? { status: 'error', input, error: resultBlockText(answer.content), time: span }
      : {
          status: 'completed',
          input,
          output: resultBlockText(answer.content),
          title: '',
          metadata: {},
          time: span,
        }
    : { status: 'pending', input, raw: '' };
  return { type: 'tool', callID: use.id, tool: use.name, state };
}

/** A step's parts rebuilt from its reply and results lines (see the module comment). */
function rebuiltStep(
  own: readonly JsonObject[],
  reply: JsonObject,
  results: JsonObject | undefined,
  whole: boolean,
  time: number,
): JsonObject[] {
  const blocks = blocksOf(reply);
  const answers = new Map<unknown, JsonObject>();
  for (const block of blocksOf(results))
    if (block.type === 'tool_result') answers.set(block.tool_use_id, block);
  const uses = blocks.filter((b) => b.type === 'tool_use');
  let parts = withText(own, 'reasoning', blocksText(blocks, 'thinking'));
  parts = withText(parts, 'text', blocksText(blocks, 'text'));
  const seen = new Set<unknown>();
  parts = parts.flatMap((part) => {
    if (part.type !== 'tool') return [part];
    const use = uses.find((u) => u.id === part.callID && !seen.has(u.id));
    if (!use) return [];
    seen.add(use.id);
    return [toolPartWith(part, use, answers.get(use.id), whole, time)];
  });
  const fresh = uses.filter((u) => !seen.has(u.id)).map((u) => newToolPart(u, answers.get(u.id), time));
  const at = closingFrame(parts);
  return [...parts.slice(0, at), ...fresh, ...parts.slice(at)];
}

/** When a message was created (0 when it does not say). */
function createdAt(message: Message): number {
  const time = isRecord(message.info.time) ? message.info.time.created : undefined;
  return typeof time === 'number' ? time : 0;
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
): Message | null {
  const line = (lines: readonly JsonObject[], step: number | undefined, results: boolean) =>
    lines.find((l) => markOf(l)?.step === step && (markOf(l)?.results === true) === results);
  if (was.info.role === 'user' || source.some((l) => l.isCompactSummary === true)) {
    const now = group[0];
    return now ? { ...was, parts: userParts(was, blocksOf(now)) } : null;
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
    parts.push(...(unchanged ? own : rebuiltStep(own, reply, results, whole, createdAt(was))));
  });
  return parts.some((p) => p.type !== 'step-start' && p.type !== 'step-finish') ? { ...was, parts } : null;
}

/** Whether a part is a text OpenCode wrote itself. */
function isSynthetic(part: JsonObject): boolean {
  return part.type === 'text' && part.synthetic === true;
}

/** Whether a line is results alone. */
function onlyResults(line: JsonObject): boolean {
  const blocks = blocksOf(line);
  return line.type === 'user' && blocks.length > 0 && blocks.every((b) => b.type === 'tool_result');
}

/** New results answering the calls of a message written before them (a call no part has is left unanswered). */
function answered(message: Message, results: JsonObject, whole: boolean): Message {
  const time = createdAt(message);
  const parts = message.parts.map((part) => {
    if (part.type !== 'tool') return part;
    const answer = blocksOf(results).find((b) => b.tool_use_id === part.callID);
    if (!answer) return part;
    const state = part.state as JsonObject;
    const use = { id: part.callID, name: part.tool, input: state.input };
    return state.status === 'pending'
      ? { ...part, state: newToolPart(use, answer, time).state }
      : toolPartWith(part, use, answer, whole, time);
  });
  return { ...message, parts };
}

/** What the messages written so far say about where a new one goes. */
interface Written {
  messages: Message[];
  /** Of `messages`, those in the context (not kept out of it), in order. */
  inContext: Message[];
  /** The id of the last user message written, the parent of a new reply. */
  lastUser: unknown;
}

/** The messages of new lines: a summary as OpenCode's compaction (two messages), else one of the line's kind. */
function freshMessages(line: JsonObject, written: Written, fresh: Fresh): Message[] {
  const blocks = blocksOf(line);
  const id = fresh.messageId();
  if (line.isCompactSummary === true) {
    const answer = fresh.messageId();
    // What stays before the summary in the context (the task, pinned notes) is the tail OpenCode
    // keeps with it.
    const tail = written.inContext[0]?.info.id;
    const request: Message = {
      info: fresh.info('user', id),
      parts: [{ type: 'compaction', auto: true, ...(tail !== undefined ? { tail_start_id: tail } : {}) }],
    };
    const summary: Message = {
      info: fresh.info('assistant', answer, {
        parentID: id,
        mode: 'compaction',
        agent: 'compaction',
        summary: true,
        finish: 'stop',
      }),
      parts: [{ type: 'text', text: blocksText(blocks, 'text') }],
    };
    return [request, summary];
  }
  const text = blocksText(blocks, 'text');
  if (line.type !== 'assistant') {
    const own = writtenType(text) !== null ? { synthetic: true } : {};
    return [{ info: fresh.info('user', id), parts: [{ type: 'text', text, ...own }] }];
  }
  const thinking = blocksText(blocks, 'thinking');
  const uses = blocks.filter((b) => b.type === 'tool_use');
  const reason = uses.length > 0 ? 'tool-calls' : 'stop';
  return [
    {
      info: fresh.info('assistant', id, {
        ...(written.lastUser !== undefined ? { parentID: written.lastUser } : {}),
        finish: reason,
      }),
      parts: [
        { type: 'step-start' },
        ...(thinking !== ''
          ? [{ type: 'reasoning', text: thinking, time: { start: fresh.time, end: fresh.time } }]
          : []),
        ...(text !== '' ? [{ type: 'text', text }] : []),
        ...uses.map((use) => newToolPart(use, undefined, fresh.time)),
        {
          type: 'step-finish',
          reason,
          cost: 0,
          tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
        },
      ],
    },
  ];
}

/** Writes items back as the OpenCode export they came from (see the module comment). */
export function exportOpenCodeSession(items: readonly ContextItem[], document: OpenCodeDocument): string {
  const lines = claudeCodeLinesOf(items, document.slots, 'opencode');
  const fresh = new Fresh(document, isRecord(document.top.info) ? document.top.info.id : undefined);
  const written: Written = { messages: [], inContext: [], lastUser: undefined };
  const add = (message: Message, inContext: boolean): void => {
    written.messages.push(message);
    if (inContext) written.inContext.push(message);
    if (message.info.role === 'user' && !isCompactionRequest(message) && !message.parts.every(isSynthetic))
      written.lastUser = message.info.id;
  };
  // The lines of each message (a new item may have come between them: a note after a call).
  const groups = new Map<number, JsonObject[]>();
  for (const line of lines) {
    const index = markOf(line)?.index;
    if (index !== undefined) groups.set(index, [...(groups.get(index) ?? []), line]);
  }
  for (const line of lines) {
    const mark = markOf(line);
    const messages = written.messages;
    if (!mark) {
      const previous = messages[messages.length - 1];
      if (onlyResults(line) && previous)
        messages[messages.length - 1] = answered(previous, line, document.whole);
      else for (const message of freshMessages(line, written, fresh)) add(message, true);
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
    const now = unchanged || view === 'kept' ? was : rebuilt(was, group, source, document.whole);
    if (!now) continue;
    fresh.anchor = String(was.info.id ?? fresh.anchor);
    fresh.time = createdAt(was);
    add(now === was ? (value as Message) : now, view !== 'kept');
  }
  // A request of OpenCode's own compaction whose summary was merged into a new one goes with it
  // (OpenCode would send it again as "What did we do so far?").
  const answeredIds = new Set(
    written.messages.filter((m) => m.info.summary === true).map((m) => m.info.parentID),
  );
  const messages = written.messages
    .filter((m) => !isCompactionRequest(m) || answeredIds.has(m.info.id))
    .map((m) => withPartIds(m, fresh.sessionID));
  return `${JSON.stringify({ ...document.top, messages }, null, document.indent)}\n`;
}
