/**
 * What a compaction leaves the agent, through the whole workflow on the real dev server, real
 * PostgreSQL and the fake LLM: the summary goes to the summary model; a tool result that arrives
 * after a compaction reaches the next request with its call; `<Pin>` pins a message; the
 * workspace's git diff stat is a header item refreshed at each compaction; and the demo of
 * `npm start` ends with its pin, memory, task list and every file it touched still in the context.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noteOfToolCall, formatTaskList } from '../../../src/context/agent-notes';
import { importSession } from '../../../src/importers';
import type { ContextItem } from '../../../src/context/items';
import { runDemo, SAMPLE_SESSION } from '../../../src/cli/demo';
import { contextText, touchedPaths } from '../../../src/eval/metrics';
import { tokenCounterForModel } from '../../../src/tokens';
import { isSummaryRequest, step } from '../../support/fake-openai';
import { startConversationEnv, words, type ConversationEnv } from '../../support/conversation-env';

let env: ConversationEnv;

beforeAll(async () => {
  env = await startConversationEnv();
});
afterAll(async () => {
  await env?.close();
});

/** Rounds of about 700 tokens each (a message and a reply of that size). */
async function bulk(
  conv: { send(text: string): Promise<unknown> },
  rounds: number,
  seed: string,
): Promise<void> {
  for (let i = 0; i < rounds; i++) await conv.send(words(1400, `${seed}${i}w`));
}

describe('the summary request', () => {
  it('goes to the configured summary model; the agent’s turns go to the agent’s model', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text(words(1400, 'reply')));
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('what happened'));
    const conv = await env.startConversation({
      model: { model: 'fake-model', summaryModel: 'fake-summarizer' },
      config: { maxContextTokens: 8000 },
    });
    await bulk(conv, 3, 's');
    expect(await conv.compact()).toMatchObject({ status: 'committed' });
    const requests = env.llm.chatRequests();
    const summaries = requests.filter((r) => isSummaryRequest(r));
    const turns = requests.filter((r) => !isSummaryRequest(r));
    expect(summaries.length).toBeGreaterThan(0);
    expect(new Set(summaries.map((r) => r.body.model))).toEqual(new Set(['fake-summarizer']));
    expect(new Set(turns.map((r) => r.body.model))).toEqual(new Set(['fake-model']));
  });
});

describe('a compaction between a reply’s tool call and its result', () => {
  it('keeps the call, so the result reaches the next request right after it', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'dc-pending-'));
    writeFileSync(join(workspace, 'notes.txt'), 'the answer is forty-two');
    try {
      env.llm.reset();
      env.llm.setDefault(step.text(words(1400, 'reply')));
      env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('what happened'));
      const conv = await env.startConversation({
        tools: ['read_file'],
        workspace,
        config: { maxContextTokens: 8000 },
      });
      await bulk(conv, 3, 'p');
      // The reply that calls the tool reports usage over the trigger: the check compaction runs
      // after it, before the tool does.
      env.llm.script(
        step.toolCalls([{ id: 'call_notes', name: 'read_file', arguments: '{"path":"notes.txt"}' }], {
          usage: { prompt_tokens: 7000, completion_tokens: 20 },
        }),
        step.text('It says forty-two.'),
      );
      const result = await conv.send('what do the notes say?');
      expect(result.compactions.map((c) => [c.trigger, c.status])).toContainEqual(['check', 'committed']);
      const turns = env.llm.chatRequests().filter((r) => !isSummaryRequest(r));
      const last = turns.at(-1)?.body.messages ?? [];
      const at = last.findIndex((m) => m.role === 'tool' && m.tool_call_id === 'call_notes');
      expect(at).toBeGreaterThan(0);
      expect(last[at]?.content).toBe('the answer is forty-two');
      const call = last[at - 1] as { role: string; tool_calls?: { id: string }[] };
      expect(call.role).toBe('assistant');
      expect(call.tool_calls?.map((c) => c.id)).toEqual(['call_notes']);
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  });
});

describe('<Pin> in a user message', () => {
  it('pins the message: it stays, verbatim, through every compaction', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text(words(1400, 'reply')));
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('what happened'));
    const conv = await env.startConversation({ config: { maxContextTokens: 6000 } });
    await conv.send('Set up the release checklist.');
    const pinned = 'One rule for the whole task: <Pin>deploy only on Fridays</Pin>';
    await conv.send(pinned);
    await bulk(conv, 12, 'pin');
    expect((await conv.compactions()).filter((c) => c.status === 'committed').length).toBeGreaterThan(1);
    const { items } = await conv.activeContext();
    const kept = items.find((i) => i.type === 'USER_MESSAGE' && contextText([i]) === pinned);
    expect(kept?.pinned).toBe(true);
  });
});

