/**
 * SWE-agent trajectories (`.traj`): a JSON object whose `history` is the chat list the agent sent,
 * beside `trajectory`, `info`, `replay_config`, ... which are kept as they are for export. Two
 * layouts of `history`:
 * - function calling (SWE-agent 1.x): the OpenAI chat list (system, user, assistant with
 *   `tool_calls`, tool with `tool_call_ids`);
 * - thought/action (SWE-agent 0.x, its default parser): no tool calls and no tool messages; an
 *   assistant step holds `thought` and `action` (the command line it ran), and the next user entry
 *   is the observation (the command's output). Each step is imported as an assistant message with
 *   one tool call parsed from the action, its observation as the result, and a round of its own.
 * A mini-SWE-agent trajectory (`messages` instead of `history`) is read by `mini-swe-agent.ts`.
 * The exporter (`swe-agent-export.ts`) writes every layout back. Pure.
 */
import type { AssistantMessage, ContextItem, ItemOrigin, ToolMessage } from '../context/items';
import { messageText } from '../context/items';
import { chatMessageFromJson } from './chat-messages-import';
import {
  countItems,
  defaultIdPrefix,
  finishItems,
  makeItem,
  rawFields,
  type ImportedSession,
  type ImportOptions,
  type SessionDocument,
} from './common';
import { ImportError } from './errors';
import { describe, isRecord, parseJson, type JsonObject } from './json';
import { isMiniSweAgentTrajectory, miniSweAgentFromValue } from './mini-swe-agent';
import { COMMANDS, EDIT_END, EDIT_HEAD, EDITOR } from './swe-agent-commands';

/** The state line SWE-agent 0.x appends to every observation. */
const OPEN_FILE_LINE = /^\(Open file: (.*)\)\s*$/gm;

/** A command line split into words as a shell would (quotes taken off), or `null` on an open quote. */
function shellWords(line: string): string[] | null {
  const words: string[] = [];
  let word: string | null = null;
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line.charAt(i);
    if (quote === "'") {
      if (c === "'") quote = '';
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = '';
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line.charAt(i + 1)))
        word += line.charAt(++i);
      else word += c;
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word ??= '';
      if (c === '"' || c === "'") quote = c;
      else if (c === '\\' && i + 1 < line.length) word += line.charAt(++i);
      else word += c;
    }
  }
  if (quote) return null;
  if (word !== null) words.push(word);
  return words;
}

/** The arguments of a `str_replace_editor` command line (see `EDITOR`), or `null` when it is not one. */
function editorArguments(text: string): JsonObject | null {
  const words = shellWords(text);
  if (!words || words[0] !== EDITOR.name) return null;
  const [, command = '', path, ...rest] = words;
  if (!EDITOR.commands.some((c) => c === command) || path === undefined) return null;
  const args: JsonObject = { command, path };
  const number = (word: string | undefined): number | null =>
    word !== undefined && /^-?\d+$/.test(word) ? Number(word) : null;
  for (let i = 0; i < rest.length;) {
    const option = (rest[i] as string).startsWith('--') ? (rest[i] as string).slice(2) : '';
    const takes = EDITOR.options[option];
    if (takes === undefined || option in args) return null;
    const value = rest[i + 1];
    if (takes === 'text') {
      if (value === undefined) return null;
      args[option] = value;
      i += 2;
    } else if (takes === 'line') {
      const line = number(value);
      if (line === null) return null;
      args[option] = line;
      i += 2;
    } else {
      const [start, end] = [number(value), number(rest[i + 2])];
      if (start === null || end === null) return null;
      args[option] = [start, end];
      i += 3;
    }
  }
  return args;
}

/**
 * The tool call of an action: a known SWE-agent command with its arguments (`edit` applies to
 * `openFile`, and so does `search_file` without a file; `str_replace_editor` gets the arguments of
 * the function-calling layout), else `bash` with the whole action.
 */
