/**
 * The agent's notes of seed 001 — memories, the task list, pinned content — as text, and how to
 * read them off any agent's tool calls and messages: our `remember`, `update_tasks` and `pin`
 * tools, and the like-named tools of other agents (a `TodoWrite` with `todos`, an `update_plan`
 * with `plan`, Roo Code's `update_todo_list` with a Markdown checklist, a `save_memory` with
 * `fact`), Cline's `task_progress` checklist on any call, and `<Pin>…</Pin>` in a user message.
 *
 * Pure module.
 */
import { messageText, type CallNote, type ChatMessage, type Task } from './items';
import { parseArguments } from './tool-facts';

export type { CallNote, Task } from './items';

/** What a memory note's message starts with. */
export const MEMORY_PREFIX = '[Memory] ';
/** What a task list's message starts with (then one task a line). */
export const TASK_LIST_PREFIX = '[Task list]\n';

const PIN = /<Pin>([\s\S]*?)<\/Pin>/g;

/** Whether a message holds `<Pin>…</Pin>` (seed 001: the user pins content; the message is then pinned). */
export function hasPin(message: ChatMessage): boolean {
  PIN.lastIndex = 0;
  return PIN.test(messageText(message));
}

/** The text of a pin note as a pinned message holds it. */
export function pinMessageText(text: string): string {
  return `<Pin>${text}</Pin>`;
}

/** A task list as text, one task a line: `[x]` done, `[~]` in progress, `[ ]` anything else. */
export function formatTaskList(tasks: readonly Task[]): string {
  return tasks
    .map((t) => {
      const status = t.status.toLowerCase();
      const box = /^(done|completed?|finished)$/.test(status)
        ? '[x]'
        : /^(in_progress|in-progress|active|doing|started)$/.test(status)
          ? '[~]'
          : '[ ]';
      return `${box} ${t.title.trim()}`;
    })
    .join('\n');
}

const TASK_TOOL = /(todo|task|plan)/i;
const MEMORY_TOOL = /(remember|memory|memorize)/i;
const PIN_TOOL = /^pin$|(^|_)pin(_|$)/i;
const TASK_LIST_KEYS = ['tasks', 'todos', 'plan', 'items', 'steps'];
const TASK_TITLE_KEYS = ['title', 'content', 'step', 'task', 'description', 'text', 'name'];
const NOTE_KEYS = ['note', 'text', 'content', 'memory', 'fact'];

function firstString(obj: Record<string, unknown>, keys: readonly string[]): string | null {
  for (const key of keys) {
    const value = obj[key];
    if (typeof value === 'string' && value.trim()) return value.trim();
  }
  return null;
}

/** A line of a Markdown checklist: `- [ ] title`, `[x] title`, `* [-] title`. */
const CHECKLIST_LINE = /^\s*(?:[-*+]\s+)?\[( |x|X|-|~)\]\s+(\S.*)$/;

/** The tasks of a Markdown checklist (at least one line of it), or null. */
function checklist(text: string): Task[] | null {
  const tasks: Task[] = [];
  for (const line of text.split('\n')) {
    const match = CHECKLIST_LINE.exec(line);
    if (!match) continue;
    const box = match[1] as string;
    const status = box === ' ' ? 'pending' : box === 'x' || box === 'X' ? 'completed' : 'in_progress';
    tasks.push({ title: (match[2] as string).trimEnd(), status });
  }
  return tasks.length > 0 ? tasks : null;
}

/**
 * The note a tool call makes, if it is a note tool: a task list (a list of tasks under `tasks`,
 * `todos`, `plan`, ..., or a Markdown checklist there), a memory or a pin (the text under `note`,
 * `text`, ...). Any tool's `task_progress` checklist (Cline's, given with any call) is a task
 * list too. Null otherwise.
 */
export function noteOfToolCall(name: string, argumentsText: string): CallNote | null {
  const isTask = TASK_TOOL.test(name);
  const isMemory = MEMORY_TOOL.test(name);
  const isPin = PIN_TOOL.test(name);
  const progress = argumentsText.includes('"task_progress"');
  if (!isTask && !isMemory && !isPin && !progress) return null;
  if (!argumentsText.trimStart().startsWith('{')) return null;
  const args = parseArguments(argumentsText);
  if (!args) return null;
  // A memory or pin tool's own note comes first.
  if (progress && !isMemory && !isPin && typeof args.task_progress === 'string') {
    const tasks = checklist(args.task_progress);
    if (tasks) return { kind: 'task_list', tasks };
  }
  if (isTask) {
    for (const key of TASK_LIST_KEYS) {
      const list = args[key];
      if (typeof list === 'string') {
        const tasks = checklist(list);
        if (tasks) return { kind: 'task_list', tasks };
      }
      if (!Array.isArray(list)) continue;
      const tasks: Task[] = [];
      for (const entry of list) {
        if (typeof entry === 'string' && entry.trim()) tasks.push({ title: entry.trim(), status: 'pending' });
        else if (typeof entry === 'object' && entry !== null) {
          const obj = entry as Record<string, unknown>;
          const title = firstString(obj, TASK_TITLE_KEYS);
          if (title) tasks.push({ title, status: typeof obj.status === 'string' ? obj.status : 'pending' });
        }
      }
      if (tasks.length > 0) return { kind: 'task_list', tasks };
    }
    return null;
  }
  if (!isMemory && !isPin) return null;
  const text = firstString(args, NOTE_KEYS);
  if (!text) return null;
  return { kind: isPin ? 'pin' : 'memory', text };
}
