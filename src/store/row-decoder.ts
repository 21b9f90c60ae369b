/**
 * Rows as pg returns them (`QueryResultRow`, every column `any`) turned into typed rows: a decoder
 * checks each column's JavaScript type against the type its migration declares and returns the
 * row typed, or throws naming the row, the column and what it held instead. The checks are a
 * `typeof` per column (a short regex for int8, `includes` for a status) — reading the active
 * context runs them for every item before each model call — and the row is returned as it is, not
 * copied.
 */
import type { QueryResultRow } from 'pg';

/** Values as pg's default parsers return them; `bigint` (int8) comes back as its decimal text. */
interface ColumnValues {
  text: string;
  int: number;
  float: number;
  bigint: string;
  bool: boolean;
  timestamp: Date;
}

type ColumnType = keyof ColumnValues;

/** A column's type (`?` when it may be null), or the values a checked text column may hold. */
export type ColumnSpec = ColumnType | `${ColumnType}?` | readonly string[];

type ValueOf<S> = S extends readonly (infer V)[]
  ? V
  : S extends `${infer T extends ColumnType}?`
    ? ColumnValues[T] | null
    : S extends ColumnType
      ? ColumnValues[S]
      : never;

/** The typed row a spec decodes to. */
export type RowOf<Spec extends Record<string, ColumnSpec>> = {
  -readonly [C in keyof Spec]: ValueOf<Spec[C]>;
};

const checks: { [T in ColumnType]: (value: unknown) => boolean } = {
  text: (v) => typeof v === 'string',
  int: (v) => Number.isInteger(v),
  float: (v) => typeof v === 'number',
  bigint: (v) => typeof v === 'string' && /^-?\d+$/.test(v),
  bool: (v) => typeof v === 'boolean',
  timestamp: (v) => v instanceof Date,
};

/** What a column held, for the error: its type, or the text of a status (never a body). */
function shown(value: unknown, statusColumn: boolean): string {
  if (value === undefined) return 'nothing (no such column)';
  if (value === null) return 'null';
  if (statusColumn && typeof value === 'string') return JSON.stringify(value);
  return value instanceof Date ? 'a Date' : `a ${typeof value}`;
}

/**
 * A decoder of rows with the columns of `spec`. Extra columns pass through unchecked.
 * @param fail makes the error for a malformed row from the row and what is wrong with it
 * ("column tokens: expected int, got a string")
 */
export function rowDecoder<const Spec extends Record<string, ColumnSpec>>(
  spec: Spec,
  fail: (row: QueryResultRow, problem: string) => Error,
): (row: QueryResultRow) => RowOf<Spec> {
  const columns = Object.entries(spec).map(([name, s]) => {
    if (typeof s !== 'string') {
      const check = (v: unknown) => s.includes(v as string);
      return { name, nullable: false, check, expected: s.join('|'), status: true };
    }
    const nullable = s.endsWith('?');
    const type = (nullable ? s.slice(0, -1) : s) as ColumnType;
    return { name, nullable, check: checks[type], expected: s, status: false };
  });
  return (row) => {
    for (const c of columns) {
      const value: unknown = row[c.name];
      if (value === null ? c.nullable : c.check(value)) continue;
      throw fail(row, `column ${c.name}: expected ${c.expected}, got ${shown(value, c.status)}`);
    }
    return row as RowOf<Spec>;
  };
}

/** The first row of `rows`, decoded; undefined when there is none. */
export function firstRow<R>(rows: QueryResultRow[], decode: (row: QueryResultRow) => R): R | undefined {
  const row = rows[0];
  return row === undefined ? undefined : decode(row);
}

/**
 * A JSON object stored as text (a compaction's `timings`, an event's `data`).
 * @param fail makes the error when the text is not a JSON object
 */
export function jsonObject(text: string, fail: (problem: string) => Error): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw fail(`not JSON (${(err as Error).message})`);
  }
  if (typeof value !== 'object' || value === null) throw fail('not a JSON object');
  return value as Record<string, unknown>;
}