describe('the workspace’s git diff stat', () => {
  it('is a header item, refreshed at each compaction', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'dc-git-'));
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', workspace, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args]);
    try {
      git('init', '-q');
      writeFileSync(join(workspace, 'tax.ts'), 'export const rate = 19;\n');
      writeFileSync(join(workspace, 'invoice.ts'), 'export const lines = [];\n');
      git('add', '.');
      git('commit', '-q', '-m', 'start');
      writeFileSync(join(workspace, 'tax.ts'), 'export const rate = 7;\nexport const reduced = true;\n');
      env.llm.reset();
      env.llm.setDefault(step.text(words(1400, 'reply')));
      env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('what happened'));
      const conv = await env.startConversation({ workspace, config: { maxContextTokens: 8000 } });
      await bulk(conv, 3, 'g');
      expect(await conv.compact()).toMatchObject({ status: 'committed' });
      const stat = async (): Promise<string[]> =>
        (await conv.activeContext()).items
          .filter((i) => i.type === 'GIT_DIFF_STAT')
          .map((i) => contextText([i]));
      const first = await stat();
      expect(first).toHaveLength(1);
      expect(first[0]).toMatch(/tax\.ts/);
      expect(first[0]).not.toMatch(/invoice\.ts/);
      expect(first[0]).toMatch(/1 file changed/);
      writeFileSync(join(workspace, 'invoice.ts'), 'export const lines = [1];\n');
      await bulk(conv, 2, 'h');
      expect(await conv.compact()).toMatchObject({ status: 'committed' });
      const second = await stat();
      expect(second).toHaveLength(1);
      expect(second[0]).toMatch(/invoice\.ts/);
      expect(second[0]).toMatch(/2 files changed/);
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  });
});

describe('the demo of npm start', () => {
  it('ends with its pin, its memory, its task list and every file it touched in the context', async () => {
    const lines: string[] = [];
    const { conversationId, compactions } = await runDemo({
      conversations: env.conversations,
      uiUrl: null,
      log: (line) => lines.push(line),
    });
    expect(compactions).toBeGreaterThanOrEqual(3);
    // A compaction that ran before a round's reply is printed before it (between the round's line
    // and its "↳" reply line), one that ran after it after.
    const blocks = lines.join('\n').split(/\n(?=round \d+: )/);
    const beforeReply = blocks.filter((b) => /^ {2}\S.*\n(.*\n)* {2}↳ /m.test(b.slice(b.indexOf('\n') + 1)));
    expect(beforeReply.length, lines.join('\n')).toBeGreaterThan(0);
    const { items } = await env.store.getActiveContext(conversationId);
    const text = contextText(items);
    const session = importSession(readFileSync(SAMPLE_SESSION, 'utf8'), {
      fileName: SAMPLE_SESSION,
      tokenizer: tokenCounterForModel('gpt-4o'),
    }).items;
    // What the session's tool calls made: the last task list, every memory and pin.
    const notes = session.flatMap((item: ContextItem) =>
      item.type === 'ASSISTANT_MESSAGE'
        ? (item.message.tool_calls ?? []).flatMap((c) => {
            const note = noteOfToolCall(c.function.name, c.function.arguments);
            return note ? [note] : [];
          })
        : [],
    );
    const tasks = notes.filter((n) => n.kind === 'task_list').at(-1);
    expect(tasks).toBeDefined();
    if (tasks?.kind === 'task_list') expect(text).toContain(formatTaskList(tasks.tasks));
    const memories = notes.filter((n) => n.kind === 'memory');
    const pins = notes.filter((n) => n.kind === 'pin');
    expect(memories.length).toBeGreaterThan(0);
    expect(pins.length).toBeGreaterThan(0);
    for (const note of [...memories, ...pins])
      if (note.kind !== 'task_list') expect(text).toContain(note.text);
    const paths = touchedPaths(session);
    expect(paths.length).toBeGreaterThanOrEqual(5);
    for (const path of paths) expect(text, path).toContain(path);
  });
});
