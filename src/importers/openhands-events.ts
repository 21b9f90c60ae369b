/**
 * OpenHands' serialized events (`openhands/events/serialization/event.py`), read one at a time:
 * what kind an event is, where its arguments are, the tool call an action makes and whether an
 * observation reports a failure. The mapping to items is in `openhands-import.ts`. Pure.
 */
import type { ChatMessage, ToolCall, ToolDefinition } from '../context/items';
import {
  finishItems,
  itemsOfLines,
  toolsItem,
  type ImportedSession,
  type ImportOptions,
  type LineItem,
} from './common';
import { ImportError } from './errors';
import { describe, isRecord, omit, type JsonObject } from './json';
import type { ItemPart } from './line-slots';

/** An event of the trajectory, with its position and the path of its field in the file. */
export interface OpenHandsEvent {
  index: number;
  value: JsonObject;
  /** `[3]` in a bare list, `history[3]` in a wrapper. */
  path: string;
  kind: 'action' | 'observation';
  /** The `action` or `observation` type: `run`, `edit`, `message`, `error`, … */
  type: string;
}

/** Keys of an event beside its arguments (`TOP_KEYS` of OpenHands' serializer). */
const TOP_KEYS = [
  'id',
  'timestamp',
  'source',
  'message',
  'cause',
  'action',
  'observation',
  'tool_call_metadata',
  'llm_metrics',
  'timeout',
];

/** Actions the agent takes by calling a tool, with or without `tool_call_metadata`. */
const TOOL_ACTIONS = new Set([
  'run',
  'run_ipython',
  'read',
  'write',
  'edit',
  'browse',
  'browse_interactive',
  'call_tool_mcp',
  'delegate',
  'think',
  'finish',
  'reject',
  'task_tracking',
]);

/** The tool OpenHands' CodeAct agent calls for an action, for actions recorded without metadata. */
const TOOL_OF_ACTION: Record<string, string> = {
  run: 'execute_bash',
  run_ipython: 'execute_ipython_cell',
  browse_interactive: 'browser',
};

/** Refuses the event at `event.path` (and `field` of it). */
export function fail(detail: string, event: { path: string }, field?: string): never {
  throw new ImportError(detail, { field: field ? `${event.path}.${field}` : event.path });
}

/** Whether a value looks like an OpenHands event: exactly one of `action` and `observation`, no `role`. */
export function isOpenHandsEvent(value: unknown): boolean {
  return (
    isRecord(value) &&
    typeof value.role !== 'string' &&
    (typeof value.action === 'string') !== (typeof value.observation === 'string')
  );
}

/**
 * One event of the list, checked: an object with a string `action` or `observation` (not both) and,
 * when it has one, a number or string `id` (a `cause` names it).
 * @throws ImportError naming the event (`[3]`, `history[3]`) and field
 */
export function readEvent(value: unknown, index: number, base: string): OpenHandsEvent {
  const path = `${base}[${index}]`;
  if (!isRecord(value)) fail(`expected an event object, got ${describe(value)}`, { path });
  if (value.id !== undefined && typeof value.id !== 'number' && typeof value.id !== 'string')
    fail(`expected a number or a string, got ${describe(value.id)}`, { path }, 'id');
  if (typeof value.action === 'string' && !('observation' in value))
    return { index, value, path, kind: 'action', type: value.action };
  if (typeof value.observation === 'string' && !('action' in value))
    return { index, value, path, kind: 'observation', type: value.observation };
  const key = 'action' in value ? 'action' : 'observation';
  fail(
    'action' in value && 'observation' in value
      ? 'expected an action or an observation, got both'
      : `expected a string "action" or "observation", got ${describe(value[key])}`,
    { path },
    key,
  );
}

/**
 * Whether the event keeps its arguments at the top level: older trajectories flattened them
 * (`{ "action": "run", "command": …, "thought": … }`), newer ones hold them in `args`.
 */
export function flattened(event: OpenHandsEvent): boolean {
  return event.kind === 'action' && !isRecord(event.value.args);
}

