/**
 * OpenHands V1 event histories (software-agent-sdk): the events a conversation persists, each
 * with its `kind` — a list (`events.json`), or the `history` of an evaluation's output.jsonl line.
 * The items are what the SDK's events send the model (`to_llm_message`):
 * - `SystemPromptEvent` → SYSTEM_PROMPT (the prompt's text), and TOOL_DEFINITIONS after it for its
 *   `tools` (their names and descriptions: the SDK saves no parameters), counted in the header;
 *   the tools stay in the event;
 * - `MessageEvent` → a user or assistant message (its `llm_message`'s role and text blocks);
 * - `ActionEvent` → a tool call (`tool_call`: its id, name and the arguments the model wrote); the
 *   actions of one model response (`llm_response_id`) are one assistant message, whose text is
 *   their `thought`s;
 * - `ObservationEvent`, `AgentErrorEvent` and `UserRejectObservation` → the result of the call
 *   their `tool_call_id` names (the observation's text blocks; the error; `Action rejected:` and
 *   the reason), failed for the open errors when the observation says `is_error` or a command's
 *   exit code is not 0, and for the other two.
 * Kept as they are, out of the context, so the exporter writes the file back whole: what the model
 * is not sent (`Condensation`, `CondensationRequest`, `ConversationStateUpdateEvent`,
 * `PauseEvent`, events of kinds not known here), results whose call is not before them, a message
 * of another role. As for V0 trajectories (`openhands-import.ts`), a `Condensation` is not applied:
 * the events it let the agent forget stay in the context, its summary is not read. An action's
 * reasoning (`reasoning_content`, `thinking_blocks`) stays in its event. Pure.
 */
import type { AssistantMessage, ChatMessage, ContextItem, ToolCall } from '../context/items';
import { messageText } from '../context/items';
import { putText, takeText } from './blocks';
import {
  unchangedRaw,
  type Converted,
  type ImportedSession,
  type ImportOptions,
  type LineItem,
} from './common';
import { ImportError } from './errors';
import { describe, isRecord, type JsonObject } from './json';
import { onePartWriter, slotValues, type ItemPart, type LineSlot } from './line-slots';
import { openHandsSession, replacingKept, toolsOfSystemEvent } from './openhands-events';

/** Separator of the texts of a content list, and of the thoughts of one response's actions. */
const SEPARATOR = '\n';

/** What a rejected call's result says before the reason (`UserRejectObservation.to_llm_message`). */
const REJECTED = 'Action rejected: ';

/** Between a call id of the file used again and its event's position: its id in the context. */
const REPEATED = '@';

/** The reason of a rejection that gives none (`UserRejectObservation.rejection_reason`'s default). */
const DEFAULT_REJECTION = 'User rejected the action';

/** The kinds of event that answer a tool call. */
const RESULT_KINDS = new Set(['ObservationEvent', 'AgentErrorEvent', 'UserRejectObservation']);

/** Where a value keeps its events: itself, or `history`. */
function eventList(value: unknown): { events: unknown[]; key: string | null } | null {
  if (Array.isArray(value)) return { events: value, key: null };
  return isRecord(value) && Array.isArray(value.history) ? { events: value.history, key: 'history' } : null;
}

/**
 * Whether a parsed JSON value is an SDK event history: a list of events, bare or under `history`,
 * some of them with a `kind` that is an `…Event`, none a chat message (with `role`).
 */
export function isOpenHandsSdkEvents(value: unknown): boolean {
  const list = eventList(value);
  return (
    list !== null &&
    list.events.some(
      (event) => isRecord(event) && typeof event.kind === 'string' && event.kind.endsWith('Event'),
    ) &&
    !list.events.some((event) => isRecord(event) && typeof event.role === 'string')
  );
}

interface SdkEvent {
  index: number;
  value: JsonObject;
  /** `[3]` in a bare list, `history[3]` in a wrapper. */
  path: string;
  kind: string;
}

interface Pending extends LineItem {
  events: SdkEvent[];
  /** The model response's id, for the actions of one response. */
  responseId?: string | null;
}

function fail(detail: string, event: SdkEvent, field: string): never {
  throw new ImportError(detail, { field: `${event.path}.${field}` });
}

