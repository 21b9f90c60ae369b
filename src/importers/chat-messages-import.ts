/**
 * OpenAI chat messages as the OpenAI-list and SWE-agent formats write them, read into the item
 * model's messages (`chat-messages-export.ts` writes them back). The SWE-agent dialect differs in
 * one field: a tool message names its calls in `tool_call_ids` (a list) instead of `tool_call_id`;
 * its other keys (`agent`, `message_type`, `thought`, `action`, `is_demo`, ...) are kept as side
 * fields like any key the item model lacks. Pure.
 */
import type { ContentPart, ToolCall } from '../context/items';
import { takeText } from './blocks';
import { chatMessageToJson, MAPPED_KEYS, type ChatDialect, type ChatFields } from './chat-messages-export';
import { rawFields, type Converted } from './common';
import { ImportError } from './errors';
import { describe, isRecord, jsonEqual, omit, type JsonObject } from './json';

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'];

function expectString(value: unknown, field: string): string {
  if (typeof value !== 'string')
    throw new ImportError(`expected a string, got ${describe(value)}`, { field });
  return value;
}

function parts(value: unknown[], field: string): JsonObject[] {
  return value.map((part, i) => {
    if (!isRecord(part) || typeof part.type !== 'string') {
      throw new ImportError(`expected a content part with a string type, got ${describe(part)}`, {
        field: `${field}[${i}]`,
      });
    }
    return part;
  });
}

/**
 * Types of content parts that hold a message's text in `text` besides `text` itself: a tool's
 * output (`tool_output`, as lists converted from Codex sessions write tool messages) and the
 * Responses API's `output_text` / `input_text`.
 */
const OTHER_TEXT_PARTS = ['tool_output', 'output_text', 'input_text'];

/** The type of the parts a content list holds its text in: `text`, else another text part's. */
function textPartType(list: readonly JsonObject[]): string {
  if (list.some((part) => part.type === 'text' && typeof part.text === 'string')) return 'text';
  const other = list.find(
    (part) => OTHER_TEXT_PARTS.includes(part.type as string) && typeof part.text === 'string',
  );
  return other ? (other.type as string) : 'text';
}

/**
 * A user message's parts as the item model holds them: its text in `text` parts. Parts holding it
 * under another type (the Responses API's `input_text`) become `text` parts, the type kept in
 * `contentPartType` for the way back; images and any other part stay as they are.
 */
function userParts(list: readonly JsonObject[], fields: ChatFields): ContentPart[] {
  const type = textPartType(list);
  if (type === 'text') return list as ContentPart[];
  fields.contentPartType = type;
  return list.map((part) => (part.type === type ? { ...part, type: 'text' } : part)) as ContentPart[];
}

/** Content of a message that the item model holds as one string (system, assistant, tool). */
function textContent(raw: JsonObject, field: string, fields: ChatFields, nullable: boolean): string | null {
  const content = raw.content;
  if (typeof content === 'string') return content;
  if (content === undefined) {
    fields.noContent = true;
    return nullable ? null : '';
  }
  if (content === null && nullable) return null;
  if (Array.isArray(content)) {
    const list = parts(content, `${field}.content`);
    const type = textPartType(list);
    const taken = takeText(list, type, 'text', '');
    fields.contentParts = taken.layout;
    if (type !== 'text') fields.contentPartType = type;
    return taken.text ?? (nullable ? null : '');
  }
  throw new ImportError(`expected a string or a list of content parts, got ${describe(content)}`, {
    field: `${field}.content`,
  });
}

function toolCalls(value: unknown, field: string): ToolCall[] {
  if (!Array.isArray(value)) throw new ImportError(`expected a list, got ${describe(value)}`, { field });
  return value.map((call, i) => {
    const at = `${field}[${i}]`;
    if (!isRecord(call))
      throw new ImportError(`expected a tool call object, got ${describe(call)}`, { field: at });
    const fn = call.function;
    if (!isRecord(fn))
      throw new ImportError(`expected an object, got ${describe(fn)}`, { field: `${at}.function` });
    const args = fn.arguments;
    return {
      id: expectString(call.id, `${at}.id`),
      type: 'function',
      function: {
        name: expectString(fn.name, `${at}.function.name`),
        // Some writers log arguments as an object; the API carries them as JSON text.
        arguments: typeof args === 'string' ? args : args === undefined ? '' : JSON.stringify(args),
      },
    };
  });
}

