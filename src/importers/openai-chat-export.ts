/**
 * OpenAI chat lists written back: the imported document in its layout (`exportOpenAIDocument`), or
 * the plain request of any items (`exportOpenAIChat`). Pure: takes items, returns text.
 */
import type { ContextItem, ToolDefinition } from '../context/items';
import { lower } from '../context/lower';
import { chatMessageToJson } from './chat-messages-export';
import type { AsideMessage, OpenAILayout, SessionDocument } from './common';
import { jsonLines, type JsonObject } from './json';

/** Tools of every TOOL_DEFINITIONS item, in order. */
function collectTools(items: readonly ContextItem[]): ToolDefinition[] {
  return items.flatMap((item) => (item.type === 'TOOL_DEFINITIONS' ? item.tools : []));
}

/**
 * The messages of the items in item order, written back with their OpenAI side fields, and the
 * messages kept aside (`aside`, subagents') back where they were: each before the first item
 * imported from after it.
 */
function sourceMessages(items: readonly ContextItem[], aside: readonly AsideMessage[] = []): unknown[] {
  const out: unknown[] = [];
  let next = 0;
  for (const item of items) {
    if (item.type === 'TOOL_DEFINITIONS') continue;
    const from = item.origin?.format === 'openai' ? item.origin : undefined;
    while (from && next < aside.length && (aside[next] as AsideMessage).index < from.index)
      out.push((aside[next++] as AsideMessage).message);
    out.push(chatMessageToJson(item.message, from?.fields, 'openai'));
  }
  for (const { message } of aside.slice(next)) out.push(message);
  return out;
}

/**
 * Writes items back as the OpenAI chat list they were imported from (same layout, same top-level
 * keys, same side fields): an unchanged import gives back a deep-equal document. Items are written
 * in item order; tools (object layout only) come from the TOOL_DEFINITIONS items.
 */
export function exportOpenAIDocument(
  items: readonly ContextItem[],
  document: Extract<SessionDocument, { format: 'openai' }>,
): string {
  const messages = sourceMessages(items, document.aside);
  switch (document.layout) {
    case 'array':
      return JSON.stringify(messages, null, 2) + '\n';
    case 'jsonl':
      return jsonLines(messages);
    case 'object': {
      const tools = collectTools(items);
      const out: JsonObject = { ...(document.top ?? {}), messages };
      if ('tools' in out || tools.length > 0) out.tools = tools;
      return JSON.stringify(out, null, 2) + '\n';
    }
  }
}

/**
 * The plain OpenAI chat request of the items (`lower()`: header first, internal fields dropped,
 * no side fields), as `{ messages, tools? }` JSON (`'object'`), a bare message array (`'array'`),
 * or JSONL of messages (`'jsonl'`; the array and JSONL forms cannot hold tools).
 */
export function exportOpenAIChat(
  items: readonly ContextItem[],
  options: { layout?: OpenAILayout } = {},
): string {
  const request = lower(items);
  switch (options.layout ?? 'object') {
    case 'array':
      return JSON.stringify(request.messages, null, 2) + '\n';
    case 'jsonl':
      return jsonLines(request.messages);
    case 'object':
      return (
        JSON.stringify(
          request.tools.length > 0
            ? { messages: request.messages, tools: request.tools }
            : { messages: request.messages },
          null,
          2,
        ) + '\n'
      );
  }
}