export function parseSweAgentAction(
  action: string,
  openFile: string | undefined,
): { name: string; args: JsonObject } {
  const text = action.trim();
  const shell = { name: 'bash', args: { command: text } };
  const file = openFile === undefined ? {} : { path: openFile };
  const [first = '', ...rest] = text.split('\n');
  if (first.startsWith(`${EDITOR.name} `)) {
    const args = editorArguments(text);
    return args ? { name: EDITOR.name, args } : shell;
  }
  const edit = EDIT_HEAD.exec(first);
  if (edit) {
    if (rest.at(-1)?.trim() !== EDIT_END) return shell;
    const range = edit[1] === undefined ? {} : { start_line: Number(edit[1]), end_line: Number(edit[2]) };
    return { name: 'edit', args: { ...file, ...range, replacement: rest.slice(0, -1).join('\n') } };
  }
  const words = rest.length === 0 ? shellWords(first) : null;
  const [name = '', ...values] = words ?? [];
  const command = COMMANDS[name];
  if (!command || values.length < command.required || values.length > command.keys.length) return shell;
  const args: JsonObject = {};
  for (const [i, value] of values.entries()) {
    const key = command.keys[i] as string;
    if (key === 'line_number' && !/^\d+$/.test(value)) return shell;
    args[key] = key === 'line_number' ? Number(value) : value;
  }
  if (name === 'search_file' && args.path === undefined) Object.assign(args, file);
  return { name, args };
}

/** The file open after an observation: its state line's, spelled as the action did when the same. */
function observedOpenFile(observation: string, current: string | undefined): string | undefined {
  const seen = [...observation.matchAll(OPEN_FILE_LINE)].at(-1)?.[1]?.trim();
  if (seen === undefined) return current;
  if (seen === '' || seen === 'n/a') return undefined;
  const written = current?.replace(/^\.\//, '');
  return written !== undefined && (seen === current || seen.endsWith(`/${written}`)) ? current : seen;
}

/** The discussion of a step without `thought`: its content without the trailing block of the action. */
function withoutActionBlock(content: string, action: string): string {
  const text = content.trimEnd();
  if (!text.endsWith('```')) return content;
  const open = text.lastIndexOf('```', text.length - 4);
  const block = open < 0 ? '' : text.slice(open + 3, -3);
  return block.slice(block.indexOf('\n') + 1).trim() === action.trim() ? text.slice(0, open) : content;
}

function optionalString(raw: JsonObject, key: string, at: string): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null || typeof value === 'string') return value ?? undefined;
  throw new ImportError(`expected a string, got ${describe(value)}`, { field: `${at}.${key}` });
}

/** Whether the history is the thought/action layout (see the module comment). */
function isThoughtActionLayout(history: readonly unknown[]): boolean {
  let actions = false;
  for (const raw of history) {
    if (!isRecord(raw)) continue;
    if (raw.role === 'tool' || raw.tool_calls != null) return false;
    if (raw.role === 'assistant' && raw.is_demo !== true && raw.action !== undefined) actions = true;
  }
  return actions;
}

/**
 * The assistant message of a step (content: the thought, trimmed; one call parsed from the action,
 * with the given id) and the file open once it ran (as far as the action tells).
 */
function stepMessage(
  raw: JsonObject,
  at: string,
  callId: string,
  openFile: string | undefined,
): { message: AssistantMessage; openFile: string | undefined } {
  const action = raw.action;
  if (typeof action !== 'string') {
    throw new ImportError(`expected a string, got ${describe(action)}`, { field: `${at}.action` });
  }
  const thought = optionalString(raw, 'thought', at);
  const content = optionalString(raw, 'content', at) ?? '';
  const call = parseSweAgentAction(action, openFile);
  const opens = call.name === 'open' || call.name === 'create';
  return {
    message: {
      role: 'assistant',
      content: (thought ?? withoutActionBlock(content, action)).trim(),
      tool_calls: [
        { id: callId, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } },
      ],
    },
    openFile: opens ? (call.args.path as string) : openFile,
  };
}

/**
 * Items of a thought/action history, rounds set: the system prompt and what comes before the task
 * in round 0, the task (the first user entry that is no demonstration) in round 1, step k and its
 * observation (the next user entry that is no demonstration) in round k + 1. Demonstrations and
 * user entries that answer no step are meta.
 */
