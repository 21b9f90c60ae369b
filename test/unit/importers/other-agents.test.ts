/**
 * Claude Code's and Codex's JSONL are told apart from pi's and imported; JSONL of yet another agent
 * (objects with a `type`, as pi's lines have) is refused with the types it holds and the formats
 * that are read, not imported as an empty session. The lines are made up in the shape of each
 * agent's session files.
 */
import { describe, expect, it } from 'vitest';
import { exportSession, ImportError, importSession } from '../../../src/importers';
import { messageText } from '../../../src/context/items';
import { fakeTokenizer } from '../../support/items-factory';

const jsonl = (lines: readonly unknown[]): string => lines.map((l) => JSON.stringify(l)).join('\n');

const claudeCodeLike = jsonl([
  { type: 'summary', summary: 'Fixing a bug', leafUuid: 'a1' },
  { type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'Fix a.py' } },
  {
    type: 'assistant',
    uuid: 'a1',
    parentUuid: 'u1',
    message: {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/x/a.py' } }],
    },
  },
  {
    type: 'user',
    uuid: 'u2',
    parentUuid: 'a1',
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x = 1' }] },
  },
]);

const codexLike = jsonl([
  { timestamp: '2025-01-01T00:00:00Z', type: 'session_meta', payload: { id: 's' } },
  {
    timestamp: '2025-01-01T00:00:01Z',
    type: 'response_item',
    payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Fix a.py' }] },
  },
]);

/** Lines in the shape of an agent that is not read (a made-up "event log"). */
const otherAgent = jsonl([
  { type: 'session_start', id: 's', cwd: '/x' },
  { type: 'prompt', text: 'Fix a.py' },
  { type: 'tool', name: 'read', args: { path: 'a.py' } },
  { type: 'prompt', text: 'Thanks' },
]);

function refusal(text: string): ImportError {
  try {
    importSession(text, { tokenizer: fakeTokenizer });
  } catch (err) {
    if (err instanceof ImportError) return err;
    throw err;
  }
  throw new Error('imported');
}

describe('JSONL of another agent', () => {
  it("is imported when it is Claude Code's or Codex's", () => {
    const claude = importSession(claudeCodeLike, { tokenizer: fakeTokenizer });
    expect(claude.format).toBe('claude-code');
    expect(claude.items.map((i) => i.type)).toEqual(['USER_MESSAGE', 'ASSISTANT_MESSAGE', 'TOOL_RESULT']);
    const codex = importSession(codexLike, { tokenizer: fakeTokenizer });
    expect(codex.format).toBe('codex');
    expect(codex.items.map((i) => i.type)).toEqual(['USER_MESSAGE']);
  });

  it('is refused otherwise, naming the types it holds and the formats that are read', () => {
    const err = refusal(otherAgent);
    expect(err.message).toContain('not a pi session');
    expect(err.message).toContain('"prompt" ×2');
    expect(err.message).toContain('"session_start" ×1');
    expect(err.message).toContain('"tool" ×1');
    expect(err.message).toContain('Claude Code session JSONL, Codex rollout JSONL');
    expect(err.message).toContain('SWE-agent');
    expect(err.line).toBe(1);
  });

  it('names at most eight types', () => {
    const err = refusal(jsonl(Array.from({ length: 12 }, (_, i) => ({ type: `kind-${i}` }))));
    expect(err.message).toContain('"kind-7" ×1');
    expect(err.message).not.toContain('"kind-8"');
    expect(err.message).toContain('and 4 more');
  });

  it('leaves a pi session without its header line readable', () => {
    const session = importSession(
      jsonl([{ type: 'message', id: 'u1', parentId: null, message: { role: 'user', content: 'Hello' } }]),
      { tokenizer: fakeTokenizer },
    );
    expect(session.format).toBe('pi');
    expect(session.items.map((i) => i.type)).toEqual(['USER_MESSAGE']);
  });
});

