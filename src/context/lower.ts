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
import { isCarried } from './carried-state';
import { splitSegments } from './segments';
import { groupUnits } from './tool-blocks';
import { pairToolCalls } from './tool-pairs';

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
    case 'assistant':
      return lowerAssistant(message);
    case 'tool':
      return { role: 'tool', content: message.content, tool_call_id: message.tool_call_id };
    default: {
      const unknown: never = message;
      throw new TypeError(`unknown message role in ${JSON.stringify(unknown)}`);
    }
  }
}

/** An assistant message as the API takes it (see {@link lowerMessage}), its calls sent with `callIds`. */
function lowerAssistant(
  message: AssistantMessage,
  callIds: readonly string[] = (message.tool_calls ?? []).map((call) => call.id),
): AssistantMessage {
  const calls = message.tool_calls ?? [];
  const lowered: AssistantMessage = {
    role: 'assistant',
    content: message.content ?? (calls.length > 0 ? null : ''),
  };
  if (calls.length > 0) {
    lowered.tool_calls = calls.map((call, i) => ({ ...lowerToolCall(call), id: callIds[i] ?? call.id }));
  }
  if (message.name) lowered.name = message.name;
  return lowered;
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

/** What is sent as the result of a tool call that has none (a round cut short, an imported session). */
export const MISSING_TOOL_RESULT = '[no result: this tool call did not complete]';

/**
 * The ids a message's tool calls are sent with: their own, except that an id repeated within the
 * message gets `_<index>` appended (as `src/llm` does to a model's answer), so each result can
 * name its call.
 */
function requestCallIds(calls: readonly ToolCall[]): string[] {
  const used = new Set<string>();
  return calls.map((call, index) => {
    let id = call.id;
    while (used.has(id)) id = `${id}_${index}`;
    used.add(id);
    return id;
  });
}

/**
 * The conversation's messages, tool calls and results laid out as the API accepts them whatever
 * the items hold: an assistant message with tool calls is followed at once by one result per call
 * — its own (moved up past anything in between, such as an older task list), or
 * {@link MISSING_TOOL_RESULT} — and a result that answers no call is left out. A well-formed
 * conversation is sent in its own order.
 */
function lowerConversation(items: readonly ContextItem[]): ChatMessage[] {
  const pairs = pairToolCalls(items);
  const messages: ChatMessage[] = [];
  for (const unit of groupUnits(items)) {
    const [first, ...results] = unit.items;
    if (!first || unit.kind === 'orphan' || first.type === 'TOOL_DEFINITIONS') continue;
    if (unit.kind === 'item' || first.type !== 'ASSISTANT_MESSAGE') {
      messages.push(lowerMessage(first.message));
      continue;
    }
    const ids = requestCallIds(first.message.tool_calls ?? []);
    messages.push(lowerAssistant(first.message, ids));
    const answered = new Set<number>();
    for (const result of results) {
      const pair = pairs.byResult.get(result.id);
      if (result.type !== 'TOOL_RESULT' || !pair) continue;
      answered.add(pair.callIndex);
      messages.push({
        role: 'tool',
        content: result.message.content,
        tool_call_id: ids[pair.callIndex] ?? pair.toolCallId,
      });
    }
    ids.forEach((id, i) => {
      if (!answered.has(i)) messages.push({ role: 'tool', content: MISSING_TOOL_RESULT, tool_call_id: id });
    });
  }
  return messages;
}

/**
 * The request for these items: header messages first in header order (system prompts — with any a
 * later one replaced, in their order —, subagent
 * strategy, original task, pinned content, task list, memories, artifact trail; see
 * `splitSegments`), then the conversation in order, its tool calls and results made valid for the
 * API (see `lowerConversation`: results right after their call, a placeholder for a missing one,
 * a result without its call left out); the tools of the TOOL_DEFINITIONS items. Ephemeral items
 * are included — the caller drops them after the call (`dropEphemeral`). Memory notes, the task
 * list and the artifact trail are sent as the messages they carry. Items are not modified.
 */
export function lower(items: readonly ContextItem[]): ModelRequest {
  const { header, conversation } = splitSegments(items);
  // A system prompt a later one replaced is conversation (a compaction may take it), but it is sent
  // with the system prompts, in its place among them: before the one that replaced it.
  const replaced = conversation.filter((item) => item.type === 'SYSTEM_PROMPT');
  const position = new Map(items.map((item, i) => [item, i]));
  const system = [...header.filter((item) => item.type === 'SYSTEM_PROMPT'), ...replaced].sort(
    (a, b) => (position.get(a) ?? 0) - (position.get(b) ?? 0),
  );
  const messages: ChatMessage[] = system.flatMap((item) =>
    item.type === 'TOOL_DEFINITIONS' ? [] : [lowerMessage(item.message)],
  );
  const sent = new Set<ContextItem>(system);
  for (const item of header) {
    if (item.type !== 'TOOL_DEFINITIONS' && !sent.has(item) && !sendsNothing(item))
      messages.push(lowerMessage(item.message));
  }
  messages.push(
    ...lowerConversation(
      replaced.length > 0 ? conversation.filter((i) => i.type !== 'SYSTEM_PROMPT') : conversation,
    ),
  );
  return { messages, tools: mergeTools(header) };
}

/**
 * Whether an item is carried state whose text a compaction cut to nothing (a request that would
 * otherwise go over the window): it keeps its data for the next compaction, counts no tokens and
 * is not sent (an empty user message is refused by some providers, and says nothing).
 */
function sendsNothing(item: ContextItem): boolean {
  return isCarried(item) && item.type !== 'TOOL_DEFINITIONS' && item.message.content === '';
}

/** The items without the ephemeral ones (after the model call they were meant for, seed 002). */
export function dropEphemeral<T extends ContextItem>(items: readonly T[]): T[] {
  return items.filter((item) => !item.ephemeral);
}
