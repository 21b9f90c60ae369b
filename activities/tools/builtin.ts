/**
 * The built-in tools, working inside the workspace given at start: read_file, list_directory,
 * search_text, write_file; and the agent-side notes of seed 001: remember (a memory note),
 * update_tasks (the task list), pin (content never compacted).
 */
import { mkdir, readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { formatTaskList, type Task } from '../../src/context/agent-notes';
import { ToolError, type AgentTool } from './registry';
import { displayPath, resolveInWorkspace } from './workspace-path';

/** Characters of file content returned at most (the model is told when it was cut). */
export const MAX_READ_CHARS = 200_000;
export const MAX_LIST_ENTRIES = 500;
export const MAX_SEARCH_RESULTS = 200;
const MAX_SEARCH_FILE_BYTES = 2_000_000;
const SKIPPED_DIRS = new Set(['node_modules', '.git']);

function str(args: Record<string, unknown>, key: string, required = true): string | undefined {
  const value = args[key];
  if (value === undefined || value === null) {
    if (required) throw new ToolError(`missing argument "${key}"`);
    return undefined;
  }
  if (typeof value !== 'string') throw new ToolError(`argument "${key}" must be a string`);
  return value;
}

function int(args: Record<string, unknown>, key: string): number | undefined {
  const value = args[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new ToolError(`argument "${key}" must be a non-negative integer`);
  }
  return value;
}

function isBinary(buffer: Buffer): boolean {
  return buffer.subarray(0, 8000).includes(0);
}

const readFileTool: AgentTool = {
  name: 'read_file',
  description: 'Read a text file of the workspace. Optional offset/limit select lines (1-based offset).',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'Path relative to the workspace' },
      offset: { type: 'integer', description: 'First line to return (1-based)' },
      limit: { type: 'integer', description: 'Number of lines to return' },
    },
    required: ['path'],
  },
  async run(args, ctx) {
    const path = await resolveInWorkspace(ctx.workspace, str(args, 'path'));
    const offset = int(args, 'offset');
    const limit = int(args, 'limit');
    const info = await stat(path).catch(() => {
      throw new ToolError(`file "${String(args.path)}" does not exist`);
    });
    if (info.isDirectory()) throw new ToolError(`"${String(args.path)}" is a directory; use list_directory`);
    const buffer = await readFile(path);
    if (isBinary(buffer)) throw new ToolError(`"${String(args.path)}" is a binary file`);
    let text = buffer.toString('utf8');
    if (offset !== undefined || limit !== undefined) {
      const lines = text.split('\n');
      const start = Math.max(0, (offset ?? 1) - 1);
      text = lines.slice(start, limit === undefined ? undefined : start + limit).join('\n');
    }
    if (text.length > MAX_READ_CHARS) {
      return {
        content: `${text.slice(0, MAX_READ_CHARS)}\n[cut: the file has ${text.length} characters; use offset/limit]`,
      };
    }
    return { content: text };
  },
};

const listDirectoryTool: AgentTool = {
  name: 'list_directory',
  description: 'List a directory of the workspace (directories end with /).',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'Directory relative to the workspace (default: the workspace)' },
    },
  },
  async run(args, ctx) {
    const dir = await resolveInWorkspace(ctx.workspace, str(args, 'path', false) ?? '.');
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => {
      throw new ToolError(`directory "${String(args.path ?? '.')}" does not exist`);
    });
    const names = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
    const shown = names.slice(0, MAX_LIST_ENTRIES);
    const more =
      names.length > shown.length ? `\n[${names.length - shown.length} more entries not shown]` : '';
    return { content: shown.length > 0 ? shown.join('\n') + more : '(empty directory)' };
  },
};

