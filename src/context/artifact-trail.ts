/**
 * The artifact trail (seed 001 "files created, modified, or analyzed"; DESIGN.md §5 carried state):
 * every file the conversation read, wrote, edited, listed or searched, with the operations and the
 * last round it was touched, and the shell commands it ran, taken from the tool calls of any agent
 * (argument keys such as `path`, `file_path`, `filename`; editor tools with a `command`; patches).
 *
 * A compaction builds the trail from the whole context before anything is pruned and merges it
 * into the previous trail, so a path touched once stays in the header for the rest of the
 * conversation, whatever the summarizer writes. Rendering keeps every path as written (a model
 * can use it again) within a token budget: see {@link renderArtifactTrail} for the overflow rule.
 *
 * Pure module.
 */
import type { ContextItem, FileTouch } from './items';
import type { Tokenizer } from './tokenizer';

/** What one tool call does to a file. */
export type FileOp = 'read' | 'write' | 'edit' | 'delete' | 'list' | 'search' | 'use';

/** The trail's data: files in order of their last touch (oldest first), the commands run. */
export interface ArtifactTrail {
  files: FileTouch[];
  commands: { command: string; round: number }[];
}

/** Files and commands of one tool call. */
export interface CallEffect {
  touches: { path: string; op: FileOp }[];
  command: string | null;
}

/** Argument keys that name one file or directory. */
const PATH_KEYS = [
  'path',
  'file_path',
  'filePath',
  'filepath',
  'filename',
  'fileName',
  'file',
  'target_file',
  'targetFile',
  'notebook_path',
  'absolute_path',
  'relative_path',
  'source',
  'destination',
  'dir',
  'directory',
];
/** Argument keys that hold several paths. */
const PATH_LIST_KEYS = ['paths', 'files', 'file_paths'];
/** Argument keys of a shell command. */
const COMMAND_KEYS = ['command', 'cmd', 'script'];
/** Commands kept by the trail's data (the rendering shows fewer). */
const MAX_COMMANDS = 30;
/** Longest command kept, in characters. */
const MAX_COMMAND_CHARS = 160;

const SHELL_TOOL = /(^|_)(bash|shell|sh|zsh|exec|execute|run|terminal|cmd|command|powershell)($|_)/;
const EDITOR_TOOL = /(str_replace|text_editor|editor)/;
const PATCH_TOOL = /(apply_patch|^patch$|apply_diff)/;
const DELETE_TOOL = /(delete|remove|unlink|^rm$)/;
const WRITE_TOOL = /(write|create|save|^put)/;
const EDIT_TOOL = /(edit|replace|patch|insert|modify|append|update_file|multiedit)/;
const READ_TOOL = /(read|view|open|cat|get_file|show|head|tail)/;
const LIST_TOOL = /(list|^ls$|_ls$|dir|tree|glob)/;
const SEARCH_TOOL = /(search|grep|find|^rg$|query|lookup)/;

