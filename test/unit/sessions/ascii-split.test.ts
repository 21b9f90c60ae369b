/**
 * The encodings' split patterns written out for ASCII (`src/tokens/ascii-split.ts`) against the
 * patterns themselves: the same pieces on any ASCII text, and the same tokens as js-tiktoken where
 * ASCII and other characters mix (there the counter switches between the two, piece by piece).
 */
import fc from 'fast-check';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import { describe, expect, it } from 'vitest';
import { asciiSplitter, nonAsciiFrom } from '../../../src/tokens/ascii-split';
import { createTokenCounter, type EncodingName } from '../../../src/tokens';
import { loadEncoding } from '../../../src/tokens/encodings';

const FILES = { o200k_base: o200kBase, cl100k_base: cl100kBase } as const;
const ENCODINGS = Object.keys(FILES) as EncodingName[];

function patternPieces(encoding: EncodingName, text: string): string[] {
  return [...text.matchAll(new RegExp(FILES[encoding].pat_str, 'gu'))].map((m) => m[0]);
}

function splitterPieces(encoding: EncodingName, text: string): string[] {
  const end = asciiSplitter(FILES[encoding].pat_str);
  if (end === null) throw new Error(`no splitter for ${encoding}`);
  const pieces: string[] = [];
  for (let start = 0; start < text.length;) {
    const stop = end(text, start, text.length);
    if (stop <= start) throw new Error(`no progress at ${start}`);
    pieces.push(text.slice(start, stop));
    start = stop;
  }
  return pieces;
}

/** Fragments where the patterns' alternatives meet: letters and cases, contractions, spaces, symbols. */
const ASCII_PARTS = [
  'a',
  'Z',
  'word',
  'WORD',
  'Word',
  'wORD',
  'x1',
  '1',
  '1234',
  "'",
  "'s",
  "'S",
  "'t",
  "'re",
  "'Re",
  "'vE",
  "'m",
  "'ll",
  "'lL",
  "'l",
  "'d",
  "'x",
  ' ',
  '  ',
  '   ',
  '\t',
  '\v',
  '\f',
  '\n',
  '\r',
  '\r\n',
  ' \n',
  '\n\n',
  '/',
  '//',
  '.',
  '(',
  ')',
  '-',
  '_',
  '"',
  '\\',
  '{}',
  '\u0000',
  '\u001f',
  '\u007f',
];
const asciiText = fc.oneof(
  fc.array(fc.constantFrom(...ASCII_PARTS), { maxLength: 60 }).map((parts) => parts.join('')),
  fc.string({ unit: 'binary-ascii', maxLength: 60 }),
);
/** ASCII fragments with characters beyond ASCII among them: letters, spaces, symbols, digits. */
const mixedText = fc
  .array(
    fc.constantFrom(...ASCII_PARTS, 'é', 'É', 'ß', '中文', '\u00a0', '\u2003', '\u0301', '€', '٣', '🙂'),
    {
      maxLength: 60,
    },
  )
  .map((parts) => parts.join(''));

describe('ASCII splitters', () => {
  it.each(ENCODINGS)('give the pattern’s pieces on any ASCII text (%s)', (encoding) => {
    fc.assert(
      fc.property(asciiText, (text) => {
        expect(splitterPieces(encoding, text)).toEqual(patternPieces(encoding, text));
      }),
      { numRuns: 3000 },
    );
  });

  it.each(ENCODINGS)('give js-tiktoken’s tokens where ASCII and other characters mix (%s)', (encoding) => {
    const counter = createTokenCounter({ encoding });
    const reference = new Tiktoken(FILES[encoding]);
    fc.assert(
      fc.property(mixedText, (text) => {
        expect(counter.encode(text)).toEqual(reference.encode(text, [], []));
        expect(counter.countText(text)).toBe(reference.encode(text, [], []).length);
      }),
      { numRuns: 1500 },
    );
  });

  it.each(ENCODINGS)('end each piece where the pattern does, or leave it to the pattern (%s)', (encoding) => {
    const end = asciiSplitter(FILES[encoding].pat_str);
    if (end === null) throw new Error(`no splitter for ${encoding}`);
    let decided = 0;
    let left = 0;
    fc.assert(
      fc.property(mixedText, (text) => {
        let start = 0;
        for (const piece of patternPieces(encoding, text)) {
          const wide = nonAsciiFrom(text, start);
          if (start < wide) {
            const stop = end(text, start, wide);
            if (stop === -1) left++;
            else {
              decided++;
              expect(stop, `${JSON.stringify(text)} at ${start}`).toBe(start + piece.length);
            }
          }
          start += piece.length;
        }
      }),
      { numRuns: 1500 },
    );
    // Both ways were taken.
    expect(decided).toBeGreaterThan(1000);
    expect(left).toBeGreaterThan(10);
  });

  it.each(ENCODINGS)(
    'leave to the pattern a piece that a character beyond ASCII decides (%s)',
    (encoding) => {
      const counter = createTokenCounter({ encoding });
      const reference = new Tiktoken(FILES[encoding]);
      // Runs of whitespace, letters, digits and symbols that go on past ASCII, and prefixes before it.
      for (const text of [
        '\n  \u00a0\n',
        'x \u2003 y',
        'ab\u00e9cd',
        'ABC\u00c9',
        '12\u0663',
        '1\u0663\u0664',
        '((\u20ac)',
        ' \u00e9',
        "'\u00e9",
        "it'\u00e9",
      ]) {
        expect(counter.encode(text), JSON.stringify(text)).toEqual(reference.encode(text, [], []));
      }
    },
  );

  it('exist for the encodings the project counts with, not for other patterns', () => {
    for (const encoding of ENCODINGS) {
      expect(asciiSplitter(FILES[encoding].pat_str)).not.toBeNull();
      // The counter looks it up by its regular expression's source.
      expect(asciiSplitter(loadEncoding(encoding).pattern.source)).toBe(
        asciiSplitter(FILES[encoding].pat_str),
      );
    }
    expect(asciiSplitter('\\s+|\\S+')).toBeNull();
  });

  it('find the next character beyond ASCII', () => {
    expect(nonAsciiFrom('abc', 0)).toBe(3);
    expect(nonAsciiFrom('abé dé', 0)).toBe(2);
    expect(nonAsciiFrom('abé dé', 3)).toBe(5);
    expect(nonAsciiFrom('', 0)).toBe(0);
  });
});
