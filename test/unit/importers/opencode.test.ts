/**
 * OpenCode's sessions as `opencode export` writes them: read as OpenCode sends them to the model
 * (each step of a reply an assistant message and its calls' results, errors and interrupted calls
 * answered, failed replies left out, OpenCode's own compaction honoured or, for the whole history,
 * left out), written back byte-same when unchanged and readable when changed. The exports are made
 * up in the shapes OpenCode 1.15 writes.
 */
import { describe, expect, it } from 'vitest';
import { collectArtifactTrail, trailPaths } from '../../../src/context/artifact-trail';
import { finishCompaction, planCompaction } from '../../../src/context/compaction-plan';
import { parseCompactionConfig } from '../../../src/context/config';
import type { CompactionSummaryItem, ContextItem } from '../../../src/context/items';
import { collectOpenErrors } from '../../../src/context/open-errors';
import { pairToolCalls, unansweredCalls } from '../../../src/context/tool-pairs';
import { detectSessionFormat, exportSession, ImportError, importSession } from '../../../src/importers';
import { fakeTokenizer, itemSummary } from '../../support/items-factory';

const SESSION = 'ses_0922c7a27ffesprkDLUo8I7EY3';
let counter = 0;
type Part = Record<string, unknown> & { type: string };
const part = (messageID: string, fields: Record<string, unknown>): Part => ({
  type: '',
  ...fields,
  id: `prt_${String(++counter).padStart(4, '0')}`,
  sessionID: SESSION,
  messageID,
});
const user = (id: string, parts: Record<string, unknown>[], extra: Record<string, unknown> = {}) => ({
  info: { role: 'user', time: { created: 1 }, agent: 'build', ...extra, id, sessionID: SESSION },
  parts: parts.map((p) => part(id, p)),
});
const assistant = (id: string, parts: Record<string, unknown>[], extra: Record<string, unknown> = {}) => ({
  info: {
    parentID: 'msg_a',
    role: 'assistant',
    mode: 'build',
    agent: 'build',
    modelID: 'glm-5.2',
    providerID: 'zhipuai',
    time: { created: 2, completed: 3 },
    finish: 'tool-calls',
    ...extra,
    id,
    sessionID: SESSION,
  },
  parts: parts.map((p) => part(id, p)),
});
const start = { type: 'step-start' };
const finish = { type: 'step-finish', reason: 'tool-calls', cost: 0 };
const tool = (
  callID: string,
  name: string,
  input: Record<string, unknown>,
  state: Record<string, unknown>,
) => ({
  type: 'tool',
  tool: name,
  callID,
  state: { input, ...state },
});
const done = (output: string, time: Record<string, unknown> = { start: 1, end: 2 }) => ({
  status: 'completed',
  output,
  title: '',
  metadata: {},
  time,
});
const PATCH =
  '*** Begin Patch\n*** Update File: src/app.ts\n@@\n-export const x = 1;\n+export const x = 2;\n*** End Patch';

const messages = [
  user('msg_a', [
    { type: 'text', text: 'Fix the failing test in src/app.ts' },
    { type: 'file', mime: 'text/plain', filename: 'notes.txt', url: 'file:///w/notes.txt' },
    { type: 'text', text: 'Called the Read tool on notes.txt: remember UTC', synthetic: true },
  ]),
  assistant('msg_b', [
    start,
    { type: 'reasoning', text: 'Read first, then test.', time: { start: 1, end: 2 } },
    { type: 'text', text: 'Reading the file and running the tests.' },
    tool('call_1', 'read', { filePath: 'src/app.ts' }, done('1: export const x = 1;')),
    tool(
      'call_2',
      'bash',
      { command: 'npm test', description: 'Run tests' },
      {
        status: 'error',
        error: 'Error: expected 2, got 1',
        time: { start: 1, end: 2 },
      },
    ),
    finish,
    start,
    tool('call_3', 'apply_patch', { patchText: PATCH }, done('Success. Updated src/app.ts')),
    tool('call_4', 'bash', { command: 'npm test' }, { status: 'running', time: { start: 1 } }),
    finish,
  ]),
  assistant('msg_c', [], { error: { name: 'APIError', data: { message: 'region blocked' } } }),
  user('msg_d', [{ type: 'text', text: 'use the UTC date' }], {
    model: { providerID: 'zhipuai', modelID: 'glm-5.2' },
  }),
  assistant('msg_e', [start, { type: 'text', text: 'Done.' }, { ...finish, reason: 'stop' }], {
    error: { name: 'MessageAbortedError', data: { message: 'aborted' } },
  }),
];
const exported = {
  info: {
    id: SESSION,
    slug: 'quiet-river',
    directory: '/w',
    title: 'Fix test',
    version: '1.15.6',
    time: { created: 1 },
  },
  messages,
};
const text = `${JSON.stringify(exported, null, 2)}\n`;