/** An action's arguments (its `args`, or its own fields beside the event's keys when flattened). */
export function argsOf(event: OpenHandsEvent): JsonObject {
  return flattened(event) ? omit(event.value, TOP_KEYS) : (event.value.args as JsonObject);
}

/** The event with some of its arguments replaced (placeholders keep the keys' order). */
export function withArgs(event: JsonObject, keys: JsonObject): JsonObject {
  return isRecord(event.args) ? { ...event, args: { ...event.args, ...keys } } : { ...event, ...keys };
}

/** The field path of an argument, for errors. */
export function argField(event: OpenHandsEvent, key: string): string {
  return flattened(event) ? key : `args.${key}`;
}

/** The metadata of a tool-calling event (`function_name`, `tool_call_id`, the model's response). */
export interface CallMetadata {
  name: string;
  id: string;
  /** The model response's id: actions of one response are one assistant message. */
  responseId: string | null;
  /** `model_response.choices[0].message`, what the model answered. */
  reply: JsonObject | null;
}

/** The event's `tool_call_metadata`, checked, or null when it has none. */
export function metadataOf(event: OpenHandsEvent): CallMetadata | null {
  const meta = event.value.tool_call_metadata;
  if (meta === undefined || meta === null) return null;
  if (!isRecord(meta)) fail(`expected an object, got ${describe(meta)}`, event, 'tool_call_metadata');
  for (const key of ['function_name', 'tool_call_id']) {
    if (typeof meta[key] !== 'string')
      fail(`expected a string, got ${describe(meta[key])}`, event, `tool_call_metadata.${key}`);
  }
  const response = isRecord(meta.model_response) ? meta.model_response : null;
  return {
    name: meta.function_name as string,
    id: meta.tool_call_id as string,
    responseId: response && typeof response.id === 'string' ? response.id : null,
    reply: replyOf(event.value),
  };
}

/** The message of the model response's first choice an event's metadata holds, if it holds one. */
export function replyOf(event: JsonObject): JsonObject | null {
  const meta = isRecord(event.tool_call_metadata) ? event.tool_call_metadata : null;
  const response = meta && isRecord(meta.model_response) ? meta.model_response : null;
  const choice = response && Array.isArray(response.choices) ? response.choices[0] : undefined;
  return isRecord(choice) && isRecord(choice.message) ? choice.message : null;
}

/** Whether an action is a tool call: an agent's tool action, or any action the model called a tool for. */
export function isToolAction(event: OpenHandsEvent, meta: CallMetadata | null): boolean {
  if (event.kind !== 'action' || event.type === 'message' || event.type === 'system') return false;
  return meta !== null || (TOOL_ACTIONS.has(event.type) && event.value.source !== 'user');
}

/** The arguments the model wrote for a call, from its response, if it holds them. */
function replyArguments(meta: CallMetadata): string | null {
  const calls = meta.reply?.tool_calls;
  if (!Array.isArray(calls)) return null;
  const call = calls.find((c) => isRecord(c) && c.id === meta.id);
  const fn = isRecord(call) && isRecord(call.function) ? call.function : null;
  return fn && typeof fn.arguments === 'string' ? fn.arguments : null;
}

/**
 * The tool call an action makes: the metadata's name and id with the arguments of the model's
 * response; else (older trajectories) a name from the action type (an MCP action's own tool name),
 * an id made of the event's id or position, and its arguments but the thought.
 */
export function callOf(event: OpenHandsEvent, meta: CallMetadata | null): ToolCall {
  const args = argsOf(event);
  const mcp = event.type === 'call_tool_mcp' && typeof args.name === 'string';
  const own = omit(args, ['thought']);
  const written = meta ? replyArguments(meta) : null;
  const id = event.value.id;
  return {
    id: meta?.id ?? `openhands_${typeof id === 'number' || typeof id === 'string' ? id : event.index}`,
    type: 'function',
    function: {
      name: meta?.name ?? (mcp ? (args.name as string) : (TOOL_OF_ACTION[event.type] ?? event.type)),
      arguments: written ?? JSON.stringify(mcp && isRecord(args.arguments) ? args.arguments : own),
    },
  };
}

