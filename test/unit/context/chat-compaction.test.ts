/**
 * The policy without Temporal (`durable-compaction/context`): `planCompaction` on OpenAI chat
 * messages and `compactMessages`. Small conversations for the contract and its failure paths; the
 * shared pi session, converted to OpenAI messages, for the invariants at real size.
 */
import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import {
  compactMessages,
  ConfigError,
  ImportError,
  planCompaction,
  SummaryError,
  type ChatCompactionPlan,
  type CompactedChat,
} from '../../../src/context-api';
import {
  ARTIFACT_TRAIL_HEADING,
  collectArtifactTrail,
  trailPaths,
} from '../../../src/context/artifact-trail';
import { collectOpenErrors } from '../../../src/context/open-errors';
import { SUMMARY_MESSAGE_PREFIX } from '../../../src/context/post-compaction';
import { UPDATE_SUMMARY_PROMPT } from '../../../src/context/summary-prompt';
import { exportOpenAIChat, importSession } from '../../../src/importers';
import { createTokenCounter } from '../../../src/tokens';
import { needsSharedSessions, readSession } from '../../support/sessions';

const o200k = createTokenCounter({ encoding: 'o200k_base' });

/** The text of a message's content (text parts joined), '' when none. */
function textOf(message: ChatCompletionMessageParam): string {
  const content = message.content;
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => ('text' in part && typeof part.text === 'string' ? part.text : '')).join('');
}

/** A coding session of `rounds` rounds: each a question, a tool call, a long result and an answer. */
function session(rounds: number, resultChars = 2_000): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = [{ role: 'system', content: 'You are a coding agent.' }];
  for (let r = 1; r <= rounds; r++) {
    messages.push(
      { role: 'user', content: `Round ${r}: what does src/module-${r}.ts export?` },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: `call_${r}`,
            type: 'function',
            function: { name: 'read_file', arguments: JSON.stringify({ path: `src/module-${r}.ts` }) },
          },
        ],
      },
      {
        role: 'tool',
        tool_call_id: `call_${r}`,
        content: `export const value${r} = ${r};\n` + `// line of module ${r}\n`.repeat(resultChars / 22),
      },
      { role: 'assistant', content: `src/module-${r}.ts exports value${r}, whose value is ${r}.` },
    );
  }
  return messages;
}

const TOOLS: ChatCompletionFunctionTool[] = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Read a file of the workspace.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
];

/** Tool call ids of the assistant messages, by the index of the message that makes them. */
function callIndexById(messages: readonly ChatCompletionMessageParam[]): Map<string, number> {
  const at = new Map<string, number>();
  messages.forEach((message, i) => {
    if (message.role !== 'assistant') return;
    for (const call of message.tool_calls ?? []) at.set(call.id, i);
  });
  return at;
}

/**
 * What breaks the API's pairing in a request: a tool message whose call is not in an earlier
 * assistant message, or a call no tool message answers.
 */
function brokenPairs(messages: readonly ChatCompletionMessageParam[]): string[] {
  const problems: string[] = [];
  const open = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) open.add(call.id);
    if (message.role === 'tool') {
      if (!open.delete(message.tool_call_id))
        problems.push(`result without its call: ${message.tool_call_id}`);
    }
  }
  return [...problems, ...[...open].map((id) => `call without a result: ${id}`)];
}

/** Asserts the plan puts every input message in exactly one of keep, summarize and replace. */
function expectPartition(plan: ChatCompactionPlan, count: number): void {
  const all = [...plan.keep, ...plan.summarize, ...plan.replace].sort((a, b) => a - b);
  expect(all).toStrictEqual(Array.from({ length: count }, (_, i) => i));
  expect(plan.shortened.every((i) => plan.keep.includes(i))).toBe(true);
}

