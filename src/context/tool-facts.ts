/**
 * What a tool call and a tool result say, read off their text for any agent's tools: the files a
 * call touches and the operation its name or editor command implies, the shell command it runs,
 * what it was applied to; the error a result reports. The artifact trail, the open errors and the
 * item facts (`item-facts.ts`) are built on these.
 *
 * Pure module.
 */
import { messageText, type ToolResultItem } from './items';

/**
 * What one tool call does to a file. `delete`: a patch or a file tool deleted it; `remove`: a shell
 * command did (`rm`, a move's source), which the trail records only for a file it holds.
 */
export type FileOp = 'read' | 'write' | 'edit' | 'delete' | 'remove' | 'list' | 'search' | 'use';

/** Files and commands of one tool call. */
export interface CallEffect {
  touches: { path: string; op: FileOp }[];
  command: string | null;
  /** An edit that names no file (SWE-agent's `edit 12:14`): it applies to the file open before it. */
  editsOpenFile?: true;
  /** A shell command that only prints files or searches them ({@link printsFilesOnly}). */
  printsOnly?: true;
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
/** Of those, keys that name a file only where their value looks like a path (`/`, `.`). */
const NAMING_KEYS = new Set(['source', 'destination']);
/** Argument keys that hold several paths. */
const PATH_LIST_KEYS = ['paths', 'files', 'file_paths'];
/** Argument keys of a shell command. */
const COMMAND_KEYS = ['command', 'cmd', 'script'];
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

/** A tool call's arguments as a JSON object, or null when they are not one. */
export function parseArguments(text: string): Record<string, unknown> | null {
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

/** A line range (and view) a file tool was given after the path: `a.py:40-60`, `s.jsonl:1-5:raw`. */
const LINE_RANGE = /:\d+(?:-\d+)?(?::[a-z]+)?$/;

/**
 * The file an argument names: a path as {@link cleanPath} takes it, without a line range after it
 * (the file is what was touched); none for a glob (`**\/*.ts`: a pattern, no one file).
 */
function argumentPath(value: unknown): string | null {
  const path = cleanPath(value);
  if (path === null || path.includes('*')) return null;
  const file = path.replace(LINE_RANGE, '');
  return file.length > 0 && /[./]/.test(file) ? file : path;
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
 * OpenHands' IPython tool: the agentskills functions its agent calls there name their file first
 * (`open_file('a.py')`, `edit_file_by_replace('a.py', …)`).
 */
const IPYTHON_TOOL = /^execute_ipython_cell$/;
const AGENTSKILLS_CALL =
  /\b(open_file|create_file|edit_file_by_replace|insert_content_at_line|append_file)\(\s*(?:file_name\s*=\s*)?(['"])([^'"\n]+)\2/g;

/** Files an IPython cell opens, creates or edits with agentskills' functions. */
function agentskillsTouches(code: string): { path: string; op: FileOp }[] {
  return [...code.matchAll(AGENTSKILLS_CALL)].flatMap((match) => {
    const path = cleanPath(match[3]);
    const op: FileOp = match[1] === 'open_file' ? 'read' : match[1] === 'create_file' ? 'write' : 'edit';
    return path ? [{ path, op }] : [];
  });
}

/** A shell program that runs its `-c` argument (Codex's `["bash", "-lc", "…"]`). */
const SHELL_PROGRAM = /^(?:\/\S*\/)?(bash|sh|zsh|dash)$/;
/** Programs that print a file given as an argument, so running them reads it. */
const FILE_PRINTER = /^(cat|nl|head|tail|sed|less|bat)$/;
/** Programs that delete, move, copy or create the files given as arguments. */
const FILE_MOVER = /^(rm|mv|cp|touch)$/;

/**
 * What `rm`, `mv`, `cp` and `touch` do to their path arguments: `rm` removes each, `touch` writes
 * each; `mv` removes its sources and writes its destination, `cp` reads its sources and writes its
 * destination (the last path, or none with `-t directory`; one that ends in `/` is a directory,
 * not a file written).
 */
function fileMoves(program: string, words: readonly string[]): { path: string; op: FileOp }[] {
  // Options that take a value: `touch -r ref -d date -t stamp`, `mv`/`cp -t directory`.
  const valued = program === 'touch' ? /^-[rdt]$/ : program === 'rm' ? /^$/ : /^-[tS]$/;
  const operands: string[] = [];
  let directory: string | null = null;
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (word.startsWith('--target-directory=')) directory = word.slice('--target-directory='.length);
    else if (valued.test(word)) {
      if (word === '-t' && program !== 'touch') directory = words[i + 1] ?? null;
      i++;
    } else if (!word.startsWith('-')) operands.push(unquote(word));
  }
  const gone: FileOp = program === 'mv' ? 'remove' : 'read';
  if (program === 'rm' || program === 'touch')
    return operands.filter(isPathWord).map((path) => ({ path, op: program === 'rm' ? 'remove' : 'write' }));
  // `-t directory`: every operand is a source.
  if (directory !== null) return operands.filter(isPathWord).map((path) => ({ path, op: gone }));
  if (operands.length < 2) return [];
  const destination = operands[operands.length - 1] as string;
  const sources = operands
    .slice(0, -1)
    .filter(isPathWord)
    .map((path) => ({ path, op: gone }));
  return isPathWord(destination) && !destination.endsWith('/')
    ? [...sources, { path: destination, op: 'write' as FileOp }]
    : sources;
}

/**
 * A command argument as one line of shell: a string, or an argv list (a shell's `-c` script is
 * the command itself; other lists are joined with spaces). Null when there is none.
 */
function commandText(value: unknown): string | null {
  if (Array.isArray(value)) {
    const argv = value.filter((v): v is string => typeof v === 'string');
    const script = argv[2];
    if (
      argv.length === 3 &&
      SHELL_PROGRAM.test(argv[0] as string) &&
      /^-\w*c$/.test(argv[1] as string) &&
      script
    )
      return script.trim().length > 0 ? script : null;
    const joined = argv.join(' ');
    return joined.trim().length > 0 ? joined : null;
  }
  return typeof value === 'string' && value.trim().length > 0 ? value : null;
}

/**
 * A here-document's start (`<<EOF`, `<< 'EOF'`, `<<-"EOF"`; not a here-string, `<<<`): the lines
 * after it up to the word are data. A line may start several, their bodies one after another.
 */
const HERE_DOCUMENT = /(?<!<)<<(?!<)-?\s*(['"]?)([A-Za-z_][\w-]*)\1/g;
/** An output redirection and its target written together or apart (`> out.txt`, `>>log`, `2> err`). */
const REDIRECT = /^(?:\d|&)?>>?\|?(.*)$/;
/** A word that looks like a file path: no globs, quotes, variables or substitutions, with a `.` or `/`. */
const PATH_WORD = /^[\w.~/-][\w./@+~-]*$/;

/** A word without the quotes around it (`'a b'` is `a b`). */
function unquote(word: string): string {
  return word.replace(/^(["'])([\s\S]*)\1$/, '$2');
}

function isPathWord(word: string): boolean {
  return (
    PATH_WORD.test(word) &&
    /[./]/.test(word) &&
    !/^\d+(,\d+)?p?$/.test(word) &&
    !/^\.{1,2}\/?$/.test(word) &&
    word !== '/dev/null'
  );
}

/** `apply_patch` as a command's program (Codex's model often writes `apply_patch <<'EOF'` in its shell). */
const APPLY_PATCH = /^apply_?patch$/;
/** Python's interpreter as a command's program (`python`, `python3`, `python3.11`). */
const PYTHON = /^python(?:\d+(?:\.\d+)?)?$/;
/** A variable that holds it (`"$PYTHON"`, `${PY}`, `$VENV_PYTHON`, `"${PYTHON:-python3}"`): its name. */
const PYTHON_VARIABLE = /^"?\$\{?(\w+)(?::?-[^}]*)?\}?"?$/;
/** A variable's name that says it holds Python's interpreter (`PYTHON3`, `UV_PY`, `PYTHON_BIN`; not `PY_LINT`). */
const PYTHON_NAME = /^(?:\w*_)?PY(?:THON[\d.]*)?(?:_(?:BIN|EXE|CMD|PATH|EXECUTABLE|INTERPRETER))?$/i;

/** Whether a command's program is Python's interpreter, named or held by a variable named for it. */
function isPython(program: string | undefined): boolean {
  if (program === undefined) return false;
  if (PYTHON.test(program)) return true;
  const name = PYTHON_VARIABLE.exec(program)?.[1];
  return name !== undefined && PYTHON_NAME.test(name);
}

/**
 * The command without the bodies of its here-documents (data, not commands), the bodies given
 * to `apply_patch` (patches) and those given to Python (scripts).
 */
function splitHereDocuments(command: string): { commands: string; patches: string[]; scripts: string[] } {
  const lines = command.split('\n');
  const out: string[] = [];
  const patches: string[] = [];
  const scripts: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    out.push(line);
    for (const start of line.matchAll(HERE_DOCUMENT)) {
      const end = start[2] as string;
      const first = i + 1;
      while (i + 1 < lines.length && (lines[i + 1] as string).trim() !== end) i++;
      const body = lines.slice(first, i + 1).join('\n');
      // The command the document is given to: the last one before its start.
      const words = commandWords(simpleCommands(line.slice(0, start.index + start[0].length)).at(-1) ?? []);
      if (APPLY_PATCH.test(words[0] ?? '')) patches.push(body);
      else if (isPythonHereDocument(words)) scripts.push(body);
      i++;
    }
  }
  return { commands: out.join('\n'), patches, scripts };
}

/** A name bound to a file: `p = 'a.py'`, `path = Path("a.py")` (name, quote, file). */
const PY_NAMED_FILE =
  /^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*(?:(?:pathlib\.)?Path\(\s*)?[rbuRBU]{0,2}(['"])([^'"\n{}]+)\2/gm;
/**
 * `open(…)` of a file named by a string literal (2) or a name (3, not a string's prefix), with the
 * rest of its arguments on the line (4).
 */
const PY_OPEN = /\bopen\(\s*(?:[rbuRBU]{0,2}(['"])([^'"\n{}]+)\1|([A-Za-z_]\w*)(?!['"\w]))([^)\n]*)/g;
/** `open`'s mode among its other arguments: the second one, or `mode=`. */
const PY_MODE = /^\s*,\s*(?:mode\s*=\s*)?(['"])([^'"\n]*)\1|\bmode\s*=\s*(['"])([^'"\n]*)\3/;
/** A `pathlib` write of a file named by `Path('…')` (2) or a name (3); the method (4). */
const PY_PATH_METHOD =
  /(?:(?:pathlib\.)?Path\(\s*[rbuRBU]{0,2}(['"])([^'"\n{}]+)\1\s*\)|\b([A-Za-z_]\w*))\.(read_text|read_bytes|write_text|write_bytes)\(/g;

/**
 * The files a Python script writes (a script given to `python` in a here-document or with `-c`, as
 * agents that only have a shell edit files): `open(f, 'w')` (or `a`, `x`, `+`, also as `mode=`)
 * and `Path(f).write_text(…)` write, where `f` is a string literal, `Path('…')` or a name bound to
 * one; a file the script also reads (`open(f)`, `.read_text()`) is edited. Reads alone are left
 * out: the script does not print the file, so its output is no view of it. Comment lines are
 * skipped.
 */
export function pythonTouches(script: string): { path: string; op: FileOp }[] {
  const code = script.replace(/^[ \t]*#.*$/gm, '');
  const named = new Map<string, string>();
  for (const m of code.matchAll(PY_NAMED_FILE)) named.set(m[1] as string, m[3] as string);
  const ops = new Map<string, { read: boolean; written: boolean }>();
  const touch = (
    literal: string | undefined,
    name: string | undefined,
    read: boolean,
    written: boolean,
  ): void => {
    const path = literal ?? (name === undefined ? undefined : named.get(name));
    if (path === undefined || !isPathWord(path)) return;
    const seen = ops.get(path) ?? { read: false, written: false };
    seen.read ||= read;
    seen.written ||= written;
    ops.set(path, seen);
  };
  for (const m of code.matchAll(PY_OPEN)) {
    const mode = PY_MODE.exec(m[4] ?? '');
    const flags = mode ? (mode[2] ?? mode[4] ?? '') : 'r';
    touch(m[2], m[3], /[r+]/.test(flags), /[wax+]/.test(flags));
  }
  for (const m of code.matchAll(PY_PATH_METHOD)) {
    const written = (m[4] as string).startsWith('write');
    touch(m[2], m[3], !written, written);
  }
  return [...ops].flatMap(([path, { read, written }]) =>
    written ? [{ path, op: read ? ('edit' as const) : ('write' as const) }] : [],
  );
}

/**
 * The script a shell among the words runs (`bash -c '…'`, `sh -lc "…"`; quotes and escaped quotes
 * taken off) and the position of the shell, when a quoted script follows its `-c`.
 */
function nestedScript(words: readonly string[]): { script: string; at: number } | null {
  for (let at = 0; at < words.length - 2; at++) {
    if (!SHELL_PROGRAM.test(words[at] as string) || !/^-\w*c$/.test(words[at + 1] as string)) continue;
    const script = words[at + 2] as string;
    if (!/^(['"]).*\1$/s.test(script)) return null;
    return { script: unquotedArgument(script), at };
  }
  return null;
}

/** A quoted word's text: quotes off, and in double quotes the escaped characters unescaped. */
function unquotedArgument(word: string): string {
  return word.startsWith('"') ? unquote(word).replace(/\\(["\\$`])/g, '$1') : unquote(word);
}

/**
 * The script a Python command runs from its words, when it is given inline: `-c` and the next
 * word (its quotes and escaped quotes taken off), only among the interpreter's own options (before
 * any script or `-m` module).
 */
function inlinePython(words: readonly string[]): string | null {
  for (let i = 1; i < words.length - 1; i++) {
    const word = words[i] as string;
    if (word === '-c') return unquotedArgument(words[i + 1] as string);
    if (!word.startsWith('-') || word === '-m') return null;
  }
  return null;
}

/** A word that sets a variable for the command after it (`LANG=C`, `PYTHONPATH=src`). */
const ASSIGNMENT = /^[A-Za-z_]\w*=/;
/**
 * Programs that run the command after them (`timeout 60 python - <<EOF`, `sudo cat /etc/hosts`),
 * with their options that take a value as the next word (short, or long without `=`).
 */
const WRAPPERS: Record<string, RegExp> = {
  sudo: /^(?:-[ugCDhpRrTtU]|--(?:user|group|close-from|chdir|host|prompt|role|type|command-timeout|other-user))$/,
  env: /^(?:-[uCS]|--(?:unset|chdir|split-string))$/,
  timeout: /^(?:-[sk]|--(?:signal|kill-after))$/,
  nice: /^(?:-n|--adjustment)$/,
  nohup: /^$/,
  time: /^(?:-[fo]|--(?:format|output))$/,
  command: /^$/,
  exec: /^-a$/,
  stdbuf: /^(?:-[ioe]|--(?:input|output|error))$/,
};
/** A wrapper's option that runs the command in another directory (`env -C dir`, `sudo -D dir`). */
const OTHER_DIRECTORY = /^(?:-[CD]|--chdir(?:=.*)?)$/;

/** A program named by its path in a `bin` directory (`/usr/bin/python3`): its own name. */
function programName(word: string): string {
  return /(?:^|\/)s?bin\/[^/]+$/.test(word) ? word.slice(word.lastIndexOf('/') + 1) : word;
}

/**
 * The words of the command a simple command runs: variables set before it and the programs that
 * run it (`env`, `sudo`, `timeout 60`, `nice -n 5`, `time`, each maybe by its path) left out, the
 * program named by its own name when given by its path (`/usr/bin/python3` is `python3`). None when
 * a wrapper runs it in another directory (its files are not where they seem).
 */
function commandWords(words: readonly string[]): readonly string[] {
  let i = 0;
  for (;;) {
    while (i < words.length && ASSIGNMENT.test(words[i] as string)) i++;
    const program = words[i] === undefined ? undefined : programName(words[i] as string);
    const takesValue = program === undefined ? undefined : WRAPPERS[program];
    if (takesValue === undefined) break;
    i++;
    // The wrapper's options (and their values), then `timeout`'s duration.
    while (i < words.length && (words[i] as string).startsWith('-') && words[i] !== '--') {
      if ((program === 'env' || program === 'sudo') && OTHER_DIRECTORY.test(words[i] as string)) return [];
      if (takesValue.test(words[i] as string)) i++;
      i++;
    }
    if (words[i] === '--') i++;
    if (program === 'timeout' && /^\d/.test(words[i] ?? '')) i++;
  }
  if (i === 0 && !(words[0] ?? '').includes('/')) return words;
  const rest = words.slice(i);
  if (rest[0] !== undefined) rest[0] = programName(rest[0]);
  return rest;
}

/** Whether a command gives Python a script in a here-document: `python [options] [-] <<…`. */
function isPythonHereDocument(words: readonly string[]): boolean {
  if (!isPython(words[0])) return false;
  for (const word of words.slice(1)) {
    if (word.startsWith('<<')) return true;
    if (!word.startsWith('-')) return false;
  }
  return false;
}

/**
 * Files a shell command reads by printing them (`cat a.ts`, `sed -n 1,80p a.ts`, `nl -ba a.ts`,
 * `head -n 40 a.ts`; `sed -i` edits), files it writes by redirecting output into them
 * (`cat > a.py <<'EOF'`, `echo x >> notes.md`), and files it deletes, moves, copies or creates
 * (`rm`, `mv`, `cp`, `touch`, `git rm`, `git mv`), in each simple command of a pipeline or list; a
 * here-document's lines are data, not commands, unless they are a patch given to `apply_patch`
 * (its files are added, edited or deleted) or a script given to Python (see {@link pythonTouches};
 * also a script given with `python -c`). A path is an argument that is not an option,
 * `sed`'s script (first word, or given by `-e`/`-f`) or a number, and has no globs, quotes or
 * variables.
 */
export function shellReads(command: string): { path: string; op: FileOp }[] {
  const { commands, patches, scripts } = splitHereDocuments(command);
  const out: { path: string; op: FileOp }[] = [];
  // The directory a `cd` went to (relative to where the command started; null: where it started,
  // or unknown after a `cd` to no plain path), and the directories a subshell will return to.
  let cwd: string | null = null;
  const outer: (string | null)[] = [];
  let patch = 0;
  let script = 0;
  for (const written of simpleCommands(commands)) {
    const words = commandWords(written);
    const first = words[0] ?? '';
    if (first === '(') outer.push(cwd);
    else if (first === ')') cwd = outer.length > 0 ? (outer.pop() as string | null) : cwd;
    else if (first === 'cd')
      cwd = changeDirectory(
        cwd,
        words.slice(1).find((w) => !w.startsWith('-')),
      );
    else {
      // A shell given a script to run (`bash -lc '…'`, also through another program:
      // `docker exec box bash -lc '…'`): the script's files (where it runs here, from this
      // directory), then what the command itself redirects into.
      const nested = nestedScript(words);
      if (nested)
        for (const { path, op } of shellReads(nested.script))
          out.push({ path: nested.at === 0 ? inDirectory(cwd, path) : path, op });
      const hereDocument = words.some((w) => w.startsWith('<<'));
      const inline = isPython(first) ? inlinePython(words) : null;
      // A Python script's files, and what its command redirects into (`python - <<'PY' > out.txt`).
      const touches =
        APPLY_PATCH.test(first) && hereDocument && patch < patches.length
          ? patchTouches(patches[patch++] as string)
          : isPythonHereDocument(words) && script < scripts.length
            ? [...pythonTouches(scripts[script++] as string), ...simpleCommandTouches(words)]
            : inline !== null
              ? [...pythonTouches(inline), ...simpleCommandTouches(words)]
              : simpleCommandTouches(words);
      for (const { path, op } of touches) out.push({ path: inDirectory(cwd, path), op });
    }
  }
  // A patch whose command was not told apart (written oddly): its files as they are.
  for (const rest of patches.slice(patch)) out.push(...patchTouches(rest));
  return out;
}

/** Programs that print files, search them or list them. */
const PRINTERS = 'cat|nl|head|tail|less|more|bat|batcat|grep|egrep|fgrep|rg|ag|ls|tree|wc';
/** Programs whose output is files' text, a search in them or a listing (and `echo` between them). */
const PRINTING_PROGRAM = new RegExp(`^(${PRINTERS}|echo|printf|pwd)$`);

/**
 * A file a command's output was saved to, by its name (`build.log`, `test.out`, `/tmp/run.txt`):
 * printing it shows that command's outcome, failures included.
 */
const OUTPUT_FILE = /(\.(log|out|err)|^['"]?\/tmp\/.*)['"]?$/;

/** Whether a simple command's words print files (or what is in them) and do nothing else. */
function printsOnly(words: readonly string[]): boolean {
  const [program = '', ...args] = words;
  if (args.some((a) => OUTPUT_FILE.test(a))) return false;
  // `sed -n 1,80p a.ts` prints; `sed -i` edits.
  if (program === 'sed')
    return args.some((a) => /^-[a-zA-Z]*n/.test(a)) && !args.some((a) => /^(-[a-zA-Z]*i|--in-place)/.test(a));
  if (program === 'git') return /^(show|diff|log|blame|grep|status)$/.test(args[0] ?? '');
  if (program === 'find') return !args.some((a) => /^-(exec|execdir|ok|okdir|delete|fprint)/.test(a));
  return PRINTING_PROGRAM.test(program);
}

/**
 * Whether a shell command only prints files or searches them (`cat schema.sql`, `cd src && sed -n
 * 1,80p a.ts | nl`, `bash -lc 'grep -rn error .'`): what it prints is the files' text, so an
 * `error` line in it is theirs, not the command's outcome. A command that runs anything else, or
 * gives a here-document to a program, does more than print.
 */
export function printsFilesOnly(command: string): boolean {
  const { commands, patches, scripts } = splitHereDocuments(command);
  if (patches.length > 0 || scripts.length > 0) return false;
  let prints = false;
  for (const written of simpleCommands(commands)) {
    const words = commandWords(written);
    const first = words[0] ?? '';
    if (first === '(' || first === ')' || first === 'cd') continue;
    const nested = nestedScript(words);
    if (nested ? nested.at !== 0 || !printsFilesOnly(nested.script) : !printsOnly(words)) return false;
    prints = true;
  }
  return prints;
}

/**
 * The simple commands of a shell script (here-document bodies taken out), each as its words with
 * their quotes: split at unquoted `;`, `&`, `&&`, `|`, `||` and line breaks, a word at unquoted
 * whitespace, a `#` that starts a word comments out the rest of its line. A subshell's `(` and
 * `)` are commands of their own (`['(']`, `[')']`); a `$(…)` stays in its word.
 */
function simpleCommands(script: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  let quote = '';
  const endWord = (): void => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endCommand = (): void => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < script.length; i++) {
    const c = script[i] as string;
    if (quote !== '') {
      word += c;
      if (c === quote) quote = '';
      else if (c === '\\' && quote === '"' && i + 1 < script.length) word += script[++i];
    } else if (c === "'" || c === '"') {
      quote = c;
      word += c;
      inWord = true;
    } else if (c === '\\' && i + 1 < script.length) {
      word += c + script[++i];
      inWord = true;
    } else if (c === '#' && !inWord) {
      while (i + 1 < script.length && script[i + 1] !== '\n') i++;
    } else if (c === '&' && (word.endsWith('>') || script[i + 1] === '>')) {
      // `2>&1`, `&>out`: a redirection, not a separator.
      word += c;
      inWord = true;
    } else if (c === ';' || c === '\n' || c === '&' || c === '|') {
      endCommand();
      if ((c === '&' || c === '|') && script[i + 1] === c) i++;
    } else if (c === '(' && !inWord && words.length === 0) {
      commands.push(['(']);
    } else if (c === ')' && !word.includes('$(')) {
      endCommand();
      commands.push([')']);
    } else if (c === ' ' || c === '\t' || c === '\r') endWord();
    else {
      word += c;
      inWord = true;
    }
  }
  endCommand();
  return commands;
}

/** The directory after `cd word` from `cwd` (see {@link shellReads}). */
function changeDirectory(cwd: string | null, word: string | undefined): string | null {
  const dir = unquote(word ?? '');
  if (!dir || !PATH_WORD.test(dir) || dir === '-' || dir === '~') return null;
  return inDirectory(cwd, dir).replace(/\/+$/, '') || '/';
}

/** `path` as written from the directory `cwd` (absolute and home paths as they are). */
function inDirectory(cwd: string | null, path: string): string {
  if (path.startsWith('/') || path.startsWith('~')) return path;
  const parts = cwd === null || cwd === '.' ? [] : cwd.split('/');
  let rest = path === '.' || path === '..' ? `${path}/` : path;
  for (;;) {
    if (rest.startsWith('./')) rest = rest.slice(2);
    else if (rest.startsWith('../') && parts.length > 0 && parts[parts.length - 1] !== '..') {
      parts.pop();
      rest = rest.slice(3);
    } else if (rest.startsWith('../') && cwd !== null) {
      parts.push('..');
      rest = rest.slice(3);
    } else break;
  }
  if (rest === '') return parts.join('/') || '.';
  return parts.length === 0 ? rest : `${parts.join('/')}/${rest}`;
}

/** The files one simple command (its words) prints, writes, removes, moves or copies. */
function simpleCommandTouches(words: readonly string[]): { path: string; op: FileOp }[] {
  const out: { path: string; op: FileOp }[] = [];
  // Redirections first: their targets are written, and they are no arguments of the program.
  const args: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (word.startsWith('<<')) {
      // A here-document's delimiter (`<< EOF` apart) is no argument either.
      if (word === '<<' || word === '<<-') i++;
      continue;
    }
    const redirect = REDIRECT.exec(word);
    if (!redirect) {
      args.push(word);
      continue;
    }
    const target = (redirect[1] as string) || (words[++i] ?? '');
    const path = unquote(target);
    if (!target.startsWith('&') && isPathWord(path)) out.push({ path, op: 'write' });
  }
  // `git rm` and `git mv` remove and move as `rm` and `mv` do (`git rm --cached` leaves the file).
  if (args[0] === 'git' && (args[1] === 'rm' || args[1] === 'mv')) {
    if (args.includes('--cached')) return out;
    args.shift();
  }
  const program = args[0] ?? '';
  if (FILE_MOVER.test(program)) {
    out.push(...fileMoves(program, args.slice(1)));
    return out;
  }
  if (!FILE_PRINTER.test(program)) return out;
  // `sed -i` edits the file in place.
  const op: FileOp =
    program === 'sed' && args.some((w) => /^-[a-zA-Z]*i/.test(w) || w.startsWith('--in-place'))
      ? 'edit'
      : 'read';
  let scriptSeen = program !== 'sed';
  for (let i = 1; i < args.length; i++) {
    const word = args[i] as string;
    if (word.startsWith('-')) {
      if (program !== 'sed') {
        // `-n 40` (head, tail) takes a value; `cat -n` does not.
        if ((program === 'head' || program === 'tail') && /^-[nc]$/.test(word)) i++;
      } else if (/^-[a-zA-Z]*[ef]$/.test(word)) {
        // sed's `-e script` and `-f script-file` give the script: every other word is a file.
        scriptSeen = true;
        i++;
      } else if (/^--(expression|file)=/.test(word)) scriptSeen = true;
      continue;
    }
    const path = unquote(word);
    // An empty word is BSD sed's `-i ''` (no backup suffix), neither script nor file.
    if (path === '') continue;
    if (!scriptSeen) {
      scriptSeen = true;
      continue;
    }
    if (isPathWord(path)) out.push({ path, op });
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
      ? [args.input, args.patch, args.patchText, args.diff].find((v): v is string => typeof v === 'string')
      : argumentsText;
    const touches = patchTouches(text ?? '');
    // A diff of search and replace blocks names no file: Roo Code's `apply_diff` gives it as `path`.
    const path = touches.length === 0 && args ? cleanPath(args.path) : null;
    return { touches: path ? [{ path, op: 'edit' }] : touches, command: null };
  }
  if (!args) return { touches, command };
  if (IPYTHON_TOOL.test(tool) && typeof args.code === 'string')
    return { touches: agentskillsTouches(args.code), command: null };
  // Codex's shell runs `apply_patch` as a command of its own: `["apply_patch", "*** Begin Patch…"]`.
  const argv = Array.isArray(args.command) ? args.command : null;
  if (SHELL_TOOL.test(tool) && argv?.[0] === 'apply_patch' && typeof argv[1] === 'string')
    return { touches: patchTouches(argv[1]), command: null };
  const editor = EDITOR_TOOL.test(tool) && typeof args.command === 'string';
  const op = editor ? opOfEditorCommand(String(args.command)) : opOfName(tool);
  for (const key of PATH_KEYS) {
    const path = argumentPath(args[key]);
    // A search tool's `source` may name a data source (`docs-index`), no file: only a path is one.
    if (path && (!NAMING_KEYS.has(key) || /[./\\]/.test(path))) touches.push({ path, op });
  }
  for (const key of PATH_LIST_KEYS) {
    const list = args[key];
    if (!Array.isArray(list)) continue;
    for (const entry of list) {
      const path =
        argumentPath(entry) ??
        (typeof entry === 'object' && entry !== null
          ? argumentPath((entry as Record<string, unknown>).path)
          : null);
      if (path) touches.push({ path, op });
    }
  }
  const editsOpenFile = touches.length === 0 && op === 'edit';
  if (editsOpenFile && openFile) touches.push({ path: openFile, op });
  let printsOnly = false;
  if (!editor && (SHELL_TOOL.test(tool) || touches.length === 0)) {
    for (const key of COMMAND_KEYS) {
      const text = commandText(args[key]);
      if (text !== null) {
        const line = text.trim().replace(/\s+/g, ' ');
        command = line.length > MAX_COMMAND_CHARS ? `${line.slice(0, MAX_COMMAND_CHARS)}…` : line;
        // Agents read files through their shell as often as through a file tool (`cat`, `sed -n`),
        // whether the command is an argv list (Codex) or a string (pi, Claude Code, OpenHands).
        if (SHELL_TOOL.test(tool)) {
          touches.push(...shellReads(text));
          // Judged on the command as written (the one kept is one line, and cut).
          printsOnly = printsFilesOnly(text);
        }
        break;
      }
    }
  }
  return {
    touches,
    command,
    ...(editsOpenFile ? { editsOpenFile: true as const } : {}),
    ...(printsOnly ? { printsOnly: true as const } : {}),
  };
}

// ---- results ----

/** Characters read at each end of a long tool output when looking for a failure. */
const SCAN_CHARS = 4000;
/** Longest error line kept, in characters. */
const MAX_ERROR_CHARS = 200;

/** Lines that report a failure, whatever the tool. */
const FAILURE_LINE =
  /^(\s*(error|fatal|exception)\b[:\s!]|CONFLICT \(|\s*\w*(Error|Exception):\s|npm ERR!|Traceback \(most recent call last\)|.*\bcommand not found\b|.*\b(exit(ed)?|exit code|exit status)\s*(with\s*)?(code|status)?\s*[1-9]\d*\b|\s*FAIL\b|.*\b[1-9]\d* (failed|failing)\b|.*Your proposed edit has introduced new syntax error)/i;
/**
 * Of an output that reports a failure, the lines that say what failed, before a line that only
 * gives the exit code: an error message, a compiler's diagnostic (`a.ts(23,35): error TS2345: …`),
 * npm's error, a merge conflict, a failed test.
 */
const WHAT_FAILED_LINE =
  /^(\s*(error|fatal|exception)\b[:\s!]|CONFLICT \(|\s*\w*(Error|Exception):\s|npm (ERR!|error\b)|.*[:)]\s*error\b[\s:[]|Traceback \(most recent call last\)|.*\bcommand not found\b|\s*FAIL\b|.*\b[1-9]\d* (failed|failing)\b|.*Your proposed edit has introduced new syntax error)/i;
/** Tools whose output is file content: only an explicit error counts there. */
const READ_OUTPUT_TOOL = /(read|view|open|cat|get_file|show)/i;

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_ERROR_CHARS ? `${line.slice(0, MAX_ERROR_CHARS)}…` : line;
}

/**
 * Whether the source format flagged this result as an error: pi's `isError` (kept with its message),
 * or an importer's `isError` side field (Claude Code's `is_error`, a Codex command's exit code).
 */
function flaggedError(item: ToolResultItem): boolean {
  const fields = item.origin?.fields;
  const message = fields?.message;
  return (
    fields?.isError === true ||
    (typeof message === 'object' && message !== null && (message as { isError?: unknown }).isError === true)
  );
}

/** A line that only gives a command's exit status (a shell tool's wrapper, not what failed). */
const EXIT_STATUS_LINE =
  /^\s*(command exited with code|process exited with code|exit code:?|exit status:?)\s*-?\d+\s*$/i;
/** A line that only says there is an error, the message on the lines after it (`ERROR:`). */
const LABEL_LINE = /^\s*(error|fatal|exception|failed|failure)\s*[:!]?\s*$/i;
/** A Python traceback's last line: the exception and its message. */
const EXCEPTION_LINE = /^\s*[\w.]*(Error|Exception|Interrupt|Exit)\b/;
/**
 * Lines that say nothing of what failed: empty, "(no output)", or a shell tool's wrapper around the
 * output (Codex's `Chunk ID: …`, `Wall time: …`, `Original token count: 0`, `Output:`).
 */
const NO_OUTPUT_LINE =
  /^\s*(\(no output\)|\[no output\]|chunk id:.*|wall time:.*|original token count:\s*\d+|total output lines:\s*\d+|output:)?\s*$/i;

/**
 * The line that says what failed, of `lines` (an output, or its start and end): a line naming the
 * error, else one reporting a failure that is not only an exit status, else the last line with
 * something in it before the exit status (a build's last words, apt's `E: …`), else that status.
 * A traceback is told by its exception (its last line), a bare `ERROR:` by the line after it.
 */
function whatFailed(lines: readonly string[]): string | undefined {
  let at = lines.findIndex((line) => WHAT_FAILED_LINE.test(line));
  if (at === -1) at = lines.findIndex((line) => FAILURE_LINE.test(line) && !EXIT_STATUS_LINE.test(line));
  if (at === -1) {
    for (let i = lines.length - 1; i >= 0; i--) {
      const line = lines[i] as string;
      if (!NO_OUTPUT_LINE.test(line) && !EXIT_STATUS_LINE.test(line)) return line;
    }
    return lines.find((line) => FAILURE_LINE.test(line));
  }
  const line = lines[at] as string;
  if (/^Traceback \(most recent call last\)/.test(line)) {
    for (let i = lines.length - 1; i > at; i--) if (EXCEPTION_LINE.test(lines[i] as string)) return lines[i];
    return line;
  }
  if (LABEL_LINE.test(line)) {
    const next = lines.slice(at + 1).find((l) => !NO_OUTPUT_LINE.test(l));
    if (next !== undefined) return `${line.trim()} ${next.trim()}`;
  }
  return line;
}

/**
 * What a command that prints files says of its own failure: a printer's diagnostic (`sed: can't
 * read a.md: No such file or directory`, `cat: x: …`, git's `fatal: …`) or a shell's
 * `command not found`. Its exit status alone is no failure (`grep` finding nothing exits 1).
 */
const PRINTER_FAILURE = new RegExp(
  `^(?:(?:\\S*/)?(?:${PRINTERS}|sed|find|git): |fatal: )|\\bcommand not found\\b`,
);

/**
 * The line of a tool result that reports an error, or null when it reports none. `tool` is the name
 * of the tool that produced it; `printsOnly`: its call is a shell command that only prints files
 * ({@link printsFilesOnly}). Tools that read files count only explicit errors (an output that
 * starts with one, or a result flagged as an error); shell commands that only print files, those
 * and their own diagnostics (`PRINTER_FAILURE`): what they print is the files' text.
 */
export function toolResultError(item: ToolResultItem, tool: string, printsOnly = false): string | null {
  const text = messageText(item.message);
  const head = text.trimStart();
  const explicit = /^(error|fatal)\b/i.test(head);
  // Failures are reported at the start or the end of an output: a long output is read there only.
  const scanned =
    text.length <= 2 * SCAN_CHARS ? text : `${text.slice(0, SCAN_CHARS)}\n${text.slice(-SCAN_CHARS)}`;
  const lines = scanned.split('\n');
  if (printsOnly) {
    const own = lines.find((line) => PRINTER_FAILURE.test(line));
    if (own !== undefined) return oneLine(own);
    // Nothing printed, flagged or not, but at most exit status 1: a search that found nothing
    // (`grep`, `rg` exit 1 when no line matches; 2 and over are their errors, 124 a timeout). A
    // format that keeps the status apart (OpenHands) prints none.
    if (
      lines.every(
        (line) =>
          NO_OUTPUT_LINE.test(line) || (EXIT_STATUS_LINE.test(line) && /(?:^|[^\d-])1\s*$/.test(line)),
      )
    )
      return null;
  }
  if (flaggedError(item) || explicit) return oneLine(whatFailed(lines) ?? head) || 'error';
  if (printsOnly) return null;
  if (READ_OUTPUT_TOOL.test(tool) || !lines.some((line) => FAILURE_LINE.test(line))) return null;
  return oneLine(whatFailed(lines) as string);
}

/**
 * What a call was applied to: a shell command's first words (`npm test`, `python repro.py`: the
 * files it prints or writes are not what it runs), else its first path (a file tool's, or a patch
 * given to `apply_patch` in the shell), else ''.
 */
export function callTarget(name: string, argumentsText: string): string {
  return targetOf(toolCallEffect(name, argumentsText, null));
}

/** What a call with this effect was applied to (see {@link callTarget}). */
export function targetOf(effect: CallEffect): string {
  const path = effect.touches[0]?.path;
  const main = effect.command
    ? (effect.command.replace(/^cd\s+\S+\s*(&&|;)\s*/, '').split(/\s*(\|\||&&|\||;)\s*/)[0] ?? '')
    : '';
  if (main && !(path && /^apply_?patch\b/.test(main))) {
    // Its first words before any redirection (`python repro.py > out.txt` runs `python repro.py`).
    const words = main.split(' ');
    const redirect = words.findIndex((word) => /^(\d|&)?[<>]/.test(word));
    return words.slice(0, Math.min(3, redirect === -1 ? 3 : redirect)).join(' ');
  }
  return path ?? '';
}
