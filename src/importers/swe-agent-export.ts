/**
 * SWE-agent trajectories written back (the layouts are described in `swe-agent-import.ts` and, for
 * mini-SWE-agent's, `mini-swe-agent.ts`): the document's top-level keys with `history` (`messages`)
 * rebuilt from the items. Pure.
 */
import type { ContextItem, MessageItem, ToolCall } from '../context/items';
import { chatMessageToJson, type ChatDialect } from './chat-messages-export';
import { unchangedRaw, type SessionDocument } from './common';
import { isRecord, stringFieldsOf, type JsonObject } from './json';
import { textWithAction } from './mini-swe-agent';
import { COMMANDS, EDIT_END, EDITOR } from './swe-agent-commands';

/** A word as a command line writes it: quoted when it holds anything but plain path characters. */
function quoteWord(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return /^[\w./:@%+=,-]+$/.test(text) ? text : `"${text.replace(/["\\$`]/g, '\\$&')}"`;
}

/**
 * The command of `bash` arguments a compaction cut (`{"command":"cat a.py … [TRUNCATED …]`, no
 * longer JSON): the `command` field's text as far as it goes, its marker after it; other text as
 * it is.
 */
function cutCommand(text: string): string {
  return stringFieldsOf(text).find(([key]) => key === 'command')?.[1] ?? text;
}

/** The action line of a tool call, the inverse of `parseSweAgentAction` (for changed items). */
function actionOf(call: ToolCall): string {
  const { name, arguments: text } = call.function;
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch {
    args = undefined;
  }
  // Arguments cut by compaction are no longer JSON: written as the text they are (a shell
  // command's as its command, the JSON around it taken off).
  if (!isRecord(args)) return name === 'bash' ? cutCommand(text) : `${name} ${text}`;
  if (name === 'bash' && typeof args.command === 'string') return args.command;
  if (name === 'edit' && typeof args.replacement === 'string') {
    const range =
      typeof args.start_line === 'number' && typeof args.end_line === 'number'
        ? ` ${args.start_line}:${args.end_line}`
        : '';
    return `edit${range}\n${args.replacement}\n${EDIT_END}`;
  }
  if (name === EDITOR.name && typeof args.command === 'string' && typeof args.path === 'string') {
    const options = Object.keys(EDITOR.options).flatMap((key) => {
      const value = args[key];
      if (value === undefined) return [];
      const words = Array.isArray(value) ? value.map(quoteWord) : [quoteWord(value)];
      return [`--${key}`, ...words];
    });
    return [name, args.command, quoteWord(args.path), ...options].join(' ');
  }
  const keys = COMMANDS[name]?.keys ?? Object.keys(args);
  return [name, ...keys.flatMap((key) => (args[key] === undefined ? [] : [quoteWord(args[key])]))].join(' ');
}

/**
 * An item as an entry of a history whose steps are text (SWE-agent's thought/action layout,
 * mini-SWE-agent's text layout): the source entry when unchanged; a changed (or new) assistant
 * message with tool calls as the step `step` writes from its words and its calls' action (one per
 * line: the agent reads one action per reply), other keys of the source entry kept; a tool result
 * as the user entry of its observation; anything else as a chat message of `dialect`.
 */
function textStepEntry(
  item: MessageItem,
  dialect: ChatDialect,
  step: (words: string, action: string) => JsonObject,
): JsonObject {
  const fields = item.origin?.format === 'swe-agent' ? item.origin.fields : undefined;
  const kept = unchangedRaw(fields, item.message);
  if (isRecord(kept)) return kept;
  const source = isRecord(fields?.entry) ? fields.entry : isRecord(fields?.raw) ? fields.raw : {};
  const message = item.message;
  if (message.role === 'tool') return { ...source, role: 'user', content: message.content };
  if (message.role === 'assistant' && message.tool_calls && message.tool_calls.length > 0) {
    const action = message.tool_calls.map(actionOf).join('\n');
    return { ...source, role: 'assistant', ...step(message.content ?? '', action) };
  }
  return chatMessageToJson(message, fields, dialect);
}

/** A thought/action step: `thought`, `action`, and the content with both, the action in a code block. */
function thoughtActionStep(thought: string, action: string): JsonObject {
  return { content: `${thought ? `${thought}\n\n` : ''}\`\`\`\n${action}\n\`\`\``, thought, action };
}

/**
 * Writes items back as the trajectory they came from: the document's top-level keys, `history`
 * (`messages` for mini-SWE-agent, its exit messages last) rebuilt from the items in order, in the
 * document's layout (function calling: SWE-agent side fields restored, other items in the plain
 * API shape with `tool_call_ids`; thought/action and mini-SWE-agent's text: see
 * {@link textStepEntry}; mini-SWE-agent's tool calls: OpenAI messages). An unchanged import gives
 * back a deep-equal document.
 */
export function exportSweAgentTraj(
  items: readonly ContextItem[],
  document: Extract<SessionDocument, { format: 'swe-agent' }>,
): string {
  const { layout, top } = document;
  const entries: JsonObject[] = items.flatMap((item) => {
    if (item.type === 'TOOL_DEFINITIONS') return [];
    if (layout === 'thought_action') return [textStepEntry(item, 'swe-agent', thoughtActionStep)];
    if (layout === 'mini_text')
      return [
        textStepEntry(item, 'openai', (words, action) => ({ content: textWithAction(words, action, top) })),
      ];
    const fields = item.origin?.format === 'swe-agent' ? item.origin.fields : undefined;
    return [chatMessageToJson(item.message, fields, layout === 'mini' ? 'openai' : 'swe-agent')];
  });
  const written =
    layout === 'mini' || layout === 'mini_text'
      ? { ...top, messages: [...entries, ...(document.exit ?? [])] }
      : { ...top, history: entries };
  return JSON.stringify(written, null, 2) + '\n';
}
