/**
 * What `eval` judges after each compaction of a replay (`replay.ts`), from the session's own items:
 *
 * - touched files: every path a read, write or edit tool call of the session named so far (read off
 *   the raw tool calls here, independently of the artifact trail module and of `tool-facts.ts`:
 *   file tools' path arguments, the files of an `apply_patch`, the files a shell command prints
 *   with cat, nl, head, tail or `sed -n`, redirects output into or edits with `sed -i` (an argv
 *   list or a string command), the files a Python script in it writes by name (`open('a', 'w')`,
 *   `Path('a').write_text(`), the files an OpenHands IPython cell opens or edits with
 *   agentskills) must appear in the compacted
 *   context's text, whole or as an entry of a line that names the directory it is written from
 *   (`(under /Users/me/project/) src/a.ts, …`);
 * - header kept: every header item before is still there after, or replaced by a newer one of its
 *   kind (a later task list, the new carried state, memories beyond the last 10), or, for the open
 *   errors, gone with the last of them (no error is open any more); the task may go where the
 *   header with it is over the window (before, or after with the new carried state), a pin where
 *   the header after has no room for it; a system prompt that later ones replace is no longer
 *   header (`segments.ts`);
 * - carried-state probes: the latest task list, every pin, the last 10 memories and every open
 *   error are in the context's text;
 * - target and fill: an automatic compaction ends at or under the target, and at 70 % of it or
 *   more when the conversation held enough content to (the header and the protected items leave
 *   room for it).
 */
import {
  noteOfToolCall,
  formatTaskList,
  MEMORY_PREFIX,
  pinMessageText,
  TASK_LIST_PREFIX,
} from '../context/agent-notes';
import { HEADER_MEMORY_LIMIT, headerRoles } from '../context/segments';
import { messageText, type ContextItem } from '../context/items';
import { collectOpenErrors } from '../context/open-errors';
import type { ReplayCompaction } from './replay';

/** The least share of the target an automatic compaction must fill where the content allows. */
export const MIN_FILL = 0.7;

/** Header roles of which only the latest item is kept: a newer one replaces an older one. */
const REPLACEABLE = new Set(['task_list', 'artifacts', 'errors', 'git']);

const FILE_TOOL = /(read|write|edit|create|open|view|replace|patch|insert|cat|str_replace)/i;
const PATH_ARGS = ['path', 'file_path', 'filePath', 'filename', 'file', 'target_file', 'notebook_path'];
/**
 * Shell tools whose command may print a file: an argv list (Codex's `shell` with
 * `["bash", "-lc", "…"]`) or a string (pi's `bash`, Claude Code's `Bash`, OpenHands' `execute_bash`,
 * Codex's `exec_command` with its `cmd`, its `shell_command`).
 */
const SHELL_TOOL = /^(shell|shell_command|local_shell|bash|execute_bash|exec_command|run_terminal_cmd)$/i;
/** Files an OpenHands IPython cell names to agentskills: `open_file('a.py')`, `create_file(…)`, edits. */
const AGENTSKILLS_FILE =
  /\b(?:open_file|create_file|edit_file_by_replace|insert_content_at_line|append_file)\(\s*(?:file_name\s*=\s*)?['"]([^'"\n]+)['"]/g;
/** A file printed by a simple command: `cat f`, `nl -ba f`, `head -n 9 f`, `sed -n 1,80p f`. */
const PRINTED_FILE =
  /(?:^|[;&|]\s*)(?:cat|nl(?: -\w+)*|head(?: -n \d+| -\d+)?|tail(?: -n \d+| -\d+)?|sed -n '?[\d,]+p'?)\s+([\w./-]+\.\w+)(?=\s|$|[;&|])/gm;
/** Files an `apply_patch` patch names. */
const PATCH_FILE = /^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm;
/** A file a command's output is redirected into: `> out.txt`, `>> notes.md`, `2>err.log`. */
const REDIRECTED_FILE = /(?:^|\s)\d?>>?\s*([\w./-]+\.\w+)(?=\s|$|[;&|)])/gm;
/** A file `sed -i` edits (GNU or BSD, one script): `sed -i 's/a/b/' f`, `sed -i '' -e 's/a/b/' f`. */
const SED_EDITED_FILE =
  /(?:^|[;&|]\s*)sed\s+-i\S*\s+(?:''\s+)?(?:-e\s+)?(?:'[^'\n]*'|"[^"\n]*")\s+([\w./-]+\.\w+)(?=\s|$|[;&|)])/gm;
