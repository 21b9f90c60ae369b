/**
 * A replay at a window smaller than the recording's can meet a reply that, with the header, is
 * over the window by itself (a live model could not have written it in this window: its output
 * shares the window with its prompt). Three real SWE-agent trajectories do at 4k: a 3,300-token
 * thought before a short call, after a 1,637-token header. The last resort of a compaction cuts
 * such a reply's reasoning to a preview, its call kept whole, so the request fits; a call waiting
 * for its result whose arguments alone are over the window has its arguments cut, the call kept
 * for its result. What no compaction can cut — a header over the window by itself — stays a
 * broken invariant, and its line says so, so that a reader can tell it from a compaction that
 * kept too much. Made-up sessions.
 */
import { describe, expect, it } from 'vitest';
import { planExtractiveSummary } from '../../../src/context/compaction-summary';
import { parseCompactionConfig } from '../../../src/context/config';
import type { ContextItem } from '../../../src/context/items';
import { replaySession } from '../../../src/eval/replay';
import { runEval } from '../../../src/eval/run';
import { createTokenCounter } from '../../../src/tokens';
import { conversation, itemsFactory, words } from '../../support/items-factory';

const o200k = createTokenCounter({ encoding: 'o200k_base' });
const config = parseCompactionConfig({ maxContextTokens: 4000, summarizer: 'extractive' });
const summarize = async (plan: Parameters<typeof planExtractiveSummary>[0]) => ({
  text: planExtractiveSummary(plan, o200k),
  summarizer: 'extractive' as const,
});

/** A 1,000-token system prompt, a task, a reply of `reply` tokens of thought with one call and its result. */
function session(reply: number, output = 300): ContextItem[] {
  const f = itemsFactory(o200k);
  const [call, result] = f.block('open', { path: 'src/a.py' }, words(output, 'line'), {
    text: words(reply, 'thought'),
  });
  return conversation([
    f.system(words(1000, 'rules')),
    f.user('Fix src/a.py.'),
    call,
    result,
    f.calls([{ name: 'submit' }]),
  ]);
}

/**
 * The same header, then a call whose arguments alone are over the window, waiting for its result
 * (no user message after it, which would end the wait) when the next reply is asked for.
 */
function pendingSession(): ContextItem[] {
  const f = itemsFactory(o200k);
  return conversation([
    f.system(words(1000, 'rules')),
    f.user('Write src/a.py.'),
    f.calls([{ name: 'write_file', args: { path: 'src/a.py', content: words(3200, 'code') } }]),
    f.assistant('done'),
  ]);
}

describe('a request over the window with the header and the latest reply alone', () => {
  it('a reply whose reasoning is over the window: the reasoning is cut to a preview, its call kept whole', async () => {
    const items = session(3200);
    const replay = await replaySession({ items, config, tokenizer: o200k, summarize });
    expect(replay.requests.every((r) => r.tokens <= 4000)).toBe(true);
    const last = replay.compactions.at(-1);
    expect(last?.strategy).toBe('reasoning');
    const reply = last?.after.find((i) => i.sourceId === items[2]?.id);
    expect(reply).toMatchObject({
      type: 'ASSISTANT_MESSAGE',
      message: { tool_calls: (items[2] as { message: { tool_calls: unknown } }).message.tool_calls },
    });
    expect(reply?.id).toMatch(/~text\d+$/);
    expect(String(reply?.type === 'ASSISTANT_MESSAGE' ? reply.message.content : '')).toMatch(
      /\[TRUNCATED original~\d+ tokens; recall #[0-9a-f]+\]$/,
    );
  });

  it('a call waiting for its result, its arguments over the window: cut to a preview, the call kept for its result; the request fits', async () => {
    const items = pendingSession();
    const replay = await replaySession({ items, config, tokenizer: o200k, summarize });
    expect(replay.requests.every((r) => r.tokens <= 4000)).toBe(true);
    const call = items[2] as ContextItem;
    const kept = replay.compactions.at(-1)?.after.find((i) => i.sourceId === call.id);
    expect(kept?.id).toMatch(/~cut\d+$/);
    const ids = (item: ContextItem | undefined) =>
      item?.type === 'ASSISTANT_MESSAGE' ? (item.message.tool_calls ?? []).map((c) => c.id) : [];
    expect(ids(kept)).toStrictEqual(ids(call));
  });

  it('a header over the window by itself: flagged, and its line says the reply alone with the header is over it', async () => {
    const f = itemsFactory(o200k);
    const items = conversation([
      f.system(words(4200, 'rules')),
      f.user('Write src/a.py.'),
      f.calls([{ name: 'write_file', args: { path: 'src/a.py', content: words(50, 'code') } }]),
      f.assistant('done'),
    ]);
    const [row] = await runEval({
      sessions: [{ name: 's', items }],
      windows: [4000],
      config: () => config,
      tokenizer: o200k,
      summarizer: 'extractive',
      peers: false,
    });
    expect(row?.requestsReplyTooLong).toBeGreaterThan(0);
    // The first request has no reply yet.
    expect(row?.requestsReplyTooLong).toBe((row?.requestsOverWindow ?? 0) - 1);
    expect(row?.violations).toEqual([
      expect.stringMatching(
        /^\d+ request\(s\) over the window \(largest \d+ tokens; \d+ of them over it with the header and the latest reply alone: a reply longer than this window allows\)$/,
      ),
    ]);
  });

  it('is not what a request over the window is called when the reply fits (a compaction that kept too much)', async () => {
    const replay = await replaySession({
      items: session(300, 5000),
      config,
      tokenizer: o200k,
      summarize,
      // A compaction that changes nothing: it is skipped, and the request goes out as it was.
      finish: (plan) => [...plan.work.items],
    });
    expect(replay.requests.some((r) => r.tokens > 4000 && !r.replyTooLong)).toBe(true);
  });
});
