/**
 * OpenHands trajectories (`save_trajectory_path`, the trajectory download, the `history` of a line
 * of an evaluation's output.jsonl): a JSON list of serialized events — actions
 * `{ id, source, action, args, message, tool_call_metadata? }` and observations
 * `{ id, source, observation, content, extras, cause, tool_call_metadata? }` — bare, or under
 * `history` or `trajectory` in an object; older trajectories flattened an action's `args` into it
 * and had no ids.
 *
 * The items are what OpenHands' ConversationMemory sends the model:
 * - `system` → SYSTEM_PROMPT (its `content`), and TOOL_DEFINITIONS after it for its `tools`,
 *   counted in the header (the tool list stays in the event);
 * - `message` from the user → a user message, from the agent → assistant text (in an older
 *   trajectory, with no `source`, a message before the agent's first step is the user's task);
 * - an action the agent takes by calling a tool (`run`, `read`, `edit`, `write`, `think`,
 *   `finish`, `browse_interactive`, …, or any action with `tool_call_metadata`) → a tool call;
 *   actions of one model response (its `model_response.id`) are one assistant message, whose text is
 *   the response's content (else the actions' `thought`s). The call is the metadata's
 *   `function_name` and `tool_call_id` with the arguments the model wrote, or, without metadata, a
 *   name from the action type (`run` → `execute_bash`), an id made of the event's id and the
 *   action's arguments but its thought (`openhands-events.ts`);
 * - an observation → the tool result of the call it answers (its `cause`, else its metadata's
 *   `tool_call_id`, else, in older trajectories without ids, the last call not answered yet); an
 *   `error` observation or a command's non-zero exit code marks it failed for the open errors; an
 *   `error` that answers no call (a tool call OpenHands could not parse) → a meta user message, as
 *   OpenHands shows it; a `condense` observation (OpenHands' own summary) → COMPACTION_SUMMARY, left
 *   out with `wholeHistory`.
 * Left out of the context and kept as they are, so the exporter (`openhands-export.ts`) writes the
 * file back whole: state changes (`change_agent_state`, `agent_state_changed`), `recall` and its
 * observation (OpenHands renders it into a prompt of its own), `null` observations, condensation
 * actions, a user's own commands, observations whose call cannot be told, and unknown events.
 * A `condensation` action is not applied: the events it let OpenHands forget stay in the context
 * (as `wholeHistory` keeps them), its summary is not read. Pure.
 */
import type { ToolCall } from '../context/items';
import { takeText } from './blocks';
import { defaultIdPrefix, type Converted, type ImportedSession, type ImportOptions } from './common';
import { ImportError } from './errors';
import { describe, isRecord, jsonIndent, parseJson, type JsonObject } from './json';
import { openHandsParts, THOUGHT_SEPARATOR } from './openhands-export';
import { isOpenHandsSdkEvents, openHandsSdkFromValue } from './openhands-sdk';
import {
  argField,
  argsOf,
  callOf,
  fail,
  failed,
  isOpenHandsEvent,
  isToolAction,
  metadataOf,
  openHandsSession,
  readEvent,
  toolsOfSystemEvent,
  withArgs,
  type CallMetadata,
  type OpenHandsEvent,
} from './openhands-events';

/** Keys of an object that hold a trajectory's events, in the order they are looked for. */
const LIST_KEYS = ['history', 'trajectory'] as const;

/** Where a value keeps its events: itself (a bare list) or under one of {@link LIST_KEYS}. */
function eventList(value: unknown): { events: unknown[]; key: string | null } | null {
  if (Array.isArray(value)) return { events: value, key: null };
  if (!isRecord(value)) return null;
  for (const key of LIST_KEYS) {
    const events = value[key];
    if (Array.isArray(events)) return { events, key };
  }
  return null;
}

/**
 * Whether a parsed JSON value is an OpenHands trajectory: a list of events (some event with exactly
 * one of `action` and `observation`, no entry with a chat `role`), bare or under `history` or
 * `trajectory`. SWE-agent's steps hold both `action` and `observation`, chat messages a `role`.
 */
export function isOpenHandsTrajectory(value: unknown): boolean {
  const list = eventList(value);
  return (
    list !== null &&
    list.events.some(isOpenHandsEvent) &&
    !list.events.some((e) => isRecord(e) && typeof e.role === 'string')
  );
}

/** Whether a parsed JSON value is what {@link openHandsFromValue} reads: a trajectory, or a V1 event history. */
export function isOpenHandsFile(value: unknown): boolean {
  return isOpenHandsTrajectory(value) || isOpenHandsSdkEvents(value);
}

