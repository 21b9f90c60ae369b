/**
 * The artifact trail (seed 001 "files created, modified, or analyzed"; DESIGN.md §5 carried state):
 * every file the conversation read, wrote, edited, listed or searched, with the operations and the
 * last round it was touched, and the shell commands it ran, taken from the tool calls of any agent
 * (argument keys such as `path`, `file_path`, `filename`; editor tools with a `command`; patches;
 * the files a shell command prints or redirects into, `shellReads`).
 *
 * A compaction builds the trail from the whole context before anything is pruned and merges it
 * into the previous trail, so a path touched once stays in the header for the rest of the
 * conversation, whatever the summarizer writes. Rendering keeps every path as written (a model
 * can use it again) within a token budget: see {@link renderArtifactTrail} for the overflow rule.
 *
 * Pure module.
 */
import type { CallFacts, ContextItem, FileTouch, TrailCommand } from './items';
import { fixedTextTokens, maxTokens, PartCounter, type Tokenizer } from './tokenizer';
import { callFactsOf } from './item-facts';
import { handleOf } from './recall-handle';
import { indexPairs, type PairIndex } from './tool-pairs';

/** Commands kept by the trail's data (the rendering shows fewer). */
const MAX_COMMANDS = 30;

/** The trail's data: files in order of their last touch (oldest first), the commands run. */
export interface ArtifactTrail {
  files: FileTouch[];
  commands: TrailCommand[];
  /**
   * The directory the conversation's relative paths are written from, once its paths told it
   * ({@link electWorkspace}).
   */
  workspace?: string;
}

/** A trail with nothing in it. */
export function emptyTrail(): ArtifactTrail {
  return { files: [], commands: [] };
}

/**
 * The trail of `previous` extended with the tool calls of `items` (in order): a file touched again
 * moves to the end (newest) with the new operation added (a delete replaces the operations before
 * it; a file only removed in the shell is left out) and its round updated. A relative path naming
 * a file the trail also holds by its absolute path in the workspace is that file (see
 * {@link electWorkspace}). The inputs are not changed. `pairs`: the items' pairing, when the
 * caller has it already. `from`: the position of the first item `previous` does not cover (the
 * items before it are read only for the file an editor has open): a compaction's kept items are in
 * its trail already, and read again their commands would be listed twice and their files moved
 * before newer ones.
 */
export function collectArtifactTrail(
  items: readonly ContextItem[],
  previous: ArtifactTrail = emptyTrail(),
  pairs: PairIndex = indexPairs(items),
  from = 0,
): ArtifactTrail {
  // The touches in order, each with the item recall reads for it (issue 24): the call's result,
  // else the call.
  const touches: { path: string; op: string; round: number; source: string }[] = [];
  const commands = [...previous.commands];
  // Read from the start, the items may hold runs `previous` lists already (a trail read back from
  // its text, placed in the header: no position tells the new items from the kept ones). Those
  // runs are read aside and only the new ones kept (see `newRuns`).
  const readBack = from === 0 && previous.commands.length > 0;
  const read: TrailCommand[] = [];
  let openFile: string | null = null;
  for (let position = 0; position < items.length; position++) {
    const item = items[position] as ContextItem;
    if (item.type !== 'ASSISTANT_MESSAGE' || !item.message.tool_calls?.length) continue;
    const facts = callFactsOf(item);
    const first = pairs.firstCall[position] as number;
    for (let i = 0; i < facts.length; i++) {
      const effect = facts[i] as CallFacts;
      const callTouches: readonly { path: string; op: string }[] =
        effect.editsOpenFile && openFile ? [{ path: openFile, op: 'edit' }] : effect.touches;
      if (position < from) {
        for (const { path, op } of callTouches)
          if (op === 'read' || op === 'write' || op === 'edit') openFile = path;
        continue;
      }
      if (callTouches.length > 0) {
        const at = pairs.callResult[first + i] ?? -1;
        const result = at === -1 ? item : (items[at] as ContextItem);
        const source = result.sourceId ?? result.id;
        for (const { path, op } of callTouches) {
          touches.push({ path, op, round: item.round, source });
          if (op === 'read' || op === 'write' || op === 'edit') openFile = path;
        }
      }
      if (effect.command === null) continue;
      (readBack ? read : commands).push({ command: effect.command, round: item.round });
    }
  }
  if (readBack) commands.push(...newRuns(read, previous.commands));
  const workspace =
    previous.workspace ??
    electWorkspace([...previous.files.map((f) => f.path), ...touches.map((t) => t.path)]);
  // Each path as one spelling: a relative path naming a file of the workspace known by its absolute
  // path is that path. Files of earlier compactions written both ways are one entry first, once the
  // workspace is new to the trail: a trail that knew it holds one entry per file already.
  const twin = workspace === null ? null : twinResolver(workspace, previous.files, touches);
  const canonical = (path: string): string => twin?.(path) ?? path;
  const before =
    twin === null || previous.workspace !== undefined ? previous.files : mergeTwins(previous.files, twin);
  // The files touched here: each one's touch (a copy of the previous one, else new) and the
  // position of its last touch (they are ordered by it at the end, after the files not touched
  // again), its source hashed into its handle once, at the end. Files not touched again are kept as
  // they are, counts and all.
  const touched = new Map<string, { touch: FileTouch; last: number; source: string }>();
  let earlier: Map<string, FileTouch> | undefined;
  touches.forEach(({ path: written, op, round, source }, last) => {
    let path = canonical(written);
    earlier ??= new Map(before.map((file) => [canonical(file.path), file]));
    // A removal of a file the trail does not hold by that path: the one file it holds whose path
    // ends with it, while no workspace is known (a trail read back from its text has none).
    if (op === 'remove' && twin === null && !touched.has(path) && !earlier.has(path))
      path = soleTwin(written, before) ?? path;
    let known = touched.get(path);
    if (!known) {
      const was = earlier.get(path);
      // A file the conversation only removed in the shell (`rm` of a build output) is not one it
      // worked on; one a patch deleted is.
      if (!was && op === 'remove') return;
      const touch: FileTouch = was
        ? was.listTokens === undefined || was.path !== path
          ? { path, ops: [...was.ops], lastRound: was.lastRound }
          : { path, ops: [...was.ops], lastRound: was.lastRound, listTokens: was.listTokens }
        : { path, ops: [op], lastRound: round };
      known = { touch, last, source };
      touched.set(path, known);
    }
    // A delete ends what came before it: the file is gone (written again later, it reads
    // "deleted, written").
    if (op === 'delete' || op === 'remove') known.touch.ops = [op];
    else if (!known.touch.ops.includes(op)) known.touch.ops.push(op);
    known.touch.lastRound = Math.max(round, known.touch.lastRound);
    known.last = last;
    known.source = source;
  });
  const files = touched.size === 0 ? [...before] : before.filter((f) => !touched.has(canonical(f.path)));
  // A file touched here has a new line in the text: its count, if it had one, is no longer it.
  // Object literals, not spreads: spreading these touches took 16 of the function's 40 µs (V8).
  for (const { touch, source } of [...touched.values()].sort((a, b) => a.last - b.last)) {
    const { path, ops, lastRound, listTokens } = touch;
    files.push(
      listTokens === undefined
        ? { path, ops, lastRound, handle: handleOf(source) }
        : { path, ops, lastRound, handle: handleOf(source), listTokens },
    );
  }
  const trail: ArtifactTrail = { files, commands: commands.slice(-MAX_COMMANDS) };
  if (workspace !== null) trail.workspace = workspace;
  return trail;
}

