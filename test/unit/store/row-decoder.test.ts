/**
 * Row decoders (src/store/row-decoder.ts, src/store/rows.ts): a row as pg returns it is checked
 * column by column and returned typed, or refused naming the row, the column and what it held —
 * never its text. No PostgreSQL: the rows are written here as pg would parse them.
 */
import { describe, expect, it } from 'vitest';
import { MalformedRowError, malformed, StoredRowError } from '../../../src/store/errors';
import { firstRow, jsonObject, rowDecoder } from '../../../src/store/row-decoder';
import { itemColumns, rowToItem } from '../../../src/store/rows';

const decodeVersion = rowDecoder(
  {
    version: 'int',
    status: ['active', 'staged'],
    base_version: 'int?',
    seq: 'bigint',
    rank: 'float',
    ended: 'bool',
    created_at: 'timestamp',
  },
  malformed('context version'),
);

const good = {
  version: 3,
  status: 'staged',
  base_version: null,
  seq: '12',
  rank: 0.5,
  ended: false,
  created_at: new Date(0),
};

describe('rowDecoder', () => {
  it('returns a row of the declared types as it is, extra columns included', () => {
    const row = { ...good, extra: 'kept' };
    expect(decodeVersion(row)).toBe(row);
  });

  it.each([
    ['an int column holding text', { version: '3' }, 'column version: expected int, got a string'],
    ['an int column holding a fraction', { version: 2.5 }, 'column version: expected int, got a number'],
    ['a status outside its list', { status: 'lost' }, 'column status: expected active|staged, got "lost"'],
    ['null in a column that may not be null', { version: null }, 'column version: expected int, got null'],
    ['int8 that is not decimal text', { seq: 12 }, 'column seq: expected bigint, got a number'],
    ['a bool column holding text', { ended: 'f' }, 'column ended: expected bool, got a string'],
    [
      'a timestamp held as text',
      { created_at: '1970-01-01' },
      'column created_at: expected timestamp, got a string',
    ],
    [
      'a column the statement did not select',
      { rank: undefined },
      'column rank: expected float, got nothing (no such column)',
    ],
  ])('refuses %s', (_, change, problem) => {
    const decode = () => decodeVersion({ ...good, ...change });
    expect(decode).toThrow(MalformedRowError);
    expect(decode).toThrow(`stored context version is malformed: ${problem}`);
  });

  it('firstRow decodes the first row, or gives undefined for none', () => {
    expect(firstRow([good], decodeVersion)?.version).toBe(3);
    expect(firstRow([], decodeVersion)).toBeUndefined();
  });
});

describe('jsonObject', () => {
  const fail = (problem: string) => new MalformedRowError('compaction c-1', `timings: ${problem}`);

  it('parses a stored object', () => {
    expect(jsonObject('{"summary":12}', fail)).toStrictEqual({ summary: 12 });
  });

  it.each([
    ['text that is not JSON', '{"summary":', /^stored compaction c-1 is malformed: timings: not JSON/],
    ['JSON that is not an object', '42', 'stored compaction c-1 is malformed: timings: not a JSON object'],
  ])('refuses %s', (_, text, message) => {
    expect(() => jsonObject(text, fail)).toThrow(message);
  });
});

describe('rowToItem', () => {
  const item = {
    id: 'c:1',
    type: 'USER_MESSAGE' as const,
    message: { role: 'user' as const, content: 'hi' },
    tokens: 4,
    round: 1,
    isMeta: false,
    pinned: false,
    ephemeral: false,
  };
  const row = {
    id: item.id,
    conversation_id: 'c',
    seq: '1',
    tokens: item.tokens,
    round: item.round,
    is_meta: false,
    pinned: false,
    ephemeral: false,
    source_id: null,
    ...itemColumns(item),
  };

  it('reads back the item a row was written from', () => {
    expect(rowToItem(row)).toStrictEqual(item);
  });

  it('refuses a row whose column is of another type, naming the item and the column', () => {
    const decode = () => rowToItem({ ...row, tokens: '4' });
    expect(decode).toThrow(StoredRowError);
    expect(decode).toThrow(
      'stored item c:1 is not a valid context item: column tokens: expected int, got a string',
    );
  });

  it('refuses attrs that are JSON but not an object', () => {
    expect(() => rowToItem({ ...row, attrs: 'null' })).toThrow(
      'stored item c:1 is not a valid context item: attrs is not an object',
    );
  });
});
