/**
 * mini-SWE-agent trajectories (`.traj.json`): an object with `info`, `messages` (the chat list the
 * agent sent) and `trajectory_format` (`mini-swe-agent-1`, `mini-swe-agent-1.1`). Two layouts of
 * `messages`:
 * - text (1.x, and 2.x with a text model): the model writes its command in one fenced block of its
 *   reply (` ```bash ` in 1.x, ` ```mswea_bash_command ` in 2.x, or the `action_regex` of the run's
 *   config); a reply with none or several is answered by a format error. The next user message is
 *   the command's output (its observation, a timeout, a rejection, or the submission that ends the
 *   run). Each step is imported as an assistant message with one `bash` call (its text without the
 *   block), its observation as the result, and a round of its own; user messages that answer no
 *   call (format errors) are meta, as in SWE-agent's thought/action layout.
 * - tool calls (2.x): OpenAI's list with `tool` messages, and `extra` on each message; user
 *   messages after the task (format errors) are meta.
 * The run's `exit` message (2.x), never sent to the model, is kept with the document's top-level
 * keys and written back last. `swe-agent-export.ts` writes either layout back. Pure.
 */
import type { AssistantMessage, ContextItem, ItemOrigin, ToolMessage } from '../context/items';
import { messageText } from '../context/items';
import { chatMessageFromJson } from './chat-messages-import';
import { countItems, makeItem, rawFields, type ImportedSession, type ImportOptions } from './common';
import { ImportError } from './errors';
import { describe, isRecord, type JsonObject } from './json';

/** The action block of 1.x (`mini-swe-agent-1`) and of 2.x text models. */
const BASH_BLOCK = '```bash\\s*\\n(.*?)\\n```';
const MSWEA_BLOCK = '```mswea_bash_command\\s*\\n(.*?)\\n```';

/** The role of the message that records how a 2.x run ended. */
const EXIT_ROLE = 'exit';

/** Whether a parsed value is a mini-SWE-agent trajectory. */
export function isMiniSweAgentTrajectory(value: unknown): value is JsonObject & { messages: unknown[] } {
  if (!isRecord(value) || !Array.isArray(value.messages)) return false;
  const format = value.trajectory_format;
  if (typeof format === 'string') return format.startsWith('mini-swe-agent');
  return isRecord(value.info) && typeof value.info.mini_version === 'string';
}

/** The config value at `info.config.<part>.action_regex`, when it is a string. */
function configuredRegex(top: JsonObject, part: 'agent' | 'model'): string | undefined {
  const config = isRecord(top.info) && isRecord(top.info.config) ? top.info.config : undefined;
  const section = config && isRecord(config[part]) ? config[part] : undefined;
  return typeof section?.action_regex === 'string' ? section.action_regex : undefined;
}

/**
 * The pattern of an action block: the run's `action_regex` when JavaScript reads it the way Python
 * does (with `re.DOTALL`), else the default of the trajectory's version.
 */
export function actionPattern(top: JsonObject): RegExp {
  const fallback = top.trajectory_format === 'mini-swe-agent-1' ? BASH_BLOCK : MSWEA_BLOCK;
  for (const source of [configuredRegex(top, 'agent'), configuredRegex(top, 'model')]) {
    if (source === undefined) continue;
    try {
      return new RegExp(source, 'gs');
    } catch {
      // A Python-only construct (`(?P<name>…)`): the default stands.
    }
  }
  return new RegExp(fallback, 'gs');
}

/**
 * The command of an assistant text and the text around its block, when it holds exactly one
 * action block (as the agent parsed it: the group, trimmed); `null` when none or several.
 */
export function textAction(text: string, pattern: RegExp): { command: string; rest: string } | null {
  const matches = [...text.matchAll(pattern)];
  if (matches.length !== 1) return null;
  const match = matches[0] as RegExpMatchArray;
  const start = match.index ?? 0;
  const rest = `${text.slice(0, start).trimEnd()}\n\n${text.slice(start + match[0].length).trimStart()}`;
  return { command: (match[1] ?? match[0]).trim(), rest: rest.trim() };
}

