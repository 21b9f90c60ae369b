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
import { parseCompactionConfig } from '../../../src/context/config';
import { planCut } from '../../../src/context/item-cuts';
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

  it('reads only the tools’ own parameters, in order: a call cut short keeps its open value, its closing tag inside a value does not close it', () => {
    const [html] = splitXmlToolCalls(
      '<write_to_file>\n<path>index.html</path>\n<content>\n<div>hi</div>\n<p>more',
    );
    expect(html).toMatchObject({ input: { path: 'index.html', content: '<div>hi</div>\n<p>more' } });
    const doc =
      '<write_to_file>\n<path>docs/t.md</path>\n<content>\nCall <write_to_file> and </write_to_file>.\n</content>\n</write_to_file>\nDone.';
    const pieces = splitXmlToolCalls(doc);
    expect(pieces[0]).toMatchObject({
      input: { path: 'docs/t.md', content: 'Call <write_to_file> and </write_to_file>.' },
    });
    expect(pieces[1]).toEqual({ kind: 'text', text: '\nDone.' });
  });

  it('a call in the middle of a line counts when a parameter follows its tag', () => {
    const pieces = splitXmlToolCalls("I'll read it now: <read_file><path>a.ts</path></read_file>");
    expect(pieces).toMatchObject([
      { kind: 'text' },
      { kind: 'call', name: 'read_file', input: { path: 'a.ts' } },
    ]);
  });

  it('stays linear on hostile text: many unclosed tags, many opening tags', () => {
    const started = performance.now();
    splitXmlToolCalls(`<write_to_file>\n${'<a>'.repeat(50_000)}`);
    splitXmlToolCalls(`<write_to_file>\n${'<content>'.repeat(20_000)}`);
    splitXmlToolCalls('<read_file>\n'.repeat(20_000));
    expect(performance.now() - started).toBeLessThan(2000);
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

describe('a compacted task written back', () => {
  it('a call whose arguments a cut made no JSON is written as XML with what it still holds; each call starts its line', () => {
    // The edit's diff long enough to be cut.
    const long = JSON.parse(
      JSON.stringify(history).replace('return strict(s);', `return strict(s); // ${'x '.repeat(600)}`),
    ) as typeof history;
    const session = importSession(JSON.stringify(long), { tokenizer: fakeTokenizer });
    const config = parseCompactionConfig({ maxContextTokens: 8000 });
    const cut = session.items.map((item) =>
      item.type === 'ASSISTANT_MESSAGE' && (item.message.tool_calls?.length ?? 0) > 1
        ? (planCut(item, config, fakeTokenizer, 8, true)?.write() ?? item)
        : item,
    );
    expect(cut.some((i) => i.id.includes('~cut'))).toBe(true);
    const written = JSON.parse(exportSession({ items: cut, document: session.document })) as typeof history;
    const text = written[3]?.content[0]?.text ?? '';
    expect(text).toMatch(
      /^Now the edit, then the tests\.\n\n<replace_in_file>\n<path>src\/parse\.ts<\/path>\n<diff>/,
    );
    expect(text).toMatch(
      /\[TRUNCATED original~\d+ tokens; recall #[0-9a-f]+\]<\/diff>\n<\/replace_in_file>\n\n<execute_command>\n/,
    );
    const again = importSession(JSON.stringify(written), { tokenizer: fakeTokenizer });
    const names = (items: readonly ContextItem[]) =>
      items.flatMap((i) =>
        i.type === 'ASSISTANT_MESSAGE' ? (i.message.tool_calls ?? []).map((c) => c.function.name) : [],
      );
    expect(names(again.items)).toEqual(names(session.items));
    expect(again.items.filter((i) => i.type === 'TOOL_RESULT')).toHaveLength(3);
  });
});

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

  it('writes back byte for byte when unchanged, with Windows line breaks too, or a mix of both', () => {
    expect(exportSession(session)).toBe(markdown);
    const crlf = markdown.replace(/\n/g, '\r\n');
    expect(exportSession(importSession(crlf, { tokenizer: fakeTokenizer }))).toBe(crlf);
    const mixed = markdown.replace('Make the parser strict', 'Make the parser strict\r\n(a pasted line)');
    expect(exportSession(importSession(mixed, { tokenizer: fakeTokenizer }))).toBe(mixed);
  });

  it('a long run of white space before its last words is read in linear time and written back', () => {
    const padded = `${markdown.trimEnd()}${' '.repeat(100_000)}x\n\n`;
    const started = performance.now();
    const read = importSession(padded, { tokenizer: fakeTokenizer });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(exportSession(read)).toBe(padded);
  });

  it('a resumption that quotes a result’s header is the user’s words, not a result', () => {
    const quoted = markdownOf([
      ...history.slice(0, 2),
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: "[TASK RESUMPTION] Interrupted.\nThe log said [read_file for 'a'] Result: twice.",
          },
        ],
      },
    ]);
    const read = importSession(quoted, { tokenizer: fakeTokenizer });
    expect(read.items.filter((i) => i.type === 'TOOL_RESULT')).toHaveLength(0);
    expect(
      itemSummary(read.items.filter((i) => i.type === 'USER_MESSAGE' && !i.isMeta)).map((r) => r[2]),
    ).toContain("[TASK RESUMPTION] Interrupted.\nThe log said [read_file for 'a'] Result: twice.");
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
