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
 *   call (format errors) are meta, as in SWE-agent's thought/action layout, but for a new task the
 *   user typed (2.x: `extra.interrupt_type` `UserNewTask`), which opens a round.
 * - tool calls (2.x): OpenAI's list with `tool` messages, and `extra` on each message; a round per
 *   step; user messages after the task (format errors) are meta, but for a new task the user typed.
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

/**
 * Whether a parsed value is a mini-SWE-agent trajectory: told by its `trajectory_format` (1.4 on),
 * else by `info.mini_version` (1.5 on), else by the `info` of a 1.0–1.3 run (`exit_status` and
 * `model_stats`).
 */
export function isMiniSweAgentTrajectory(value: unknown): value is JsonObject & { messages: unknown[] } {
  if (!isRecord(value) || !Array.isArray(value.messages)) return false;
  const format = value.trajectory_format;
  if (typeof format === 'string') return format.startsWith('mini-swe-agent');
  const { info } = value;
  return (
    isRecord(info) &&
    (typeof info.mini_version === 'string' || ('exit_status' in info && isRecord(info.model_stats)))
  );
}

/** The config value at `info.config.<part>.action_regex`, when it is a string. */
function configuredRegex(top: JsonObject, part: 'agent' | 'model'): string | undefined {
  const config = isRecord(top.info) && isRecord(top.info.config) ? top.info.config : undefined;
  const section = config && isRecord(config[part]) ? config[part] : undefined;
  return typeof section?.action_regex === 'string' ? section.action_regex : undefined;
}

/** Whether the trajectory is of mini-SWE-agent 1.x (by its format, else its version; unmarked: 1.0–1.3). */
function isVersion1(top: JsonObject): boolean {
  if (typeof top.trajectory_format === 'string') return top.trajectory_format === 'mini-swe-agent-1';
  const version = isRecord(top.info) ? top.info.mini_version : undefined;
  return typeof version !== 'string' || version.startsWith('1.');
}

/**
 * The pattern of an action block (global, to count the blocks): the run's `action_regex` when
 * JavaScript reads it as Python does (with `re.DOTALL`; compiled with `u`, Python's own syntax —
 * `(?P<name>…)`, `\A` — is refused rather than read otherwise), else the default of its version.
 */
export function actionPattern(top: JsonObject): RegExp {
  for (const source of [configuredRegex(top, 'agent'), configuredRegex(top, 'model')]) {
    if (source === undefined) continue;
    try {
      return new RegExp(source, 'gsu');
    } catch {
      // Python's own syntax: the default stands.
    }
  }
  return new RegExp(isVersion1(top) ? BASH_BLOCK : MSWEA_BLOCK, 'gs');
}

/**
 * The command of an assistant text and the text around its block, when it holds exactly one
 * action block (as the agent parsed it: the first group, trimmed, or the whole match when the
 * pattern has none); `null` when none or several. `pattern`: global.
 */
export function textAction(text: string, pattern: RegExp): { command: string; rest: string } | null {
  const matches = [...text.matchAll(pattern)];
  if (matches.length !== 1) return null;
  const match = matches[0] as RegExpMatchArray;
  const start = match.index ?? 0;
  const rest = `${text.slice(0, start).trimEnd()}\n\n${text.slice(start + match[0].length).trimStart()}`;
  const command = match.length > 1 ? (match[1] ?? '') : match[0];
  return { command: command.trim(), rest: rest.trim() };
}

/** The action blocks an exporter may write a command in, the version's first. */
const BLOCK_TEMPLATES = [
  (command: string) => `\`\`\`bash\n${command}\n\`\`\``,
  (command: string) => `\`\`\`mswea_bash_command\n${command}\n\`\`\``,
  (command: string) => `<mswea_bash_command>${command}</mswea_bash_command>`,
];

/**
 * A reply's text with its command in an action block after its words: the first block the run's
 * pattern reads back as that command (the version's default block when none does).
 */
export function textWithAction(words: string, command: string, top: JsonObject): string {
  const pattern = actionPattern(top);
  const templates = isVersion1(top)
    ? BLOCK_TEMPLATES
    : [BLOCK_TEMPLATES[1], BLOCK_TEMPLATES[0], BLOCK_TEMPLATES[2]];
  const written = (template: (command: string) => string): string =>
    [words, template(command)].filter((part) => part !== '').join('\n\n');
  for (const template of templates) {
    const text = written(template as (command: string) => string);
    if (textAction(text, pattern)?.command === command.trim()) return text;
  }
  return written(templates[0] as (command: string) => string);
}

/** The message's content as text (a list of parts: their texts), for the action's search. */
function contentText(raw: JsonObject): string | null {
  if (typeof raw.content === 'string') return raw.content;
  if (!Array.isArray(raw.content)) return null;
  return raw.content
    .map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

/** Whether the list is the text layout: no tool call and no tool message. */
function isTextLayout(messages: readonly unknown[]): boolean {
  return messages.every(
    (raw) =>
      !isRecord(raw) ||
      (raw.role !== 'tool' && !(Array.isArray(raw.tool_calls) && raw.tool_calls.length > 0)),
  );
}

/**
 * Whether a user message after the task is the user's own (2.x marks what the user typed when
 * asked: a new task), not the agent's (format errors, timeouts).
 */
function isUsersOwn(raw: unknown): boolean {
  return isRecord(raw) && isRecord(raw.extra) && raw.extra.interrupt_type === 'UserNewTask';
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
    const own = isUser && (!taskSeen || isUsersOwn(raw));
    if (isUser && !own && waiting !== undefined && isRecord(raw)) {
      const message: ToolMessage = {
        role: 'tool',
        content: messageText(converted.message),
        tool_call_id: waiting,
      };
      waiting = undefined;
      // The content is the message's: kept once, as a placeholder in the entry.
      const kept =
        typeof raw.content === 'string' ? { entry: { ...raw, content: null } } : rawFields(raw, message);
      items.push({
        ...makeItem(
          { type: 'TOOL_RESULT', message },
          { id: `${idPrefix}${i}`, isMeta: false, origin: origin(kept) },
        ),
        round,
      });
      return;
    }
    // A reply with no call (a format error follows it) and the user's own words leave no call waiting.
    if (converted.type === 'ASSISTANT_MESSAGE' || own) waiting = undefined;
    if (own || (converted.type === 'ASSISTANT_MESSAGE' && taskSeen)) round++;
    const item = makeItem(converted, {
      id: `${idPrefix}${i}`,
      isMeta: isUser && !own,
      origin: origin(fields),
    });
    taskSeen ||= isUser;
    items.push({ ...item, round: item.type === 'SYSTEM_PROMPT' ? 0 : round });
  });
  return items;
}

/**
 * Items of a tool-call list, rounds set as in the text layout (each assistant message after the
 * task a step of its own); user messages after the task are meta, but for the user's own.
 */
function toolCallItems(messages: readonly unknown[], idPrefix: string): ContextItem[] {
  let taskSeen = false;
  let round = 0;
  return messages.map((raw, i) => {
    const { fields, ...converted } = chatMessageFromJson(raw, `messages[${i}]`, 'openai');
    const isUser = converted.type === 'USER_MESSAGE';
    const own = isUser && (!taskSeen || isUsersOwn(raw));
    if (own || (converted.type === 'ASSISTANT_MESSAGE' && taskSeen)) round++;
    const item = makeItem(converted, {
      id: `${idPrefix}${i}`,
      isMeta: isUser && !own,
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