/**
 * The runs of `read` (the items' runs, in order) that a trail read back from its text does not hold:
 * its listing (`listed`, oldest first) is the latest runs when it was written. Runs of rounds before
 * the listing's last are older: listed already, or left out for want of room. Of its last round,
 * the runs after the one that ends the listing are new — the run where the listing's end lines up
 * with the items' runs, backwards, as far as both go; where none does, every run of that round is
 * kept (some may then be listed twice). Runs of later rounds are new.
 */
function newRuns(read: readonly TrailCommand[], listed: readonly TrailCommand[]): TrailCommand[] {
  const last = Math.max(...listed.map((c) => c.round));
  const lastListed = listed.filter((c) => c.round === last).map((c) => c.command);
  const lastRead = read.filter((c) => c.round === last).map((c) => c.command);
  let end = -1;
  for (let p = lastRead.length - 1; p >= 0 && end === -1; p--) {
    const span = Math.min(p + 1, lastListed.length);
    let k = 0;
    while (k < span && lastRead[p - k] === lastListed[lastListed.length - 1 - k]) k++;
    if (k === span) end = p;
  }
  let seen = 0;
  return read.filter((c) => c.round > last || (c.round === last && seen++ > end));
}

/** A path from the root of a file system: `/…`, `\…`, or a Windows drive's (`C:\…`, `c:/…`). */
function isAbsolute(path: string): boolean {
  const first = path.charCodeAt(0);
  if (first === 47 /* / */ || first === 92 /* \ */) return true;
  const third = path.charCodeAt(2);
  return path.charCodeAt(1) === 58 /* : */ && (third === 47 || third === 92) && /^[A-Za-z]/.test(path);
}

/**
 * Whether a path is relative to the working directory as written, down from it: not absolute, not
 * from the home directory (`~`), not written from `./` (kept as written: `./a.ts` is the end of no
 * absolute path), and not climbing (`..`).
 */
function isPlainRelative(path: string): boolean {
  return (
    path !== '' &&
    !isAbsolute(path) &&
    !path.startsWith('~') &&
    !path.startsWith('./') &&
    !path.startsWith('.\\') &&
    !/(?:^|[/\\])\.\.(?:[/\\]|$)/.test(path)
  );
}

/** A directory as compared: forward slashes, a drive letter's case aside. */
function directoryKey(directory: string): string {
  const slashed = directory.replace(/\\/g, '/');
  return /^[A-Za-z]:/.test(slashed) ? slashed.toLowerCase() : slashed;
}

/**
 * The directory each plainly relative path that ends an absolute one implies: the absolute path
 * less the relative one (its separator before kept), when they are written with the same
 * separators (`src/a.ts` ends `/w/src/a.ts`, not `c:\w\src\a.ts`).
 */
