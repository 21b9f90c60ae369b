import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import { beforeAll, describe, expect, it } from 'vitest';
import { importSession } from '../../../src/importers';
import type { ContextItem } from '../../../src/context/items';
import {
  createTokenCounter,
  encodingForModel,
  MAX_PIECE_CHARS,
  tokenCounterForModel,
  type EncodingName,
} from '../../../src/tokens';
import { meetAtBreak, PartCounter } from '../../../src/context/tokenizer';
import { needsSharedSessions, readSession, SHARED_SESSIONS } from '../../support/sessions';

const o200k = createTokenCounter({ encoding: 'o200k_base' });
const cl100k = createTokenCounter({ encoding: 'cl100k_base' });

// Plain js-tiktoken, the reference. Never given an unbounded run without whitespace: it is
// quadratic on those (seconds for 10,000 identical characters).
const plain: Partial<Record<EncodingName, Tiktoken>> = {};
function reference(encoding: EncodingName): Tiktoken {
  return (plain[encoding] ??= new Tiktoken(encoding === 'o200k_base' ? o200kBase : cl100kBase));
}
const plainCount = (encoding: EncodingName, text: string): number =>
  reference(encoding).encode(text, [], []).length;

/** Deterministic pseudo-random numbers (tests must not depend on Math.random). */
function numbers(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

const MB = 1 << 20;
const ROOT = join(__dirname, '..', '..', '..');

function elapsed(run: () => unknown): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

describe('encodingForModel', () => {
  it.each([
    ['gpt-4o', 'o200k_base'],
    ['gpt-4o-mini-2024-07-18', 'o200k_base'],
    ['gpt-4.1', 'o200k_base'],
    ['gpt-4.1-nano', 'o200k_base'],
    ['gpt-4.5-preview', 'o200k_base'],
    ['gpt-5', 'o200k_base'],
    ['gpt-5-mini', 'o200k_base'],
    ['o1', 'o200k_base'],
    ['o3-mini', 'o200k_base'],
    ['o4-mini', 'o200k_base'],
    ['openai/gpt-oss-120b', 'o200k_base'],
    ['claude-sonnet-4-5', 'o200k_base'],
    ['some-unknown-model', 'o200k_base'],
    ['gpt-4', 'cl100k_base'],
    ['GPT-4', 'cl100k_base'],
    ['gpt-4-0613', 'cl100k_base'],
    ['gpt-4-turbo', 'cl100k_base'],
    ['gpt-4-32k', 'cl100k_base'],
    ['gpt-3.5-turbo', 'cl100k_base'],
    ['gpt-35-turbo', 'cl100k_base'],
    ['azure/gpt-3.5-turbo-0125', 'cl100k_base'],
    ['text-embedding-3-small', 'cl100k_base'],
  ] as const)('%s → %s', (model, encoding) => {
    expect(encodingForModel(model)).toBe(encoding);
    expect(tokenCounterForModel(model).encoding).toBe(encoding);
  });

  it('caches one counter per encoding', () => {
    expect(createTokenCounter({ encoding: 'o200k_base' })).toBe(o200k);
    expect(tokenCounterForModel('gpt-4o')).toBe(o200k);
  });
});

describe('countText agrees with js-tiktoken', () => {
  beforeAll(() => {
    reference('o200k_base');
    reference('cl100k_base');
  });

  const alphabet = [
    'a',
    'b',
    'Z',
    'Hello',
    ' world',
    ' ',
    '  ',
    '\n',
    '\r\n',
    '\t',
    '1',
    '234',
    '.',
    ',',
    '!',
    '?!',
    '...',
    "'s",
    "'LL",
    '-',
    '_',
    '/',
    '{',
    '}',
    '"',
    '\\',
    '中',
    '文字',
    '🙂',
    '👍🏽',
    'é',
    'ñ',
    'ß',
    'Ω',
    '\u0301',
    '<|endoftext|>',
    '\ud800',
  ];
  const texts = fc.array(fc.constantFrom(...alphabet), { maxLength: 80 }).map((parts) => parts.join(''));

  it.each(['o200k_base', 'cl100k_base'] as const)('token for token on generated text (%s)', (encoding) => {
    const counter = encoding === 'o200k_base' ? o200k : cl100k;
    fc.assert(
      fc.property(texts, (text) => {
        expect(counter.encode(text)).toEqual(reference(encoding).encode(text, [], []));
        expect(counter.countText(text)).toBe(plainCount(encoding, text));
      }),
      { numRuns: 400 },
    );
  });

  it('token for token on arbitrary unicode', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (text) => {
        expect(o200k.encode(text)).toEqual(reference('o200k_base').encode(text, [], []));
      }),
      { numRuns: 300 },
    );
  });

  // The contract of `additiveAtBreaks`, checked against js-tiktoken: parts ending in a line break
  // or another character, each followed by a part that starts as a break requires.
  const parts = fc.array(
    fc.tuple(
      texts,
      fc.constantFrom('\n', ',', ')', ':', '\n\n', ' \n', 'a', 'Z', '9', 'é', '中', '🙂', "'", '\u0301', '/'),
      fc.constantFrom('x', '-', 'É', '[', '中', '1'),
    ),
    { minLength: 1, maxLength: 6 },
  );
  it.each(['o200k_base', 'cl100k_base'] as const)('counts add up across breaks (%s)', (encoding) => {
    const counter = encoding === 'o200k_base' ? o200k : cl100k;
    expect(counter.additiveAtBreaks).toBe(true);
    fc.assert(
      fc.property(parts, texts, (list, tail) => {
        // After a line break a break needs no whitespace and no '/'; after anything else, a space.
        const opening = (end: string, start: string): string => (end.endsWith('\n') ? start : ` ${start}`);
        const pieces: string[] = [];
        let end = '\n';
        for (const [text, ending, start] of list) {
          pieces.push(`${opening(end, start)}${text}${ending}`);
          end = ending;
        }
        pieces.push(`${opening(end, 'x')}${tail}`);
        const joined = pieces.join('');
        for (let i = 1; i < pieces.length; i++)
          expect(meetAtBreak(pieces[i - 1] as string, pieces[i] as string)).toBe(true);
        const sum = pieces.reduce((n, piece) => n + plainCount(encoding, piece), 0);
        expect(sum).toBe(plainCount(encoding, joined));
        expect(new PartCounter(counter).count(pieces)).toBe(plainCount(encoding, joined));
      }),
      { numRuns: 400 },
    );
  });

  it('counts parts that do not meet at a break as one text', () => {
    // 'a\n' + ' b': the line break and the space are one piece; 'x,' + 'y': no space after the comma.
    for (const pieces of [
      ['a\n', ' b'],
      ['x,', 'y'],
      ['see\n', '/usr'],
      ['ab', 'cd'],
    ]) {
      expect(meetAtBreak(pieces[0] as string, pieces[1] as string)).toBe(false);
      expect(new PartCounter(o200k).count(pieces)).toBe(plainCount('o200k_base', pieces.join('')));
    }
  });

  it('counts special-token text as ordinary text instead of throwing', () => {
    expect(o200k.countText('<|endoftext|>')).toBe(plainCount('o200k_base', '<|endoftext|>'));
    expect(o200k.countText('')).toBe(0);
  });

  /** Texts of an item as the model sees them: content, tool call names and arguments. */
  function itemTexts(item: ContextItem): string[] {
    if (item.type === 'TOOL_DEFINITIONS') return [JSON.stringify(item.tools)];
    const message = item.message;
    const out: string[] = [];
    if (typeof message.content === 'string') out.push(message.content);
    else if (Array.isArray(message.content)) {
      for (const part of message.content)
        if (part.type === 'text' && typeof part.text === 'string') out.push(part.text);
    }
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) out.push(call.function.name, call.function.arguments);
    }
    return out;
  }

  it.each(SHARED_SESSIONS)(
    'within 1%% of js-tiktoken on every message of %s (o200k_base)',
    needsSharedSessions,
    (name) => {
      const { items } = importSession(readSession(name), { tokenizer: o200k, fileName: name });
      expect(items.length).toBeGreaterThan(10);
      let exact = 0;
      for (const item of items) {
        const parts = itemTexts(item);
        const ours = parts.reduce((n, text) => n + o200k.countText(text), 0);
        const theirs = parts.reduce((n, text) => n + plainCount('o200k_base', text), 0);
        expect(Math.abs(ours - theirs), `item ${item.id}`).toBeLessThanOrEqual(theirs * 0.01);
        if (ours === theirs) exact++;
      }
      // Ordinary text has no run longer than the chunk bound: the counts are exact.
      expect(exact).toBe(items.length);
    },
  );

  it('within 1% on a real session with cl100k_base too', needsSharedSessions, () => {
    const name = 'swe-agent-marshmallow-1867.traj';
    const { items } = importSession(readSession(name), { tokenizer: cl100k, fileName: name });
    for (const item of items) {
      for (const text of itemTexts(item)) {
        const theirs = plainCount('cl100k_base', text);
        expect(Math.abs(cl100k.countText(text) - theirs)).toBeLessThanOrEqual(theirs * 0.01);
      }
    }
  });

  it('token for token after random base64 has overwritten the pair cache', needsSharedSessions, () => {
    // Random bytes make pairs of tokens that ordinary text never has: every one takes a slot of
    // the merger's fixed pair cache. Whatever a slot then holds, counts must not change.
    const random = numbers(11);
    const base64 = Buffer.from(Array.from({ length: 150_000 }, () => Math.floor(random() * 256))).toString(
      'base64',
    );
    const session = readSession('swe-agent-marshmallow-1867.traj').slice(0, 60_000);
    const before = o200k.encode(session);
    expect(o200k.encode(base64)).toEqual(reference('o200k_base').encode(base64, [], []));
    expect(o200k.encode(session)).toEqual(before);
    expect(before).toEqual(reference('o200k_base').encode(session, [], []));
  });

  it('counts alike however its table of remembered pieces has been overwritten', () => {
    // The counter remembers the counts of short pieces in a table of 131,072 slots, each piece in
    // the slot of its hash: 100,000 distinct words overwrite many slots, some several times, and the
    // same words counted again must agree.
    const random = numbers(5);
    const word = (): string =>
      Array.from({ length: 3 + Math.floor(random() * 8) }, () =>
        String.fromCharCode(97 + Math.floor(random() * 26)),
      ).join('');
    const text = Array.from({ length: 100_000 }, word).join(' ');
    const first = o200k.countText(text);
    expect(first).toBe(plainCount('o200k_base', text));
    expect(o200k.countText(text)).toBe(first);
    const head = text.slice(0, 5_000);
    expect(o200k.countText(head)).toBe(plainCount('o200k_base', head));
  });

  it('keeps no text it counted alive', () => {
    // A slice of 13 characters or more is, in V8, a view of the whole text it was cut from: a
    // remembered piece of that length would keep a 1 MB tool output alive per slot. In a child
    // process with the collector exposed: 30 texts of 1 MB, each with a word of its own.
    const dir = mkdtempSync(join(tmpdir(), 'dc-tokens-'));
    const script = join(dir, 'retain.ts');
    writeFileSync(
      script,
      [
        `import { createTokenCounter } from ${JSON.stringify(join(ROOT, 'src', 'tokens', 'index.ts'))};`,
        "const counter = createTokenCounter({ encoding: 'o200k_base' });",
        "counter.countText('warm up the ranks');",
        'const gc = (globalThis as { gc?: () => void }).gc as () => void;',
        'gc();',
        'const before = process.memoryUsage().heapUsed;',
        'for (let i = 0; i < 30; i++) {',
        "  const word = Array.from({ length: 16 }, (_, k) => String.fromCharCode(97 + ((i * 7 + k * 3) % 26))).join('');",
        "  counter.countText(` ${word} ` + 'lorem ipsum dolor '.repeat(60_000) + String(i));",
        '}',
        'gc();',
        'console.log(process.memoryUsage().heapUsed - before);',
      ].join('\n'),
    );
    const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', script], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    // 30 MB of text counted; what stays is the counter's own tables.
    expect(Number(r.stdout.trim()) / MB).toBeLessThan(8);
  });

  it('stays within 1% on bounded runs longer than the chunk bound', () => {
    const random = numbers(7);
    const letters = Array.from({ length: 3 * MAX_PIECE_CHARS }, () =>
      String.fromCharCode(97 + Math.floor(random() * 26)),
    ).join('');
    for (const run of ['a'.repeat(2000), '='.repeat(1500), letters]) {
      const theirs = plainCount('o200k_base', run);
      expect(Math.abs(o200k.countText(run) - theirs)).toBeLessThanOrEqual(theirs * 0.01);
    }
  });
});

