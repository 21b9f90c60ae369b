/**
 * Cline's and Roo Code's tasks from before they used the API's tool calls: the model calls a tool
 * in XML inside its text, the result comes back as text in the next user message (the header
 * alone in one block, the output in the next), and a task is kept as its API history (JSON) or
 * exported as Markdown. Read with their calls, results and files; written back as they were; a
 * changed context written back readable. The messages are made up in the shapes those agents wrote.
 */
import { describe, expect, it } from 'vitest';
import { callFactsOf } from '../../../src/context/item-facts';
import { collectArtifactTrail, trailPaths } from '../../../src/context/artifact-trail';
import type { ContextItem } from '../../../src/context/items';
import { toolCallEffect } from '../../../src/context/tool-facts';
import { exportSession, importSession } from '../../../src/importers';
import { splitXmlToolCalls } from '../../../src/importers/xml-tool-use';
import { fakeTokenizer, itemSummary } from '../../support/items-factory';

const env = (n: number) => ({
  type: 'text',
  text: `<environment_details>\n# Time ${n}\n</environment_details>`,
});
const history = [
  { role: 'user', content: [{ type: 'text', text: '<task>\nMake the parser strict\n</task>' }, env(1)] },
  {
    role: 'assistant',
    content: [
      {
        type: 'text',
        text: '<thinking>\nRead it first.\n</thinking>\n\n<read_file>\n<path>src/parse.ts</path>\n</read_file>',
      },
    ],
  },
  {
    role: 'user',
    content: [
      { type: 'text', text: "[read_file for 'src/parse.ts'] Result:" },
      { type: 'text', text: 'export function parse(s) { return JSON.parse(s); }' },
      env(2),
    ],
  },
  {
    role: 'assistant',
    content: [
      {
        type: 'text',
        text:
          'Now the edit, then the tests.\n\n<replace_in_file>\n<path>src/parse.ts</path>\n<diff>\n<<<<<<< SEARCH\nreturn JSON.parse(s);\n=======\nreturn strict(s);\n>>>>>>> REPLACE\n</diff>\n</replace_in_file>\n\n' +
          '<execute_command>\n<command>npm test</command>\n<requires_approval>false</requires_approval>\n</execute_command>',
      },
    ],
  },
  {
    role: 'user',
    content: [
      { type: 'text', text: "[replace_in_file for 'src/parse.ts'] Result:" },
      { type: 'text', text: 'The content was successfully saved to src/parse.ts.' },
      {
        type: 'text',
        text: 'Tool [execute_command] was not executed because a tool has already been used in this message.',
      },
      env(3),
    ],
  },
  { role: 'assistant', content: [{ type: 'text', text: 'The parser is strict now.' }] },
  {
    role: 'user',
    content: [
      { type: 'text', text: '[ERROR] You did not use a tool in your previous response! Please retry.' },
      env(4),
    ],
  },
  {
    role: 'assistant',
    content: [
      {
        type: 'text',
        text: '<write_to_file>\n<path>docs/parse.md</path>\n<content>\n# Parse\nStrict: <content> is kept.\n</content>\n</write_to_file>',
      },
    ],
  },
  { role: 'user', content: [{ type: 'text', text: 'Also add a changelog entry.' }] },
];