function mapMessage(raw: JsonObject, field: string, dialect: ChatDialect, fields: ChatFields): Converted {
  const role = raw.role;
  if (typeof role !== 'string' || !ROLES.includes(role)) {
    throw new ImportError(`expected one of ${ROLES.join(', ')}, got ${JSON.stringify(role) ?? 'nothing'}`, {
      field: `${field}.role`,
    });
  }
  const name = raw.name === undefined ? undefined : expectString(raw.name, `${field}.name`);
  const named = name === undefined ? {} : { name };
  switch (role) {
    case 'system':
    case 'developer':
      if (role === 'developer') fields.role = 'developer';
      return {
        type: 'SYSTEM_PROMPT',
        message: { role: 'system', content: textContent(raw, field, fields, false) ?? '', ...named },
      };
    case 'user': {
      const content = raw.content;
      let userContent: string | ContentPart[];
      if (typeof content === 'string') userContent = content;
      else if (Array.isArray(content)) userContent = userParts(parts(content, `${field}.content`), fields);
      else if (content === undefined) {
        fields.noContent = true;
        userContent = '';
      } else {
        throw new ImportError(`expected a string or a list of content parts, got ${describe(content)}`, {
          field: `${field}.content`,
        });
      }
      return { type: 'USER_MESSAGE', message: { role: 'user', content: userContent, ...named } };
    }
    case 'assistant': {
      const content = textContent(raw, field, fields, true);
      const calls = raw.tool_calls == null ? undefined : toolCalls(raw.tool_calls, `${field}.tool_calls`);
      if (raw.tool_calls === null) fields.nullToolCalls = true;
      const reasoning = raw.reasoning_content;
      return {
        type: 'ASSISTANT_MESSAGE',
        message: {
          role: 'assistant',
          content,
          ...(calls ? { tool_calls: calls } : {}),
          ...(typeof reasoning === 'string' ? { reasoning_content: reasoning } : {}),
          ...named,
        },
      };
    }
    default: {
      let id: string;
      if (dialect === 'swe-agent' && raw.tool_call_id === undefined) {
        const ids = raw.tool_call_ids;
        if (!Array.isArray(ids)) {
          throw new ImportError(`expected a list of tool call ids, got ${describe(ids)}`, {
            field: `${field}.tool_call_ids`,
          });
        }
        id = expectString(ids[0], `${field}.tool_call_ids[0]`);
        if (ids.length !== 1) fields.toolCallIds = ids;
      } else {
        id = expectString(raw.tool_call_id, `${field}.tool_call_id`);
      }
      return {
        type: 'TOOL_RESULT',
        message: {
          role: 'tool',
          content: textContent(raw, field, fields, false) ?? '',
          tool_call_id: id,
          ...named,
        },
      };
    }
  }
}

/**
 * A source message as a converted item message plus its side fields.
 * @param field where the message is, for errors (`messages[3]`, `history[3]`)
 */
export function chatMessageFromJson(
  raw: unknown,
  field: string,
  dialect: ChatDialect,
): Converted & { fields: ChatFields } {
  if (!isRecord(raw)) throw new ImportError(`expected a message object, got ${describe(raw)}`, { field });
  const fields: ChatFields = {};
  const converted = mapMessage(raw, field, dialect, fields);
  const extra = omit(raw, MAPPED_KEYS[dialect]);
  if (Object.keys(extra).length > 0) fields.extra = extra;
  // The mapping covers the shapes real files use; anything else is kept whole.
  if (!jsonEqual(chatMessageToJson(converted.message, fields, dialect), raw)) {
    return { ...converted, fields: rawFields(raw, converted.message) };
  }
  return { ...converted, fields };
}