/** Kept tool messages whose assistant tool call is not kept, by index. */
function keptResultsWithoutCall(
  messages: readonly ChatCompletionMessageParam[],
  keep: readonly number[],
): number[] {
  const kept = new Set(keep);
  const callAt = callIndexById(messages);
  return keep.filter((i) => {
    const message = messages[i] as ChatCompletionMessageParam;
    if (message.role !== 'tool') return false;
    const call = callAt.get(message.tool_call_id);
    return call === undefined || !kept.has(call);
  });
}

describe('planCompaction on OpenAI chat messages', () => {
  it('keeps the system prompt, the task and the newest rounds, and summarizes the rest', () => {
    const messages = session(12);
    const plan = planCompaction(messages, { window: 4_000, tools: TOOLS });
    expectPartition(plan, messages.length);
    expect(plan.keep).toContain(0); // system prompt
    expect(plan.keep).toContain(1); // the original task
    expect(plan.keep).toContain(messages.length - 1); // the newest answer
    expect(plan.summarize.length).toBeGreaterThan(0);
    expect(plan.messagesToSummarize).toStrictEqual(plan.summarize.map((i) => messages[i]));
    expect(keptResultsWithoutCall(messages, plan.keep)).toStrictEqual([]);
    expect(plan.tokensBefore).toBeGreaterThan(4_000);
    expect(plan.due).toBe(true);
    expect(plan.tokensAfter).toBeLessThanOrEqual(plan.goalTokens);
    expect(plan.goalTokens).toBe(2_000);
    expect(plan.overTarget).toBe(false);
  });

  it('counts the tools given toward the window', () => {
    const messages = session(2);
    const without = planCompaction(messages, { window: 100_000 });
    const withTools = planCompaction(messages, { window: 100_000, tools: TOOLS });
    expect(withTools.tokensBefore).toBeGreaterThan(without.tokensBefore);
  });

  it('asks the summarizer about what it summarizes, with the focus, and writes a fallback within the budget', () => {
    const messages = session(12);
    const plan = planCompaction(messages, { window: 4_000, focus: 'the exported values' });
    const request = plan.summaryRequest;
    expect(request).not.toBeNull();
    const [system, user] = request?.messages ?? [];
    expect(system?.role).toBe('system');
    expect(user?.role).toBe('user');
    const transcript = textOf(user as ChatCompletionMessageParam);
    for (const message of plan.messagesToSummarize) {
      const text = textOf(message);
      if (text) expect(transcript).toContain(text);
    }
    expect(transcript).toContain('the exported values');
    expect(request?.droppedChars).toBe(0);
    expect(plan.extractiveSummary).toMatch(/src\/module-1\.ts/);
    expect(o200k.countText(plan.extractiveSummary ?? '')).toBeLessThanOrEqual(plan.summaryBudget);
  });

  it('needs no summary when nothing may go (the task, the latest tool call), and gives the messages back', () => {
    const messages = session(1, 100).slice(0, 4);
    const plan = planCompaction(messages, { window: 100_000 });
    expect(plan.due).toBe(false);
    expect(plan).toMatchObject({ summarize: [], replace: [], summaryRequest: null, extractiveSummary: null });
    expect(plan.keep).toStrictEqual(messages.map((_, i) => i));
    const compacted = compactMessages(plan, null);
    expect(compacted.messages).toStrictEqual(messages);
    expect(compacted.tokens).toBe(plan.tokensBefore);
  });

  it('does not modify the messages', () => {
    const messages = session(12);
    const copy = structuredClone(messages);
    compactMessages(planCompaction(messages, { window: 4_000 }), 'The modules export their values.');
    expect(messages).toStrictEqual(copy);
  });

  it.each([
    [{ window: 100 }, /maxContextTokens must be at least 256/],
    [{ window: 4_000, config: { targetRatio: 1.2 } }, /targetRatio/],
    [
      { window: 4_000, config: { targetRatio: 0.9, triggerRatio: 0.8 } },
      /targetRatio \(0\.9\) must be below/,
    ],
    [{ window: 4_000, config: { maxContextTokens: 8_000 } }, /give the window as `window`/],
    [{ window: 4_000, config: { slidingWindow: 3 } }, /unknown key: slidingWindow/],
  ])('refuses the options %j before planning', (options, message) => {
    const plan = () => planCompaction(session(2), options as Parameters<typeof planCompaction>[1]);
    expect(plan).toThrow(ConfigError);
    expect(plan).toThrow(message);
  });

  it('refuses a message that is not a chat message, naming it', () => {
    const messages = [
      { role: 'system', content: 'You are a coding agent.' },
      { role: 'function', name: 'f', content: 'x' },
    ] as ChatCompletionMessageParam[];
    expect(() => planCompaction(messages, { window: 4_000 })).toThrow(ImportError);
    expect(() => planCompaction(messages, { window: 4_000 })).toThrow(/\[1\]\.role/);
  });
});

