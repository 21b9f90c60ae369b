/**
 * How `recall` tokenizes (issue 24): the lexemes of an archived item's `search` tsvector and of a
 * query, made here so that both sides agree exactly and PostgreSQL only stores, indexes (GIN) and
 * ranks them. PostgreSQL's own parsers would split `src/tax.ts`, fold `applyTax` into one word and
 * know nothing of `snake_case`; an agent searches for exactly those.
 *
 * A word is a run of letters, digits and `_`, joined by `.`, `/`, `-` or `:` (`src/tax.ts`,
 * `foo-bar`, `std::vec`, `TS2345`). Each word gives, lower-cased: the word; for a path, its last
 * segments (`repo/src/tax.ts` → `src/tax.ts`, `tax.ts`), so a path is found however it was
 * written; and its parts, split at punctuation, `_`, camelCase and letter–digit boundaries
 * (`applyTax` → `apply`, `tax`; `TS2345` → `ts`, `2345`). Every lexeme of a word shares its
 * position. Positions and sizes are capped to PostgreSQL's tsvector limits (16,383 positions,
 * 1 MB a vector), so a huge item is indexed up to {@link MAX_VECTOR_BYTES}.
 *
 * Pure module.
 */

/**
 * tsvector weights (ts_rank's defaults give them 1, 0.4, 0.2, 0.1): A for the paths a tool result
 * holds the content of (its call read them), B for the rest of a result's call (tool name, command,
 * arguments), C for a call's arguments in the assistant message that makes it, D for text.
 */
export type Weight = 'A' | 'B' | 'C' | 'D';

/** A text of an item with the weight its lexemes get. */
export interface WeightedText {
  text: string;
  weight: Weight;
}

const WORD = /[\p{L}\p{N}_]+(?:[./:-]+[\p{L}\p{N}_]+)*/gu;
/** Longest lexeme kept (a longer word still gives its parts). */
const MAX_LEXEME_CHARS = 96;
/** PostgreSQL's largest position. */
const MAX_POSITION = 16_383;
/** Positions kept per lexeme (PostgreSQL keeps 256; ranking needs few). */
const MAX_POSITIONS = 16;
/** Estimated bytes of a vector at which no new lexeme is added (PostgreSQL refuses 1 MB). */
export const MAX_VECTOR_BYTES = 600_000;

/** Words too common to tell items apart; left out of queries (items keep them). */
const STOP_WORDS = new Set(
  'a an and are as at be but by for from has have i if in into is it its of on or that the this to was were will with you'.split(
    ' ',
  ),
);

/** The parts of a word: split at punctuation and `_`, camelCase and letter–digit boundaries; lower-cased. */
function partsOf(word: string): string[] {
  return word
    .split(/[./:_-]+/)
    .flatMap((piece) =>
      piece
        .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
        .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
        .replace(/(\p{L})(\p{N})/gu, '$1 $2')
        .replace(/(\p{N})(\p{L})/gu, '$1 $2')
        .split(' '),
    )
    .filter((p) => p.length > 0)
    .map((p) => p.toLowerCase());
}

/** The lexemes of one word, the word itself first. */
export function wordLexemes(word: string): string[] {
  const lower = word.toLowerCase();
  const out = new Set<string>();
  if (lower.length <= MAX_LEXEME_CHARS) out.add(lower);
  if (lower.includes('/')) {
    const segments = lower.split('/').filter((s) => s.length > 0);
    // The last segments of a path: `src/tax.ts` and `tax.ts` of `/repo/src/tax.ts`.
    for (let i = Math.max(1, segments.length - 3); i < segments.length; i++) {
      const suffix = segments.slice(i).join('/');
      if (suffix.length <= MAX_LEXEME_CHARS) out.add(suffix);
    }
  }
  for (const part of partsOf(word)) if (part.length <= MAX_LEXEME_CHARS) out.add(part);
  return [...out];
}

/** The words of a text, in order. */
export function wordsOf(text: string): string[] {
  return text.match(WORD) ?? [];
}

/** The tsvector literal quoting of a lexeme: in quotes, quotes and backslashes doubled. */
function quote(lexeme: string): string {
  return `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/**
 * The `search` tsvector of an item, in PostgreSQL's input syntax (`'lexeme':1A,7`), or null when
 * there is nothing to index. Passed as a parameter (`$n::tsvector`), never spliced into SQL.
 */
export function searchVector(texts: readonly WeightedText[]): string | null {
  // Per lexeme, its positions with their weights (`3A`, `7`): a word keeps the weight of its text.
  const entries = new Map<string, { positions: string[]; last: number }>();
  let position = 0;
  let bytes = 0;
  for (const { text, weight } of texts) {
    for (const word of wordsOf(text)) {
      position = Math.min(position + 1, MAX_POSITION);
      for (const lexeme of wordLexemes(word)) {
        const at = `${position}${weight === 'D' ? '' : weight}`;
        const known = entries.get(lexeme);
        if (known) {
          if (known.positions.length < MAX_POSITIONS && known.last !== position) {
            known.positions.push(at);
            known.last = position;
            bytes += 2;
          }
          continue;
        }
        if (bytes >= MAX_VECTOR_BYTES) continue;
        entries.set(lexeme, { positions: [at], last: position });
        bytes += new TextEncoder().encode(lexeme).length + 8;
      }
    }
  }
  if (entries.size === 0) return null;
  const parts: string[] = [];
  for (const [lexeme, { positions }] of entries) parts.push(`${quote(lexeme)}:${positions.join(',')}`);
  return parts.join(' ');
}

/** A query's lexemes: `all` from its words (each must match for the best rank), `any` with their parts. */
export interface QueryTerms {
  /** One lexeme per word of the query (stop words left out). */
  all: string[];
  /** Every lexeme of the query's words (the word, path suffixes, parts), stop words left out. */
  any: string[];
}

/** The terms of a query, or empty lists when it has no word to search for. */
export function queryTerms(query: string): QueryTerms {
  const all = new Set<string>();
  const any = new Set<string>();
  for (const word of wordsOf(query)) {
    const lexemes = wordLexemes(word).filter((l) => !STOP_WORDS.has(l));
    const [first] = lexemes;
    if (first === undefined) continue;
    all.add(first);
    for (const l of lexemes) any.add(l);
  }
  return { all: [...all], any: [...any] };
}

/** A tsquery literal joining the lexemes with `&` or `|` (quoted: no operator survives inside). */
export function tsqueryLiteral(lexemes: readonly string[], op: '&' | '|'): string {
  return lexemes.map(quote).join(` ${op} `);
}
