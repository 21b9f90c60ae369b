/**
 * Chat messages written back in the OpenAI-list and SWE-agent dialects (see
 * `chat-messages-import.ts`): exactly the source message when unchanged since import. Pure.
 */
import type { ChatMessage, ContentPart } from '../context/items';
import { lowerMessage } from '../context/lower';
import { putText } from './blocks';
import { unchangedRaw } from './common';
import { isRecord, omit, type JsonObject } from './json';

export type ChatDialect = 'openai' | 'swe-agent';

/** The keys of a source message that the item model holds; any other key is a side field. */
export const MAPPED_KEYS: Record<ChatDialect, string[]> = {
  openai: ['role', 'content', 'name', 'tool_calls', 'tool_call_id', 'reasoning_content'],
  'swe-agent': ['role', 'content', 'name', 'tool_calls', 'tool_call_ids', 'reasoning_content'],
};

/**
 * Side fields of a chat message (all optional): `extra` (keys the item model lacks, in order),
 * `role: 'developer'`, `noContent` (the source had no `content`), `contentParts` (layout of a
 * content part list) and `contentPartType` (the type of its parts that hold the text, when not
 * `text`), `toolCallIds` (SWE-agent list other than exactly one id), or `raw` +
 * `digest` (the whole source message, when the mapping cannot rebuild it exactly).
 */
export type ChatFields = JsonObject;

/** A user message's content with its text parts back in the type they came in (`contentPartType`). */
function userContent(content: string | ContentPart[], f: ChatFields): string | ContentPart[] {
  const type = f.contentPartType;
  if (typeof content === 'string' || typeof type !== 'string') return content;
  return content.map((part) => (part.type === 'text' ? { ...part, type } : part));
}

/**
 * A message written in the dialect: from its side fields when it came from this dialect (exactly
 * the source when unchanged), else the plain API shape (plus `tool_call_ids` for SWE-agent).
 */
export function chatMessageToJson(
  message: ChatMessage,
  fields: ChatFields | undefined,
  dialect: ChatDialect,
): JsonObject {
  const kept = unchangedRaw(fields, message);
  if (isRecord(kept)) return kept;
  if (!fields) {
    const plain = lowerMessage(message) as unknown as JsonObject;
    if (dialect === 'swe-agent' && message.role === 'tool') {
      return { ...omit(plain, ['tool_call_id']), tool_call_ids: [message.tool_call_id] };
    }
    return plain;
  }
  const raw = isRecord(fields.raw) ? fields.raw : undefined;
  const f: ChatFields = raw ? {} : fields;
  const out: JsonObject = { role: f.role ?? message.role };
  const content = message.content;
  if (message.role === 'user') {
    if (!(f.noContent && content === '')) out.content = userContent(content as string | ContentPart[], f);
  } else if (Array.isArray(f.contentParts)) {
    const type = typeof f.contentPartType === 'string' ? f.contentPartType : 'text';
    out.content = putText(f.contentParts as JsonObject[], type, 'text', content as string | null, '');
  } else if (!(f.noContent && (content === null || content === ''))) {
    out.content = content;
  }
  if (message.role === 'assistant') {
    if (message.tool_calls !== undefined) {
      out.tool_calls = message.tool_calls.map((c) => ({
        id: c.id,
        type: c.type,
        function: { name: c.function.name, arguments: c.function.arguments },
      }));
    } else if (f.nullToolCalls) {
      out.tool_calls = null;
    }
    if (message.reasoning_content !== undefined) out.reasoning_content = message.reasoning_content;
  }
  if (message.role === 'tool') {
    if (dialect === 'swe-agent')
      out.tool_call_ids = Array.isArray(f.toolCallIds) ? f.toolCallIds : [message.tool_call_id];
    else out.tool_call_id = message.tool_call_id;
  }
  if (message.name !== undefined) out.name = message.name;
  const extra = isRecord(f.extra) ? f.extra : raw ? omit(raw, MAPPED_KEYS[dialect]) : {};
  return { ...out, ...extra };
}
