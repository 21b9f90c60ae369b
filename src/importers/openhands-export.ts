/**
 * OpenHands trajectories written back (the mapping is described in `openhands-import.ts`): every
 * event of the source in its place, items rebuilt from their parts (`line-slots.ts`), the list
 * bare or in its wrapper object as it came. Pure.
 */
import type { AssistantMessage, ChatMessage, ContextItem, ToolCall } from '../context/items';
import { messageText } from '../context/items';
import { parseArguments } from '../context/tool-facts';
import { putText } from './blocks';
import { unchangedRaw } from './common';
import { isRecord, type JsonObject } from './json';
import { onePartWriter, slotValues, type ItemPart, type LineSlot } from './line-slots';
import { replacingKept, replyOf, withArgs } from './openhands-events';
import { exportOpenHandsSdkEvents } from './openhands-sdk';

/** Separator of the thoughts of a message's actions once joined into one string. */
export const THOUGHT_SEPARATOR = '\n';

/** The event's text put back where the importer took it out (`content`, and `message` when it repeated it). */
function withText(part: JsonObject, text: string): JsonObject {
  const filled = 'observation' in part ? { ...part, content: text } : withArgs(part, { content: text });
  return part.message === 0 ? { ...filled, message: text } : filled;
}

/** The event with its model response's message changed (`keys`), the rest of the response as it was. */
function withReply(event: JsonObject, keys: JsonObject): JsonObject {
  const meta = event.tool_call_metadata as JsonObject;
  const response = meta.model_response as JsonObject;
  const [choice, ...rest] = response.choices as JsonObject[];
  const message = { ...((choice as JsonObject).message as JsonObject), ...keys };
  return {
    ...event,
    tool_call_metadata: {
      ...meta,
      model_response: { ...response, choices: [{ ...choice, message }, ...rest] },
    },
  };
}

/**
 * A tool action with its call put back: into the model response's tool call of the same id when
 * the event holds the response (its parsed `args` stay: OpenHands reads them), else into its
 * arguments (the thought kept).
 */
function withCall(part: JsonObject, call: ToolCall): JsonObject {
  const reply = replyOf(part);
  if (reply && Array.isArray(reply.tool_calls)) {
    const calls = reply.tool_calls.map((c) =>
      isRecord(c) && c.id === call.id && isRecord(c.function)
        ? { ...c, function: { ...c.function, arguments: call.function.arguments } }
        : c,
    );
    return withReply(part, { tool_calls: calls });
  }
  const args = parseArguments(call.function.arguments);
  const isMcp = part.action === 'call_tool_mcp';
  if (!args) return part;
  return withArgs(part, isMcp ? { arguments: args } : args);
}

/** An assistant message's events: its text and calls put back into the parts. */
function assistantParts(message: AssistantMessage, parts: readonly JsonObject[]): ItemPart[] {
  if (parts[0]?.action === 'message') return [withText(parts[0], message.content ?? '')];
  const calls = message.tool_calls ?? [];
  let next = 0;
  const out: (JsonObject | null)[] = parts.map((part) => {
    const call = calls[next++];
    return call ? withCall(part, call) : null;
  });
  const first = out.findIndex((p) => p !== null);
  const reply = parts[0] ? replyOf(parts[0]) : null;
  if (reply) {
    // The text is the response's content, in every action of the response.
    const old = reply.content;
    const changed = (message.content ?? '') !== (typeof old === 'string' ? old : '');
    if (changed) {
      for (let i = 0; i < out.length; i++) {
        const event = out[i];
        if (event && replyOf(event)) out[i] = withReply(event, { content: message.content });
      }
    }
  } else {
    const blocks = parts.map((p) => {
      const thought = (isRecord(p.args) ? p.args : p).thought;
      return typeof thought === 'number' ? { type: 'thought', text: thought } : { type: 'none' };
    });
    const filled = putText(blocks, 'thought', 'text', message.content, THOUGHT_SEPARATOR);
    // Text that no longer splits over the thoughts it came from goes whole to the first action.
    const fits = filled.length === blocks.length;
    out.forEach((event, i) => {
      if (!event) return;
      const was = (blocks[i] as JsonObject).type === 'thought';
      const thought = fits
        ? was
          ? (filled[i] as JsonObject).text
          : undefined
        : i === first
          ? (message.content ?? '')
          : was
            ? ''
            : undefined;
      if (thought !== undefined) out[i] = withArgs(event, { thought });
    });
  }
  // Calls added since: after the last event, as new ones.
  const extra = calls.slice(next);
  if (extra.length === 0) return out;
  const fresh = freshEvents({ role: 'assistant', content: null, tool_calls: extra }, undefined);
  const last = out[out.length - 1];
  return [...out.slice(0, -1), [...(last ? [last] : []), ...fresh]];
}

