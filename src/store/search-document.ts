/**
 * What `recall` finds an item by (issue 24): the texts of its `search` vector, with weights, and
 * the text it reads back. Only originals are searched: a cut form, a summary, carried state, the
 * tool list and recall's own results restate other items (an artifact trail names every path), so
 * they would crowd the originals out of the top results; they stay readable by handle.
 *
 * A tool result is found by its call too: a `read_file` result holds the file's lines, not its
 * path, so the call is indexed with it: the paths it read weighted highest (A: the result holds
 * them), the rest of the call next (B: tool name, command, arguments), a call's own arguments in
 * its assistant message below that (C), text last (D). A search for a path ranks the result that
 * holds the file above a command that ran it, an edit of it and the call that asked for it.
 *
 * Pure module.
 */
import { messageText, type ContextItem, type ToolCall } from '../context/items';
import { callFacts } from '../context/item-facts';
import { RECALL_TOOL_NAME } from '../context/recall-tool';
import type { WeightedText } from './search-terms';

/** Types whose items restate others: kept out of search. */
const DERIVED_TYPES = new Set<ContextItem['type']>([
  'TOOL_DEFINITIONS',
  'COMPACTION_SUMMARY',
  'ARTIFACT_TRAIL',
  'OPEN_ERRORS',
  'GIT_DIFF_STAT',
]);

/** A tool call as one line: its name and arguments. */
export function callLine(call: ToolCall): string {
  return `${call.function.name} ${call.function.arguments}`;
}

/** The texts an item is searched by ([] for none); `call` is a tool result's call, when known. */
export function searchTexts(item: ContextItem, call?: ToolCall): WeightedText[] {
  if (item.sourceId !== undefined || DERIVED_TYPES.has(item.type) || item.type === 'TOOL_DEFINITIONS')
    return [];
  switch (item.type) {
    case 'TOOL_RESULT': {
      const name = call?.function.name ?? item.message.name ?? '';
      if (name === RECALL_TOOL_NAME) return [];
      const read = call ? callFacts(call).touches.filter((t) => t.op === 'read') : [];
      return [
        { text: read.map((t) => t.path).join(' '), weight: 'A' },
        { text: call ? callLine(call) : name, weight: 'B' },
        { text: item.message.content, weight: 'D' },
      ];
    }
    case 'ASSISTANT_MESSAGE':
      return [
        { text: item.message.content ?? '', weight: 'D' },
        ...(item.message.tool_calls ?? []).map((c) => ({ text: callLine(c), weight: 'C' as const })),
      ];
    default:
      return [{ text: messageText(item.message), weight: 'D' }];
  }
}

/** The text of an item as recall reads it back: a message's text, then its tool calls. */
export function readableText(item: ContextItem): string {
  if (item.type === 'TOOL_DEFINITIONS') return JSON.stringify(item.tools, null, 1);
  const text = messageText(item.message);
  if (item.type !== 'ASSISTANT_MESSAGE' || !item.message.tool_calls?.length) return text;
  const calls = item.message.tool_calls.map((c) => `→ ${c.function.name}(${c.function.arguments})`);
  return [text, ...calls].filter((t) => t !== '').join('\n');
}
