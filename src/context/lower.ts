/**
 * `lower()`: the exact request sent to the model for a list of items (seed 002's `ContextIR.lower`).
 *
 * Pure module.
 */
import type {
  AssistantMessage,
  ChatMessage,
  ContentPart,
  ContextItem,
  ToolCall,
  ToolDefinition,
} from './items';
import { splitSegments } from './segments';

/** What the model is sent: the messages and the tool list (empty: send no `tools`). */
export interface ModelRequest {
  messages: ChatMessage[];
  tools: ToolDefinition[];
}

function lowerParts(parts: ContentPart[]): ContentPart[] {
  return parts.map((part) =>
    part.type === 'text' && typeof part.text === 'string' ? { type: 'text', text: part.text } : { ...part },
  );
}

function lowerToolCall(call: ToolCall): ToolCall {
  return {
    id: call.id,
    type: 'function',
    function: { name: call.function.name, arguments: call.function.arguments },
  };
}

/**
 * A message as the API takes it: only the fields of the OpenAI chat format, fresh objects.
 * Internal fields are dropped (a tool message's `name`, an assistant's `reasoning_content`, and any
 * other key an item may carry); text parts lose extra keys; an empty `tool_calls` is omitted; an
 * assistant message without content or tool calls gets `''` (the API refuses `null` there).
 */
export function lowerMessage(message: ChatMessage): ChatMessage {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content, ...(message.name ? { name: message.name } : {}) };
    case 'user':
      return {
        role: 'user',
        content: typeof message.content === 'string' ? message.content : lowerParts(message.content),
        ...(message.name ? { name: message.name } : {}),
      };
    case 'assistant': {
      const calls = message.tool_calls ?? [];
      const lowered: AssistantMessage = {
        role: 'assistant',
        content: message.content ?? (calls.length > 0 ? null : ''),
      };
      if (calls.length > 0) lowered.tool_calls = calls.map(lowerToolCall);
      if (message.name) lowered.name = message.name;
      return lowered;
    }
    case 'tool':
      return { role: 'tool', content: message.content, tool_call_id: message.tool_call_id };
  }
}

/**
 * Tool lists of all TOOL_DEFINITIONS items, merged by function name: a later definition of a name
 * replaces the earlier one in its place (the API refuses duplicate names).
 */
function mergeTools(items: readonly ContextItem[]): ToolDefinition[] {
  const byName = new Map<string, ToolDefinition>();
  for (const item of items) {
    if (item.type !== 'TOOL_DEFINITIONS') continue;
    for (const tool of item.tools) byName.set(tool.function.name, tool);
  }
  return [...byName.values()];
}

/**
 * The request for these items: header messages first in header order (system prompt, subagent
 * strategy, original task, pinned content, task list, memories, artifact trail; see
 * `splitSegments`), then the conversation in order; the tools of the TOOL_DEFINITIONS items.
 * Ephemeral items are included — the caller drops them after the call (`dropEphemeral`). Memory
 * notes, the task list and the artifact trail are sent as the messages they carry. Items are not
 * modified.
 */
export function lower(items: readonly ContextItem[]): ModelRequest {
  const { header, conversation } = splitSegments(items);
  const messages: ChatMessage[] = [];
  for (const item of [...header, ...conversation]) {
    if (item.type !== 'TOOL_DEFINITIONS') messages.push(lowerMessage(item.message));
  }
  return { messages, tools: mergeTools(header) };
}

/** The items without the ephemeral ones (after the model call they were meant for, seed 002). */
export function dropEphemeral<T extends ContextItem>(items: readonly T[]): T[] {
  return items.filter((item) => !item.ephemeral);
}