/** A content field's text (a list of blocks, or a string) and the field with the text taken out. */
function takeContent(value: unknown, event: SdkEvent, field: string): { text: string; taken: unknown } {
  if (typeof value === 'string') return { text: value, taken: value.length };
  if (!Array.isArray(value) || !value.every(isRecord))
    fail(`expected a list of content blocks or a string, got ${describe(value)}`, event, field);
  const { text, layout } = takeText(value as JsonObject[], 'text', 'text', SEPARATOR);
  return { text: text ?? '', taken: layout };
}

/** Inverse of {@link takeContent}. */
function putContent(taken: unknown, text: string): unknown {
  if (typeof taken === 'number') return text;
  return putText(Array.isArray(taken) ? (taken as JsonObject[]) : [], 'text', 'text', text, SEPARATOR);
}

/** Length of the text a content field held, from what {@link takeContent} left. */
function takenLength(taken: unknown): number {
  if (typeof taken === 'number') return taken;
  if (!Array.isArray(taken)) return 0;
  const lengths = taken.flatMap((block) =>
    isRecord(block) && block.type === 'text' && typeof block.text === 'number' ? [block.text] : [],
  );
  return lengths.length === 0
    ? 0
    : lengths.reduce((a, b) => a + b, 0) + SEPARATOR.length * (lengths.length - 1);
}

/** Fields an observation keeps its text in: `content` (blocks), or a string in earlier SDK versions. */
const TEXT_KEYS = ['content', 'output', 'message'] as const;

/**
 * Where an observation's text is: the first of {@link TEXT_KEYS} that holds some (an SDK between
 * versions may leave `content` an empty list and write `output`), else the first there at all
 * (null: none is: the result has no text).
 */
function textKey(observation: JsonObject): (typeof TEXT_KEYS)[number] | null {
  const present = TEXT_KEYS.filter((key) => observation[key] !== undefined && observation[key] !== null);
  return present.find((key) => holdsText(observation[key])) ?? present[0] ?? null;
}

/**
 * Whether a content field holds text: a string, or a text block, not empty. Read alike from the
 * file and from what {@link takeContent} left of it (the texts' lengths), so import and export pick
 * the same field.
 */
function holdsText(value: unknown): boolean {
  const some = (text: unknown): boolean =>
    (typeof text === 'string' && text !== '') || (typeof text === 'number' && text > 0);
  if (!Array.isArray(value)) return some(value);
  return value.some((block) => isRecord(block) && block.type === 'text' && some(block.text));
}

/**
 * Whether an observation reports a failure: `is_error` (`error` in earlier SDK versions), or a
 * command's exit code other than 0 (-1: none).
 */
function observationFailed(observation: JsonObject): boolean {
  if (observation.is_error === true || observation.error === true) return true;
  const metadata = isRecord(observation.metadata) ? observation.metadata : {};
  const code = observation.exit_code ?? metadata.exit_code;
  return typeof code === 'number' && code !== 0 && code !== -1;
}

/** The text of a tool result event and the event with it taken out, and whether it failed. */
function resultOf(event: SdkEvent): { text: string; part: JsonObject; failed: boolean } {
  const { value } = event;
  if (event.kind === 'AgentErrorEvent') {
    if (typeof value.error !== 'string')
      fail(`expected a string, got ${describe(value.error)}`, event, 'error');
    return { text: value.error, part: { ...value, error: value.error.length }, failed: true };
  }
  if (event.kind === 'UserRejectObservation') {
    const reason = value.rejection_reason;
    if (reason === undefined) return { text: `${REJECTED}${DEFAULT_REJECTION}`, part: value, failed: true };
    if (typeof reason !== 'string')
      fail(`expected a string, got ${describe(reason)}`, event, 'rejection_reason');
    return {
      text: `${REJECTED}${reason}`,
      part: { ...value, rejection_reason: reason.length },
      failed: true,
    };
  }
  const observation = value.observation;
  if (!isRecord(observation))
    fail(`expected an observation object, got ${describe(observation)}`, event, 'observation');
  const key = textKey(observation);
  if (key === null) return { text: '', part: value, failed: observationFailed(observation) };
  const { text, taken } = takeContent(observation[key], event, `observation.${key}`);
  return {
    text,
    part: { ...value, observation: { ...observation, [key]: taken } },
    failed: observationFailed(observation),
  };
}