describe('an OpenAI list holding Anthropic tool blocks', () => {
  const anthropic = [
    { role: 'system', content: 'You are a coding agent.' },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Reading it.' },
        { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.py' } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x = 1' }] },
  ];
  // An OpenAI tool message keeps it from being read as Anthropic's format.
  const mixed = [...anthropic, { role: 'tool', tool_call_id: 'call_1', content: 'ok' }];

  it.each([
    ['a JSON array', JSON.stringify(mixed), undefined],
    ['an object with messages', JSON.stringify({ messages: mixed }), undefined],
    ['JSONL', jsonl(mixed), undefined],
    ["Anthropic's list read as OpenAI's", JSON.stringify(anthropic), 'openai' as const],
  ])(
    'as %s: imported as an OpenAI list, with a warning that its tool blocks are not read',
    (_, text, format) => {
      const session = importSession(text, { tokenizer: fakeTokenizer, ...(format ? { format } : {}) });
      expect(session.format).toBe('openai');
      expect(session.warnings?.[0]).toContain('1 tool_use and 1 tool_result content block(s)');
      // The OpenAI tool message of the mixed list answers no call: it is never sent.
      expect(session.warnings?.slice(1)).toEqual(
        format
          ? []
          : [
              '1 tool result answers no call before it: kept and written back, never sent to the model (a request holds no result without its call)',
            ],
      );
    },
  );

  it("read as Anthropic's format on request, the first OpenAI tool field is named", () => {
    expect(() =>
      importSession(JSON.stringify(mixed), { tokenizer: fakeTokenizer, format: 'anthropic' }),
    ).toThrow(/\[3\]\.role: expected a user, assistant or system message, got "tool"/);
    const calls = [...anthropic, { role: 'assistant', content: null, tool_calls: [] }];
    expect(() =>
      importSession(JSON.stringify(calls), { tokenizer: fakeTokenizer, format: 'anthropic' }),
    ).toThrow(/\[3\]\.tool_calls: an OpenAI tool field/);
  });

  it("a Mistral list's thinking blocks (lists, not strings) keep it an OpenAI list", () => {
    const mistral = [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: [{ type: 'text', text: 'greet back' }] },
          { type: 'text', text: 'hello' },
        ],
      },
    ];
    expect(importSession(JSON.stringify(mistral), { tokenizer: fakeTokenizer }).format).toBe('openai');
  });

  it("a tool message's output in `tool_output` parts (lists converted from Codex sessions) is its text, written back as it was", () => {
    const list = [
      { role: 'user', content: 'Run the tests' },
      {
        role: 'assistant',
        content: [{ type: 'tool_call', id: 'call_1' }],
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'exec_command', arguments: '{"cmd":"npm test"}' },
          },
        ],
      },
      {
        role: 'tool',
        tool_call_id: 'call_1',
        content: [{ type: 'tool_output', text: 'Exit code: 1\nOutput:\n2 failing' }],
      },
    ];
    const text = JSON.stringify(list, null, 2);
    const session = importSession(text, { tokenizer: fakeTokenizer });
    const result = session.items.find((i) => i.type === 'TOOL_RESULT');
    expect(result?.type === 'TOOL_RESULT' && result.message.content).toBe('Exit code: 1\nOutput:\n2 failing');
    expect(JSON.parse(exportSession(session))).toStrictEqual(list);
    // Changed, the text goes back into its part.
    const changed = session.items.map((i) =>
      i.type === 'TOOL_RESULT' ? { ...i, message: { ...i.message, content: 'cut' } } : i,
    );
    const written = JSON.parse(exportSession({ items: changed, document: session.document })) as typeof list;
    expect(written[2]?.content).toStrictEqual([{ type: 'tool_output', text: 'cut' }]);
  });

  it("a user message's text in `input_text` parts (the Responses API) is its text, written back as it was", () => {
    const image = { type: 'input_image', image_url: 'data:image/png;base64,AAAA' };
    const list = [
      { role: 'user', content: [{ type: 'input_text', text: 'Fix the failing test in a.py' }, image] },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] },
    ];
    const session = importSession(JSON.stringify(list), { tokenizer: fakeTokenizer });
    const user = session.items.find((i) => i.type === 'USER_MESSAGE');
    expect(user && messageText(user.message)).toBe('Fix the failing test in a.py');
    expect(JSON.parse(exportSession(session))).toStrictEqual(list);
    const changed = session.items.map((i) =>
      i.type === 'USER_MESSAGE'
        ? { ...i, message: { ...i.message, content: [{ type: 'text', text: 'cut' }, image] } }
        : i,
    );
    const written = JSON.parse(exportSession({ items: changed, document: session.document })) as typeof list;
    expect(written[0]?.content).toStrictEqual([{ type: 'input_text', text: 'cut' }, image]);
  });

  it("a tool_use block that repeats its message's own tool call (same id) gives no warning: the call is read", () => {
    const call = {
      id: 'call_1',
      type: 'function',
      function: { name: 'read', arguments: '{"filePath":"a.py"}' },
    };
    const session = importSession(
      JSON.stringify({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Fix a.py' }] },
          {
            role: 'assistant',
            content: [
              { type: 'tool_use', tool_call_id: 'call_1', name: 'read', arguments: '{"filePath":"a.py"}' },
            ],
            tool_calls: [call],
          },
          {
            role: 'tool',
            tool_call_id: 'call_1',
            content: [
              { type: 'tool_output', text: 'x = 1' },
              { type: 'tool_result', tool_use_id: 'call_1', content: 'a.ts' },
            ],
          },
          // One that repeats no call of its message is still reported, and so is a result block
          // (its output is not the message's text), whatever its id.
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_9', name: 'Read', input: {} }] },
        ],
      }),
      { tokenizer: fakeTokenizer },
    );
    expect(session.warnings).toHaveLength(1);
    expect(session.warnings?.[0]).toMatch(/^1 tool_result and 1 tool_use content block\(s\)/);
  });

  it("keeps subagents' messages written into the list (role assistant-subagent-<id>) out of the context, and writes them back where they were", () => {
    const sub = (content: string) => ({
      role: 'assistant-subagent-a1b2',
      content,
      _metadata: { source: 'subagent' },
    });
    const list = {
      messages: [
        { role: 'user', content: 'Fix a.py' },
        sub('Explore the repository'),
        { role: 'assistant', content: 'Looking.' },
        sub('Found a.py'),
        sub('Done exploring'),
        { role: 'user', content: 'Thanks' },
        sub('late'),
      ],
      meta: { source: 'claude-jsonl-merged' },
    };
    const session = importSession(JSON.stringify(list), { tokenizer: fakeTokenizer });
    expect(
      session.items.map((i) => (i.type === 'TOOL_DEFINITIONS' ? '' : messageText(i.message))),
    ).toStrictEqual(['Fix a.py', 'Looking.', 'Thanks']);
    expect(session.warnings).toStrictEqual([expect.stringMatching(/^4 message\(s\) of 1 subagent\(s\)/)]);
    expect(JSON.parse(exportSession(session))).toStrictEqual(list);
    // The assistant's reply gone (compacted away): the subagents' messages stay in their places.
    const without = session.items.filter(
      (i) => i.type === 'TOOL_DEFINITIONS' || messageText(i.message) !== 'Looking.',
    );
    const written = JSON.parse(exportSession({ items: without, document: session.document })) as typeof list;
    expect(written.messages).toStrictEqual(list.messages.filter((m) => m.content !== 'Looking.'));
  });

  it('an OpenAI list with content parts of its own gives no warning', () => {
    const session = importSession(
      JSON.stringify([
        { role: 'user', content: [{ type: 'text', text: 'Fix a.py' }] },
        { role: 'assistant', content: 'Done.' },
      ]),
      { tokenizer: fakeTokenizer },
    );
    expect(session.warnings).toBeUndefined();
  });
});