function twinDirectories(paths: readonly string[]): Map<string, number> {
  const votes = new Map<string, number>();
  const relative = new Set(paths.filter(isPlainRelative));
  if (relative.size === 0) return votes;
  // Each relative path's directories: every absolute path's tails after a separator (`/w/src/a.ts`:
  // `src/a.ts`, `a.ts`) that are relative paths, with what comes before them. A relative path counts
  // once for a directory (`c:\w\a` and `c:/w/a` are one).
  const directoriesOf = new Map<string, Set<string>>();
  for (const path of new Set(paths)) {
    if (!isAbsolute(path)) continue;
    for (let at = 0; at < path.length - 1; at++) {
      const c = path.charCodeAt(at);
      if (c !== 47 && c !== 92) continue;
      const tail = path.slice(at + 1);
      if (!relative.has(tail)) continue;
      const key = directoryKey(path.slice(0, at + 1));
      const directories = directoriesOf.get(tail);
      if (directories) directories.add(key);
      else directoriesOf.set(tail, new Set([key]));
    }
  }
  for (const directories of directoriesOf.values())
    for (const key of directories) votes.set(key, (votes.get(key) ?? 0) + 1);
  return votes;
}

/**
 * The workspace the conversation's relative paths are written from, when its paths tell it: the
 * directory that two files or more, each written both relative and absolute (a shell command run in
 * the workspace, a tool taking absolute paths: `src/a.ts` and `/home/me/app/src/a.ts`), agree on,
 * more of them than on any other. Null when none does (a single pair may be a vendored copy's).
 * The trail keeps it: later compactions, whose earlier pairs are one entry by then, use it again.
 */
export function electWorkspace(paths: readonly string[]): string | null {
  let best: string | null = null;
  let most = 1;
  let tied = false;
  for (const [directory, count] of twinDirectories(paths)) {
    if (count > most) [best, most, tied] = [directory, count, false];
    else if (count === most) tied = true;
  }
  return tied ? null : best;
}

/**
 * The absolute path a plainly relative one names in the workspace, when the trail or the touches
 * hold it (written with the same separators); undefined otherwise.
 */
function twinResolver(
  workspace: string,
  files: readonly FileTouch[],
  touches: readonly { path: string }[],
): (path: string) => string | undefined {
  // Each absolute path's spellings (separators, a drive letter's case), the latest last.
  const absolute = new Map<string, string[]>();
  const add = (path: string): void => {
    if (!isAbsolute(path)) return;
    const key = directoryKey(path);
    const spellings = absolute.get(key);
    if (!spellings) absolute.set(key, [path]);
    else if (!spellings.includes(path)) spellings.push(path);
  };
  for (const file of files) add(file.path);
  for (const touch of touches) add(touch.path);
  return (path) => {
    if (!isPlainRelative(path)) return undefined;
    const spellings = absolute.get(directoryKey(workspace + path)) ?? [];
    for (let i = spellings.length - 1; i >= 0; i--)
      if ((spellings[i] as string).endsWith(path)) return spellings[i];
    return undefined;
  };
}

/** The one absolute path among the files that a plainly relative path ends (undefined: none, or several). */
function soleTwin(path: string, files: readonly FileTouch[]): string | undefined {
  if (!isPlainRelative(path)) return undefined;
  let found: string | undefined;
  for (const file of files) {
    const cut = file.path.length - path.length;
    if (cut <= 0 || !isAbsolute(file.path) || !file.path.endsWith(path)) continue;
    if (file.path[cut - 1] !== '/' && file.path[cut - 1] !== '\\') continue;
    if (found !== undefined && found !== file.path) return undefined;
    found = file.path;
  }
  return found;
}

/**
 * The files with each plainly relative path that names a file also listed by its absolute path
 * (`twinOf`) merged into that one, at the later one's place: the operations of both, the older's
 * first (unless the newer's start with a delete), the latest round and the newer's handle.
 */
function mergeTwins(
  files: readonly FileTouch[],
  twinOf: (path: string) => string | undefined,
): readonly FileTouch[] {
  const at = new Map(files.map((file, i) => [file.path, i]));
  const merged = new Map<number, FileTouch>();
  const gone = new Set<number>();
  files.forEach((file, r) => {
    const twin = twinOf(file.path);
    const a = twin === undefined ? undefined : at.get(twin);
    if (a === undefined || gone.has(a)) return;
    const [older, newer] = r < a ? [r, a] : [a, r];
    const before = merged.get(older) ?? (files[older] as FileTouch);
    const after = merged.get(newer) ?? (files[newer] as FileTouch);
    const restart = after.ops[0] === 'delete' || after.ops[0] === 'remove';
    const ops = restart ? [...after.ops] : [...before.ops];
    if (!restart) for (const op of after.ops) if (!ops.includes(op)) ops.push(op);
    const touch: FileTouch = {
      path: twin as string,
      ops,
      lastRound: Math.max(before.lastRound, after.lastRound),
    };
    const handle = after.handle ?? before.handle;
    if (handle !== undefined) touch.handle = handle;
    // The list entry depends on the path alone; the line, written again, is counted again.
    const listTokens = (files[a] as FileTouch).listTokens;
    if (listTokens !== undefined) touch.listTokens = listTokens;
    merged.set(newer, touch);
    gone.add(older);
  });
  return gone.size === 0 ? files : files.flatMap((file, i) => (gone.has(i) ? [] : [merged.get(i) ?? file]));
}