describe('an OpenCode export', () => {
  const session = importSession(text, { tokenizer: fakeTokenizer });

  it('is detected and read as OpenCode sends it: each step a reply with its results, failed replies left out', () => {
    expect(detectSessionFormat(text).format).toBe('opencode');
    expect(session.format).toBe('opencode');
    expect(itemSummary(session.items)).toEqual([
      [
        'USER_MESSAGE',
        false,
        'Fix the failing test in src/app.tsCalled the Read tool on notes.txt: remember UTC',
      ],
      ['ASSISTANT_MESSAGE', false, 'Reading the file and running the tests.'],
      ['TOOL_RESULT', false, '1: export const x = 1;'],
      ['TOOL_RESULT', false, 'Error: expected 2, got 1'],
      ['ASSISTANT_MESSAGE', false, ''],
      ['TOOL_RESULT', false, 'Success. Updated src/app.ts'],
      ['TOOL_RESULT', false, '[Tool execution was interrupted]'],
      ['USER_MESSAGE', false, 'use the UTC date'],
      ['ASSISTANT_MESSAGE', false, 'Done.'],
    ]);
    const reply = session.items[1] as Extract<ContextItem, { type: 'ASSISTANT_MESSAGE' }>;
    expect(reply.message.reasoning_content).toBe('Read first, then test.');
    expect(
      reply.message.tool_calls?.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)]),
    ).toEqual([
      ['call_1', 'read', { filePath: 'src/app.ts' }],
      ['call_2', 'bash', { command: 'npm test', description: 'Run tests' }],
    ]);
    expect(session.items.map((i) => i.round)).toEqual([1, 1, 1, 1, 1, 1, 1, 2, 2]);
    expect(unansweredCalls(pairToolCalls(session.items))).toEqual([]);
  });

  it('gives the files their operations (a patch’s too) and the failed call as an open error; an interrupted call’s too, as OpenCode answers it', () => {
    expect(trailPaths(collectArtifactTrail(session.items))).toEqual(['src/app.ts']);
    expect(collectArtifactTrail(session.items).files[0]?.ops).toEqual(['read', 'edit']);
    expect(collectOpenErrors(session.items).map((e) => e.text)).toEqual([
      expect.stringContaining('expected 2, got 1'),
      expect.stringContaining('[Tool execution was interrupted]'),
    ]);
  });

  it('writes back byte-same when unchanged, in either view', () => {
    expect(exportSession(session)).toBe(text);
    expect(exportSession(importSession(text, { tokenizer: fakeTokenizer, wholeHistory: true }))).toBe(text);
  });

  it('written back after a change (a result cut, a step dropped, a summary added), reads back as the changed items', () => {
    const cut = session.items.map((item) =>
      item.type === 'TOOL_RESULT' && item.message.tool_call_id === 'call_3'
        ? { ...item, message: { ...item.message, content: 'Success. [cut]' } }
        : item,
    );
    const summary = {
      ...(session.items[0] as ContextItem),
      id: 'summary-1',
      type: 'COMPACTION_SUMMARY',
      origin: undefined,
      isMeta: true,
      summarizer: 'extractive',
      message: { role: 'user', content: '[summary] read src/app.ts; the test failed' },
    } as ContextItem;
    // The first step of the reply and its results summarized; the task stays.
    const items = [cut[0] as ContextItem, summary, ...cut.slice(4)];
    const written = JSON.parse(exportSession({ items, document: session.document })) as typeof exported;
    const ids = written.messages.map((m) => m.info.id);
    expect(ids).toEqual(['msg_a', 'msg_a.000001', 'msg_a.000002', 'msg_b', 'msg_c', 'msg_d', 'msg_e']);
    // OpenCode's own compaction: a request, answered by a summary.
    expect(written.messages[1]?.parts).toEqual([
      expect.objectContaining({ type: 'compaction', auto: true, tail_start_id: 'msg_a' }),
    ]);
    expect(written.messages[2]?.info).toMatchObject({
      summary: true,
      mode: 'compaction',
      parentID: 'msg_a.000001',
      finish: 'stop',
    });
    // The reply keeps its second step whole but for the result cut.
    const reply = written.messages[3] as (typeof messages)[number];
    expect(reply.parts.map((p) => p.type)).toEqual(['step-start', 'tool', 'tool', 'step-finish']);
    expect(reply.parts[1]).toMatchObject({
      callID: 'call_3',
      state: { status: 'completed', output: 'Success. [cut]' },
    });
    expect(reply.parts[2]).toEqual(messages[1]?.parts[8]);
    // Read back as OpenCode reads it: the tail before the summary (the task), the summary, what follows.
    const again = importSession(JSON.stringify(written), { tokenizer: fakeTokenizer });
    expect(itemSummary(again.items).map(([type, , t]) => [type, t])).toEqual([
      ['USER_MESSAGE', 'Fix the failing test in src/app.tsCalled the Read tool on notes.txt: remember UTC'],
      ['COMPACTION_SUMMARY', '[summary] read src/app.ts; the test failed'],
      ['ASSISTANT_MESSAGE', ''],
      ['TOOL_RESULT', 'Success. [cut]'],
      ['TOOL_RESULT', '[Tool execution was interrupted]'],
      ['USER_MESSAGE', 'use the UTC date'],
      ['ASSISTANT_MESSAGE', 'Done.'],
    ]);
  });

  it('a compaction planned on it, written back and read again, is the compacted context', () => {
    const config = parseCompactionConfig({ maxContextTokens: 400, summarizer: 'extractive' });
    const plan = planCompaction({
      items: session.items,
      config,
      tokenizer: fakeTokenizer,
      trigger: 'manual',
      compactionId: 'c1',
    });
    const summary: CompactionSummaryItem = {
      id: 'c1:summary',
      type: 'COMPACTION_SUMMARY',
      message: { role: 'user', content: '[summary] earlier work' },
      tokens: 5,
      round: 2,
      isMeta: true,
      pinned: false,
      ephemeral: false,
      summarizer: 'extractive',
    } as CompactionSummaryItem;
    const compacted = finishCompaction(plan, summary);
    const again = importSession(exportSession({ items: compacted, document: session.document }), {
      tokenizer: fakeTokenizer,
    });
    const conversation = (items: readonly ContextItem[]) =>
      items
        .filter(
          (i) =>
            i.type === 'ASSISTANT_MESSAGE' || i.type === 'TOOL_RESULT' || i.type === 'COMPACTION_SUMMARY',
        )
        .map((i) => [i.type, i.message.content]);
    expect(conversation(again.items)).toEqual(conversation(compacted));
    expect(unansweredCalls(pairToolCalls(again.items))).toEqual([]);
  });

  it('new messages and parts sort where they stand; a new call’s state is complete; a new reply answers the last user message', () => {
    const note = (n: number) =>
      ({
        ...(session.items[0] as ContextItem),
        id: `note-${n}`,
        origin: undefined,
        isMeta: true,
        type: 'MEMORY',
        message: { role: 'user', content: `[Memory] fact ${n}` },
      }) as ContextItem;
    const reply = {
      ...(session.items[1] as ContextItem),
      id: 'new-reply',
      origin: undefined,
      message: {
        role: 'assistant',
        content: 'Running it.',
        tool_calls: [
          { id: 'call_9', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } },
        ],
      },
    } as ContextItem;
    const result = {
      ...(session.items[2] as ContextItem),
      id: 'new-result',
      origin: undefined,
      message: { role: 'tool', tool_call_id: 'call_9', content: 'a.ts' },
    } as ContextItem;
    const items = [...session.items, ...Array.from({ length: 11 }, (_, n) => note(n)), reply, result];
    const written = JSON.parse(exportSession({ items, document: session.document })) as typeof exported;
    const ids = written.messages.map((m) => m.info.id);
    expect([...ids].sort()).toEqual(ids);
    const last = written.messages[written.messages.length - 1] as (typeof messages)[number];
    expect(last.info).toMatchObject({ role: 'assistant', parentID: 'msg_d', finish: 'tool-calls' });
    expect(last.parts.find((p) => p.type === 'tool')).toMatchObject({
      callID: 'call_9',
      state: { status: 'completed', output: 'a.ts', time: { start: 2, end: 2 } },
    });
    expect(written.messages[5]?.parts[0]).toMatchObject({ type: 'text', synthetic: true });
    // A new part in a message sorts after the part before it.
    const cut = session.items.map((item) =>
      item.id === session.items[4]?.id
        ? ({
            ...item,
            message: { ...(item as { message: object }).message, content: 'Patching.' },
          } as ContextItem)
        : item,
    );
    const patched = JSON.parse(exportSession({ items: cut, document: session.document })) as typeof exported;
    const partIds = (patched.messages[1] as (typeof messages)[number]).parts.map((p) => String(p.id));
    expect([...partIds].sort()).toEqual(partIds);
    expect((patched.messages[1] as (typeof messages)[number]).parts.map((p) => p.type)).toContain('text');
  });

  it('a user message’s attachment changed, or its text cut beside one, is written as its text once', () => {
    const attached = {
      ...exported,
      messages: [
        user('msg_a', [
          { type: 'text', text: 'Look at this screenshot and fix the layout' },
          { type: 'file', mime: 'image/png', filename: 'a.png', url: 'data:image/png;base64,AAAA' },
        ]),
        user('msg_b', [
          { type: 'file', mime: 'image/png', filename: 'b.png', url: 'data:image/png;base64,AAAA' },
        ]),
      ],
    };
    const read = importSession(JSON.stringify(attached), { tokenizer: fakeTokenizer });
    expect(itemSummary(read.items).map((r) => r[2])).toEqual([
      'Look at this screenshot and fix the layout[Attached image/png: a.png]',
      '[Attached image/png: b.png]',
    ]);
    const changed = read.items.map(
      (item, i) =>
        ({
          ...item,
          message: { role: 'user', content: i === 0 ? 'Look at this [cut]' : '[image cut]' },
        }) as ContextItem,
    );
    const written = JSON.parse(exportSession({ items: changed, document: read.document })) as typeof exported;
    expect(written.messages.map((m) => m.parts.map((p) => [p.type, p.text]))).toEqual([
      [['text', 'Look at this [cut]']],
      [['text', '[image cut]']],
    ]);
  });

  it('a message of a file the user named alone is theirs, not OpenCode’s', () => {
    const named = {
      ...exported,
      messages: [
        user('msg_a', [
          { type: 'file', mime: 'text/plain', filename: 'spec.md', url: 'file:///w/spec.md' },
          { type: 'text', text: 'Called the Read tool with the following input: spec.md', synthetic: true },
        ]),
      ],
    };
    const read = importSession(JSON.stringify(named), { tokenizer: fakeTokenizer });
    expect(read.items[0]).toMatchObject({ type: 'USER_MESSAGE', isMeta: false, round: 1 });
  });

  it('names a bad message and a bad part by their field', () => {
    const bad = (value: unknown) => () =>
      importSession(JSON.stringify(value), { tokenizer: fakeTokenizer, format: 'opencode' });
    expect(bad({ ...exported, messages: [{ info: { role: 'system' }, parts: [] }] })).toThrow(
      /messages\[0\]\.info\.role: expected user or assistant, got a string/,
    );
    expect(
      bad({ ...exported, messages: [assistant('m', [{ type: 'tool', tool: 'read', state: {} }])] }),
    ).toThrow(/messages\[0\]\.parts\[0\]: expected a tool part with a string callID and tool, and a state/);
    expect(bad({ messages: [] })).toThrow(ImportError);
  });
});

