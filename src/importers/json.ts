/**
 * JSON helpers of the importers: parsing with located errors, field checks, structural equality and
 * a content hash for deterministic ids. Pure.
 */
import { ImportError } from './errors';

export type JsonObject = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** 1-based line and column of a character offset. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** Deepest nesting of arrays and objects accepted in a session (real sessions stay far below). */
export const MAX_JSON_DEPTH = 256;

interface Visit {
  value: unknown;
  depth: number;
  key: string;
  parent: Visit | undefined;
}

/** The path of a visited value, e.g. `messages[1].tool_calls[0]…` (cut after a few steps). */
function visitPath(visit: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | undefined = visit; at?.parent; at = at.parent) keys.unshift(at.key);
  const shown = keys.slice(0, 4).join('').replace(/^\./, '');
  return keys.length > 4 ? `${shown}…` : shown;
}

/**
 * Refuses a value nested deeper than {@link MAX_JSON_DEPTH}. The converters walk values
 * recursively: a hostile file must fail with its line and field named, not overflow the stack.
 * Iterative, so any depth is checked safely.
 * @throws ImportError naming the line (when given) and the path where the nesting gets too deep
 */
export function checkJsonDepth(value: unknown, line?: number): void {
  const stack: Visit[] = [{ value, depth: 1, key: '', parent: undefined }];
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    const current = visit.value;
    if (typeof current !== 'object' || current === null) continue;
    if (visit.depth > MAX_JSON_DEPTH) {
      throw new ImportError(`JSON nested more than ${MAX_JSON_DEPTH} levels deep`, {
        ...(line !== undefined ? { line } : {}),
        field: visitPath(visit),
      });
    }
    const isArray = Array.isArray(current);
    for (const [key, child] of Object.entries(current)) {
      if (typeof child !== 'object' || child === null) continue;
      stack.push({
        value: child,
        depth: visit.depth + 1,
        key: isArray ? `[${key}]` : `.${key}`,
        parent: visit,
      });
    }
  }
}

/** Characters V8 quotes on each side of an unexpected token (`..."snippet"...`). */
const SNIPPET_SIDE = 10;

/**
 * Where in `text` V8's JSON.parse error `message` says it went wrong: "at position N"; for an
 * unexpected token, the text quoted around it when there is text before it (`..."ab": The c"...`);
 * the end for a text cut short; else null.
 */
function errorOffset(message: string, text: string): number | null {
  const position = /position (\d+)/.exec(message);
  if (position) return Number(position[1]);
  if (/end of JSON input/.test(message)) return text.length;
  const quoted = /^Unexpected token .*?, \.\.\."([\s\S]*)"(?:\.\.\.)? is not valid JSON$/.exec(message);
  const at = quoted ? text.indexOf(quoted[1] as string) : -1;
  return at < 0 ? null : at + SNIPPET_SIDE;
}

/**
 * Parses one JSON document. A syntax error becomes an {@link ImportError} naming the line (the
 * given one for a JSONL line, else the line of the error position when the engine reports it), and
 * so does nesting deeper than {@link MAX_JSON_DEPTH}.
 */
export function parseJson(text: string, line?: number): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    if (line !== undefined) throw new ImportError(`not valid JSON (${message})`, { line });
    const offset = errorOffset(message, text);
    const at = offset === null ? undefined : lineColumn(text, offset);
    throw new ImportError(`not valid JSON (${message})`, at ? { line: at.line } : {});
  }
  checkJsonDepth(value, line);
  return value;
}

/** One parsed JSONL line with its 1-based line number. Blank lines are skipped. */
/** Values as JSONL: one a line, a line break after the last (none for no value). */
export function jsonLines(values: readonly unknown[]): string {
  return values.map((value) => JSON.stringify(value)).join('\n') + (values.length > 0 ? '\n' : '');
}