interface Pending {
  converted: Converted;
  isMeta: boolean;
  parts: JsonObject[];
  events: OpenHandsEvent[];
  isError?: boolean;
  /** The model response's id, for the actions of one response. */
  responseId?: string | null;
}

/** A message or system action's text, and its event with the text taken out. */
function actionText(event: OpenHandsEvent): { text: string; part: JsonObject } {
  const content = argsOf(event).content;
  if (typeof content !== 'string')
    fail(`expected a string, got ${describe(content)}`, event, argField(event, 'content'));
  return { text: content, part: textTaken(withArgs(event.value, { content: 0 }), event.value, content) };
}

/** An observation's content, and its event with the content taken out. */
function observationText(event: OpenHandsEvent): { text: string; part: JsonObject } {
  const content = event.value.content;
  if (typeof content !== 'string') fail(`expected a string, got ${describe(content)}`, event, 'content');
  return { text: content, part: textTaken({ ...event.value, content: 0 }, event.value, content) };
}

/** The event's `message` is shown to the user: when it repeats the text, it is taken out too. */
function textTaken(part: JsonObject, value: JsonObject, text: string): JsonObject {
  return value.message === text ? { ...part, message: 0 } : part;
}

/**
 * The text of a tool-calling message and its events' parts: the model response's content, the
 * events kept whole (the response stays in them); else the actions' thoughts, taken out.
 */
function callsText(pending: Pending, meta: CallMetadata | null): void {
  const message = pending.converted.message as Extract<Converted, { type: 'ASSISTANT_MESSAGE' }>['message'];
  if (meta?.reply) {
    const content = meta.reply.content;
    message.content = typeof content === 'string' && content.trim() ? content : null;
    pending.parts = pending.events.map((e) => e.value);
    return;
  }
  const blocks = pending.events.map((e) => {
    const thought = argsOf(e).thought;
    return typeof thought === 'string' && thought ? { type: 'thought', text: thought } : { type: 'none' };
  });
  const { text, layout } = takeText(blocks, 'thought', 'text', THOUGHT_SEPARATOR);
  message.content = text;
  pending.parts = pending.events.map((e, i) => {
    const block = layout[i] as JsonObject;
    return block.type === 'thought' ? withArgs(e.value, { thought: block.text }) : e.value;
  });
}

/** Maps the events to pending items (see the module comment). */
function pendingItems(events: readonly OpenHandsEvent[], whole: boolean): Pending[] {
  const pending: Pending[] = [];
  /** The assistant message the next action of the same model response joins. */
  let open: Pending | undefined;
  /** The call of each tool action, by the event's id (`#index` for one without: no cause names it). */
  const callOfEvent = new Map<unknown, ToolCall>();
  const unanswered: ToolCall[] = [];
  /** The id each call had in the file, where it had to take another (see below). */
  const idInFile = new Map<ToolCall, string>();
  const knownCalls = new Set<string>();
  const eventIds = new Set(events.map((e) => e.value.id).filter((id) => id !== undefined));
  /** Whether the agent acted yet: a message of an older trajectory (no `source`) before is the task. */
  let agentActed = false;
  const push = (item: Pending): void => {
    pending.push(item);
    if (item.converted.type !== 'TOOL_RESULT') open = undefined;
  };
  for (const event of events) {
    const { value } = event;
    if (event.kind === 'action') {
      const meta = metadataOf(event);
      if (event.type === 'system' || event.type === 'message') {
        const { text, part } = actionText(event);
        const converted: Converted =
          event.type === 'system'
            ? { type: 'SYSTEM_PROMPT', message: { role: 'system', content: text } }
            : value.source === 'user' || (value.source === undefined && !agentActed)
              ? { type: 'USER_MESSAGE', message: { role: 'user', content: text } }
              : { type: 'ASSISTANT_MESSAGE', message: { role: 'assistant', content: text } };
        push({ converted, isMeta: event.type === 'system', parts: [part], events: [event] });
        if (converted.type === 'ASSISTANT_MESSAGE') agentActed = true;
      } else if (isToolAction(event, meta)) {
        agentActed = true;
        let call = callOf(event, meta);
        // OpenHands' prompt-based function calling numbers the calls of every prompt it converts
        // from `toolu_01` again, so an id comes back in one trajectory: a later call takes its
        // event's position too (a context's call ids are unique; the event keeps its own).
        if (knownCalls.has(call.id)) {
          const again: ToolCall = { ...call, id: `${call.id}@${event.index}` };
          idInFile.set(again, call.id);
          call = again;
        }
        knownCalls.add(call.id);
        callOfEvent.set(value.id ?? `#${event.index}`, call);
        unanswered.push(call);
        const responseId = meta?.responseId ?? null;
        if (open && responseId !== null && open.responseId === responseId) {
          const message = open.converted.message as { tool_calls?: ToolCall[] };
          message.tool_calls = [...(message.tool_calls ?? []), call];
          open.events.push(event);
        } else {
          const item: Pending = {
            converted: {
              type: 'ASSISTANT_MESSAGE',
              message: { role: 'assistant', content: null, tool_calls: [call] },
            },
            isMeta: false,
            parts: [],
            events: [event],
            responseId,
          };
          push(item);
          open = item;
        }
        callsText(open as Pending, meta);
      }
      continue;
    }
    const call = answeredCall(event, callOfEvent, unanswered, idInFile, eventIds);
    if (call) {
      unanswered.splice(unanswered.indexOf(call), 1);
      const { text, part } = observationText(event);
      push({
        converted: { type: 'TOOL_RESULT', message: { role: 'tool', content: text, tool_call_id: call.id } },
        isMeta: false,
        parts: [part],
        events: [event],
        ...(failed(event) ? { isError: true } : {}),
      });
    } else if (event.type === 'error' || (event.type === 'condense' && !whole)) {
      const { text, part } = observationText(event);
      const message = { role: 'user' as const, content: text };
      push({
        converted:
          event.type === 'error'
            ? { type: 'USER_MESSAGE', message }
            : { type: 'COMPACTION_SUMMARY', message },
        isMeta: true,
        parts: [part],
        events: [event],
      });
    }
  }
  return pending;
}

