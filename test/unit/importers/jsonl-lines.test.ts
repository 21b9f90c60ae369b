/**
 * JSONL lines that hold several entries written back to back (`{…}{…}`): real pi session files
 * have been seen with one such line, where a write lost its newline. Each entry is read, with that
 * line's number. Lines with a backslash that escapes nothing (`\*`: pi sessions committed to
 * GitHub, where the e-mail redaction cut a `\n` in two) are read with it as a backslash, with a
 * warning. Any
 * other bad line is still refused with its number. The sessions below are made up for the test.
 */
import { describe, expect, it } from 'vitest';
import { messageText } from '../../../src/context/items';
import { ImportError, importSession } from '../../../src/importers';
import { parseJsonLines } from '../../../src/importers/json';
import { fakeTokenizer } from '../../support/items-factory';

const header = { type: 'session', id: 's-1', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/w' };
const user = (text: string) => ({ type: 'message', message: { role: 'user', content: text } });
const assistant = (text: string) => ({
  type: 'message',
  message: { role: 'assistant', content: [{ type: 'text', text }], stopReason: 'stop' },
});
const compaction = { type: 'compaction', summary: 'Earlier: the user asked for a haiku.', tokensBefore: 50 };
const line = (...entries: unknown[]) => entries.map((e) => JSON.stringify(e)).join('');

describe('parseJsonLines', () => {
  it('reads every object of a line that holds several, with its line number', () => {
    const text = `${line({ a: 1 })}\n${line({ b: '}{' }, { c: [1, { d: '\\"' }] })}\n${line({ e: 2 })}\n`;
    expect(parseJsonLines(text)).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 2, value: { b: '}{' } },
      { line: 2, value: { c: [1, { d: '\\"' }] } },
      { line: 3, value: { e: 2 } },
    ]);
  });

  it('reads a line whose strings hold a backslash that escapes nothing as a backslash, and marks it', () => {
    const text = `{"a":"x\\***@***.***"}\n{"b":"\\u12 \\\\* \\n \\u00e9 \\""}\n{"c":"\\\\"}`;
    expect(parseJsonLines(text)).toEqual([
      { line: 1, value: { a: 'x\\***@***.***' }, repaired: true },
      { line: 2, value: { b: '\\u12 \\* \n é "' }, repaired: true },
      { line: 3, value: { c: '\\' } },
    ]);
  });

  it.each([
    ['a value cut short', '{"a":1}{"b":'],
    ['a stray backslash in a line bad otherwise too', '{"a":"\\*"'],
    ['text after an object', '{"a":1} trailing'],
    ['a bare value between objects', '{"a":1}2{"b":3}'],
    ['a closing brace too many', '{"a":1}}{"b":2}'],
  ])('still refuses %s, naming the line', (_, bad) => {
    const err = (() => {
      try {
        parseJsonLines(`{"ok":true}\n${bad}\n`);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(ImportError);
    expect((err as ImportError).line).toBe(2);
    expect((err as ImportError).message).toMatch(/^line 2: not valid JSON/);
  });
});

describe('a pi session with a redacted line', () => {
  it('imports every message and says which line held a stray backslash', () => {
    const text = [
      line(header),
      line(user('Write a haiku.')),
      line(assistant('Signed off.')).replace('Signed off.', 'Signed off.\\***@***.***'),
      line(user('Another one.')),
    ].join('\n');
    const session = importSession(text, { tokenizer: fakeTokenizer, fileName: 's.jsonl' });
    expect(session.items.map((i) => (i.type === 'TOOL_DEFINITIONS' ? '' : messageText(i.message)))).toEqual([
      'Write a haiku.',
      'Signed off.\\***@***.***',
      'Another one.',
    ]);
    expect(importSession(text, { tokenizer: fakeTokenizer, format: 'pi' }).warnings).toEqual(
      session.warnings,
    );
    expect(session.warnings).toEqual([
      'line 3: a backslash that escapes nothing JSON knows (\\* as a redaction leaves it) was read as a backslash',
    ]);
  });
});

describe('a session file copied while its agent was writing it', () => {
  it('leaves its cut last line out, and says so; a cut line followed by another is still refused', () => {
    const whole = [line(header), line(user('Write a haiku.')), line(assistant('Done.'))].join('\n');
    const cut = `${whole}\n${line(user('And an')).slice(0, -9)}`;
    const session = importSession(cut, { tokenizer: fakeTokenizer, fileName: 's.jsonl' });
    expect(session.items.map((i) => (i.type === 'TOOL_DEFINITIONS' ? '' : messageText(i.message)))).toEqual([
      'Write a haiku.',
      'Done.',
    ]);
    expect(session.warnings).toEqual([
      'line 4: the last line is cut short (the file was copied while it was being written); left out',
    ]);
    expect(() => parseJsonLines(`${cut}\n`)).toThrow(/^line 4: not valid JSON/);
    expect(() => parseJsonLines('{"a":')).toThrow(/^line 1: not valid JSON/);
  });
});

describe('a pi session whose tool results answer no call', () => {
  it('imports them and says they are never sent', () => {
    const result = (id: string) => ({
      type: 'message',
      message: {
        role: 'toolResult',
        toolCallId: id,
        toolName: 'read',
        content: [{ type: 'text', text: 'x' }],
      },
    });
    const text = [line(header), line(user('Go.')), line(result('t1')), line(result('t2'))].join('\n');
    const session = importSession(text, { tokenizer: fakeTokenizer, fileName: 's.jsonl' });
    expect(session.items.map((i) => i.type)).toEqual(['USER_MESSAGE', 'TOOL_RESULT', 'TOOL_RESULT']);
    expect(session.warnings).toEqual([
      '2 tool results answer no call before them: kept and written back, never sent to the model (a request holds no result without its call)',
    ]);
  });
});

describe('a pi session with two entries on one line', () => {
  it('imports both: the message and the compaction written after it without a newline', () => {
    const text = [
      line(header),
      line(user('Write a haiku.')),
      line(assistant('Autumn moonlight—')),
      line(user('Another one.'), compaction),
      line(assistant('A frog jumps in.')),
    ].join('\n');
    const session = importSession(text, { tokenizer: fakeTokenizer, fileName: 's.jsonl' });
    // The compaction is the latest on the path: its summary, then what came after it.
    expect(session.items.map((i) => i.type)).toEqual(['COMPACTION_SUMMARY', 'ASSISTANT_MESSAGE']);
    const [summary] = session.items;
    expect(summary?.type === 'COMPACTION_SUMMARY' && messageText(summary.message)).toBe(compaction.summary);
  });
});

describe('one JSON document written over many lines, broken inside', () => {
  // A SWE-agent trajectory on GitHub has a string that lost its opening quote (line 7 here).
  const text = JSON.stringify(
    { environment: 'swe_main', trajectory: [{ action: 'ls\n', observation: 'a.py', response: 'X' }] },
    null,
    2,
  ).replace('"response": "X"', '"response": The changes were not applied"');

  it('is refused with the line the error is on, not read as JSONL and refused at its first line', () => {
    expect(text.split('\n')[6]).toContain('"response": The changes');
    expect(() => importSession(text, { tokenizer: fakeTokenizer, fileName: 't.traj' })).toThrow(
      /^line 7: not valid JSON \(Unexpected token 'T'/,
    );
  });
});
