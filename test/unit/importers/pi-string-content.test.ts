/**
 * pi sessions written by other tools: an assistant or tool result message whose content is a
 * string instead of a list of blocks is read as one text block (the file was refused), and the file
 * is written back as it was. The session is made up for the test.
 */
import { describe, expect, it } from 'vitest';
import { exportSession, importSession } from '../../../src/importers';
import { fakeTokenizer } from '../../support/items-factory';

const entries = [
  { type: 'session', version: 3, id: 's-2', timestamp: '2026-01-01T00:00:00Z', cwd: '/w' },
  { type: 'message', id: 'u1', parentId: null, message: { role: 'user', content: 'Which port?' } },
  {
    type: 'message',
    id: 'a1',
    parentId: 'u1',
    message: {
      role: 'assistant',
      content: 'Let me look.',
      stopReason: 'toolUse',
    },
  },
  {
    type: 'message',
    id: 'a2',
    parentId: 'a1',
    message: {
      role: 'assistant',
      content: [{ type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'server.toml' } }],
      stopReason: 'toolUse',
    },
  },
  {
    type: 'message',
    id: 't1',
    parentId: 'a2',
    message: { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: 'port = 8080' },
  },
  { type: 'message', id: 'a3', parentId: 't1', message: { role: 'assistant', content: 'Port 8080.' } },
];
const text = entries.map((e) => JSON.stringify(e)).join('\n') + '\n';

describe('pi messages whose content is a string', () => {
  it('are read as their text', () => {
    const session = importSession(text, { tokenizer: fakeTokenizer, fileName: 's.jsonl' });
    expect(session.items.map((i) => [i.type, 'message' in i ? i.message.content : null])).toEqual([
      ['USER_MESSAGE', 'Which port?'],
      ['ASSISTANT_MESSAGE', 'Let me look.'],
      ['ASSISTANT_MESSAGE', null],
      ['TOOL_RESULT', 'port = 8080'],
      ['ASSISTANT_MESSAGE', 'Port 8080.'],
    ]);
  });

  it('are written back as they were (entries deep-equal, line for line)', () => {
    const session = importSession(text, { tokenizer: fakeTokenizer, fileName: 's.jsonl' });
    const lines = exportSession(session).trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(entries);
  });
});