/** The tool call of an action, and the event with its arguments taken out. */
function callOf(event: SdkEvent, id: string): { call: ToolCall; part: JsonObject } {
  const { value } = event;
  const call = value.tool_call as JsonObject;
  if (typeof call.name !== 'string')
    fail(`expected a string, got ${describe(call.name)}`, event, 'tool_call.name');
  const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {});
  return {
    call: { id, type: 'function', function: { name: call.name, arguments: args } },
    part: { ...value, tool_call: { ...call, arguments: args.length } },
  };
}

/** Maps the events to pending items (see the module comment). */
function pendingItems(events: readonly SdkEvent[]): Pending[] {
  const pending: Pending[] = [];
  /** The assistant message the next action of the same model response joins. */
  let open: Pending | undefined;
  /** The context's ids of the calls of each id of the file, waiting for their results, oldest first. */
  const waiting = new Map<string, string[]>();
  /** Ids of the file used so far (a repeated id takes its event's position in the context). */
  const used = new Set<string>();
  const push = (item: Pending): void => {
    pending.push(item);
    if (item.converted.type !== 'TOOL_RESULT') open = undefined;
  };
  for (const event of events) {
    const { value } = event;
    if (event.kind === 'SystemPromptEvent') {
      const prompt = value.system_prompt;
      if (!isRecord(prompt) || typeof prompt.text !== 'string')
        fail(`expected a text content block, got ${describe(prompt)}`, event, 'system_prompt');
      push({
        converted: { type: 'SYSTEM_PROMPT', message: { role: 'system', content: prompt.text } },
        isMeta: true,
        parts: [{ ...value, system_prompt: { ...prompt, text: prompt.text.length } }],
        events: [event],
      });
    } else if (event.kind === 'MessageEvent') {
      const message = value.llm_message;
      if (!isRecord(message))
        fail(`expected a message object, got ${describe(message)}`, event, 'llm_message');
      if (message.role !== 'user' && message.role !== 'assistant') continue;
      const { text, taken } = takeContent(message.content, event, 'llm_message.content');
      const converted: Converted =
        message.role === 'user'
          ? { type: 'USER_MESSAGE', message: { role: 'user', content: text } }
          : { type: 'ASSISTANT_MESSAGE', message: { role: 'assistant', content: text } };
      push({
        converted,
        isMeta: false,
        parts: [{ ...value, llm_message: { ...message, content: taken } }],
        events: [event],
      });
    } else if (event.kind === 'ActionEvent') {
      const call = value.tool_call;
      if (!isRecord(call)) fail(`expected a tool call object, got ${describe(call)}`, event, 'tool_call');
      if (typeof call.id !== 'string' || call.id === '')
        fail(`expected a string, got ${describe(call.id)}`, event, 'tool_call.id');
      const id = used.has(call.id) ? `${call.id}${REPEATED}${event.index}` : call.id;
      used.add(call.id);
      waiting.set(call.id, [...(waiting.get(call.id) ?? []), id]);
      const { call: toolCall, part } = callOf(event, id);
      const responseId = typeof value.llm_response_id === 'string' ? value.llm_response_id : null;
      if (open && responseId !== null && open.responseId === responseId) {
        const message = open.converted.message as AssistantMessage;
        message.tool_calls = [...(message.tool_calls ?? []), toolCall];
        open.events.push(event);
        open.parts.push(part);
      } else {
        const item: Pending = {
          converted: {
            type: 'ASSISTANT_MESSAGE',
            message: { role: 'assistant', content: null, tool_calls: [toolCall] },
          },
          isMeta: false,
          parts: [part],
          events: [event],
          responseId,
        };
        push(item);
        open = item;
      }
      // The message's text: the thoughts of its actions, each taken out of its event.
      const item = open as Pending;
      const thoughts = item.events.map((e, i) => {
        // A thought the SDK left out (absent, null) stays as it is.
        const thought = e.value.thought;
        if (!Array.isArray(thought) && typeof thought !== 'string') return { type: 'none' };
        const { text, taken } = takeContent(thought, e, 'thought');
        item.parts[i] = { ...(item.parts[i] as JsonObject), thought: taken };
        return text ? { type: 'thought', text } : { type: 'none' };
      });
      (item.converted.message as AssistantMessage).content = takeText(
        thoughts,
        'thought',
        'text',
        SEPARATOR,
      ).text;
    } else if (RESULT_KINDS.has(event.kind)) {
      const fileId = value.tool_call_id;
      const id = typeof fileId === 'string' ? waiting.get(fileId)?.shift() : undefined;
      if (id === undefined) continue;
      const { text, part, failed } = resultOf(event);
      push({
        converted: { type: 'TOOL_RESULT', message: { role: 'tool', content: text, tool_call_id: id } },
        isMeta: false,
        parts: [part],
        events: [event],
        ...(failed ? { isError: true } : {}),
      });
    }
  }
  return pending;
}

