/**
 * Recall probes (issue 24, `eval`): what a compaction removed, as strings with the query a model
 * would write, and the handles and lexemes recall finds them by. Pure: no store.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { handleDigits, handleOf, sha256Hex } from '../../../src/context/recall-handle';
import { recallProbes } from '../../../src/eval/recall-probes';
import { queryTerms, searchVector, wordLexemes } from '../../../src/store/search-terms';
import { searchTexts } from '../../../src/store/search-document';
import { conversation, itemsFactory } from '../../support/items-factory';

const fileLines = (n: number): string =>
  Array.from({ length: n }, (_, i) => `export const rate${i} = computeBracket(${i}, "band ${i}");`).join(
    '\n',
  );

describe('recallProbes', () => {
  const f = itemsFactory();
  const read = f.block('read_file', { path: 'src/tax.ts' }, fileLines(9));
  const failing = f.block(
    'bash',
    { command: 'npm test' },
    'FAIL src/tax.test.ts\nError: expected 1.2 to equal 1.25 in applyTax',
  );
  const built = f.block(
    'bash',
    { command: 'npm run build' },
    'compiled 42 modules into dist/bundle.js\nbuild finished in 3 seconds',
  );
  const kept = f.user('now fix it');
  const before = conversation(f.user('task'), read, failing, built, kept);

  it('a read file by its path, an error by its words, a command output by the command', () => {
    const after = [before[0]!, kept];
    expect(recallProbes(before, after)).toStrictEqual([
      {
        kind: 'file_line',
        query: 'src/tax.ts',
        expected: 'export const rate4 = computeBracket(4, "band 4");',
        itemId: read[1].id,
      },
      {
        kind: 'error',
        query: 'Error: expected 1.2 to equal 1.25 in applyTax',
        expected: 'Error: expected 1.2 to equal 1.25 in applyTax',
        itemId: failing[1].id,
      },
      {
        kind: 'command_output',
        query: 'npm run build',
        expected: 'build finished in 3 seconds',
        itemId: built[1].id,
      },
    ]);
  });

  it('nothing kept in the context after is a probe', () => {
    expect(recallProbes(before, before)).toStrictEqual([]);
  });
});

describe('handles and lexemes', () => {
  it('a handle is # and 6 hex digits of the SHA-256 of the id; typed forms are read back', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(handleOf('abc')).toBe('#ba7816');
    expect(handleDigits(' #BA7816 ')).toBe('ba7816');
    expect(handleDigits('#ba7')).toBeNull();
    expect(handleDigits('#xyz123')).toBeNull();
  });

  it("the written-out SHA-256 agrees with Node's on empty, block-edge, multi-block and non-ASCII texts", () => {
    const texts = [
      '',
      'a',
      'x'.repeat(55),
      'x'.repeat(56),
      'x'.repeat(64),
      'y'.repeat(1000),
      'é€😀 ids',
      '\ud800',
    ];
    for (let n = 0; n < 200; n++)
      texts.push(String.fromCharCode(...Array.from({ length: n }, (_, i) => 32 + ((i * 7919 + n) % 2000))));
    for (const text of texts)
      expect(sha256Hex(text), JSON.stringify(text)).toBe(
        createHash('sha256').update(text, 'utf8').digest('hex'),
      );
  });

  it.each([
    [
      '/repo/src/tax.ts',
      ['/repo/src/tax.ts', 'repo/src/tax.ts', 'src/tax.ts', 'tax.ts', 'repo', 'src', 'tax', 'ts'],
    ],
    ['applyTax', ['applytax', 'apply', 'tax']],
    ['snake_case_name', ['snake_case_name', 'snake', 'case', 'name']],
    ['TS2345', ['ts2345', 'ts', '2345']],
    ['ENOENT', ['enoent']],
  ])('%s → %j', (word, lexemes) => {
    const found = new Set(wordLexemes(word.replace(/^\//, '')));
    for (const l of lexemes.filter((x) => !x.startsWith('/'))) expect(found.has(l)).toBe(true);
  });

  it('a query keeps its words, drops stop words; a vector is quoted input for ::tsvector', () => {
    expect(queryTerms('the error in src/tax.ts')).toStrictEqual({
      all: ['error', 'src/tax.ts'],
      any: ['error', 'src/tax.ts', 'tax.ts', 'src', 'tax', 'ts'],
    });
    expect(searchVector([{ text: "it's a\\b", weight: 'A' }])).toBe("'it':1A 's':2A 'a':3A 'b':4A");
    expect(searchVector([{ text: '  ', weight: 'D' }])).toBeNull();
  });

  it('a tool result is found by the path its call read (A), the call (B) and its text (D)', () => {
    const f = itemsFactory();
    const [call, result] = f.block('read_file', { path: 'src/tax.ts' }, 'body');
    const tc = call.message.tool_calls?.[0];
    expect(searchTexts(result, tc)).toStrictEqual([
      { text: 'src/tax.ts', weight: 'A' },
      { text: 'read_file {"path":"src/tax.ts"}', weight: 'B' },
      { text: 'body', weight: 'D' },
    ]);
    // Cut forms and recall's own results are never searched.
    expect(searchTexts({ ...result, sourceId: 'x' }, tc)).toStrictEqual([]);
    expect(
      searchTexts(
        { ...result, message: { ...result.message, name: 'recall' } },
        { ...tc!, function: { name: 'recall', arguments: '{}' } },
      ),
    ).toStrictEqual([]);
  });
});