const OP_WORDS: Record<string, string> = {
  read: 'read',
  write: 'written',
  edit: 'edited',
  delete: 'deleted',
  remove: 'removed',
  list: 'listed',
  search: 'searched',
  use: 'used',
};

/** The first line of the trail's text (the trail item's message starts with it). */
export const ARTIFACT_TRAIL_HEADING = '[Artifact trail] Files this conversation touched, newest first';

function fileLine(file: FileTouch): string {
  // A file read back from an older list of paths alone (trailFromText): what was done is unknown.
  if (file.ops.length === 0) return `- ${file.path} (touched earlier)`;
  const handle = file.handle ? `, ${file.handle}` : '';
  return `- ${file.path} (${file.ops.map((op) => OP_WORDS[op] ?? op).join(', ')}; round ${file.lastRound}${handle})`;
}

/** A file's line in detail, read back: path, operation words, round, handle. */
const FILE_LINE = /^- (.+) \(([a-z, ]+); round (\d+)(?:, (#[0-9a-f]+))?\)$/;
/** A file read back from a list of paths alone. */
const EARLIER_LINE = /^- (.+) \(touched earlier\)$/;
/** A command of the commands line, read back (a command may hold backticks). */
const COMMAND_ENTRY = /`(.*?)` \(round (\d+)\)(?=;|$)/g;
/** A directory the list collapsed into a count: its paths are not in the text. */
const COLLAPSED_ENTRY = / \(\d+ files?\)$/;
/** A root's mark in the list of older paths: the entries after it are written from it. */
const LIST_ROOT = /\(under (.+?[\\/])\)/g;
/** The line a carried item's text ends with when it was cut to fit its budget. */
export const CARRIED_CUT_LINE = '[… cut to fit the carried-state budget]';

/**
 * The lines of a carried item's text under its heading, or null when it does not open with it; a
 * text cut to fit its budget loses its last line, cut short, and the cut line after it.
 */
export function carriedLines(text: string, heading: string): string[] | null {
  const lines = text.split('\n');
  if (lines[0] !== heading) return null;
  const cut = lines[lines.length - 1] === CARRIED_CUT_LINE ? 2 : 0;
  return lines.slice(1, lines.length - cut);
}

/**
 * Whether a text is a trail's as this module writes it: its heading, then only lines of files,
 * the list of older paths and the commands (see {@link carriedLines} for a text cut to fit).
 */
export function isTrailText(text: string): boolean {
  return (
    carriedLines(text, ARTIFACT_TRAIL_HEADING)?.every(
      (line) =>
        FILE_LINE.test(line) ||
        EARLIER_LINE.test(line) ||
        line.startsWith(BARE_HEADING) ||
        line.startsWith(COMMANDS_HEADING),
    ) ?? false
  );
}

/**
 * The trail a trail's text shows (the text of an ARTIFACT_TRAIL item whose data is gone: a context
 * written to a session file or sent as chat messages, and read back): every file it names, with
 * the operations and round of its line in detail, none for one in the list of older paths (its
 * line then says it was touched earlier; a path there not written whole is taken as under the
 * list's root), and the commands it shows. A directory collapsed into a count names no file, and
 * gives none.
 */
export function trailFromText(text: string): ArtifactTrail {
  const newest: FileTouch[] = [];
  const commands: TrailCommand[] = [];
  const words = new Map(Object.entries(OP_WORDS).map(([op, word]) => [word, op]));
  for (const line of text.split('\n').slice(1)) {
    const detail = FILE_LINE.exec(line);
    if (detail) {
      const ops = (detail[2] as string).split(', ').map((word) => words.get(word) ?? word);
      const touch: FileTouch = { path: detail[1] as string, ops, lastRound: Number(detail[3]) };
      if (detail[4]) touch.handle = detail[4];
      newest.push(touch);
      continue;
    }
    const earlier = EARLIER_LINE.exec(line);
    if (earlier) newest.push({ path: earlier[1] as string, ops: [], lastRound: 0 });
    else if (line.startsWith(BARE_HEADING)) {
      // Entries after a root's mark are written from it (but an absolute path, written whole),
      // until the next mark ('./': none). The marks are found first: a root may hold ', '.
      const rest = line.slice(BARE_HEADING.length);
      const marks = [...rest.matchAll(LIST_ROOT)];
      const regions = [{ root: '', text: rest.slice(0, marks[0]?.index ?? rest.length) }];
      marks.forEach((mark, k) =>
        regions.push({
          root: mark[1] === './' ? '' : (mark[1] as string),
          text: rest.slice(mark.index + mark[0].length, marks[k + 1]?.index ?? rest.length),
        }),
      );
      for (const { root, text } of regions)
        for (const entry of text.split(', ')) {
          const name = entry.trim();
          if (!name || COLLAPSED_ENTRY.test(name)) continue;
          newest.push({ path: root && !isWhole(name) ? `${root}${name}` : name, ops: [], lastRound: 0 });
        }
    } else if (line.startsWith(COMMANDS_HEADING)) {
      const list = line.slice(COMMANDS_HEADING.length);
      for (const m of list.matchAll(COMMAND_ENTRY))
        commands.push({ command: m[1] as string, round: Number(m[2]) });
    }
  }
  return { files: newest.reverse(), commands: commands.reverse() };
}

/** The directory a path is in, with its separator at the end (`src/`, `C:\w\`), './' for a bare name. */
function dirOf(path: string): string {
  const at = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return at === -1 ? './' : path.slice(0, at + 1);
}

/**
 * The trail as text within `budgetTokens`, or '' when it is empty. Overflow rule, applied in order
 * until the text fits:
 * 1. every file on its own line with its operations, last round and the recall handle of its last
 *    touch (the tool result: `#a1f3c2`), the 10 latest commands;
 * 2. fewer commands (5, then none);
 * 3. the oldest files lose their details: listed by path only, comma-separated, on one line
 *    (paths under a long directory most of them share written from it, the directory named once:
 *    `Also touched, older: (under /Users/me/project/) src/a.ts, …`);
 * 4. the oldest directories of that list collapse into a count (`src/old/ (12 files)`), oldest
 *    first — the only tier that drops a path from the text, for trails too long for any budget.
 */
export function renderArtifactTrail(
  trail: ArtifactTrail,
  budgetTokens: number,
  tokenizer: Tokenizer,
): string {
  return renderTrailCounted(trail, budgetTokens, tokenizer).text;
}

/** Shortest root worth naming for the bare list (characters). */
const MIN_ROOT_CHARS = 16;
/** Paths a root must hold to be named. */
const MIN_ROOT_PATHS = 3;
/** Most roots the bare list names. */
const MAX_ROOTS = 8;

/** The mark an entry of the bare list is written after when its root is not the one before it. */
function rootMark(root: string | null): string {
  return ` (under ${root ?? './'})`;
}

/**
 * The root an entry of the bare list must be read under: a path's root, null for a relative path
 * written whole, undefined for a path written whole that needs none (absolute, from the home
 * directory: read the same under any root).
 */
function rootNeeded(path: string, root: string | null): string | null | undefined {
  return root !== null ? root : isWhole(path) ? undefined : null;
}

/**
 * Whether a path reads the same under any root (absolute, or from the home directory `~/`): one
 * the bare list can write from a root, and writes whole without one.
 */
function isWhole(path: string): boolean {
  return path.startsWith('/') || path.startsWith('~/') || /^[A-Za-z]:[\\/]/.test(path);
}

/** An entry of the bare list: what it names (a path, or a directory collapsed into a count), its root, its text. */
interface BareEntry {
  path: string;
  root: string | null;
  text: string;
}

/**
 * The bare list's entries (newest first) in the order it writes them: grouped by root, each root
 * named once. The paths written whole come first, then each root's, in the order of their newest
 * entry, newest first within; the group of the oldest entry goes last, so the line always ends
 * with it.
 */
function byRoot(entries: readonly BareEntry[]): BareEntry[] {
  const groups = new Map<string | null, BareEntry[]>([[null, []]]);
  for (const entry of entries) {
    const group = groups.get(entry.root);
    if (group) group.push(entry);
    else groups.set(entry.root, [entry]);
  }
  const last = entries[entries.length - 1]?.root ?? null;
  const ordered: BareEntry[] = [];
  for (const [root, group] of groups) if (root !== last) ordered.push(...group);
  ordered.push(...(groups.get(last) as BareEntry[]));
  return ordered;
}

/**
 * The characters the bare list of `paths` (newest first) takes written from `roots` (each path's,
 * null for none), in the order `byRoot` writes it: each path without its root, and the marks.
 */
function bareChars(paths: readonly string[], roots: readonly (string | null)[]): number {
  const entries = paths.map((path, i) => ({ path, root: roots[i] ?? null, text: '' }));
  let chars = 0;
  for (const part of bareListParts(entries)) chars += part.length;
  for (let i = 0; i < paths.length; i++) chars += (paths[i] as string).length - (roots[i]?.length ?? 0);
  return chars;
}

/**
 * The directories the bare list writes its paths from, when long ones hold several of them (an
 * agent that names every file by its absolute path: `/Users/me/git/project/`, and a second tree
 * beside it): each path's root (its deepest one chosen, with its trailing separator), null for a
 * path written whole. Chosen one at a time, the directory that saves the most characters first
 * (its length times the paths it shortens, less its mark), while one still shortens the list.
 */
export function bareRoots(paths: readonly string[]): (string | null)[] {
  // Every directory long enough to be named, once, with the paths under it.
  const dirs = new Map<string, number[]>();
  for (let p = 0; p < paths.length; p++) {
    const path = paths[p] as string;
    if (!isWhole(path)) continue;
    for (let i = MIN_ROOT_CHARS - 1; i < path.length - 1; i++) {
      const c = path[i];
      if (c !== '/' && c !== '\\') continue;
      const dir = path.slice(0, i + 1);
      const under = dirs.get(dir);
      if (under) under.push(p);
      else dirs.set(dir, [p]);
    }
  }
  let roots = new Array<string | null>(paths.length).fill(null);
  let chars = bareChars(paths, roots);
  for (let chosen = 0; chosen < MAX_ROOTS; chosen++) {
    // The directory that saves the most: the characters it takes off the paths it shortens (those
    // not under a longer root already), less its mark.
    let best: { dir: string; under: number[] } | null = null;
    let value = 0;
    for (const [dir, under] of dirs) {
      let shortened = 0;
      let saved = 0;
      for (const p of under) {
        const current = roots[p]?.length ?? 0;
        if (current >= dir.length) continue;
        shortened++;
        saved += dir.length - current;
      }
      const v = saved - rootMark(dir).length;
      if (shortened >= MIN_ROOT_PATHS && v > value) {
        best = { dir, under };
        value = v;
      }
    }
    if (best === null) break;
    const next = [...roots];
    for (const p of best.under) if ((next[p]?.length ?? 0) < best.dir.length) next[p] = best.dir;
    // A root that takes paths from a shorter one can leave that one with too few to be worth it.
    const nextChars = bareChars(paths, next);
    if (nextChars >= chars) break;
    roots = next;
    chars = nextChars;
  }
  return roots;
}

/**
 * The bare list's entries of files (newest first, at least one): each file's path, root (null:
 * written whole) and text with its comma, the oldest file's as the line ends with it (no comma).
 */
function bareList(newestFirst: readonly FileTouch[]): BareEntry[] {
  const roots = bareRoots(newestFirst.map((file) => file.path));
  return newestFirst.map((file, i) => {
    const root = roots[i] ?? null;
    const text = ` ${bareName(file.path, root)}${i === newestFirst.length - 1 ? '' : ','}`;
    return { path: file.path, root, text };
  });
}

/** A path as the bare list writes it: from the root when it is under it. */
function bareName(path: string, root: string | null): string {
  return root !== null && path.startsWith(root) ? path.slice(root.length) : path;
}

/**
 * The parts of the bare list of `entries` (newest first): its line's heading, then the entries in
 * the order `byRoot` writes them, each with the mark of its root before it where the root changes
 * (a relative path written whole after a root's entries: `./`'s).
 */
function bareListParts(entries: readonly BareEntry[]): string[] {
  const parts = [BARE_HEADING];
  let current: string | null = null;
  for (const { path, root, text } of byRoot(entries)) {
    const need = rootNeeded(path, root);
    if (need !== undefined && need !== current) {
      parts.push(rootMark(need));
      current = need;
    }
    parts.push(text);
  }
  return parts;
}

/** The heading with the line break after it (the text's first part). */
const HEADING_LINE = `${ARTIFACT_TRAIL_HEADING}\n`;
/** The start of the tier-3 line listing older paths bare. */
const BARE_HEADING = 'Also touched, older:';
/** The start of the line of commands. */
const COMMANDS_HEADING = 'Commands run, latest first:';

/** A trail rendered: its text, its tokens when counted, and the trail with the counts it learned. */
export interface RenderedTrail {
  text: string;
  /** Tokens of the text, when they were counted on the way. */
  tokens?: number;
  /**
   * The trail rendered, its files and commands carrying the tokens of their parts of the text
   * where they were counted (`FileTouch.tokens` and `listTokens`, `TrailCommand.tokens`): a later
   * compaction renders them without counting again.
   */
  trail: ArtifactTrail;
}

/**
 * {@link renderArtifactTrail}, with the text's tokens when they were counted on the way.
 * `pathBudgetTokens`: what the trail may grow to (from `budgetTokens`) when every path written
 * whole, with no details, does not fit `budgetTokens`: tier 3 with no file in detail takes up to
 * it before tier 4 collapses any directory.
 *
 * The text is assembled from parts that meet at breaks (`PartCounter`): the heading and each file
 * line with its line break, each command and its round, the bare list's entries each with its
 * comma. Each part is counted once however many tiers try it, or not at all when the trail
 * carries its count, and a tier's tokens are the sum of its parts (exact where the tokenizer's
 * counts add up at breaks; elsewhere the sums only choose the tier, and the text returned is
 * counted whole).
 */
export function renderTrailCounted(
  trail: ArtifactTrail,
  budgetTokens: number,
  tokenizer: Tokenizer,
  pathBudgetTokens = budgetTokens,
): RenderedTrail {
  if (trail.files.length === 0 && trail.commands.length === 0) return { text: '', trail };
  const counter = new PartCounter(tokenizer);
  const newestFirst = [...trail.files].reverse();
  const count = newestFirst.length;
  const lines = newestFirst.map(fileLine);
  // Each file line followed by another line, with its line break; its tokens when known.
  const detailed = lines.map((line) => `${line}\n`);
  const lineTokens = newestFirst.map((file, i) => storedCount(file.tokens, detailed[i] as string));
  const lineCost = (i: number): number => (lineTokens[i] ??= tokenizer.countText(detailed[i] as string));
  // Each file's entry in the bare list with its comma, when counted (tier 3).
  const listTokens = new Array<number | undefined>(count);
  // The latest commands, newest first, each as the text writes it followed by another ('; ').
  const latest = trail.commands.slice(-10).reverse();
  const entries = latest.map((c) => ` \`${c.command}\` (round ${c.round});`);
  const entryTokens = latest.map((c, i) => storedCount(c.tokens, entries[i] as string));
  const entryCost = (i: number): number => (entryTokens[i] ??= tokenizer.countText(entries[i] as string));
  const shownCommands = (n: number): number => Math.min(n, latest.length);
  /** The parts of the heading, the newest `detailCount` files in detail, then the last line's parts. */
  const partsOf = (detailCount: number, last: readonly string[]): string[] => {
    const parts = [HEADING_LINE, ...detailed.slice(0, detailCount)];
    if (last.length > 0) parts.push(...last);
    // Nothing after the last line in detail (or the heading): it ends without a line break.
    else
      parts[parts.length - 1] = detailCount > 0 ? (lines[detailCount - 1] as string) : ARTIFACT_TRAIL_HEADING;
    return parts;
  };
  const commandParts = (n: number): string[] => {
    const shown = shownCommands(n);
    if (shown === 0) return [];
    // The last command shown has no separator after it.
    return [COMMANDS_HEADING, ...entries.slice(0, shown - 1), (entries[shown - 1] as string).slice(0, -1)];
  };
  /** The rendering, with the trail carrying the counts learned. */
  const rendered = (parts: readonly string[], tokens?: number, text = parts.join('')): RenderedTrail => ({
    text,
    ...(tokens === undefined ? {} : { tokens }),
    trail: {
      files: trail.files.map((file, i) => {
        const tokens = lineTokens[count - 1 - i] ?? file.tokens;
        const listed = listTokens[count - 1 - i] ?? file.listTokens;
        if (tokens === file.tokens && listed === file.listTokens) return file;
        const touch: FileTouch = { path: file.path, ops: file.ops, lastRound: file.lastRound };
        if (file.handle !== undefined) touch.handle = file.handle;
        if (tokens !== undefined) touch.tokens = tokens;
        if (listed !== undefined) touch.listTokens = listed;
        return touch;
      }),
      commands: trail.commands.map((command, i) => {
        const tokens = entryTokens[trail.commands.length - 1 - i];
        return tokens === undefined || tokens === command.tokens
          ? command
          : { command: command.command, round: command.round, tokens };
      }),
      ...(trail.workspace === undefined ? {} : { workspace: trail.workspace }),
    },
  });
  // A trail that fits whatever it holds is not counted here.
  const whole = partsOf(count, commandParts(10));
  const wholeText = whole.join('');
  if (maxTokens(wholeText) <= budgetTokens) return rendered(whole, undefined, wholeText);
  // Tiers 1 and 2: every file in detail, with fewer commands. Lines and commands meet at breaks:
  // their counts add up, each counted once (or carried by the trail).
  const additive = tokenizer.additiveAtBreaks === true;
  let files = 0;
  for (let i = 0; i < count - 1; i++) files += lineCost(i);
  for (const n of [10, 5, 0]) {
    const shown = shownCommands(n);
    if (n !== 10 && shown === shownCommands(10) && n !== 0) continue;
    const parts = n === 10 ? whole : partsOf(count, commandParts(n));
    let tokens: number;
    if (!additive) tokens = tokenizer.countText(n === 10 ? wholeText : parts.join(''));
    else if (shown === 0)
      tokens =
        count === 0
          ? fixedTextTokens(ARTIFACT_TRAIL_HEADING, tokenizer)
          : fixedTextTokens(HEADING_LINE, tokenizer) + files + counter.part(lines[count - 1] as string);
    else {
      tokens =
        fixedTextTokens(HEADING_LINE, tokenizer) +
        files +
        (count > 0 ? lineCost(count - 1) : 0) +
        fixedTextTokens(COMMANDS_HEADING, tokenizer);
      for (let i = 0; i < shown - 1; i++) tokens += entryCost(i);
      tokens += counter.part((entries[shown - 1] as string).slice(0, -1));
    }
    if (tokens <= budgetTokens) return rendered(parts, tokens, n === 10 ? wholeText : undefined);
  }
  // Commands alone, not even the last of them fitting: the heading alone.
  if (count === 0)
    return rendered([ARTIFACT_TRAIL_HEADING], fixedTextTokens(ARTIFACT_TRAIL_HEADING, tokenizer));
  // Tier 3: the newest `keep` files in detail, the older ones by path only, on one line:
  // `Also touched, older: a, b, c` is the heading, then ' a,', ' b,' and ' c' (the last, no comma).
  // Paths under a long root are written from it, the root's mark (' (under /w/p/)') before the
  // first of a run of them. The trail's stored entry counts are of the paths written whole.
  const list = bareList(newestFirst);
  const bareFrom = bareSuffixTokens(newestFirst, list, counter, additive ? listTokens : null, tokenizer);
  let detailCost = fixedTextTokens(HEADING_LINE, tokenizer);
  let keep = 0;
  // The detail lines that fit beside the bare list of the rest, newest first (every file in
  // detail is tier 2, which did not fit).
  while (keep < count - 1) {
    const next = lineCost(keep);
    if (detailCost + next + (bareFrom[keep + 1] as number) > budgetTokens) break;
    detailCost += next;
    keep++;
  }
  /** The text of tiers 3 and 4, the newest `keep` files in detail and the bare list's parts. */
  const listing = (bare: readonly string[], bareTokens: number): RenderedTrail => {
    const parts = partsOf(keep, bare);
    return rendered(parts, additive ? detailCost + bareTokens : tokenizer.countText(parts.join('')));
  };
  if (detailCost + (bareFrom[keep] as number) <= budgetTokens)
    return listing(bareListParts(list.slice(keep)), bareFrom[keep] as number);
  // Every path whole, in no detail, in the room the trail may grow to.
  if (fixedTextTokens(HEADING_LINE, tokenizer) + (bareFrom[0] as number) <= pathBudgetTokens) {
    keep = 0;
    detailCost = fixedTextTokens(HEADING_LINE, tokenizer);
  }
  if (detailCost + (bareFrom[keep] as number) <= pathBudgetTokens)
    return listing(bareListParts(list.slice(keep)), bareFrom[keep] as number);
  // Tier 4: collapse the oldest directories into counts until the line fits.
  const older = list.slice(keep);
  const groups = new Map<string, { paths: number; root: string | null; entry: string }>();
  for (let i = older.length - 1; i >= 0; i--) {
    const { path, root } = older[i] as { path: string; root: string | null };
    const dir = dirOf(path);
    const group = groups.get(dir);
    if (group) group.paths++;
    // A directory that is its files' root is written whole: it needs no mark.
    else
      groups.set(dir, {
        paths: 1,
        root: root !== null && dir.startsWith(root) && dir !== root ? root : null,
        entry: '',
      });
  }
  for (const [dir, group] of groups)
    group.entry = ` ${bareName(dir, group.root) || './'} (${group.paths} file${group.paths === 1 ? '' : 's'}),`;
  const collapsed = new Set<string>();
  const collapsedParts = (): string[] => {
    const entries: BareEntry[] = [];
    const seen = new Set<string>();
    for (const entry of older) {
      const dir = dirOf(entry.path);
      if (!collapsed.has(dir)) entries.push(entry);
      else if (!seen.has(dir)) {
        seen.add(dir);
        const group = groups.get(dir) as { root: string | null; entry: string };
        entries.push({ path: dir, root: group.root, text: group.entry });
      }
    }
    const parts = bareListParts(entries);
    // The last entry has no comma (the oldest file's has none already).
    const last = parts[parts.length - 1] as string;
    if (last.endsWith(',')) parts[parts.length - 1] = last.slice(0, -1);
    return parts;
  };
  let bare = collapsedParts();
  for (const dir of groups.keys()) {
    if (detailCost + counter.count(bare) <= Math.max(budgetTokens, pathBudgetTokens)) break;
    collapsed.add(dir);
    bare = collapsedParts();
  }
  return listing(bare, counter.count(bare));
}

/**
 * The bare list's tokens from each file on (newest first; none past the last file): its heading,
 * the entries and the marks of their roots (`bareListParts`: each root's once, and `./`'s before
 * the relative paths when they come last after a root's), summed part by part. `stored`: the
 * entries' counts of paths written whole, kept with the trail, filled where counted (additive
 * tokenizers only: the entries meet at breaks).
 */
function bareSuffixTokens(
  newestFirst: readonly FileTouch[],
  list: readonly BareEntry[],
  counter: PartCounter,
  stored: (number | undefined)[] | null,
  tokenizer: Tokenizer,
): number[] {
  const count = newestFirst.length;
  const bareFrom = new Array<number>(count + 1).fill(0);
  if (count === 0) return bareFrom;
  const relativeLast = (list[count - 1] as BareEntry).root === null;
  const roots = new Set<string>();
  let relative = false;
  let sum = fixedTextTokens(BARE_HEADING, tokenizer);
  for (let i = count - 1; i >= 0; i--) {
    const { path, root, text } = list[i] as BareEntry;
    sum +=
      stored !== null && i < count - 1 && root === null
        ? (stored[i] ??= storedCount((newestFirst[i] as FileTouch).listTokens, text) ?? counter.part(text))
        : counter.part(text);
    if (root !== null && !roots.has(root)) {
      roots.add(root);
      sum += counter.part(rootMark(root));
    }
    relative ||= rootNeeded(path, root) === null;
    bareFrom[i] = sum + (relativeLast && relative && roots.size > 0 ? counter.part(rootMark(null)) : 0);
  }
  return bareFrom;
}

/**
 * Tokens of the trail's text with every path written bare and nothing else (tier 3 with no file in
 * detail): the least that keeps every path in the text. 0 for a trail with no file.
 */
export function trailPathTokens(trail: ArtifactTrail, tokenizer: Tokenizer): number {
  const count = trail.files.length;
  if (count === 0) return 0;
  const newestFirst = [...trail.files].reverse();
  const list = bareList(newestFirst);
  if (tokenizer.additiveAtBreaks !== true)
    return tokenizer.countText([HEADING_LINE, ...bareListParts(list)].join(''));
  const stored = new Array<number | undefined>(count);
  return (
    fixedTextTokens(HEADING_LINE, tokenizer) +
    (bareSuffixTokens(newestFirst, list, new PartCounter(tokenizer), stored, tokenizer)[0] as number)
  );
}

/** Every path in a trail (for tests and the eval's probes). */
export function trailPaths(trail: ArtifactTrail): string[] {
  return trail.files.map((f) => f.path);
}

/**
 * A count stored with the trail for `text`, when it can be one: a whole number of tokens, at least
 * one and at most three per UTF-16 unit (the most bytes one can take). Anything else (a row edited
 * by hand, another encoding's count far off) is counted again rather than trusted: a huge count
 * would make the trail look too large for any budget.
 */
function storedCount(tokens: unknown, text: string): number | undefined {
  // Three bytes per UTF-16 unit at most: the bound without reading the text.
  return typeof tokens === 'number' && Number.isInteger(tokens) && tokens >= 1 && tokens <= 3 * text.length
    ? tokens
    : undefined;
}