/** Import from a parsed JSON value (a list of events, or an object holding one under `history`). */
export function openHandsSdkFromValue(
  value: unknown,
  options: ImportOptions,
  idPrefix: string,
  indent: number,
): ImportedSession {
  const list = eventList(value);
  if (!list || !isOpenHandsSdkEvents(value))
    throw new ImportError(
      `expected an OpenHands V1 event history (a list of events with "kind", or an object with "history"), got ${describe(value)}`,
    );
  const base = list.key ?? '';
  const events = list.events.map((value, index) => {
    const path = `${base}[${index}]`;
    if (!isRecord(value) || typeof value.kind !== 'string')
      throw new ImportError(
        `expected an OpenHands V1 event (an object with a string "kind"), got ${describe(isRecord(value) ? value.kind : value)}`,
        { field: isRecord(value) ? `${path}.kind` : path },
      );
    return { index, value, path, kind: value.kind };
  });
  return openHandsSession(
    pendingItems(events),
    events,
    { value, key: list.key, indent, sdk: true },
    options,
    idPrefix,
    sdkParts,
    (event) => toolsOfSystemEvent(event.value.tools),
  );
}

/** An assistant message's action events: its calls' arguments and its text put back into the parts. */
function actionParts(message: AssistantMessage, parts: readonly JsonObject[]): ItemPart[] {
  const calls = message.tool_calls ?? [];
  const blocks = parts.map((part) => {
    const length = takenLength(part.thought);
    return length > 0 ? { type: 'thought', text: length } : { type: 'none' };
  });
  const filled = putText(blocks, 'thought', 'text', message.content, SEPARATOR);
  // Text that no longer splits over the thoughts it came from goes whole to the first action
  // whose thought was taken (else the first).
  const fits = filled.length === blocks.length;
  const takes = (part: JsonObject): boolean =>
    Array.isArray(part.thought) || typeof part.thought === 'number';
  const whole = Math.max(0, parts.findIndex(takes));
  const out: ItemPart[] = parts.map((part, i) => {
    const call = calls[i];
    if (!call) return null;
    const piece = fits
      ? (filled[i] as JsonObject).type === 'thought'
        ? ((filled[i] as JsonObject).text as string)
        : ''
      : i === whole
        ? (message.content ?? '')
        : '';
    const event: JsonObject = {
      ...part,
      tool_call: { ...(part.tool_call as JsonObject), arguments: call.function.arguments },
    };
    if (takes(part)) event.thought = putContent(part.thought, piece);
    else if (piece) event.thought = putContent([], piece);
    return event;
  });
  // Calls added since: after the last event, as new ones.
  const extra = calls.slice(parts.length);
  if (extra.length === 0) return out;
  const fresh = freshEvents({ role: 'assistant', content: null, tool_calls: extra }, undefined);
  const last = out[out.length - 1];
  return [...out.slice(0, -1), [...(last && !Array.isArray(last) ? [last] : []), ...fresh]];
}

/**
 * The events of a message given its side fields (null for a part that is gone), exactly the
 * source events while the message is unchanged.
 */