function parseArguments(text: string): Record<string, unknown> | null {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** A usable path: one line, not too long, quotes taken off. */
function cleanPath(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const path = value.trim().replace(/^(["'`])(.*)\1$/, '$2');
  if (path.length === 0 || path.length > 400 || /[\n\r\0]/.test(path)) return null;
  return path;
}

function opOfName(name: string): FileOp {
  if (DELETE_TOOL.test(name)) return 'delete';
  if (EDIT_TOOL.test(name)) return 'edit';
  if (WRITE_TOOL.test(name)) return 'write';
  if (READ_TOOL.test(name)) return 'read';
  if (LIST_TOOL.test(name)) return 'list';
  if (SEARCH_TOOL.test(name)) return 'search';
  return 'use';
}

/** Editor tools (str_replace_editor and kin) say what they do in a `command` argument. */
function opOfEditorCommand(command: string): FileOp {
  if (/^(view|read)/.test(command)) return 'read';
  if (/^create/.test(command)) return 'write';
  if (/^(delete|remove)/.test(command)) return 'delete';
  return 'edit';
}

/** Files named by a patch (`*** Update File: p`, or a unified diff's `+++ b/p`). */
function patchTouches(text: string): { path: string; op: FileOp }[] {
  const out: { path: string; op: FileOp }[] = [];
  for (const match of text.matchAll(/^\*\*\* (Add|Update|Delete) File: (.+)$/gm)) {
    const path = cleanPath(match[2]);
    if (path)
      out.push({ path, op: match[1] === 'Add' ? 'write' : match[1] === 'Delete' ? 'delete' : 'edit' });
  }
  if (out.length === 0) {
    for (const match of text.matchAll(/^\+\+\+ (?:b\/)?(.+)$/gm)) {
      const path = cleanPath(match[1]);
      if (path && path !== '/dev/null') out.push({ path, op: 'edit' });
    }
  }
  return out;
}

/**
 * What a tool call does: the files it touches (with the operation its tool name or editor command
 * implies) and the shell command it runs. `openFile` is the file an earlier call opened: an edit
 * with no path (SWE-agent's `edit 12:14`) applies to it.
 */
export function toolCallEffect(name: string, argumentsText: string, openFile: string | null): CallEffect {
  const tool = name.toLowerCase().replace(/^mcp__[^_]+__/, '');
  const args = parseArguments(argumentsText);
  const touches: { path: string; op: FileOp }[] = [];
  let command: string | null = null;
  if (PATCH_TOOL.test(tool)) {
    const text = args
      ? [args.input, args.patch, args.diff].find((v): v is string => typeof v === 'string')
      : argumentsText;
    return { touches: patchTouches(text ?? ''), command: null };
  }
  if (!args) return { touches, command };
  const editor = EDITOR_TOOL.test(tool) && typeof args.command === 'string';
  const op = editor ? opOfEditorCommand(String(args.command)) : opOfName(tool);
  for (const key of PATH_KEYS) {
    const path = cleanPath(args[key]);
    if (path) touches.push({ path, op });
  }
  for (const key of PATH_LIST_KEYS) {
    const list = args[key];
    if (!Array.isArray(list)) continue;
    for (const entry of list) {
      const path =
        cleanPath(entry) ??
        (typeof entry === 'object' && entry !== null
          ? cleanPath((entry as Record<string, unknown>).path)
          : null);
      if (path) touches.push({ path, op });
    }
  }
  if (touches.length === 0 && op === 'edit' && openFile) touches.push({ path: openFile, op });
  if (!editor && (SHELL_TOOL.test(tool) || touches.length === 0)) {
    for (const key of COMMAND_KEYS) {
      const value = args[key];
      const text = Array.isArray(value) ? value.filter((v) => typeof v === 'string').join(' ') : value;
      if (typeof text === 'string' && text.trim().length > 0) {
        const line = text.trim().replace(/\s+/g, ' ');
        command = line.length > MAX_COMMAND_CHARS ? `${line.slice(0, MAX_COMMAND_CHARS)}…` : line;
        break;
      }
    }
  }
  return { touches, command };
}

/** A trail with nothing in it. */
export function emptyTrail(): ArtifactTrail {
  return { files: [], commands: [] };
}

/**
 * The trail of `previous` extended with the tool calls of `items` (in order): a file touched again
 * moves to the end (newest) with the new operation added and its round updated. The inputs are not
 * changed.
 */
export function collectArtifactTrail(
  items: readonly ContextItem[],
  previous: ArtifactTrail = emptyTrail(),
): ArtifactTrail {
  const files = new Map<string, FileTouch>();
  for (const file of previous.files) files.set(file.path, { ...file, ops: [...file.ops] });
  const commands = [...previous.commands];
  let openFile: string | null = null;
  for (const item of items) {
    if (item.type !== 'ASSISTANT_MESSAGE') continue;
    for (const call of item.message.tool_calls ?? []) {
      const effect = toolCallEffect(call.function.name, call.function.arguments, openFile);
      for (const { path, op } of effect.touches) {
        const known = files.get(path);
        files.delete(path);
        const ops = known ? known.ops : [];
        if (!ops.includes(op)) ops.push(op);
        files.set(path, { path, ops, lastRound: Math.max(item.round, known?.lastRound ?? 0) });
        if (op === 'read' || op === 'write' || op === 'edit') openFile = path;
      }
      if (effect.command !== null) commands.push({ command: effect.command, round: item.round });
    }
  }
  return { files: [...files.values()], commands: commands.slice(-MAX_COMMANDS) };
}

const OP_WORDS: Record<string, string> = {
  read: 'read',
  write: 'written',
  edit: 'edited',
  delete: 'deleted',
  list: 'listed',
  search: 'searched',
  use: 'used',
};

/** The first line of the trail's text (the trail item's message starts with it). */
export const ARTIFACT_TRAIL_HEADING = '[Artifact trail] Files this conversation touched, newest first';

function fileLine(file: FileTouch): string {
  return `- ${file.path} (${file.ops.map((op) => OP_WORDS[op] ?? op).join(', ')}; round ${file.lastRound})`;
}

function dirOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash <= 0 ? '.' : path.slice(0, slash);
}

/**
 * The trail as text within `budgetTokens`, or '' when it is empty. Overflow rule, applied in order
 * until the text fits:
 * 1. every file on its own line with its operations and last round, the 10 latest commands;
 * 2. fewer commands (5, then none);
 * 3. the oldest files lose their details: listed by path only, comma-separated, on one line;
 * 4. the oldest directories of that list collapse into a count (`src/old/ (12 files)`), oldest
 *    first — the only tier that drops a path from the text, for trails too long for any budget.
 */
export function renderArtifactTrail(
  trail: ArtifactTrail,
  budgetTokens: number,
  tokenizer: Tokenizer,
): string {
  if (trail.files.length === 0 && trail.commands.length === 0) return '';
  const newestFirst = [...trail.files].reverse();
  const commandLine = (n: number): string | null => {
    // `slice(-0)` would be every command.
    const latest = n === 0 ? [] : trail.commands.slice(-n).reverse();
    return latest.length === 0
      ? null
      : `Commands run, latest first: ${latest.map((c) => `\`${c.command}\` (round ${c.round})`).join('; ')}`;
  };
  const lineCost = (line: string): number => tokenizer.countText(line) + 1;
  const heading = lineCost(ARTIFACT_TRAIL_HEADING);
  const detailed = newestFirst.map((file) => ({ line: fileLine(file), cost: lineCost(fileLine(file)) }));
  const render = (detailCount: number, bare: string | null, commands: string | null): string =>
    [
      ARTIFACT_TRAIL_HEADING,
      ...detailed.slice(0, detailCount).map((d) => d.line),
      ...(bare ? [bare] : []),
      ...(commands ? [commands] : []),
    ].join('\n');

  for (const n of [10, 5, 0]) {
    const commands = commandLine(n);
    const cost = heading + detailed.reduce((s, d) => s + d.cost, 0) + (commands ? lineCost(commands) : 0);
    if (cost <= budgetTokens) return render(detailed.length, null, commands);
  }
  // Tier 3: the newest `keep` files in detail, the older ones by path only.
  const bareLine = (paths: readonly string[]): string | null =>
    paths.length === 0 ? null : `Also touched, older: ${paths.join(', ')}`;
  let detailCost = heading;
  let keep = 0;
  const olderPathsCost = (from: number): number =>
    newestFirst.slice(from).reduce((s, f) => s + tokenizer.countText(f.path) + 1, 0) + 4;
  // The detail lines that fit beside the bare list of the rest, newest first.
  while (keep < detailed.length) {
    const next = detailed[keep] as { cost: number };
    if (detailCost + next.cost + olderPathsCost(keep + 1) > budgetTokens) break;
    detailCost += next.cost;
    keep++;
  }
  const older = newestFirst.slice(keep).map((f) => f.path);
  if (detailCost + olderPathsCost(keep) <= budgetTokens) return render(keep, bareLine(older), null);
  // Tier 4: collapse the oldest directories into counts until the line fits.
  const groups = new Map<string, string[]>();
  for (const path of [...older].reverse()) {
    const dir = dirOf(path);
    const list = groups.get(dir);
    if (list) list.push(path);
    else groups.set(dir, [path]);
  }
  const collapsed = new Set<string>();
  const line = (): string => {
    const parts: string[] = [];
    const seen = new Set<string>();
    for (const path of older) {
      const dir = dirOf(path);
      if (!collapsed.has(dir)) parts.push(path);
      else if (!seen.has(dir)) {
        seen.add(dir);
        const n = groups.get(dir)?.length ?? 0;
        parts.push(`${dir}/ (${n} file${n === 1 ? '' : 's'})`);
      }
    }
    return `Also touched, older: ${parts.join(', ')}`;
  };
  for (const dir of groups.keys()) {
    if (detailCost + lineCost(line()) <= budgetTokens) break;
    collapsed.add(dir);
  }
  return render(keep, line(), null);
}

/** Every path in a trail (for tests and the eval's probes). */
export function trailPaths(trail: ArtifactTrail): string[] {
  return trail.files.map((f) => f.path);
}
