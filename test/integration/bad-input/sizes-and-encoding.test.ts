/**
 * Sizes and encodings: a 10 MB tool result, a megabyte without whitespace, lone surrogates, NUL
 * characters (PostgreSQL `text` refuses U+0000), a header larger than the window and a summary
 * longer than the window — through the workflow, the importer and the store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentTool } from '../../../activities/tools/registry';
import { prepareImport, saveImport } from '../../../src/cli/commands/import';
import { parseCompactionConfig, summaryTokenBudget } from '../../../src/context/config';
import { exportSession } from '../../../src/importers';
import { messageText, type ContextItem } from '../../../src/context/items';
import { SUMMARY_MESSAGE_PREFIX } from '../../../src/context/post-compaction';
import { tokenCounterForModel } from '../../../src/tokens';
import { isSummaryRequest, step } from '../../support/fake-openai';
import {
  allHistories,
  encodeHistory,
  startConversationEnv,
  words,
  type ConversationEnv,
} from '../../support/conversation-env';
import { uniqueId } from '../../support/harness';
import {
  expectRefusedUnchanged,
  innermostFailure,
  NOTHING,
  rejectionOf,
  removeSessionFiles,
  sessionFile,
  storeSnapshot,
} from '../../support/bad-input';

const TEN_MB = 10 * 1024 * 1024;
const ONE_MB = 1024 * 1024;
/** Every kind of awkward character: NUL, lone high and low surrogates, a real pair, a quote. */
const NASTY = "nul:\u0000 high:\ud800 low:\udc00 pair:🙂 quote:' end";

let bigOutput: string | undefined;
const bigTool: AgentTool = {
  name: 'big_output',
  description: 'Prints 10 MB of rows.',
  parameters: { type: 'object', properties: {} },
  async run() {
    bigOutput ??= words(TEN_MB, 'row');
    return { content: bigOutput };
  },
};
const runTool: AgentTool = {
  name: 'one_run',
  description: 'Prints one character a million times.',
  parameters: { type: 'object', properties: {} },
  async run() {
    return { content: 'a'.repeat(ONE_MB) };
  },
};

let env: ConversationEnv;

beforeAll(async () => {
  env = await startConversationEnv({ tools: [bigTool, runTool] });
});
afterAll(async () => {
  removeSessionFiles();
  await env?.close();
});

const sum = (items: readonly ContextItem[]): number => items.reduce((n, i) => n + i.tokens, 0);
const call = (id: string, name: string, args: string) => ({
  id,
  type: 'function',
  function: { name, arguments: args },
});

describe('size', () => {
  it('a 10 MB tool result is stored whole, kept out of history, and cut before the next model call', async () => {
    env.llm.reset();
    env.llm.script(step.toolCalls([{ id: 'call_big', name: 'big_output', arguments: {} }]));
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('A tool printed 10 MB of rows.'));
    env.llm.setDefault(step.text('done'));
    const conv = await env.startConversation({ tools: ['big_output'], config: { maxContextTokens: 8000 } });
    const result = await conv.send('dump everything');
    expect(result.reply).toBe('done');
    expect(result.compactions.map((c) => c.status)).toContain('committed');

    const original = (await conv.archive()).find((i) => i.type === 'TOOL_RESULT' && !i.sourceId);
    expect(original?.type === 'TOOL_RESULT' && original.message.content.length).toBe(TEN_MB);
    const { items } = await conv.activeContext();
    expect(sum(items)).toBeLessThanOrEqual(8000);
    for (const request of env.llm.chatRequests()) expect(request.rawBody.length).toBeLessThan(100_000);
    for (const history of allHistories(await conv.fullHistory())) {
      expect(encodeHistory(history).length).toBeLessThan(256 * 1024);
    }
  });

  it('a 10 MB tool result in an imported file is stored whole', async () => {
    const id = uniqueId('import-10mb');
    const text = words(TEN_MB, 'line');
    const file = sessionFile(
      '10mb.json',
      JSON.stringify([
        { role: 'user', content: 'cat the log' },
        { role: 'assistant', content: null, tool_calls: [call('c1', 'read_file', '{"path":"log"}')] },
        { role: 'tool', tool_call_id: 'c1', content: text },
      ]),
    );
    const result = await saveImport(env.store, prepareImport({ file, id }));
    expect(result.items).toBe(3);
    expect(result.tokens).toBeGreaterThan(TEN_MB / 10);
    const stored = (await env.store.getArchive(id)).find((i) => i.type === 'TOOL_RESULT');
    expect(stored?.type === 'TOOL_RESULT' && stored.message.content === text).toBe(true);
  });

  it('a megabyte without whitespace is counted by the project tokenizer in linear time', async () => {
    const counter = tokenCounterForModel('fake-model');
    const base64 = Buffer.from(Array.from({ length: (ONE_MB * 3) / 4 }, (_, i) => (i * 7919) % 256)).toString(
      'base64',
    );
    const started = Date.now();
    const runTokens = counter.countText('a'.repeat(ONE_MB));
    const base64Tokens = counter.countText(base64);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(runTokens).toBeGreaterThan(ONE_MB / 16);
    expect(base64Tokens).toBeGreaterThan(ONE_MB / 4);

    // The same counts through the workflow: a tool prints the run, the model answers the base64.
    env.llm.reset();
    env.llm.script(step.toolCalls([{ id: 'call_run', name: 'one_run', arguments: {} }]), step.text(base64));
    const conv = await env.startConversation({
      tools: ['one_run'],
      config: { maxContextTokens: 4_000_000 },
    });
    const roundStarted = Date.now();
    const result = await conv.send('print a lot');
    expect(Date.now() - roundStarted).toBeLessThan(20_000);
    expect(result.replyTruncated).toBe(true);
    const { items } = await conv.activeContext();
    const output = items.find((i) => i.type === 'TOOL_RESULT');
    const reply = items.filter((i) => i.type === 'ASSISTANT_MESSAGE').at(-1);
    expect(output?.tokens).toBe(output && counter.countItem(output));
    expect(output?.tokens).toBeGreaterThanOrEqual(runTokens);
    expect(reply?.type === 'ASSISTANT_MESSAGE' && messageText(reply.message)).toBe(base64);
    expect(reply?.tokens).toBeGreaterThanOrEqual(base64Tokens);
  });
});