describe('tool calls written as XML in the text', () => {
  it('are cut out with their parameters; the text between stays, and every piece joins back to the text', () => {
    const text = 'Reading.\n<read_file>\n<path> src/a.ts </path>\n</read_file>\nDone <read_file> inline.';
    const pieces = splitXmlToolCalls(text);
    expect(pieces).toEqual([
      { kind: 'text', text: 'Reading.\n' },
      {
        kind: 'call',
        name: 'read_file',
        input: { path: 'src/a.ts' },
        raw: '<read_file>\n<path> src/a.ts </path>\n</read_file>',
      },
      // A tag inside a sentence is no call.
      { kind: 'text', text: '\nDone <read_file> inline.' },
    ]);
    expect(pieces.map((p) => (p.kind === 'call' ? p.raw : p.text)).join('')).toBe(text);
  });

  it('free text runs to the last closing tag; Roo Code’s nested args give their paths; a call cut short runs to the end', () => {
    const [write] = splitXmlToolCalls(
      '<write_to_file>\n<path>a.md</path>\n<content>\nx </content> y\n</content>\n</write_to_file>',
    );
    expect(write).toMatchObject({ input: { path: 'a.md', content: 'x </content> y' } });
    const [read] = splitXmlToolCalls(
      '<read_file>\n<args>\n<file><path>a.ts</path></file>\n<file><path>b.ts</path><line_range>1-9</line_range></file>\n</args>\n</read_file>',
    );
    expect(read).toMatchObject({ input: { files: [{ path: 'a.ts' }, { path: 'b.ts' }] } });
    const cut = splitXmlToolCalls('Then:\n<execute_command>\n<command>npm test</command>');
    expect(cut[1]).toMatchObject({ kind: 'call', name: 'execute_command', input: { command: 'npm test' } });
  });

  it("Roo Code's apply_diff, a diff of search and replace blocks, edits the file it names", () => {
    const diff = '<<<<<<< SEARCH\n:start_line:3\n-------\na\n=======\nb\n>>>>>>> REPLACE';
    expect(toolCallEffect('apply_diff', JSON.stringify({ path: 'src/a.ts', diff }), null).touches).toEqual([
      { path: 'src/a.ts', op: 'edit' },
    ]);
  });
});

describe("a Cline task's API history with calls in XML", () => {
  const session = importSession(JSON.stringify(history), { tokenizer: fakeTokenizer });
  const results = session.items.filter(
    (i): i is Extract<ContextItem, { type: 'TOOL_RESULT' }> => i.type === 'TOOL_RESULT',
  );

  it('is a list in Anthropic’s format though its blocks are all text', () => {
    expect(session.format).toBe('anthropic');
    // Text blocks alone, with no call in XML and no result, stay an OpenAI list.
    const plain = [
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'hello' }] },
    ];
    expect(importSession(JSON.stringify(plain), { tokenizer: fakeTokenizer }).format).toBe('openai');
  });

  it('reads the calls, each answered by its result; the output after a header alone is the result’s', () => {
    const calls = session.items.flatMap((i) =>
      i.type === 'ASSISTANT_MESSAGE' ? (i.message.tool_calls ?? []) : [],
    );
    expect(calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ['read_file', { path: 'src/parse.ts' }],
      [
        'replace_in_file',
        {
          path: 'src/parse.ts',
          diff: '<<<<<<< SEARCH\nreturn JSON.parse(s);\n=======\nreturn strict(s);\n>>>>>>> REPLACE',
        },
      ],
      ['execute_command', { command: 'npm test', requires_approval: 'false' }],
      ['write_to_file', { path: 'docs/parse.md', content: '# Parse\nStrict: <content> is kept.' }],
    ]);
    expect(results.map((r) => r.message.tool_call_id)).toEqual(calls.slice(0, 3).map((c) => c.id));
    expect(itemSummary(results).map((r) => r[2])).toEqual([
      "[read_file for 'src/parse.ts'] Result:\nexport function parse(s) { return JSON.parse(s); }",
      "[replace_in_file for 'src/parse.ts'] Result:\nThe content was successfully saved to src/parse.ts.",
      'Tool [execute_command] was not executed because a tool has already been used in this message.',
    ]);
    // The words around the calls are the messages' text.
    expect(itemSummary(session.items.filter((i) => i.type === 'ASSISTANT_MESSAGE')).map((r) => r[2])).toEqual(
      [
        '<thinking>\nRead it first.\n</thinking>',
        'Now the edit, then the tests.',
        'The parser is strict now.',
        '',
      ],
    );
  });

  it('rounds follow the user’s words: results, context blocks and the no-tool nag are meta', () => {
    const users = session.items.filter((i) => i.type === 'USER_MESSAGE' && !i.isMeta);
    expect(itemSummary(users).map((r) => r[2])).toEqual([
      '<task>\nMake the parser strict\n</task>',
      'Also add a changelog entry.',
    ]);
    expect(Math.max(...session.items.map((i) => i.round))).toBe(2);
  });

  it('gives the files their operations', () => {
    expect(trailPaths(collectArtifactTrail(session.items)).sort()).toEqual(['docs/parse.md', 'src/parse.ts']);
    const ops = session.items.flatMap((i) =>
      i.type === 'ASSISTANT_MESSAGE' ? callFactsOf(i).flatMap((f) => f.touches.map((t) => t.op)) : [],
    );
    expect(ops).toEqual(['read', 'edit', 'write']);
  });

  it('writes back deep-equal when unchanged', () => {
    expect(JSON.parse(exportSession(session))).toEqual(history);
  });

  it('written back after a change, a changed call is XML with its new input, and reads back', () => {
    const changed = session.items.map((item) => {
      if (
        item.type !== 'ASSISTANT_MESSAGE' ||
        item.message.tool_calls?.[0]?.function.name !== 'write_to_file'
      )
        return item;
      const [call] = item.message.tool_calls;
      const args = JSON.stringify({ path: 'docs/parse.md', content: '# Parse [cut]' });
      return {
        ...item,
        message: {
          ...item.message,
          tool_calls: [{ ...call!, function: { ...call!.function, arguments: args } }],
        },
      };
    });
    const written = JSON.parse(
      exportSession({ items: changed, document: session.document }),
    ) as typeof history;
    expect(written.slice(0, 7)).toEqual(history.slice(0, 7));
    expect(written[7]?.content).toEqual([
      {
        type: 'text',
        text: '<write_to_file>\n<path>docs/parse.md</path>\n<content># Parse [cut]</content>\n</write_to_file>',
      },
    ]);
    const again = importSession(JSON.stringify(written), { tokenizer: fakeTokenizer });
    const last = again.items.filter((i) => i.type === 'ASSISTANT_MESSAGE').pop();
    expect(last?.type === 'ASSISTANT_MESSAGE' && last.message.tool_calls?.[0]?.function.arguments).toBe(
      JSON.stringify({ path: 'docs/parse.md', content: '# Parse [cut]' }),
    );
  });
});

