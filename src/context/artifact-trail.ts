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
import type { CallFacts, ContextItem, FileTouch } from './items';
import { maxTokens, type Tokenizer } from './tokenizer';
import { callFactsOf } from './item-facts';
import { handleOf } from './recall-handle';
import { indexPairs, type PairIndex } from './tool-pairs';

/** Commands kept by the trail's data (the rendering shows fewer). */
const MAX_COMMANDS = 30;

/** The trail's data: files in order of their last touch (oldest first), the commands run. */
export interface ArtifactTrail {
  files: FileTouch[];
  commands: { command: string; round: number }[];
}

/** A trail with nothing in it. */
export function emptyTrail(): ArtifactTrail {
  return { files: [], commands: [] };
}

/**
 * The trail of `previous` extended with the tool calls of `items` (in order): a file touched again
 * moves to the end (newest) with the new operation added and its round updated. The inputs are not
 * changed. `pairs`: the items' pairing, when the caller has it already.
 */
export function collectArtifactTrail(
  items: readonly ContextItem[],
  previous: ArtifactTrail = emptyTrail(),
  pairs: PairIndex = indexPairs(items),
): ArtifactTrail {
  // Each file's touch, the position of its last touch (files are ordered by it at the end) and
  // the item recall reads for that touch (issue 24): the call's result, else the call; hashed into
  // its handle once, at the end.
  const files = new Map<string, { touch: FileTouch; last: number; source: string | null }>();
  let touches = 0;
  for (const file of previous.files)
    files.set(file.path, { touch: { ...file, ops: [...file.ops] }, last: touches++, source: null });
  const commands = [...previous.commands];
  let openFile: string | null = null;
  for (let position = 0; position < items.length; position++) {
    const item = items[position] as ContextItem;
    if (item.type !== 'ASSISTANT_MESSAGE' || !item.message.tool_calls?.length) continue;
    const facts = callFactsOf(item);
    const first = pairs.firstCall[position] as number;
    for (let i = 0; i < facts.length; i++) {
      const effect = facts[i] as CallFacts;
      const touched: readonly { path: string; op: string }[] =
        effect.editsOpenFile && openFile ? [{ path: openFile, op: 'edit' }] : effect.touches;
      if (touched.length > 0) {
        const at = pairs.callResult[first + i] ?? -1;
        const result = at === -1 ? item : (items[at] as ContextItem);
        const source = result.sourceId ?? result.id;
        for (const { path, op } of touched) {
          const known = files.get(path);
          if (known) {
            if (!known.touch.ops.includes(op)) known.touch.ops.push(op);
            known.touch.lastRound = Math.max(item.round, known.touch.lastRound);
            known.last = touches++;
            known.source = source;
          } else {
            files.set(path, { touch: { path, ops: [op], lastRound: item.round }, last: touches++, source });
          }
          if (op === 'read' || op === 'write' || op === 'edit') openFile = path;
        }
      }
      if (effect.command !== null) commands.push({ command: effect.command, round: item.round });
    }
  }
  const ordered = [...files.values()].sort((a, b) => a.last - b.last);
  for (const file of ordered) if (file.source !== null) file.touch.handle = handleOf(file.source);
  return { files: ordered.map((f) => f.touch), commands: commands.slice(-MAX_COMMANDS) };
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
  const handle = file.handle ? `, ${file.handle}` : '';
  return `- ${file.path} (${file.ops.map((op) => OP_WORDS[op] ?? op).join(', ')}; round ${file.lastRound}${handle})`;
}

function dirOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash <= 0 ? '.' : path.slice(0, slash);
}

/**
 * The trail as text within `budgetTokens`, or '' when it is empty. Overflow rule, applied in order
 * until the text fits:
 * 1. every file on its own line with its operations, last round and the recall handle of its last
 *    touch (the tool result: `#a1f3c2`), the 10 latest commands;
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
  return renderTrailCounted(trail, budgetTokens, tokenizer).text;
}

/**
 * {@link renderArtifactTrail}, with the text's tokens when they were counted on the way.
 * `pathBudgetTokens`: what the trail may grow to (from `budgetTokens`) when every path written
 * whole, with no details, does not fit `budgetTokens`: tier 3 with no file in detail takes up to
 * it before tier 4 collapses any directory.
 */