/** Observations of the agent's state, not of a tool: they answer no call, whatever their place. */
const STATE_OBSERVATIONS = new Set(['agent_state_changed', 'null', 'recall', 'condense']);

/**
 * The call an observation answers: the action its `cause` names while that call waits, else the
 * waiting call of its metadata's `tool_call_id` (the id it had in the file); else a tool
 * observation that no event's id tells the call of (an older trajectory has no ids; a cause may
 * name an event the file does not hold) answers the last call not answered yet.
 */
function answeredCall(
  event: OpenHandsEvent,
  callOfEvent: ReadonlyMap<unknown, ToolCall>,
  unanswered: readonly ToolCall[],
  idInFile: ReadonlyMap<ToolCall, string>,
  eventIds: ReadonlySet<unknown>,
): ToolCall | undefined {
  const { value } = event;
  const byCause = value.cause !== undefined ? callOfEvent.get(value.cause) : undefined;
  if (byCause && unanswered.includes(byCause)) return byCause;
  const meta = metadataOf(event);
  if (meta) return unanswered.find((c) => (idInFile.get(c) ?? c.id) === meta.id);
  const untold = value.cause === undefined ? value.id === undefined : !eventIds.has(value.cause);
  return untold && !STATE_OBSERVATIONS.has(event.type) ? unanswered[unanswered.length - 1] : undefined;
}

/** Import from a parsed JSON value (a list of events, or an object holding one). */
export function openHandsFromValue(
  value: unknown,
  options: ImportOptions,
  idPrefix: string,
  indent = 0,
): ImportedSession {
  if (isOpenHandsSdkEvents(value)) return openHandsSdkFromValue(value, options, idPrefix, indent);
  const list = eventList(value);
  if (!list) {
    throw new ImportError(
      `expected an OpenHands trajectory (a list of events, or an object with "history" or "trajectory"), got ${describe(value)}`,
    );
  }
  const base = list.key ?? '';
  const events = list.events.map((e, i) => readEvent(e, i, base));
  return openHandsSession(
    pendingItems(events, options.wholeHistory === true),
    events,
    { value, key: list.key, indent },
    options,
    idPrefix,
    openHandsParts,
    (event) => toolsOfSystemEvent(argsOf(event).tools),
  );
}

/**
 * Imports an OpenHands trajectory (JSON).
 * @throws ImportError naming the event (`[3]`, `history[3]`) and field of a malformed one
 */
export function importOpenHandsTrajectory(text: string, options: ImportOptions): ImportedSession {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim().length === 0) throw new ImportError('the input is empty');
  return openHandsFromValue(
    parseJson(body),
    options,
    options.idPrefix ?? defaultIdPrefix('openhands', text),
    jsonIndent(body),
  );
}