export interface JsonLine {
  line: number;
  value: unknown;
  /** Set when the line parsed only once its stray backslashes were read as escaping nothing. */
  repaired?: true;
}

/** Parsed JSONL lines, and the number of a last line left out because it was cut short. */
export type JsonLines = JsonLine[] & { cutLine?: number };

/** Characters a backslash escapes in JSON (`\u` also needs four hex digits). */
const JSON_ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

/**
 * The line with each backslash in a string that escapes nothing JSON knows (`\*`, `\u` without
 * four hex digits) read as a backslash (escaped), the character after it kept: what a redaction
 * that cut an escape in two leaves (GitHub's `\***@***.***` for a `\n` before an e-mail address),
 * or a Windows path written unescaped (`C:\Users\me`). `null` when there is none.
 */
function withStrayBackslashesEscaped(raw: string): string | null {
  let out = '';
  let from = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charAt(i);
    if (!inString) {
      if (c === '"') inString = true;
      continue;
    }
    if (c === '"') inString = false;
    else if (c === '\\') {
      const next = raw.charAt(i + 1);
      if (JSON_ESCAPES.has(next) || (next === 'u' && /^[0-9a-fA-F]{4}$/.test(raw.slice(i + 2, i + 6)))) i++;
      else {
        out += `${raw.slice(from, i)}\\`;
        from = i;
      }
    }
  }
  return out === '' ? null : out + raw.slice(from);
}

/**
 * The objects and arrays written back to back on one line (`{…}{…}`), as texts, or `null` when the
 * line is not such a sequence of at least two. Only the nesting is read here; each piece is parsed
 * by the caller.
 */
function concatenatedValues(raw: string): string[] | null {
  const pieces: string[] = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charAt(i);
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      if (depth === 0) return null;
      inString = true;
    } else if (c === '{' || c === '[') {
      if (depth === 0) start = i;
      depth++;
    } else if (c === '}' || c === ']') {
      if (depth === 0) return null;
      depth--;
      if (depth === 0) pieces.push(raw.slice(start, i + 1));
    } else if (depth === 0 && !/\s/.test(c)) return null;
  }
  return depth === 0 && pieces.length > 1 ? pieces : null;
}

/**
 * Parses JSONL: one JSON value per non-blank line; an error names the line. A line holding several
 * objects written back to back (`{…}{…}`: a writer that lost a newline, as pi session files have
 * been seen to hold) gives each of them, all with that line's number; a line with stray
 * backslashes in its strings ({@link withStrayBackslashesEscaped}) is read with them as backslashes and marked
 * `repaired`; a last line with no line break after it that does not parse is left out (a file
 * copied while its agent was still writing it: `cutLine`) when lines before it parsed; any other
 * bad line is refused.
 */
export function parseJsonLines(text: string): JsonLines {
  const lines: JsonLine[] = [];
  let start = 0;
  let number = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    number++;
    const raw = text.slice(start, end);
    if (raw.trim().length > 0) {
      try {
        lines.push({ line: number, value: parseJson(raw, number) });
      } catch (err) {
        const repaired = withStrayBackslashesEscaped(raw);
        if (repaired !== null) {
          try {
            lines.push({ line: number, value: parseJson(repaired, number), repaired: true });
            start = end + 1;
            continue;
          } catch {
            // Not that: the line is reported as it was.
          }
        }
        const pieces = concatenatedValues(raw);
        if (!pieces && end === text.length && lines.length > 0) {
          // The last line, with no line break after it: a file copied while its agent was still
          // writing it. What came before is whole.
          return Object.assign(lines, { cutLine: number });
        }
        if (!pieces) throw err;
        for (const piece of pieces) {
          let value: unknown;
          try {
            value = parseJson(piece, number);
          } catch {
            throw err;
          }
          lines.push({ line: number, value });
        }
      }
    }
    start = end + 1;
  }
  return lines;
}

/** Describes a value for an error message ("a number", "null", ...). */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (value === undefined) return 'missing';
  return `a ${typeof value}`;
}