/** The history as Cline's "Export task" writes it: blocks joined by line breaks, messages by `---`. */
function markdownOf(messages: typeof history): string {
  return `${messages
    .map((m) => {
      const text = m.content.map((b) => b.text).join('\n');
      return `**${m.role === 'user' ? 'User' : 'Assistant'}:**\n\n${text}\n\n`;
    })
    .join('---\n\n')}`;
}

describe('a task exported as Markdown', () => {
  const markdown = markdownOf(history);
  const session = importSession(markdown, { tokenizer: fakeTokenizer, fileName: 'cline_task.md' });

  it('is read as the history it was written from', () => {
    const json = importSession(JSON.stringify(history), { tokenizer: fakeTokenizer });
    expect(session.format).toBe('anthropic');
    const shape = (items: readonly ContextItem[]) =>
      items.map((i) => [
        i.type,
        i.isMeta,
        i.round,
        i.type === 'ASSISTANT_MESSAGE' ? (i.message.tool_calls ?? []).map((c) => c.function.arguments) : [],
      ]);
    expect(shape(session.items)).toEqual(shape(json.items));
    expect(itemSummary(session.items).map((r) => r[2])).toEqual(itemSummary(json.items).map((r) => r[2]));
  });

  it('writes back byte for byte when unchanged, with Windows line breaks too', () => {
    expect(exportSession(session)).toBe(markdown);
    const crlf = markdown.replace(/\n/g, '\r\n');
    expect(exportSession(importSession(crlf, { tokenizer: fakeTokenizer }))).toBe(crlf);
  });

  it('written back without a result, reads back without it', () => {
    const kept = session.items.filter(
      (i) => !(i.type === 'TOOL_RESULT' && i.message.content.startsWith('[read_file')),
    );
    const written = exportSession({ items: kept, document: session.document });
    expect(written).not.toContain("[read_file for 'src/parse.ts'] Result:");
    const again = importSession(written, { tokenizer: fakeTokenizer });
    expect(again.items.filter((i) => i.type === 'TOOL_RESULT')).toHaveLength(2);
    expect(itemSummary(again.items).map((r) => r[2])).toContain('Also add a changelog entry.');
  });
});