function sdkParts(message: ChatMessage, fields: JsonObject): ItemPart[] {
  const kept = unchangedRaw(fields, message);
  if (Array.isArray(kept)) return kept as JsonObject[];
  const parts = Array.isArray(fields.parts) ? (fields.parts as JsonObject[]) : [];
  const first = parts[0];
  if (!first) {
    return replacingKept(fields, (source) => withFileIds(freshEvents(message, source)));
  }
  if (first.kind === 'ActionEvent') return actionParts(message as AssistantMessage, parts);
  const text = messageText(message);
  switch (first.kind) {
    case 'SystemPromptEvent':
      return [{ ...first, system_prompt: { ...(first.system_prompt as JsonObject), text } }];
    case 'MessageEvent': {
      const llm = first.llm_message as JsonObject;
      return [{ ...first, llm_message: { ...llm, content: putContent(llm.content, text) } }];
    }
    case 'AgentErrorEvent':
      return [{ ...first, error: text }];
    case 'UserRejectObservation': {
      // The SDK's default reason is no field; any other text is the reason.
      const reason = text.startsWith(REJECTED) ? text.slice(REJECTED.length) : text;
      return [
        'rejection_reason' in first || reason !== DEFAULT_REJECTION
          ? { ...first, rejection_reason: reason }
          : first,
      ];
    }
    default: {
      const observation = first.observation as JsonObject;
      const key = textKey(observation);
      // No field held a text: one that changed goes where the SDK now writes it.
      if (key === null)
        return [
          text ? { ...first, observation: { ...observation, content: [{ type: 'text', text }] } } : first,
        ];
      return [{ ...first, observation: { ...observation, [key]: putContent(observation[key], text) } }];
    }
  }
}

/** Events of a message read from the file: a call id used again there is written as the file had it. */
function withFileIds(events: JsonObject[]): JsonObject[] {
  const fileId = (id: unknown): unknown =>
    typeof id === 'string' ? id.replace(new RegExp(`${REPEATED}\\d+$`), '') : id;
  return events.map((event) => ({
    ...event,
    ...('tool_call_id' in event ? { tool_call_id: fileId(event.tool_call_id) } : {}),
    ...(isRecord(event.tool_call)
      ? { tool_call: { ...event.tool_call, id: fileId(event.tool_call.id) } }
      : {}),
  }));
}

/** Events for a message that did not come from the file (`previous`: the event before, for its time). */
function freshEvents(message: ChatMessage, previous: JsonObject | undefined): JsonObject[] {
  const stamp = previous && typeof previous.timestamp === 'string' ? { timestamp: previous.timestamp } : {};
  const text = messageText(message);
  const content = [{ type: 'text', text }];
  switch (message.role) {
    case 'system':
      return [
        {
          kind: 'SystemPromptEvent',
          ...stamp,
          source: 'agent',
          system_prompt: { type: 'text', text },
          tools: [],
        },
      ];
    case 'user':
      return [{ kind: 'MessageEvent', ...stamp, source: 'user', llm_message: { role: 'user', content } }];
    case 'assistant': {
      const calls = message.tool_calls ?? [];
      if (calls.length === 0)
        return [
          { kind: 'MessageEvent', ...stamp, source: 'agent', llm_message: { role: 'assistant', content } },
        ];
      return calls.map((call, i) => ({
        kind: 'ActionEvent',
        ...stamp,
        source: 'agent',
        thought: i === 0 && text ? content : [],
        action: null,
        tool_name: call.function.name,
        tool_call_id: call.id,
        tool_call: {
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
          origin: 'completion',
        },
        llm_response_id: `response-${(calls[0] as ToolCall).id}`,
      }));
    }
    case 'tool':
      return [
        {
          kind: 'ObservationEvent',
          ...stamp,
          source: 'environment',
          tool_name: message.name ?? '',
          tool_call_id: message.tool_call_id,
          observation: { content, is_error: false },
        },
      ];
  }
}

// An event holds one item's part only.
const WRITER = onePartWriter('openhands', sdkParts, freshEvents);

/**
 * Writes items back as the V1 event history they came from: every event of the source in its
 * place (an unchanged import gives back deep-equal events, in its wrapper object when it had one);
 * for a changed context see `writeLineSlots`. New items are written as events of their kind: a
 * `MessageEvent` (a new summary too: reading it back gives the summary), `ActionEvent`s with their
 * `tool_call`, an `ObservationEvent`.
 */
export function exportOpenHandsSdkEvents(
  items: readonly ContextItem[],
  document: { slots: readonly LineSlot[]; top?: JsonObject; key?: string; indent?: number },
): string {
  const events = slotValues(items, document.slots, WRITER);
  const value = document.top && document.key ? { ...document.top, [document.key]: events } : events;
  return `${JSON.stringify(value, null, document.indent ?? 0)}\n`;
}