describe('compactMessages', () => {
  // What it returns is sent next, with no precheck to compact it again: over the window after every
  // step (a long system prompt, a reply waiting for its result), the carried state gives up what
  // the window needs, as before a request in a durable conversation.
  it('returns messages that fit the window, the carried state cut where it must', () => {
    const words = (n: number, word: string) => Array.from({ length: n }, () => word).join(' ');
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: words(2800, 'rules') },
      { role: 'user', content: 'task' },
    ];
    for (let r = 0; r < 40; r++) {
      const path = `/home/user/projects/root/packages/module-${r % 7}/src/nested/file_${r}.ts`;
      messages.push(
        { role: 'user', content: `s${r}` },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: `c${r}`,
              type: 'function',
              function: { name: 'read_file', arguments: JSON.stringify({ path }) },
            },
          ],
        },
        { role: 'tool', tool_call_id: `c${r}`, content: 'ok' },
      );
    }
    messages.push(
      { role: 'user', content: 'Now write it.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'w',
            type: 'function',
            function: {
              name: 'write_file',
              arguments: JSON.stringify({ path: 'src/new.ts', content: words(850, 'code') }),
            },
          },
        ],
      },
    );
    const plan = planCompaction(messages, { window: 4_000 });
    expect(plan.tokensBefore).toBeGreaterThan(4_000);
    expect(plan.tokensAfter).toBeLessThanOrEqual(4_000);
    const calls = compactMessages(plan, plan.extractiveSummary).messages.flatMap((m) =>
      m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : [],
    );
    expect(calls).toContain('w');
  });

  it('puts the summary after the header and before the kept messages, within the goal', () => {
    const messages = session(12);
    const plan = planCompaction(messages, { window: 4_000, tools: TOOLS });
    const compacted = compactMessages(
      plan,
      'thinking first… <summary>Modules 1 to 10 export value1…value10.</summary>',
    );
    const summaryAt = compacted.messages.findIndex((m) => textOf(m).startsWith(SUMMARY_MESSAGE_PREFIX));
    // The header (system prompt, task, the artifact trail of the files read), then the summary.
    const [system, task, trail] = compacted.messages.map(textOf);
    expect([system, task]).toStrictEqual([
      'You are a coding agent.',
      'Round 1: what does src/module-1.ts export?',
    ]);
    expect(trail?.startsWith(ARTIFACT_TRAIL_HEADING) && trail.includes('src/module-1.ts')).toBe(true);
    expect(summaryAt).toBe(3);
    const summary = textOf(compacted.messages[summaryAt] as ChatCompletionMessageParam);
    expect(summary).toContain('Modules 1 to 10 export value1…value10.');
    expect(summary).not.toContain('thinking first');
    expect(brokenPairs(compacted.messages)).toStrictEqual([]);
    expect(compacted.tools).toStrictEqual(TOOLS);
    expect(compacted.tokens).toBeLessThanOrEqual(plan.goalTokens);
    expect(o200k.countRequest({ messages: compacted.messages as never, tools: compacted.tools })).toBe(
      compacted.tokens + 3, // the reply's priming
    );
    expect(compacted.keep).toStrictEqual(expect.arrayContaining(plan.keep));
  });

  it('cuts a summary over its budget to it', () => {
    const messages = session(12);
    const plan = planCompaction(messages, { window: 4_000 });
    const long = 'The modules export their values. '.repeat(2_000);
    const compacted = compactMessages(plan, long);
    const summary = compacted.messages.find((m) => textOf(m).startsWith(SUMMARY_MESSAGE_PREFIX));
    expect(o200k.countMessage(summary as never)).toBeLessThanOrEqual(plan.summaryBudget);
  });

  it.each([
    ['', 'empty_summary'],
    ['  \n ', 'empty_summary'],
    ['<summary>   </summary>', 'empty_summary'],
    [null, 'summary_required'],
  ])('refuses the summary %j (%s) while the plan summarizes', (summary, reason) => {
    const plan = planCompaction(session(12), { window: 4_000 });
    let error: unknown;
    try {
      compactMessages(plan, summary);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SummaryError);
    expect((error as SummaryError).reason).toBe(reason);
  });

  it('takes only the plan planCompaction returned', () => {
    const plan = planCompaction(session(12), { window: 4_000 });
    expect(() => compactMessages({ ...plan }, 'summary')).toThrow(/not a copy/);
  });

  it('may be called again with another summary', () => {
    const plan = planCompaction(session(12), { window: 4_000 });
    const first = compactMessages(plan, 'First summary.');
    const second = compactMessages(plan, 'Second summary.');
    expect(second.messages.map(textOf).join('\n')).toContain('Second summary.');
    expect(second.messages.map(textOf).join('\n')).not.toContain('First summary.');
    expect(second.keep).toStrictEqual(first.keep);
  });

  it('compacts a compacted conversation again: the summary is merged, the carried state replaced', () => {
    const messages = session(16);
    const first = compactMessages(planCompaction(messages, { window: 4_000 }), 'Modules 1 to 12 were read.');
    const grown = [...first.messages, ...session(16).slice(1 + 12 * 4)];
    const plan = planCompaction(grown, { window: 4_000 });
    const summaryAt = grown.findIndex((m) => textOf(m).startsWith(SUMMARY_MESSAGE_PREFIX));
    const trailAt = grown.findIndex((m) => textOf(m).startsWith(ARTIFACT_TRAIL_HEADING));
    expect(trailAt).toBeGreaterThan(0);
    expect(plan.summarize).toContain(summaryAt);
    expect(plan.replace).toStrictEqual([trailAt]);
    const transcript = textOf(plan.summaryRequest?.messages[1] as ChatCompletionMessageParam);
    expect(transcript).toContain('<previous-summary>\nModules 1 to 12 were read.');
    expect(transcript).toContain(UPDATE_SUMMARY_PROMPT);
    const second = compactMessages(plan, 'Modules 1 to 16 were read.');
    const trails = second.messages.filter((m) => textOf(m).startsWith(ARTIFACT_TRAIL_HEADING));
    const summaries = second.messages.filter((m) => textOf(m).startsWith(SUMMARY_MESSAGE_PREFIX));
    expect([trails.length, summaries.length]).toStrictEqual([1, 1]);
  });
});

