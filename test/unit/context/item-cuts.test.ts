/**
 * Cuts of single items (`item-cuts.ts`): each field of an item is cut once, and a form with one
 * field cut can have the other cut by a later compaction (a reply's reasoning cut while its call
 * waited for its result, its arguments cut once the result came in); every cut form points at the
 * original, and is no larger than its plan said.
 */
import { describe, expect, it } from 'vitest';
import { parseCompactionConfig } from '../../../src/context/config';
import { ELISION_LINE, planCut, planPreview, planReasoning } from '../../../src/context/item-cuts';
import { framingTokens, withFacts } from '../../../src/context/item-facts';
import type { AssistantMessageItem, ContextItem, ToolResultItem } from '../../../src/context/items';
import { MESSAGE_OVERHEAD_TOKENS } from '../../../src/context/token-accounting';
import { messageText } from '../../../src/context/items';
import { createTokenCounter } from '../../../src/tokens';
import { itemsFactory, words } from '../../support/items-factory';

const o200k = createTokenCounter({ encoding: 'o200k_base' });
const config = parseCompactionConfig({ maxContextTokens: 8000 });
const MARKER = /\n\[TRUNCATED original~\d+ tokens; recall #[0-9a-f]+\]$/;

/** A reply with 2,000 tokens of reasoning and a call with 2,000 tokens of arguments. */
function reply(): AssistantMessageItem {
  return itemsFactory(o200k).calls(
    [{ name: 'write_file', args: { path: 'a.ts', content: words(2000, 'code') }, id: 'call-1' }],
    words(2000, 'thought'),
    { id: 'r' },
  );
}

function written(cut: { write(): ContextItem; tokens: number } | null): AssistantMessageItem {
  expect(cut).not.toBeNull();
  const item = (cut as { write(): ContextItem }).write() as AssistantMessageItem;
  expect(item.tokens).toBe(o200k.countItem(item));
  expect(item.tokens).toBeLessThanOrEqual((cut as { tokens: number }).tokens);
  return item;
}

describe('a reply whose reasoning and arguments are both long', () => {
  it('reasoning first, arguments later: both cut, the calls whole in between, the original named by both', () => {
    const original = reply();
    const reasoned = written(planReasoning(original, o200k, 200));
    expect(reasoned).toMatchObject({ id: 'r~text200', sourceId: 'r' });
    expect(messageText(reasoned.message)).toMatch(MARKER);
    expect(reasoned.message.tool_calls).toStrictEqual(original.message.tool_calls);
    // The framing a later cut of the arguments reads is the cut text's.
    expect(reasoned.facts?.framingTokens).toBe(framingTokens(reasoned, o200k));
    const both = written(planCut(reasoned, config, o200k));
    expect(both).toMatchObject({ id: 'r~text200~cut200', sourceId: 'r' });
    expect(both.message.tool_calls?.[0]?.function.arguments).toMatch(MARKER);
    expect(both.message.content).toBe(reasoned.message.content);
    // Each field once.
    expect(planCut(both, config, o200k)).toBeNull();
    expect(planReasoning(both, o200k, 200)).toBeNull();
  });

  it('arguments first, reasoning later', () => {
    const cut = written(planCut(reply(), config, o200k));
    expect(cut).toMatchObject({ id: 'r~cut200', sourceId: 'r' });
    const both = written(planReasoning(cut, o200k, 200));
    expect(both).toMatchObject({ id: 'r~cut200~text200', sourceId: 'r' });
    expect(messageText(both.message)).toMatch(MARKER);
    expect(planCut(both, config, o200k)).toBeNull();
  });

  it('a preview within a size keeps the calls whole and takes the longest reasoning that fits', () => {
    const original = reply();
    const cut = planPreview(original, config, o200k, original.tokens - 1000, 50);
    const item = written(cut);
    expect(item.tokens).toBeLessThanOrEqual(original.tokens - 1000);
    expect(item.tokens).toBeGreaterThan(original.tokens - 1000 - 40);
    expect(item.message.tool_calls).toStrictEqual(original.message.tool_calls);
    expect(planPreview(original, config, o200k, original.tokens - 1990, 50)).toBeNull();
  });
});

describe('a reply with several calls', () => {
  // A sparse call (indentation) and a dense one (emoji): their characters say nothing of their tokens.
  function twoCalls(f = itemsFactory(o200k)) {
    return f.calls(
      [
        { name: 'write_file', args: { path: 'a.py', content: `${' '.repeat(60000)}x` }, id: 'A' },
        { name: 'write_file', args: { path: 'b.txt', content: '🦀'.repeat(1200) }, id: 'B' },
      ],
      null,
      { id: 'c' },
    );
  }

  it('cuts each call by its own tokens (counted when it was stored): the written form is no larger than planned', () => {
    const call = withFacts(twoCalls(), undefined, o200k);
    expect(call.facts?.calls?.map((c) => c.argumentTokens)).toEqual(
      call.message.tool_calls?.map((c) => o200k.countText(c.function.arguments)),
    );
    const cut = planCut(call, config, o200k);
    const item = written(cut);
    expect(item.tokens).toBeLessThan(call.tokens);
  });

  it('an item stored before the counts were kept is counted when cut', () => {
    const old = twoCalls();
    expect(old.facts?.calls).toBeUndefined();
    const item = written(planCut(old, config, o200k));
    expect(item.tokens).toBeLessThan(old.tokens);
  });
});

describe('previews of a message’s text', () => {
  it('a user message of text parts comes back as a preview of their text', () => {
    const f = itemsFactory(o200k);
    const base = f.user('x', { id: 'u' });
    const parts = [
      { type: 'text', text: words(600, 'first') },
      { type: 'text', text: words(600, 'second') },
    ];
    const item: ContextItem = {
      ...base,
      message: { role: 'user', content: parts },
      tokens: 3 + parts.reduce((n, p) => n + o200k.countText(p.text), 0),
    };
    const cut = written(planPreview(item, config, o200k, 400, 50));
    expect(cut).toMatchObject({ id: expect.stringMatching(/^u~cut\d+$/), sourceId: 'u' });
    expect(messageText(cut.message)).toMatch(
      /^first first[\s\S]*\n\[TRUNCATED original~\d+ tokens; recall #[0-9a-f]+\]$/,
    );
  });

  it('a message with an image part is not cut (the image would be lost)', () => {
    const f = itemsFactory(o200k);
    const item: ContextItem = {
      ...f.user('x', { id: 'u' }),
      message: {
        role: 'user',
        content: [
          { type: 'text', text: words(2000, 'text') },
          { type: 'image_url', image_url: { url: 'data:,' } },
        ],
      },
      tokens: 2003,
    };
    expect(planPreview(item, config, o200k, 400, 50)).toBeNull();
  });
});

describe("a result's cut form", () => {
  it('cut again is a shorter preview of the original, its marker read off the end of a long text', () => {
    const output = words(3000, 'output');
    const result = itemsFactory(o200k).result('call-1', output, { id: 'res' });
    const first = planCut(result, config, o200k, 1000)?.write() as ToolResultItem;
    expect(first).toMatchObject({ id: 'res~cut1000', sourceId: 'res' });
    const again = planCut(first, config, o200k, 200)?.write() as ToolResultItem;
    expect(again).toMatchObject({ id: 'res~cut200', sourceId: 'res' });
    const text = messageText(again.message);
    // One marker, stating the original's size, after a preview of the original's text.
    expect(text.match(/\[TRUNCATED/g)).toHaveLength(1);
    expect(text).toContain(`original~${result.tokens - MESSAGE_OVERHEAD_TOKENS} tokens`);
    expect(output.startsWith(text.slice(0, text.indexOf('\n[TRUNCATED')))).toBe(true);
  });
});

describe("a tool output's preview", () => {
  const lines = Array.from({ length: 400 }, (_, i) => `tests/test_mod.py::test_case_${i} PASSED`);
  const output = [
    ...lines,
    'FAILED tests/test_mod.py::test_rounding - AssertionError',
    '1 failed, 400 passed',
  ].join('\n');

  function cut(item: ContextItem, preview: number): ToolResultItem {
    const planned = planCut(item, config, o200k, preview);
    expect(planned).not.toBeNull();
    const written = planned?.write() as ToolResultItem;
    expect(written.tokens).toBe(o200k.countItem(written));
    expect(written.tokens).toBeLessThanOrEqual(planned?.tokens as number);
    return written;
  }

  it('keeps its first tokens and its last lines (the outcome), the middle left out', () => {
    const text = messageText(cut(itemsFactory(o200k).result('call-1', output, { id: 'res' }), 200).message);
    expect(output.startsWith(text.slice(0, text.indexOf(ELISION_LINE)))).toBe(true);
    expect(text.split(ELISION_LINE)).toHaveLength(2);
    expect(text).toMatch(
      /FAILED tests\/test_mod\.py::test_rounding - AssertionError\n1 failed, 400 passed\n\[TRUNCATED/,
    );
    expect(text).toMatch(MARKER);
  });

  it('cut again keeps the ending, with one elision and one marker', () => {
    const first = cut(itemsFactory(o200k).result('call-1', output, { id: 'res' }), 1000);
    const text = messageText(cut(first, 120).message);
    expect(text.split(ELISION_LINE)).toHaveLength(2);
    expect(text.match(/\[TRUNCATED/g)).toHaveLength(1);
    expect(text).toMatch(/\n1 failed, 400 passed\n\[TRUNCATED original~\d+ tokens/);
  });

  it('cut again to any size, still one elision (an ending that shrinks more than the head)', () => {
    const repr = Array.from({ length: 25 }, (_, k) => `'k${k}': ${k * 7}`).join(', ');
    const long = [...lines, `E   AssertionError: assert {${repr}} == {}`, '1 failed, 400 passed'].join('\n');
    const first = cut(itemsFactory(o200k).result('call-1', long, { id: 'res' }), 1000);
    for (let size = 900; size >= 100; size -= 7) {
      const text = messageText(cut(first, size).message);
      expect(text.split(ELISION_LINE)).toHaveLength(2);
      expect(long.startsWith(text.slice(0, text.indexOf(ELISION_LINE)))).toBe(true);
    }
  });

  it('an ending that starts with a blank line, cut again (the search for its first line ends)', () => {
    const blank = [...lines, `E   ${words(300, 'x')}`, '', '1 failed, 400 passed'].join('\n');
    const first = cut(itemsFactory(o200k).result('call-1', blank, { id: 'res' }), 1000);
    expect(messageText(cut(first, 200).message)).toMatch(/\n1 failed, 400 passed\n\[TRUNCATED/);
  });

  it('a preview of its first tokens only, cut again, stays one: no ending is made up from its middle', () => {
    const long = `${lines.join('\n')}\n${words(3000, 'x')}`;
    const first = cut(itemsFactory(o200k).result('call-1', long, { id: 'res' }), 1000);
    expect(messageText(first.message)).not.toContain(ELISION_LINE);
    const text = messageText(cut(first, 200).message);
    expect(text).not.toContain(ELISION_LINE);
    expect(long.startsWith(text.slice(0, text.indexOf('\n[TRUNCATED')))).toBe(true);
  });

  it('a long run of short lines: each line counted once (counting the ending again per line took 159 s here)', () => {
    const many = Array.from({ length: 100_000 }, (_, i) => String(i % 10)).join('\n');
    const text = messageText(cut(itemsFactory(o200k).result('call-1', many, { id: 'res' }), 60_000).message);
    expect(text.split(ELISION_LINE)).toHaveLength(2);
  });

  it('an output whose last line alone is too long for the ending: its first tokens only', () => {
    const long = `${words(50, 'head')}\n${words(3000, 'x')}`;
    const text = messageText(cut(itemsFactory(o200k).result('call-1', long, { id: 'res' }), 200).message);
    expect(text).not.toContain(ELISION_LINE);
    expect(long.startsWith(text.slice(0, text.indexOf('\n[TRUNCATED')))).toBe(true);
  });
});