/**
 * The events of a message given its OpenHands side fields (null for a part that is gone), exactly
 * the source events while the message is unchanged.
 */
export function openHandsParts(message: ChatMessage, fields: JsonObject): ItemPart[] {
  const kept = unchangedRaw(fields, message);
  if (Array.isArray(kept)) return kept as JsonObject[];
  const parts = Array.isArray(fields.parts) ? (fields.parts as JsonObject[]) : [];
  if (parts.length === 0) {
    return replacingKept(fields, (first) => freshEvents(message, first));
  }
  if (message.role === 'assistant') return assistantParts(message, parts);
  return [withText(parts[0] as JsonObject, messageText(message))];
}

/** The action OpenHands records for a call of one of its tools (other tools: an MCP call). */
const ACTION_OF_TOOL: Record<string, string> = {
  execute_bash: 'run',
  execute_ipython_cell: 'run_ipython',
  str_replace_editor: 'edit',
  think: 'think',
  finish: 'finish',
  browser: 'browse_interactive',
};

/** An action event for a call that did not come from OpenHands. */
function freshCall(call: ToolCall, calls: readonly ToolCall[], content: string | null): JsonObject {
  const args = parseArguments(call.function.arguments) ?? {};
  const name = call.function.name;
  const action = ACTION_OF_TOOL[name];
  const view = name === 'str_replace_editor' && args.command === 'view';
  return {
    source: 'agent',
    action: view ? 'read' : (action ?? 'call_tool_mcp'),
    args: action ? args : { name, arguments: args },
    tool_call_metadata: {
      function_name: name,
      tool_call_id: call.id,
      model_response: {
        id: `response-${(calls[0] as ToolCall).id}`,
        choices: [{ index: 0, message: { role: 'assistant', content, tool_calls: calls } }],
      },
      total_calls_in_response: calls.length,
    },
  };
}

/** Events for a message that did not come from OpenHands (`previous`: the event before, for its time). */
function freshEvents(message: ChatMessage, previous: JsonObject | undefined, summary = false): JsonObject[] {
  const stamp = previous && typeof previous.timestamp === 'string' ? { timestamp: previous.timestamp } : {};
  const text = messageText(message);
  switch (message.role) {
    case 'system':
      return [{ ...stamp, source: 'agent', message: text, action: 'system', args: { content: text } }];
    case 'user':
      return summary
        ? [
            {
              ...stamp,
              source: 'environment',
              message: text,
              observation: 'condense',
              content: text,
              extras: {},
            },
          ]
        : [{ ...stamp, source: 'user', message: text, action: 'message', args: { content: text } }];
    case 'assistant': {
      const calls = message.tool_calls ?? [];
      if (calls.length === 0)
        return [{ ...stamp, source: 'agent', message: text, action: 'message', args: { content: text } }];
      return calls.map((call) => ({ ...stamp, ...freshCall(call, calls, message.content) }));
    }
    case 'tool':
      return [
        {
          ...stamp,
          source: 'agent',
          observation: message.name === 'str_replace_editor' ? 'edit' : 'run',
          content: message.content,
          extras: {},
          tool_call_metadata: { function_name: message.name ?? '', tool_call_id: message.tool_call_id },
        },
      ];
  }
}

// An event holds one item's part only.
const WRITER = onePartWriter('openhands', openHandsParts, freshEvents);

/**
 * Writes items back as the OpenHands trajectory they came from (a V1 event history: by
 * `exportOpenHandsSdkEvents`): every event of the source in its
 * place (an unchanged import gives back deep-equal events, in its wrapper object when it had one);
 * for a changed context see `writeLineSlots`. New items are written as events of their kind: a
 * user or assistant `message`, tool actions with their `tool_call_metadata`, a new summary as a
 * `condense` observation.
 */
export function exportOpenHandsTrajectory(
  items: readonly ContextItem[],
  document: { slots: readonly LineSlot[]; top?: JsonObject; key?: string; indent?: number; sdk?: true },
): string {
  if (document.sdk) return exportOpenHandsSdkEvents(items, document);
  const events = slotValues(items, document.slots, WRITER);
  const value = document.top && document.key ? { ...document.top, [document.key]: events } : events;
  return `${JSON.stringify(value, null, document.indent ?? 0)}\n`;
}