describe('on the shared pi session converted to OpenAI messages', needsSharedSessions, () => {
  let converted: { messages: ChatCompletionMessageParam[]; tools?: ChatCompletionFunctionTool[] } | null =
    null;
  const load = () => {
    if (!converted) {
      const items = importSession(readSession('pi-large-session.jsonl'), {
        tokenizer: o200k,
        fileName: 'pi-large-session.jsonl',
      }).items;
      converted = JSON.parse(exportOpenAIChat(items)) as typeof converted & object;
    }
    return converted;
  };
  const outcomes = new Map<number, { plan: ChatCompactionPlan; compacted: CompactedChat }>();
  const compacted = (window: number) => {
    let outcome = outcomes.get(window);
    if (!outcome) {
      const { messages, tools } = load();
      const plan = planCompaction(messages, { window, ...(tools ? { tools } : {}) });
      outcome = { plan, compacted: compactMessages(plan, plan.extractiveSummary) };
      outcomes.set(window, outcome);
    }
    return outcome;
  };

  it.each([16_000, 32_000, 64_000])(
    'window %d: every kept tool message keeps its call, and the compacted conversation fits',
    (window) => {
      const { messages } = load();
      const { plan, compacted: out } = compacted(window);
      expect(plan.tokensBefore).toBeGreaterThan(window);
      expectPartition(plan, messages.length);
      expect(plan.summarize.length).toBeGreaterThan(0);
      expect(keptResultsWithoutCall(messages, plan.keep)).toStrictEqual([]);
      expect(keptResultsWithoutCall(messages, out.keep)).toStrictEqual([]);
      expect(brokenPairs(out.messages)).toStrictEqual([]);
      // Counted afresh, as the model's request: messages, tools and the reply's priming.
      const tokens = o200k.countRequest({ messages: out.messages as never, tools: out.tools });
      expect(tokens).toBeLessThanOrEqual(window);
      expect(out.tokens).toBeLessThanOrEqual(plan.goalTokens);
      expect(out.messages.filter((m) => textOf(m).startsWith(SUMMARY_MESSAGE_PREFIX))).toHaveLength(1);
    },
  );

  it('compacted twice, the second keeps every path and open error the first carried, read back from their text', () => {
    const { messages } = load();
    let middle = Math.floor(messages.length / 2);
    while (messages[middle]?.role !== 'user') middle++;
    const earlier = messages.slice(0, middle);
    const firstPlan = planCompaction(earlier, { window: 16_000 });
    const first = compactMessages(firstPlan, firstPlan.extractiveSummary);
    const secondPlan = planCompaction([...first.messages, ...messages.slice(middle)], { window: 16_000 });
    const text = compactMessages(secondPlan, secondPlan.extractiveSummary).messages.map(textOf).join('\n');
    // What the first half touched and left open, read off its calls and results.
    const items = importSession(JSON.stringify(earlier), { tokenizer: o200k }).items;
    const paths = trailPaths(collectArtifactTrail(items));
    const roots = [...text.matchAll(/\(under (\S+?)\)/g)].map((m) => m[1] as string);
    const shown = (path: string) =>
      text.includes(path) ||
      roots.some((root) => path.startsWith(root) && text.includes(path.slice(root.length)));
    expect(paths.length).toBeGreaterThan(10);
    expect(paths.filter((path) => !shown(path))).toStrictEqual([]);
    const errors = collectOpenErrors(items).map((e) => e.text);
    expect(errors.filter((error) => !text.includes(error))).toStrictEqual([]);
  });

  it('window 32000: the summary request holds the head and the tail of what is summarized', () => {
    const { plan } = compacted(32_000);
    const transcript = textOf(plan.summaryRequest?.messages[1] as ChatCompletionMessageParam);
    const texts = plan.messagesToSummarize.map(textOf).filter((t) => t.trim().length > 40);
    expect(texts.length).toBeGreaterThan(10);
    expect(transcript).toContain((texts[0] as string).slice(0, 200));
    expect(transcript).toContain((texts[texts.length - 1] as string).slice(-200));
  });

  it('window 32000, with room for the whole transcript: the request holds every summarized message', () => {
    const { messages, tools } = load();
    const plan = planCompaction(messages, {
      window: 32_000,
      config: { summaryInputMaxChars: 10_000_000 },
      ...(tools ? { tools } : {}),
    });
    expect(plan.summaryRequest?.droppedChars).toBe(0);
    const transcript = textOf(plan.summaryRequest?.messages[1] as ChatCompletionMessageParam);
    const missing = plan.messagesToSummarize.filter((m) => textOf(m) && !transcript.includes(textOf(m)));
    expect(missing).toStrictEqual([]);
    const calls = plan.messagesToSummarize.flatMap((m) =>
      m.role === 'assistant' ? (m.tool_calls ?? []) : [],
    );
    const named = calls.filter((c) => c.type === 'function' && transcript.includes(`${c.function.name}(`));
    expect(named.length).toBeGreaterThan(calls.length * 0.99);
  });
});