describe('countText is linear on pathological input', () => {
  beforeAll(() => {
    o200k.countText('load the ranks before timing');
  });

  const random = numbers(42);
  const bytes = Buffer.from(Array.from({ length: (MB * 3) / 4 }, () => Math.floor(random() * 256)));
  const records = Array.from({ length: 12_000 }, (_, i) => ({
    id: i,
    name: `item-${i}`,
    tags: ['alpha', 'beta'],
    score: i * 1.5,
    ok: i % 3 === 0,
    nested: { path: `/srv/data/${i}.json`, hash: (i * 2654435761).toString(16) },
  }));

  // Generous bounds: a benchmark measures properly; these only catch quadratic behaviour.
  it.each([
    ['1 MB of one repeated character', 'x'.repeat(MB)],
    ['a 1 MB base64 blob', bytes.toString('base64')],
    ['1 MB of minified JSON', JSON.stringify(records).slice(0, MB)],
    ['1 MB of spaces', ' '.repeat(MB)],
    ['1 MB of newlines', '\n'.repeat(MB)],
    ['1 MB of digits', '7'.repeat(MB)],
    ['1 MB of one emoji', '🙂'.repeat(MB / 2)],
    [
      '256 KB of random letters without whitespace',
      Array.from({ length: MB / 4 }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join(''),
    ],
    [
      '256 KB of CJK without punctuation',
      Array.from({ length: MB / 4 }, () => String.fromCharCode(0x4e00 + Math.floor(random() * 3000))).join(
        '',
      ),
    ],
  ])('%s counts in under a second', (_name, text) => {
    expect(text.length).toBeGreaterThanOrEqual(MB / 4);
    let tokens = 0;
    expect(elapsed(() => (tokens = o200k.countText(text)))).toBeLessThan(1000);
    expect(tokens).toBeGreaterThan(0);
  });

  it('one repeated character counts like js-tiktoken counts a bounded run of it', () => {
    // 8 × 'x' is one token in o200k_base; the chunk bound is a multiple of 8.
    expect(plainCount('o200k_base', 'x'.repeat(1024))).toBe(128);
    expect(o200k.countText('x'.repeat(MB))).toBe(MB / 8);
  });

  it('truncates 1 MB without whitespace in under a second', () => {
    let result = { text: '', originalTokens: 0 };
    expect(elapsed(() => (result = o200k.truncate('x'.repeat(MB), 200)))).toBeLessThan(1000);
    expect(result).toEqual({ text: 'x'.repeat(1600), originalTokens: MB / 8 });
  });
});

describe('truncate', () => {
  const alphabet = [
    'a',
    'Zed',
    ' ',
    '\n',
    '7',
    '42',
    '.',
    ',',
    '中',
    '文',
    '🙂',
    'é',
    "'s",
    ' the',
    ' cat',
    '{"k":',
  ];
  const texts = fc.array(fc.constantFrom(...alphabet), { maxLength: 120 }).map((parts) => parts.join(''));

  it('returns a prefix of at most n tokens and the count of the whole text', () => {
    fc.assert(
      fc.property(texts, fc.integer({ min: 0, max: 80 }), (text, n) => {
        const result = o200k.truncate(text, n);
        expect(text.startsWith(result.text)).toBe(true);
        expect(o200k.countText(result.text)).toBeLessThanOrEqual(n);
        expect(result.originalTokens).toBe(o200k.countText(text));
        if (result.originalTokens <= n) expect(result.text).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps exactly the first n tokens of ordinary text', () => {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(20);
    const ids = o200k.encode(text);
    const result = o200k.truncate(text, 17);
    expect(result.text).toBe(reference('o200k_base').decode(ids.slice(0, 17)));
    expect(result.originalTokens).toBe(ids.length);
  });

  it.each([0, -3, 0.5])('a budget of %s gives an empty text', (n) => {
    expect(o200k.truncate('some text', n)).toEqual({ text: '', originalTokens: 2 });
  });

  it('never ends inside a character', () => {
    const text = '🙂中文é'.repeat(50);
    for (let n = 1; n < 40; n++) {
      const { text: cut } = o200k.truncate(text, n);
      expect(cut).not.toMatch(/[\ud800-\udbff]$/);
      expect(text.startsWith(cut)).toBe(true);
    }
  });

  it('truncateToTokens is the same operation', () => {
    expect(o200k.truncateToTokens('one two three four', 2)).toEqual(o200k.truncate('one two three four', 2));
  });
});

describe('message, tools and request counts', () => {
  const t = (text: string): number => o200k.countText(text);

  it('a message costs its content plus 3 tokens of framing', () => {
    expect(o200k.countMessage({ role: 'user', content: 'Hello there' })).toBe(3 + t('Hello there'));
    expect(o200k.countMessage({ role: 'user', content: 'Hi', name: 'alice' })).toBe(
      3 + t('Hi') + 1 + t('alice'),
    );
  });

  it('tool calls cost their name, arguments and 3 tokens each', () => {
    const message = {
      role: 'assistant' as const,
      content: null,
      tool_calls: [
        { id: 'c1', type: 'function' as const, function: { name: 'read', arguments: '{"path":"a.ts"}' } },
        { id: 'c2', type: 'function' as const, function: { name: 'bash', arguments: '{"command":"ls"}' } },
      ],
      reasoning_content: 'not sent, not counted',
    };
    expect(o200k.countMessage(message)).toBe(
      3 + (3 + t('read') + t('{"path":"a.ts"}')) + (3 + t('bash') + t('{"command":"ls"}')),
    );
  });

  it('a tool message is counted without its internal name', () => {
    expect(o200k.countMessage({ role: 'tool', content: 'ok', tool_call_id: 'c1', name: 'read' })).toBe(
      3 + t('ok'),
    );
  });

  it('a request adds the reply priming and the tools', () => {
    const messages = [
      { role: 'system' as const, content: 'You are terse.' },
      { role: 'user' as const, content: 'Hi' },
    ];
    const tools = [{ type: 'function' as const, function: { name: 'noop', description: 'Does nothing.' } }];
    expect(o200k.countRequest({ messages })).toBe(
      o200k.countMessage(messages[0]!) + o200k.countMessage(messages[1]!) + 3,
    );
    expect(o200k.countRequest({ messages, tools })).toBe(
      o200k.countRequest({ messages }) + o200k.countTools(tools),
    );
    expect(o200k.countTools(tools)).toBe(12 + 7 + t('noop:Does nothing'));
  });
});