/**
 * Whether an observation reports a failure OpenHands knows as such: an `error` observation, or a
 * command that exited non-zero (-1 is a command still running when OpenHands stopped waiting,
 * no failure).
 */
export function failed(event: OpenHandsEvent): boolean {
  if (event.type === 'error') return true;
  const extras = isRecord(event.value.extras) ? event.value.extras : event.value;
  const metadata = isRecord(extras.metadata) ? extras.metadata : extras;
  const code = metadata.exit_code;
  return typeof code === 'number' && code !== 0 && code !== -1;
}

/**
 * The session of an OpenHands file's pending items (a V0 trajectory's, `sdk`: a V1 history's): ids
 * and slots from each item's events (`itemsOfLines`: events the mapping does not rebuild exactly
 * are kept whole), the document with the list's wrapper object, if any; after each system prompt,
 * the tools its event lists (`toolsOf`), as a TOOL_DEFINITIONS item.
 * @throws ImportError when no event made an item
 */
export function openHandsSession<E extends { index: number; value: JsonObject }>(
  pending: readonly (LineItem & { events: E[] })[],
  events: readonly E[],
  source: { value: unknown; key: string | null; indent: number; sdk?: true },
  options: ImportOptions,
  idPrefix: string,
  partsOf: (message: ChatMessage, fields: JsonObject) => ItemPart[],
  toolsOf: (event: E) => ToolDefinition[] = () => [],
): ImportedSession {
  if (pending.length === 0) throw new ImportError('it holds no messages');
  const lines = itemsOfLines(
    pending,
    (item) => item.events,
    events,
    { format: 'openhands', idPrefix },
    (item, parts) => partsOf(item.converted.message, parts),
  );
  // The tools a system prompt's event lists, after that prompt: sent with every request, they count
  // in the header. The event keeps them (the writer leaves the item out).
  const items = lines.items.flatMap((item, i) => {
    const event = pending[i]?.events[0];
    const tools = item.type === 'SYSTEM_PROMPT' && event ? toolsOf(event) : [];
    if (tools.length === 0) return [item];
    const n = lines.items.slice(0, i).filter((other) => other.type === 'SYSTEM_PROMPT').length;
    return [item, toolsItem(`${idPrefix}tools${n === 0 ? '' : `.${n}`}`, tools)];
  });
  const { slots } = lines;
  const { value, key } = source;
  return {
    format: 'openhands',
    items: finishItems(items, options.tokenizer),
    document: {
      format: 'openhands',
      ...(source.sdk ? { sdk: true } : {}),
      slots,
      ...(key !== null ? { top: { ...(value as JsonObject), [key]: null }, key } : {}),
      indent: source.indent,
    },
  };
}

/**
 * The events of an item that was kept whole (`rawFields`) and has changed since: the new message's
 * events (`fresh`, given the first source event, for its time) in the first one's place.
 */
export function replacingKept(
  fields: JsonObject,
  fresh: (first: JsonObject | undefined) => JsonObject[],
): ItemPart[] {
  const first = Array.isArray(fields.raw) ? (fields.raw as unknown[]).find(isRecord) : undefined;
  const count = Array.isArray(fields.raw) ? fields.raw.length : 1;
  return [fresh(first), ...Array.from({ length: count - 1 }, () => null)];
}

/**
 * The tools a system prompt's event lists (`tools`): OpenAI function tools (V0's system action),
 * or the V1 SDK's tool records (`title` or `name`, `description`; no parameters saved). Entries
 * without a name are left out: the list only counts what the model was sent.
 */
export function toolsOfSystemEvent(value: unknown): ToolDefinition[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((entry): ToolDefinition[] => {
    if (!isRecord(entry)) return [];
    const fn = isRecord(entry.function) ? entry.function : entry;
    const name = [fn.name, fn.title].find((n): n is string => typeof n === 'string' && n !== '');
    if (name === undefined) return [];
    const parameters = [fn.parameters, fn.input_schema].find(isRecord);
    return [
      {
        type: 'function',
        function: {
          name,
          ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
          ...(parameters ? { parameters } : {}),
        },
      },
    ];
  });
}