describe('OpenCode’s own compaction', () => {
  const compacted = [
    user('msg_1', [{ type: 'text', text: 'Port the parser to Rust' }]),
    assistant('msg_2', [
      start,
      tool('call_a', 'read', { filePath: 'src/parser.ts' }, done('old parser source')),
      finish,
    ]),
    user('msg_3', [{ type: 'text', text: 'keep the old tests' }]),
    assistant('msg_4', [
      start,
      tool(
        'call_b',
        'read',
        { filePath: 'test/parser.test.ts' },
        done('tests', { start: 1, end: 2, compacted: 9 }),
      ),
      finish,
    ]),
    user('msg_5', [{ type: 'compaction', auto: true, tail_start_id: 'msg_3' }]),
    assistant(
      'msg_6',
      [
        start,
        { type: 'text', text: 'We read src/parser.ts and planned the port.' },
        { ...finish, reason: 'stop' },
      ],
      {
        parentID: 'msg_5',
        mode: 'compaction',
        agent: 'compaction',
        summary: true,
        finish: 'stop',
      },
    ),
    user('msg_7', [{ type: 'text', text: 'Continue if you have next steps', synthetic: true }], {
      metadata: { compaction_continue: true },
    }),
    assistant('msg_8', [
      start,
      tool('call_c', 'write', { filePath: 'src/parser.rs', content: 'fn main() {}' }, done('Wrote file')),
      finish,
    ]),
  ];
  const value = { info: { id: SESSION, version: '1.15.6', time: { created: 1 } }, messages: compacted };

  it('the context is the tail it kept, its summary and what came after, a cleared output as OpenCode sends it', () => {
    const session = importSession(JSON.stringify(value), { tokenizer: fakeTokenizer });
    expect(itemSummary(session.items)).toEqual([
      ['USER_MESSAGE', false, 'keep the old tests'],
      ['ASSISTANT_MESSAGE', false, ''],
      ['TOOL_RESULT', false, '[Old tool result content cleared]'],
      ['COMPACTION_SUMMARY', true, 'We read src/parser.ts and planned the port.'],
      ['USER_MESSAGE', true, 'Continue if you have next steps'],
      ['ASSISTANT_MESSAGE', false, ''],
      ['TOOL_RESULT', false, 'Wrote file'],
    ]);
    expect(session.items[4]?.isMeta).toBe(true);
    expect(exportSession(session)).toBe(`${JSON.stringify(value)}\n`);
  });

  it('compacted again, its new compaction keeps as its tail only what was in the context', () => {
    const session = importSession(JSON.stringify(value), { tokenizer: fakeTokenizer });
    const summary = {
      ...(session.items[3] as ContextItem),
      id: 'c2:summary',
      origin: undefined,
      message: { role: 'user', content: '[summary] ported the parser' },
    } as ContextItem;
    // The tail and the old summary summarized; the notice and the last reply stay.
    const written = JSON.parse(
      exportSession({ items: [summary, ...session.items.slice(4)], document: session.document }),
    ) as { messages: { info: Record<string, unknown>; parts: Record<string, unknown>[] }[] };
    const request = written.messages.find((m) =>
      m.parts.some((p) => p.type === 'compaction' && p.auto === true && m.info.id !== 'msg_5'),
    );
    expect(request?.parts[0]?.tail_start_id).toBeUndefined();
    const again = importSession(JSON.stringify(written), { tokenizer: fakeTokenizer });
    expect(itemSummary(again.items).map((r) => r[2])).toEqual([
      '[summary] ported the parser',
      'Continue if you have next steps',
      '',
      'Wrote file',
    ]);
  });

  it('the whole history replays every message but the compaction, every output whole', () => {
    const session = importSession(JSON.stringify(value), { tokenizer: fakeTokenizer, wholeHistory: true });
    expect(itemSummary(session.items).map((r) => r[2])).toEqual([
      'Port the parser to Rust',
      '',
      'old parser source',
      'keep the old tests',
      '',
      'tests',
      'Continue if you have next steps',
      '',
      'Wrote file',
    ]);
  });
});