/** The message's content as text (a list of parts: their texts), for the action's search. */
function contentText(raw: JsonObject): string | null {
  if (typeof raw.content === 'string') return raw.content;
  if (!Array.isArray(raw.content)) return null;
  return raw.content
    .map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

/** Whether the list is the text layout: no tool calls and no tool messages. */
function isTextLayout(messages: readonly unknown[]): boolean {
  return messages.every((raw) => !isRecord(raw) || (raw.role !== 'tool' && raw.tool_calls == null));
}

/**
 * Items of a text-layout list, rounds set: the system prompt in round 0, the task (the first user
 * message) in round 1, step k (the k-th reply, with or without an action) and what answers it in
 * round k + 1.
 */
function textItems(messages: readonly unknown[], pattern: RegExp, idPrefix: string): ContextItem[] {
  const items: ContextItem[] = [];
  let round = 0;
  let taskSeen = false;
  /** The call of the last step, until a user message answers it. */
  let waiting: string | undefined;
  messages.forEach((raw, i) => {
    const at = `messages[${i}]`;
    const origin = (fields: JsonObject): ItemOrigin => ({ format: 'swe-agent', index: i, fields });
    const text = isRecord(raw) && raw.role === 'assistant' ? contentText(raw) : null;
    const action = text === null ? null : textAction(text, pattern);
    if (action && isRecord(raw)) {
      // The call's id is sent to the model: short (the API caps ids), unique within the list.
      waiting = `call_${i}`;
      const message: AssistantMessage = {
        role: 'assistant',
        content: action.rest,
        tool_calls: [
          {
            id: waiting,
            type: 'function',
            function: { name: 'bash', arguments: JSON.stringify({ command: action.command }) },
          },
        ],
      };
      if (taskSeen) round++;
      items.push({
        ...makeItem(
          { type: 'ASSISTANT_MESSAGE', message },
          { id: `${idPrefix}${i}`, isMeta: false, origin: origin(rawFields(raw, message)) },
        ),
        round,
      });
      return;
    }
    const { fields, ...converted } = chatMessageFromJson(raw, at, 'openai');
    const isUser = converted.type === 'USER_MESSAGE';
    if (isUser && taskSeen && waiting !== undefined && isRecord(raw)) {
      const message: ToolMessage = {
        role: 'tool',
        content: messageText(converted.message),
        tool_call_id: waiting,
      };
      waiting = undefined;
      items.push({
        ...makeItem(
          { type: 'TOOL_RESULT', message },
          { id: `${idPrefix}${i}`, isMeta: false, origin: origin(rawFields(raw, message)) },
        ),
        round,
      });
      return;
    }
    // A reply with no call (a format error follows it) leaves no call waiting.
    if (converted.type === 'ASSISTANT_MESSAGE') waiting = undefined;
    if ((isUser && !taskSeen) || (converted.type === 'ASSISTANT_MESSAGE' && taskSeen)) round++;
    const item = makeItem(converted, {
      id: `${idPrefix}${i}`,
      isMeta: isUser && taskSeen,
      origin: origin(fields),
    });
    taskSeen ||= isUser;
    items.push({ ...item, round: item.type === 'SYSTEM_PROMPT' ? 0 : round });
  });
  return items;
}

/**
 * Items of a tool-call list, rounds set as in the text layout (each assistant message after the
 * task a step of its own); user messages after the task are meta.
 */
function toolCallItems(messages: readonly unknown[], idPrefix: string): ContextItem[] {
  let taskSeen = false;
  let round = 0;
  return messages.map((raw, i) => {
    const { fields, ...converted } = chatMessageFromJson(raw, `messages[${i}]`, 'openai');
    const isUser = converted.type === 'USER_MESSAGE';
    if ((isUser && !taskSeen) || (converted.type === 'ASSISTANT_MESSAGE' && taskSeen)) round++;
    const item = makeItem(converted, {
      id: `${idPrefix}${i}`,
      isMeta: isUser && taskSeen,
      origin: { format: 'swe-agent', index: i, fields },
    });
    taskSeen ||= isUser;
    return { ...item, round: item.type === 'SYSTEM_PROMPT' ? 0 : round };
  });
}

/**
 * Import from an already parsed mini-SWE-agent trajectory (see the module comment).
 * @throws ImportError naming the field (`messages[3].role`, ...)
 */
export function miniSweAgentFromValue(
  value: JsonObject & { messages: unknown[] },
  options: ImportOptions,
  idPrefix: string,
): ImportedSession {
  const { messages } = value;
  // The `exit` messages that end the list: the run's record, kept beside the messages.
  let end = messages.length;
  while (end > 0 && isRecord(messages[end - 1]) && (messages[end - 1] as JsonObject).role === EXIT_ROLE)
    end--;
  const exit = messages.slice(end);
  const chat = messages.slice(0, end);
  const early = chat.findIndex((raw) => isRecord(raw) && raw.role === EXIT_ROLE);
  if (early >= 0) {
    throw new ImportError(
      `expected the run's exit message to end the list, got ${describe(chat[early + 1] ?? messages[end])} after it`,
      {
        field: `messages[${early + 1}]`,
      },
    );
  }
  const top: JsonObject = { ...value, messages: null };
  const text = isTextLayout(chat);
  const items = text ? textItems(chat, actionPattern(value), idPrefix) : toolCallItems(chat, idPrefix);
  return {
    format: 'swe-agent',
    items: countItems(items, options.tokenizer),
    document: { format: 'swe-agent', top, layout: text ? 'mini_text' : 'mini', exit },
  };
}