/** A file a Python script writes by a literal name: `open('a.py', 'w')`, `Path('a.py').write_text(`. */
const PYTHON_WRITTEN_FILE =
  /\bopen\(\s*['"]([\w./-]+\.\w+)['"]\s*,\s*['"][wax]|\bPath\(\s*['"]([\w./-]+\.\w+)['"]\s*\)\.write_(?:text|bytes)\(/g;

/** The files a patch names. */
function patchPaths(patch: string): string[] {
  return [...patch.matchAll(PATCH_FILE)].map((m) => (m[1] as string).trim());
}

/** The files a call that is no file tool touches: its patch's files, its shell command's printed files. */
function otherPaths(name: string, args: Record<string, unknown> | null, raw: string): string[] {
  if (/apply_patch/i.test(name)) {
    // Codex's `input`, OpenCode's `patchText`, or a `patch`.
    const text = [args?.input, args?.patchText, args?.patch].find((v) => typeof v === 'string');
    const patch = typeof text === 'string' ? text : raw;
    return patchPaths(patch);
  }
  if (/^execute_ipython_cell$/i.test(name) && typeof args?.code === 'string')
    return [...args.code.matchAll(AGENTSKILLS_FILE)].map((m) => (m[1] as string).trim());
  // Codex's `exec_command` (unified exec) names its command `cmd`.
  const command = args?.command ?? args?.cmd;
  if (!SHELL_TOOL.test(name)) return [];
  if (typeof command === 'string') return scriptPaths(command);
  if (!Array.isArray(command)) return [];
  const argv = command.filter((w): w is string => typeof w === 'string');
  if (argv[0] === 'apply_patch') return patchPaths(argv[1] ?? '');
  const script = argv.length === 3 && /-\w*c$/.test(argv[1] as string) ? argv[2] : argv.join(' ');
  return script ? scriptPaths(script) : [];
}

/**
 * The script without the bodies of its here-documents: after a line that starts some (`<<EOF`,
 * `<< 'A' … <<"B"`; not a here-string, `<<<`), the lines up to each one's end word, in turn.
 */
function withoutHereDocuments(script: string): string {
  const lines = script.split('\n');
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    kept.push(line);
    for (const start of line.matchAll(/(?<!<)<<(?!<)-?\s*(['"]?)(\w+)\1/g)) {
      while (i + 1 < lines.length && (lines[i + 1] as string).trim() !== start[2]) i++;
      i++;
    }
  }
  return kept.join('\n');
}

/** The files a shell script prints, and those of a patch it gives `apply_patch` (`apply_patch <<'EOF'`). */
function scriptPaths(script: string): string[] {
  // A here-document's lines are data (`cat > a.py <<'EOF'` … `EOF`), but for a script given to
  // Python; a path is compared without a leading ./ or ../ (the trail writes it from the directory
  // a cd went to).
  const commands = withoutHereDocuments(script);
  const bare = (path: string): string => path.replace(/^(\.\.?\/)+/, '');
  const paths = [
    ...[...commands.matchAll(PRINTED_FILE)].map((m) => bare(m[1] as string)),
    ...[...commands.matchAll(REDIRECTED_FILE)].map((m) => bare(m[1] as string)),
    ...[...commands.matchAll(SED_EDITED_FILE)].map((m) => bare(m[1] as string)),
  ];
  if (/\bpython[\d.]*\b/.test(script))
    paths.push(...[...script.matchAll(PYTHON_WRITTEN_FILE)].map((m) => bare((m[1] ?? m[2]) as string)));
  if (!/\bapply_?patch\s*<</.test(script)) return paths;
  return [...paths, ...patchPaths(script)];
}

/** Paths read, written or edited by the tool calls of `items`, in first-seen order. */
export function touchedPaths(items: readonly ContextItem[]): string[] {
  const paths = new Set<string>();
  for (const item of items) {
    if (item.type !== 'ASSISTANT_MESSAGE') continue;
    for (const call of item.message.tool_calls ?? []) {
      let args: unknown;
      try {
        args = JSON.parse(call.function.arguments);
      } catch {
        args = null;
      }
      const object = typeof args === 'object' && args !== null ? (args as Record<string, unknown>) : null;
      for (const path of otherPaths(call.function.name, object, call.function.arguments)) paths.add(path);
      if (!FILE_TOOL.test(call.function.name) || !object) continue;
      for (const key of PATH_ARGS) {
        const value = (args as Record<string, unknown>)[key];
        if (typeof value !== 'string' || !value.trim() || value.includes('\n') || value.includes('*'))
          continue;
        // Quotes around it off; a file given with the lines to read (`a.py:40-60`): the file. A
        // glob names none.
        const path = value.trim().replace(/^(["'`])(.*)\1$/, '$2');
        const file = path.replace(/:\d+(?:-\d+)?(?::[a-z]+)?$/, '');
        paths.add(/[./]/.test(file) ? file : path);
      }
    }
  }
  return [...paths];
}

/**
 * A directory's mark in a line: the entries after it, up to the next mark or the line's end, are
 * written from it: `… (under /Users/me/project/) a.ts, b.ts, (under /opt/x/) c.ts` (the directory
 * may hold spaces: `/Volumes/Marc's SSD/`; `./` is none).
 */
const ROOT_MARK = /\(under (.{1,400}?[\\/])\)/g;

/**
 * Whether a path is in the text: written whole (a relative path as the end of a longer one too),
 * or as an entry after a directory's mark (the artifact trail's bare list): the directory and the
 * entry make the path, or end with it.
 */
export function pathInText(path: string, text: string): boolean {
  if (text.includes(path)) return true;
  const marks = [...text.matchAll(ROOT_MARK)];
  for (let k = 0; k < marks.length; k++) {
    const mark = marks[k] as RegExpExecArray;
    const root = mark[1] === './' ? '' : (mark[1] as string);
    const start = mark.index + mark[0].length;
    const lineEnd = text.indexOf('\n', start);
    const next = (marks[k + 1] as RegExpExecArray | undefined)?.index ?? text.length;
    const end = Math.min(next, lineEnd === -1 ? text.length : lineEnd);
    // Entries are separated by ', ' (a path may hold a comma, even ', ': runs of entries are tried).
    const entries = text.slice(start, end).split(', ');
    for (let i = 0; i < entries.length; i++) {
      let entry = '';
      for (let j = i; j < entries.length && entry.length <= path.length; j++) {
        entry = j === i ? (entries[i] as string) : `${entry}, ${entries[j] as string}`;
        const full = `${root}${entry.trim().replace(/,$/, '')}`;
        if (full === path || full.endsWith(`/${path}`) || full.endsWith(`\\${path}`)) return true;
      }
    }
  }
  return false;
}

/** Everything the model reads of a context, as one text (messages, tool calls' arguments). */
export function contextText(items: readonly ContextItem[]): string {
  const parts: string[] = [];
  for (const item of items) {
    if (item.type === 'TOOL_DEFINITIONS') continue;
    parts.push(messageText(item.message));
    if (item.type === 'ASSISTANT_MESSAGE') {
      for (const call of item.message.tool_calls ?? [])
        parts.push(call.function.name, call.function.arguments);
    }
  }
  return parts.join('\n');
}

/** What the probes look for: the latest task list, the pins, the last memories, the open errors. */
function probes(
  seen: readonly ContextItem[],
  openErrors: readonly { text: string }[],
): { kind: string; text: string }[] {
  const out: { kind: string; text: string }[] = [];
  let taskList: string | null = null;
  const memories: string[] = [];
  const pins: string[] = [];
  for (const item of seen) {
    if (item.type === 'TASK_LIST') taskList = messageText(item.message);
    else if (item.type === 'MEMORY') memories.push(messageText(item.message));
    else if (item.type === 'USER_MESSAGE' && item.pinned) pins.push(messageText(item.message));
    else if (item.type === 'ASSISTANT_MESSAGE') {
      for (const call of item.message.tool_calls ?? []) {
        const note = noteOfToolCall(call.function.name, call.function.arguments);
        if (note?.kind === 'task_list') taskList = `${TASK_LIST_PREFIX}${formatTaskList(note.tasks)}`;
        else if (note?.kind === 'memory') memories.push(`${MEMORY_PREFIX}${note.text}`);
        else if (note?.kind === 'pin') pins.push(pinMessageText(note.text));
      }
    }
  }
  if (taskList !== null) out.push({ kind: 'task list', text: taskList });
  for (const pin of pins) out.push({ kind: 'pin', text: pin });
  for (const memory of [...new Set(memories)].slice(-HEADER_MEMORY_LIMIT))
    out.push({ kind: 'memory', text: memory });
  for (const error of openErrors) out.push({ kind: 'open error', text: error.text });
  return out;
}

/** The judgement of one compaction. */
export interface CompactionJudgement {
  seq: number;
  trigger: string;
  status: string;
  /** Why it was skipped or rolled back (null: committed). */
  reason: string | null;
  /** A rolled-back compaction's summary: its call `failed`, or was `not_asked` (see replay.ts). */
  summaryFailure: 'failed' | 'not_asked' | null;
  strategy: string | null;
  tokensBefore: number;
  tokensAfter: number;
  ms: number;
  /** Header items lost (ids). */
  headerLost: string[];
  pathsTouched: number;
  pathsMissing: string[];
  probesChecked: number;
  probesMissing: string[];
  /** Over the target after an automatic compaction that could have reached it. */
  overTarget: boolean;
  /** Over the target, but the header and protected items alone left no room to reach it. */
  overTargetExcused: boolean;
  /** Filled under {@link MIN_FILL} of the target where the content allowed more; null where it did not apply. */
  underFilled: boolean | null;
}

/** Judges one compaction of a replay of `session`. */
export function judgeCompaction(
  c: ReplayCompaction,
  session: readonly ContextItem[],
  target: number,
): CompactionJudgement {
  const seen = session.slice(0, c.seen);
  const openErrors = collectOpenErrors(seen);
  const beforeRoles = headerRoles(c.before);
  const afterIds = new Set(c.after.map((i) => i.id));
  const afterRoleList = headerRoles(c.after);
  const afterRoles = new Set(afterRoleList);
  const memoriesAfter = c.after.filter((i) => i.type === 'MEMORY').length;
  // A task too large for the window with the rest of the header is compacted (working-context.ts):
  // the header before, or the header after (its new carried state) with the task.
  const window = c.plan ? c.plan.work.windowTokens : Infinity;
  const headerTokens = (items: readonly ContextItem[], roles: readonly (string | undefined)[]): number =>
    items.reduce((n, item, i) => (roles[i] !== undefined ? n + item.tokens : n), 0);
  // Without the task: the first real user message kept is the task to `headerRoles` (the current
  // message, once the task is gone).
  const headerAfter = headerTokens(
    c.after,
    afterRoleList.map((role) => (role === 'task' ? undefined : role)),
  );
  const headerBefore = headerTokens(c.before, beforeRoles);
  const headerLost = c.before
    .filter((item, i) => {
      const role = beforeRoles[i];
      if (role === undefined || afterIds.has(item.id)) return false;
      if (REPLACEABLE.has(role) && afterRoles.has(role)) return false;
      if (role === 'memory' && memoriesAfter >= HEADER_MEMORY_LIMIT) return false;
      if (role === 'task' && Math.max(headerBefore, headerAfter + item.tokens) > window) return false;
      // A pin goes only where the header after has no room for it within the window.
      if (role === 'pinned' && headerAfter + item.tokens > window) return false;
      // Its errors resolved, the carried state has none to list (an open one is probed by its text).
      if (role === 'errors' && openErrors.length === 0) return false;
      return true;
    })
    .map((i) => i.id);
  const text = c.status === 'committed' ? contextText(c.after) : '';
  const paths = touchedPaths(seen);
  const checks = probes(seen, openErrors);
  const committed = c.status === 'committed';
  const plan = c.plan;
  const protectedTokens = plan
    ? plan.work.units.filter((u) => u.protected).reduce((n, u) => n + u.tokens, 0)
    : 0;
  const floor = plan ? plan.headerTokens + protectedTokens + Math.min(plan.summaryBudget, 200) : 0;
  const automatic = c.trigger !== 'manual' && c.trigger !== 'overflow';
  const over = committed && c.tokensAfter > target;
  const fromAbove = c.tokensBefore > target;
  return {
    seq: c.seq,
    trigger: c.trigger,
    status: c.status,
    reason: c.reason,
    summaryFailure: c.summaryFailure,
    strategy: c.strategy,
    tokensBefore: c.tokensBefore,
    tokensAfter: c.tokensAfter,
    ms: c.ms,
    headerLost: committed ? headerLost : [],
    pathsTouched: paths.length,
    pathsMissing: committed ? paths.filter((p) => !pathInText(p, text)) : [],
    probesChecked: checks.length,
    probesMissing: committed
      ? checks.filter((p) => !text.includes(p.text)).map((p) => `${p.kind}: ${p.text.slice(0, 80)}`)
      : [],
    overTarget: over && floor <= target,
    overTargetExcused: over && floor > target,
    underFilled:
      committed && fromAbove && automatic && floor <= MIN_FILL * target
        ? c.tokensAfter < MIN_FILL * target
        : null,
  };
}
