/**
 * The built-in tools, working inside the workspace given at start: read_file, list_directory,
 * search_text, write_file; and the agent-side notes of seed 001: remember (a memory note),
 * update_tasks (the task list), pin (content never compacted).
 */
import { formatTaskList, type Task } from '../../src/context/agent-notes';
import { ToolError, type AgentTool } from './registry';
import {
  displayPath,
  escapeControl,
  listDir,
  looksBinary,
  openEntry,
  openWorkspaceDir,
  openWorkspaceFile,
  quoted,
  readTextChunks,
  type OpenDir,
} from './workspace-path';

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

/**
 * The lines `offset`..`offset + limit` of a text arriving in pieces (all of it without either),
 * kept up to MAX_READ_CHARS characters: reading stops there.
 */
class LineWindow {
  private line = 1;
  private readonly first: number;
  private readonly last: number;
  private kept = '';
  /** Set when more was selected than could be kept. */
  cut = false;

  constructor(offset: number | undefined, limit: number | undefined) {
    this.first = Math.max(1, offset ?? 1);
    this.last = limit === undefined ? Infinity : this.first + limit - 1;
  }

  /** Takes a piece; false once nothing more is wanted. */
  take(piece: string): boolean {
    let from = 0;
    while (from <= piece.length && this.line <= this.last) {
      const newline = piece.indexOf('\n', from);
      const end = newline === -1 ? piece.length : newline;
      if (this.line >= this.first) {
        const keep = piece.slice(from, this.line === this.last || newline === -1 ? end : end + 1);
        if (!this.keep(keep)) return false;
      }
      if (newline === -1) return true;
      from = newline + 1;
      this.line++;
    }
    return this.line <= this.last;
  }

  private keep(text: string): boolean {
    const room = MAX_READ_CHARS - this.kept.length;
    if (text.length > room) {
      this.kept += text.slice(0, room);
      this.cut = true;
      return false;
    }
    this.kept += text;
    return true;
  }

  text(): string {
    return this.kept;
  }
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
    const path = str(args, 'path');
    const offset = int(args, 'offset');
    const limit = int(args, 'limit');
    const file = await openWorkspaceFile(ctx.workspace, path, { directoryHint: '; use list_directory' });
    try {
      // The file is read in chunks and no further than what is returned.
      const window = new LineWindow(offset, limit);
      await readTextChunks(file, (piece) => window.take(piece), `${quoted(path)} is a binary file`);
      if (!window.cut) return { content: window.text() };
      return {
        content: `${window.text()}\n[cut at ${MAX_READ_CHARS} characters: the file has ${file.size} bytes; use offset/limit]`,
      };
    } finally {
      await file.handle.close();
    }
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
    const path = str(args, 'path', false) ?? '.';
    const dir = await openWorkspaceDir(ctx.workspace, path, 'directory');
    let entries;
    try {
      entries = await listDir(dir);
    } finally {
      await dir.handle.close();
    }
    // A name may hold any byte but "/" and NUL: escaped, it cannot forge another entry.
    const names = entries.map((e) => escapeControl(e.isDirectory() ? `${e.name}/` : e.name)).sort();
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
    const path = str(args, 'path', false) ?? '.';
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
    const start = await openWorkspaceDir(ctx.workspace, path, '');
    const results: string[] = [];
    const searchFile = async (dir: OpenDir, name: string): Promise<void> => {
      // Opened without following a link; anything but a regular file is passed over.
      const file = await openEntry(dir, name, 'file');
      if (file === null) return;
      try {
        if (file.size > MAX_SEARCH_FILE_BYTES) return;
        const buffer = await file.handle.readFile();
        if (looksBinary(buffer)) return;
        const lines = buffer.toString('utf8').split('\n');
        const shown = displayPath(dir.root, file.path);
        for (let i = 0; i < lines.length && results.length < max; i++) {
          const line = lines[i] ?? '';
          if (matcher(line)) results.push(`${shown}:${i + 1}: ${line.slice(0, 300)}`);
        }
      } finally {
        await file.handle.close();
      }
    };
    const walk = async (dir: OpenDir): Promise<void> => {
      const entries = await listDir(dir).catch(() => []);
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const entry of entries) {
        if (results.length >= max) return;
        if (entry.isDirectory()) {
          if (SKIPPED_DIRS.has(entry.name)) continue;
          const sub = await openEntry(dir, entry.name, 'dir');
          if (sub === null) continue;
          try {
            await walk(sub);
          } finally {
            await sub.handle.close();
          }
        } else if (entry.isFile()) {
          await searchFile(dir, entry.name);
        }
      }
    };
    try {
      await walk(start);
    } finally {
      await start.handle.close();
    }
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
    const path = str(args, 'path');
    const content = str(args, 'content') as string;
    // Created (with its directories) relative to directories checked to be inside the workspace,
    // never through a link it did not check; emptied only once open and checked.
    const file = await openWorkspaceFile(ctx.workspace, path, { write: true });
    try {
      await file.handle.truncate(0);
      await file.handle.writeFile(content, 'utf8');
    } finally {
      await file.handle.close();
    }
    return { content: `wrote ${content.length} characters to ${escapeControl(String(path))}` };
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