function thoughtActionItems(history: readonly unknown[], idPrefix: string): ContextItem[] {
  const items: ContextItem[] = [];
  let round = 0;
  let taskSeen = false;
  let openFile: string | undefined;
  /** The call of the last step, until an observation answers it. */
  let waiting: string | undefined;
  history.forEach((raw, i) => {
    const at = `history[${i}]`;
    const base = (isMeta: boolean, fields: JsonObject) => {
      const origin: ItemOrigin = { format: 'swe-agent', index: i, fields };
      return { id: `${idPrefix}${i}`, isMeta, origin };
    };
    const isDemo = isRecord(raw) && raw.is_demo === true;
    if (isRecord(raw) && raw.role === 'assistant' && !isDemo && raw.action !== undefined) {
      // The call's id is sent to the model: short (the API caps ids), unique within the history.
      waiting = `call_${i}`;
      const step = stepMessage(raw, at, waiting, openFile);
      openFile = step.openFile;
      round++;
      const fields = rawFields(raw, step.message);
      items.push({
        ...makeItem({ type: 'ASSISTANT_MESSAGE', message: step.message }, base(false, fields)),
        round,
      });
      return;
    }
    const { fields, ...converted } = chatMessageFromJson(raw, at, 'swe-agent');
    const isUser = converted.type === 'USER_MESSAGE' && !isDemo;
    if (isUser && taskSeen && waiting !== undefined && isRecord(raw)) {
      const message: ToolMessage = {
        role: 'tool',
        content: messageText(converted.message),
        tool_call_id: waiting,
      };
      waiting = undefined;
      openFile = observedOpenFile(message.content, openFile);
      // The content is the message's: kept once, as a placeholder in the entry.
      const kept =
        typeof raw.content === 'string' ? { entry: { ...raw, content: null } } : rawFields(raw, message);
      items.push({ ...makeItem({ type: 'TOOL_RESULT', message }, base(false, kept)), round });
      return;
    }
    if (isUser && !taskSeen) round++;
    const item = makeItem(converted, base(isDemo || (isUser && taskSeen), fields));
    taskSeen ||= isUser;
    items.push({ ...item, round: item.type === 'SYSTEM_PROMPT' ? 0 : round });
  });
  return items;
}

/**
 * Import from an already parsed trajectory.
 *
 * Meta messages: only the first user message that is not a demonstration is the user's (the
 * task); demonstrations (`is_demo`) and every later user message (observations and reminders the
 * agent framework writes; in the thought/action layout those that answer no step) are meta, so
 * they never start a round. The thought/action layout numbers its rounds by steps instead.
 */
export function sweAgentFromValue(value: unknown, options: ImportOptions, idPrefix: string): ImportedSession {
  if (!isRecord(value)) throw new ImportError(`expected a trajectory object, got ${describe(value)}`);
  if (value.history === undefined && isMiniSweAgentTrajectory(value))
    return miniSweAgentFromValue(value, options, idPrefix);
  const history = value.history;
  if (!Array.isArray(history)) {
    throw new ImportError(`expected the list of messages, got ${describe(history)}`, { field: 'history' });
  }
  const top: JsonObject = { ...value, history: null };
  if (isThoughtActionLayout(history)) {
    return {
      format: 'swe-agent',
      items: countItems(thoughtActionItems(history, idPrefix), options.tokenizer),
      document: { format: 'swe-agent', top, layout: 'thought_action' },
    };
  }
  let taskSeen = false;
  const items: ContextItem[] = history.map((raw, i) => {
    const { fields, ...converted } = chatMessageFromJson(raw, `history[${i}]`, 'swe-agent');
    let isMeta = isRecord(raw) && raw.is_demo === true;
    if (converted.type === 'USER_MESSAGE' && !isMeta) {
      isMeta = taskSeen;
      taskSeen = true;
    }
    return makeItem(converted, {
      id: `${idPrefix}${i}`,
      isMeta,
      origin: { format: 'swe-agent', index: i, fields },
    });
  });
  const document: SessionDocument = { format: 'swe-agent', top };
  return { format: 'swe-agent', items: finishItems(items, options.tokenizer), document };
}

/**
 * Imports a SWE-agent trajectory (`.traj` JSON), in either layout (see the module comment).
 * @throws ImportError naming the field (`history[3].role`, `history[3].action`, ...) or the line of
 *   a JSON syntax error
 */
export function importSweAgentTraj(text: string, options: ImportOptions): ImportedSession {
  return sweAgentFromValue(parseJson(text), options, options.idPrefix ?? defaultIdPrefix('swe-agent', text));
}
