/**
 * The encodings' pre-split patterns written out for ASCII text: the same pieces as the regular
 * expressions (`encodings.ts`), found with a table of character classes instead of a Unicode-aware
 * regular expression, which is most of the time of counting plain text (code, logs, JSON, English).
 * Around a character beyond ASCII the regular expression splits, one piece at a time.
 *
 * Each splitter follows its pattern's alternatives in order; the comments name the one a branch
 * stands for. With ASCII only, `\p{L}` is `[A-Za-z]` (`\p{Lu}` the capitals, `\p{Ll}` the small
 * letters; no `\p{Lt}`, `\p{Lm}`, `\p{Lo}`, `\p{M}`), `\p{N}` is `[0-9]`, and `\s` is
 * `[\t\n\v\f\r ]`. `test/unit/sessions/tokens.test.ts` checks the pieces against the patterns'.
 */

/**
 * Where the piece that starts at `start` ends, reading no character at or after `limit` (the
 * first one beyond ASCII, or the text's length); -1 when one of those would decide it.
 */
export type PieceEnd = (text: string, start: number, limit: number) => number;

const UPPER = 1;
const LOWER = 2;
const DIGIT = 3;
const NEWLINE = 4;
const SPACE = 5;
const OTHER = 6;

/** The class of each ASCII character. */
const CLASS = new Uint8Array(128).fill(OTHER);
for (let c = 65; c <= 90; c++) CLASS[c] = UPPER;
for (let c = 97; c <= 122; c++) CLASS[c] = LOWER;
for (let c = 48; c <= 57; c++) CLASS[c] = DIGIT;
for (const c of [9, 11, 12, 32]) CLASS[c] = SPACE;
CLASS[10] = NEWLINE;
CLASS[13] = NEWLINE;

const APOSTROPHE = 39;
const SLASH = 47;

function classAt(text: string, at: number): number {
  return CLASS[text.charCodeAt(at)] as number;
}

function isLetter(cls: number): boolean {
  return cls === UPPER || cls === LOWER;
}

/** Index of the first character beyond ASCII at or after `from`, or the text's length. */
export function nonAsciiFrom(text: string, from: number): number {
  let i = from;
  while (i < text.length && text.charCodeAt(i) <= 0x7f) i++;
  return i;
}

/** End of `'s|'t|'re|'ve|'m|'ll|'d` (any case) at `at`, or `at` when there is none. */
function contractionEnd(text: string, at: number): number {
  if (text.charCodeAt(at) !== APOSTROPHE) return at;
  const first = text.charCodeAt(at + 1) | 0x20;
  // s, t, m, d
  if (first === 0x73 || first === 0x74 || first === 0x6d || first === 0x64) return at + 2;
  const second = text.charCodeAt(at + 2) | 0x20;
  // re, ve, ll
  if ((first === 0x72 || first === 0x76) && second === 0x65) return at + 3;
  if (first === 0x6c && second === 0x6c) return at + 3;
  return at;
}

/** End of a run of characters of one class from `at`, before `limit`. */
function runEnd(text: string, at: number, cls: number, limit: number): number {
  let end = at;
  while (end < limit && classAt(text, end) === cls) end++;
  return end;
}

/**
 * The piece at `start` (a character before `limit`) of the patterns, which share all but their
 * letters and contractions: `cased` (o200k_base) takes the capitals, then the small letters and a
 * contraction after them; otherwise (cl100k_base) a contraction is a piece of its own and letters
 * run whatever their case. `slash`: `/` follows the symbols' line breaks (o200k_base).
 */
function pieceEnd(text: string, start: number, limit: number, cased: boolean, slash: boolean): number {
  // Characters from `limit` on are beyond ASCII: a run that reaches them is for the pattern to end.
  const open = limit < text.length;
  if (!cased) {
    // ('s|'t|'re|'ve|'m|'ll|'d)
    const contraction = contractionEnd(text, start);
    if (contraction > start) return contraction;
  }
  const cls = classAt(text, start);
  const code = text.charCodeAt(start);
  // [^\r\n\p{L}\p{N}]? then the letters
  let letters = isLetter(cls) ? start : -1;
  if (letters < 0 && (cls === SPACE || cls === OTHER)) {
    if (start + 1 >= limit) {
      if (open) return -1;
    } else if (isLetter(classAt(text, start + 1))) {
      letters = start + 1;
    }
  }
  if (letters >= 0) {
    const end = cased
      ? runEnd(text, runEnd(text, letters, UPPER, limit), LOWER, limit)
      : lettersEnd(text, letters, limit);
    if (end === limit && open) return -1;
    return cased ? contractionEnd(text, end) : end;
  }
  // \p{N}{1,3}
  if (cls === DIGIT) {
    let end = start + 1;
    while (end < limit && end < start + 3 && classAt(text, end) === DIGIT) end++;
    return end === limit && end < start + 3 && open ? -1 : end;
  }
  // ` ?[^\s\p{L}\p{N}]+[\r\n/]*` (cl100k_base: `[\r\n]*`)
  const symbols = cls === OTHER ? start : code === 32 && classAt(text, start + 1) === OTHER ? start + 1 : -1;
  if (symbols >= 0) {
    let end = runEnd(text, symbols, OTHER, limit);
    if (end === limit && open) return -1;
    for (; end < limit; end++) {
      const next = text.charCodeAt(end);
      if (!(next === 10 || next === 13 || (slash && next === SLASH))) break;
    }
    return end;
  }
  // \s*[\r\n]+ | \s+(?!\S) | \s+
  let end = start;
  let lastNewline = -1;
  for (; end < limit; end++) {
    const next = classAt(text, end);
    if (next === NEWLINE) lastNewline = end;
    else if (next !== SPACE) break;
  }
  if (end === limit && open) return -1;
  // Up to the run's last line break; else the run at the text's end, or all of it but the last
  // character (which goes with what follows), or its only character.
  if (lastNewline >= 0) return lastNewline + 1;
  return end === text.length || end - start === 1 ? end : end - 1;
}

/** End of a run of letters of any case from `at`, before `limit`. */
function lettersEnd(text: string, at: number, limit: number): number {
  let end = at;
  while (end < limit && isLetter(classAt(text, end))) end++;
  return end;
}

const o200kPieceEnd: PieceEnd = (text, start, limit) => pieceEnd(text, start, limit, true, true);
const cl100kPieceEnd: PieceEnd = (text, start, limit) => pieceEnd(text, start, limit, false, false);

/**
 * The encodings' patterns as js-tiktoken gives them, and their ASCII splitters. Written out, not
 * read from js-tiktoken: should its pattern ever change, the splitter no longer matches it and the
 * pattern splits, as it must.
 */
const SPLITTERS: Record<string, PieceEnd> = {
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+":
    o200kPieceEnd,
  "('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+":
    cl100kPieceEnd,
};

/** The ASCII splitter of a pattern (its source), or null when it has none: the pattern splits. */
export function asciiSplitter(patternSource: string): PieceEnd | null {
  return SPLITTERS[patternSource] ?? null;
}