/** Structural equality of JSON values (key order ignored; a key holding `undefined` counts as absent). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((value, i) => jsonEqual(value, b[i]));
  }
  const ak = Object.keys(a).filter((k) => (a as JsonObject)[k] !== undefined);
  const bk = Object.keys(b).filter((k) => (b as JsonObject)[k] !== undefined);
  if (ak.length !== bk.length) return false;
  return ak.every((k) => Object.hasOwn(b, k) && jsonEqual((a as JsonObject)[k], (b as JsonObject)[k]));
}

/** How many spaces a JSON text is indented by (OpenHands writes 4), 0 when it is on one line. */
export function jsonIndent(text: string): number {
  const match = /^[[{]\r?\n( +)/.exec(text.trimStart());
  return match ? (match[1] as string).length : 0;
}

/** A copy of an object without some keys (key order kept). */
export function omit(object: JsonObject, keys: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(object)) if (!keys.includes(key)) out[key] = value;
  return out;
}

/**
 * A 48-bit content hash as 12 hex digits (two 32-bit FNV-1a variants over UTF-16 units): stable
 * across runs and platforms, for deterministic ids. Not cryptographic.
 */
export function contentHash(text: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  }
  const hex = (n: number, digits: number): string => (n >>> 0).toString(16).padStart(8, '0').slice(-digits);
  return hex(h1, 8) + hex(h2, 4);
}

/**
 * The string fields a JSON object's text still holds when it was cut short (tool-call arguments cut
 * to a preview, their marker after the cut): each `"key": "value"` in order, nested ones too, the
 * last as far as the text goes; a marker after a closed value goes with the last field.
 */
export function stringFieldsOf(text: string): [string, string][] {
  const fields: [string, string][] = [];
  let end = 0;
  for (const match of text.matchAll(/"(\w+)":\s*"((?:[^"\\]|\\.)*)("?)/g)) {
    fields.push([match[1] as string, unescapeJson(match[2] as string)]);
    end = match.index + match[0].length;
  }
  const rest = text.slice(end);
  const marker = /\[TRUNCATED[^\]]*\]\s*$/.exec(rest)?.[0];
  const last = fields[fields.length - 1];
  if (marker && last) last[1] = `${last[1]}\n${marker.trim()}`;
  return fields;
}

/** A JSON string's escapes undone; one cut off mid-escape keeps what it has. */
function unescapeJson(value: string): string {
  try {
    return JSON.parse(`"${value}"`) as string;
  } catch {
    return value.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
  }
}

/** The session with the warnings for its lines: read with their stray backslashes escaped, or a cut last line left out. */
export function withLineWarnings<S extends { warnings?: string[] }>(session: S, lines: JsonLines): S {
  const warnings: string[] = [];
  const repaired = lines.filter((l) => l.repaired).map((l) => l.line);
  if (repaired.length > 0) {
    const shown =
      repaired.slice(0, 5).join(', ') + (repaired.length > 5 ? `, … (${repaired.length} lines)` : '');
    warnings.push(
      `line${repaired.length === 1 ? '' : 's'} ${shown}: a backslash that escapes nothing JSON knows (\\* as a ` +
        'redaction leaves it) was read as a backslash',
    );
  }
  if (lines.cutLine !== undefined)
    warnings.push(
      `line ${lines.cutLine}: the last line is cut short (the file was copied while it was being written); left out`,
    );
  return warnings.length === 0
    ? session
    : { ...session, warnings: [...(session.warnings ?? []), ...warnings] };
}

/** A JSONL session: the text's lines ({@link parseJsonLines}) imported by `importLines`, with their warnings. */
export function importJsonLines<S extends { warnings?: string[] }>(
  text: string,
  importLines: (lines: JsonLine[]) => S,
): S {
  const lines = parseJsonLines(text);
  return withLineWarnings(importLines(lines), lines);
}