describe('encoding', () => {
  it('NUL and lone surrogates in the system prompt, the user message and the reply survive byte for byte', async () => {
    env.llm.reset();
    env.llm.script(step.text(`echo ${NASTY}`));
    const conv = await env.startConversation({ systemPrompt: `system ${NASTY}` });
    const result = await conv.send(NASTY);
    expect(result.reply).toBe(`echo ${NASTY}`);
    const { items } = await conv.activeContext();
    expect(items.map((i) => (i.type === 'TOOL_DEFINITIONS' ? null : messageText(i.message)))).toEqual([
      `system ${NASTY}`,
      NASTY,
      `echo ${NASTY}`,
    ]);
    // The model got the characters, not replacements.
    const sent = env.llm.chatRequests()[0]?.body.messages ?? [];
    expect(sent.map((m) => m.content)).toEqual([`system ${NASTY}`, NASTY]);
  });

  it('NUL in the focus of a manual compaction: the compaction commits, the focus is recorded with U+FFFD', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text('ok'));
    const conv = await env.startConversation({ config: { maxContextTokens: 8000, protectedRounds: 1 } });
    for (let i = 0; i < 5; i++) await conv.send(words(800, `r${i}y`));
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('kept the marker'));
    const brief = await conv.compact('keep the \u0000 marker');
    expect(brief).toMatchObject({ trigger: 'manual', status: 'committed', reason: null });
    const [record] = await conv.compactions();
    expect(record?.focus).toBe('keep the \ufffd marker');
    // The summarizer was asked with the focus as given.
    const summaryRequest = env.llm.chatRequests().find((r) => isSummaryRequest(r));
    const last = summaryRequest?.body.messages?.at(-1);
    expect(String(last?.content)).toContain('keep the \u0000 marker');
  });

  it('NUL in a rollback or skip reason is stored with U+FFFD instead of failing the write', async () => {
    const id = uniqueId('nul-reason');
    await env.store.createConversation(id, []);
    await env.store.beginCompaction({ id: `${id}:c1`, conversationId: id, seq: 1, trigger: 'manual' });
    await env.store.discardStaged(`${id}:c1`, 'summary failed: \u0000 in the answer');
    await env.store.recordSkippedCompaction({
      id: `${id}:c2`,
      conversationId: id,
      seq: 2,
      trigger: 'precheck',
      reason: 'cooldown \u0000',
    });
    expect((await env.store.listCompactions(id)).map((c) => [c.status, c.reason])).toEqual([
      ['rolled_back', 'summary failed: \ufffd in the answer'],
      ['skipped', 'cooldown \ufffd'],
    ]);
  });

  it('escaped NUL and lone surrogates in an imported file are stored and exported exactly', async () => {
    const id = uniqueId('import-nasty');
    const messages = [
      { role: 'user', content: NASTY },
      { role: 'assistant', content: null, tool_calls: [call('c\u0000', "na'me", '{"q":"\\u0000"}')] },
      { role: 'tool', tool_call_id: 'c\u0000', content: `out ${NASTY}` },
    ];
    const text = JSON.stringify(messages);
    const prepared = prepareImport({ file: sessionFile('nasty.json', text), id });
    await saveImport(env.store, prepared);
    const { items } = await env.store.getActiveContext(id);
    expect(items.map((i) => (i.type === 'TOOL_DEFINITIONS' ? null : i.message))).toEqual([
      expect.objectContaining(messages[0]),
      expect.objectContaining(messages[1]),
      expect.objectContaining(messages[2]),
    ]);
    expect(JSON.parse(exportSession({ items, document: prepared.session.document }))).toStrictEqual(messages);
  });

  it('a raw NUL byte inside a JSON string is refused with its line, nothing stored', async () => {
    const id = uniqueId('raw-nul');
    const file = sessionFile(
      'raw-nul.jsonl',
      `{"role":"user","content":"fine"}\n{"role":"assistant","content":"bad \u0000 byte"}\n`,
    );
    await expectRefusedUnchanged(
      env.pool,
      id,
      async () => saveImport(env.store, prepareImport({ file, id })),
      /^cannot import .*raw-nul\.jsonl: line 2: not valid JSON/,
    );
    expect(await storeSnapshot(env.pool, id)).toStrictEqual(NOTHING);
  });
});