const searchTextTool: AgentTool = {
  name: 'search_text',
  description: 'Search the workspace files for a text (or a regular expression with regex: true).',
  parameters: {
    type: 'object',
    properties: {
      pattern: { type: 'string' },
      path: { type: 'string', description: 'Directory to search (default: the workspace)' },
      regex: { type: 'boolean' },
      max_results: { type: 'integer' },
    },
    required: ['pattern'],
  },
  async run(args, ctx) {
    const pattern = str(args, 'pattern') as string;
    if (pattern.length === 0) throw new ToolError('pattern must not be empty');
    const start = await resolveInWorkspace(ctx.workspace, str(args, 'path', false) ?? '.');
    const root = await realpath(ctx.workspace as string);
    const max = Math.min(int(args, 'max_results') ?? MAX_SEARCH_RESULTS, MAX_SEARCH_RESULTS);
    let matcher: (line: string) => boolean;
    if (args.regex === true) {
      let re: RegExp;
      try {
        re = new RegExp(pattern);
      } catch (err) {
        throw new ToolError(`invalid regular expression: ${(err as Error).message}`);
      }
      matcher = (line) => re.test(line);
    } else {
      matcher = (line) => line.includes(pattern);
    }
    const results: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      if (results.length >= max) return;
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      entries.sort((a, b) => a.name.localeCompare(b.name));
      for (const entry of entries) {
        if (results.length >= max) return;
        const full = join(dir, entry.name);
        if (entry.isDirectory()) {
          if (!SKIPPED_DIRS.has(entry.name)) await walk(full);
        } else if (entry.isFile()) {
          const info = await stat(full);
          if (info.size > MAX_SEARCH_FILE_BYTES) continue;
          const buffer = await readFile(full);
          if (isBinary(buffer)) continue;
          const lines = buffer.toString('utf8').split('\n');
          for (let i = 0; i < lines.length && results.length < max; i++) {
            const line = lines[i] ?? '';
            if (matcher(line)) results.push(`${displayPath(root, full)}:${i + 1}: ${line.slice(0, 300)}`);
          }
        }
      }
    };
    const info = await stat(start).catch(() => null);
    if (!info) throw new ToolError(`"${String(args.path ?? '.')}" does not exist`);
    if (info.isDirectory()) await walk(start);
    else throw new ToolError(`"${String(args.path)}" is not a directory`);
    if (results.length === 0) return { content: `no match for ${JSON.stringify(pattern)}` };
    return { content: results.join('\n') + (results.length >= max ? `\n[stopped at ${max} results]` : '') };
  },
};

const writeFileTool: AgentTool = {
  name: 'write_file',
  description: 'Create or overwrite a file of the workspace with the given content.',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string' }, content: { type: 'string' } },
    required: ['path', 'content'],
  },
  async run(args, ctx) {
    const path = await resolveInWorkspace(ctx.workspace, str(args, 'path'));
    const content = str(args, 'content') as string;
    await mkdir(dirname(path), { recursive: true });
    // The parent may have been created just now: check again that it did not lead outside.
    await resolveInWorkspace(ctx.workspace, str(args, 'path'));
    const existing = await stat(path).catch(() => null);
    if (existing?.isDirectory()) throw new ToolError(`"${String(args.path)}" is a directory`);
    await writeFile(path, content, 'utf8');
    return { content: `wrote ${content.length} characters to ${String(args.path)}` };
  },
};

const rememberTool: AgentTool = {
  name: 'remember',
  description: 'Save a memory note that survives every compaction (the last 10 are kept).',
  parameters: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] },
  async run(args) {
    const note = (str(args, 'note') as string).trim();
    if (!note) throw new ToolError('note must not be empty');
    return { content: 'Memory saved.', notes: [{ kind: 'memory', text: note }] };
  },
};

const TASK_STATUSES = new Set(['pending', 'in_progress', 'done']);

const updateTasksTool: AgentTool = {
  name: 'update_tasks',
  description: 'Replace the task list (kept through every compaction).',
  parameters: {
    type: 'object',
    properties: {
      tasks: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            title: { type: 'string' },
            status: { type: 'string', enum: ['pending', 'in_progress', 'done'] },
          },
          required: ['title', 'status'],
        },
      },
    },
    required: ['tasks'],
  },
  async run(args) {
    const tasks = args.tasks;
    if (!Array.isArray(tasks)) throw new ToolError('argument "tasks" must be an array');
    const checked = tasks.map((task: unknown, i): Task => {
      const t = task as { title?: unknown; status?: unknown };
      if (typeof t?.title !== 'string' || !t.title.trim()) throw new ToolError(`task ${i + 1} needs a title`);
      if (typeof t.status !== 'string' || !TASK_STATUSES.has(t.status)) {
        throw new ToolError(
          `task ${i + 1} has status ${JSON.stringify(t.status)}; use pending, in_progress or done`,
        );
      }
      return { title: t.title, status: t.status };
    });
    return {
      content: `Task list updated (${checked.length} tasks).`,
      // The same text the carried state writes for another agent's task list (agent-notes.ts).
      notes: [{ kind: 'task_list', text: formatTaskList(checked) }],
    };
  },
};

const pinTool: AgentTool = {
  name: 'pin',
  description: 'Pin content so that it is never compacted.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  async run(args) {
    const text = (str(args, 'text') as string).trim();
    if (!text) throw new ToolError('text must not be empty');
    return { content: 'Pinned.', notes: [{ kind: 'pin', text }] };
  },
};

export const BUILTIN_TOOLS: AgentTool[] = [
  readFileTool,
  listDirectoryTool,
  searchTextTool,
  writeFileTool,
  rememberTool,
  updateTasksTool,
  pinTool,
];