export function renderTrailCounted(
  trail: ArtifactTrail,
  budgetTokens: number,
  tokenizer: Tokenizer,
  pathBudgetTokens = budgetTokens,
): { text: string; tokens?: number } {
  if (trail.files.length === 0 && trail.commands.length === 0) return { text: '' };
  const newestFirst = [...trail.files].reverse();
  const commandLine = (n: number): string | null => {
    // `slice(-0)` would be every command.
    const latest = n === 0 ? [] : trail.commands.slice(-n).reverse();
    return latest.length === 0
      ? null
      : `Commands run, latest first: ${latest.map((c) => `\`${c.command}\` (round ${c.round})`).join('; ')}`;
  };
  const lines = newestFirst.map(fileLine);
  const render = (detailCount: number, bare: string | null, commands: string | null): string =>
    [
      ARTIFACT_TRAIL_HEADING,
      ...lines.slice(0, detailCount),
      ...(bare ? [bare] : []),
      ...(commands ? [commands] : []),
    ].join('\n');
  // A trail that fits whatever it holds is not counted here.
  const whole = render(lines.length, null, commandLine(10));
  if (maxTokens(whole) <= budgetTokens) return { text: whole };
  // Tiers 1 and 2: every file in detail, with fewer commands; the whole text counted.
  for (const n of [10, 5, 0]) {
    const text = n === 10 ? whole : render(lines.length, null, commandLine(n));
    const tokens = tokenizer.countText(text);
    if (tokens <= budgetTokens) return { text, tokens };
  }
  const lineCost = (line: string): number => tokenizer.countText(line) + 1;
  const heading = lineCost(ARTIFACT_TRAIL_HEADING);
  const detailed = lines.map((line) => ({ line, cost: lineCost(line) }));
  // Tier 3: the newest `keep` files in detail, the older ones by path only.
  const bareLine = (paths: readonly string[]): string | null =>
    paths.length === 0 ? null : `Also touched, older: ${paths.join(', ')}`;
  let detailCost = heading;
  let keep = 0;
  // The bare list's cost from each file on: each path counted once (suffix sums).
  const pathCostFrom: number[] = new Array<number>(newestFirst.length + 1).fill(0);
  for (let i = newestFirst.length - 1; i >= 0; i--)
    pathCostFrom[i] =
      (pathCostFrom[i + 1] as number) + tokenizer.countText((newestFirst[i] as { path: string }).path) + 1;
  const olderPathsCost = (from: number): number => (pathCostFrom[from] as number) + 4;
  // The detail lines that fit beside the bare list of the rest, newest first.
  while (keep < detailed.length) {
    const next = detailed[keep] as { cost: number };
    if (detailCost + next.cost + olderPathsCost(keep + 1) > budgetTokens) break;
    detailCost += next.cost;
    keep++;
  }
  if (detailCost + olderPathsCost(keep) <= budgetTokens)
    return { text: render(keep, bareLine(newestFirst.slice(keep).map((f) => f.path)), null) };
  // Every path whole, in no detail, in the room the trail may grow to.
  if (heading + olderPathsCost(0) <= pathBudgetTokens) {
    keep = 0;
    detailCost = heading;
  }
  const older = newestFirst.slice(keep).map((f) => f.path);
  if (detailCost + olderPathsCost(keep) <= pathBudgetTokens)
    return { text: render(keep, bareLine(older), null) };
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
    if (detailCost + lineCost(line()) <= Math.max(budgetTokens, pathBudgetTokens)) break;
    collapsed.add(dir);
  }
  return { text: render(keep, line(), null) };
}

/** Every path in a trail (for tests and the eval's probes). */
export function trailPaths(trail: ArtifactTrail): string[] {
  return trail.files.map((f) => f.path);
}