describe('windows', () => {
  it('a header larger than the window: the workflow fails at once, clearly, with nothing stored', async () => {
    env.llm.reset();
    const conv = await env.startConversation({
      systemPrompt: words(20_000, 'rule'),
      config: { maxContextTokens: 1000 },
    });
    const failure = innermostFailure(await rejectionOf(conv.handle.result()));
    expect(failure.type).toBe('HEADER_EXCEEDS_WINDOW');
    expect(failure.message).toMatch(
      /^the header \(system prompt and tool definitions\) is \d+ tokens, over the context window of 1000 tokens \(maxContextTokens\)/,
    );
    expect(env.llm.chatRequests()).toHaveLength(0);
    expect(await storeSnapshot(env.pool, conv.id)).toStrictEqual(NOTHING);
  });

  it('a header over the target but within the window: one compaction is tried, then no loop', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text('ok'));
    const systemPrompt = words(3400, 'rule');
    const headerTokens = tokenCounterForModel('fake-model').countText(systemPrompt);
    expect(headerTokens).toBeGreaterThan(800); // over the trigger (0.8 × 1000), so every call fires
    expect(headerTokens).toBeLessThan(1000); // and within the window, so the workflow starts
    const conv = await env.startConversation({ systemPrompt, config: { maxContextTokens: 1000 } });
    for (let i = 0; i < 3; i++) await conv.send(`question ${i}`);
    const records = await conv.compactions();
    expect(records.map((r) => r.status)).toEqual(records.map(() => 'skipped'));
    expect(records[0]?.reason).toMatch(/^header_exceeds_target: the header and carried state are \d+ tokens/);
    expect(records.slice(1).every((r) => r.reason?.startsWith('loop_guard'))).toBe(true);
    // Only the first ran as a compaction child; the others were skipped without running.
    expect((await conv.fullHistory()).children).toHaveLength(1);
  });

  it.each([
    ['the default summary budget', { maxContextTokens: 4000 }, 3000],
    ['a summary budget larger than the window', { maxContextTokens: 2000, summaryMaxTokens: 5000 }, 5000],
  ])(
    'a summary longer than the window (%s) is cut to its budget and the compaction commits',
    async (_what, config, messageChars) => {
      env.llm.reset();
      env.llm.setDefault(step.text('ok'));
      env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary(words(60_000, 'sum')));
      const conv = await env.startConversation({ config: { ...config, protectedRounds: 1 } });
      // A short task (it stays in the header), then long messages until a compaction runs.
      let committed = null;
      for (let i = 0; i < 8 && !committed; i++) {
        const result = await conv.send(i === 0 ? 'start' : words(messageChars, `m${i}x`));
        committed = result.compactions.find((c) => c.status === 'committed') ?? null;
      }
      expect(committed).not.toBeNull();
      expect(committed?.tokensAfter).toBeLessThan(config.maxContextTokens);
      const summary = (await conv.activeContext()).items.find((i) => i.type === 'COMPACTION_SUMMARY');
      const text = summary ? messageText(summary.message).slice(SUMMARY_MESSAGE_PREFIX.length + 1) : '';
      const budget = summaryTokenBudget(parseCompactionConfig(config));
      expect(text.length).toBeGreaterThan(0);
      expect(tokenCounterForModel('fake-summarizer').countText(text)).toBeLessThanOrEqual(budget);
    },
  );
});
