/**
 * A pi session that pi compacted itself: imported, its items are the context pi would send at the
 * leaf (pi's summary, what it kept, what came after), so a conversation continues from there;
 * replayed by `eval` (`wholeHistory`), they are every message of the active path, pi's compactions
 * left out, so our policy compacts what the agent did. The session is made up for the test.
 */
import { describe, expect, it } from 'vitest';
import { importSession } from '../../../src/importers';
import { messageText } from '../../../src/context/items';
import { fakeTokenizer } from '../../support/items-factory';

const message = (id: string, parentId: string | null, role: string, content: string) => ({
  type: 'message',
  id,
  parentId,
  message: { role, content: role === 'user' ? content : [{ type: 'text', text: content }] },
});
const entries = [
  { type: 'session', version: 3, id: 's-1', timestamp: '2026-01-01T00:00:00Z', cwd: '/w' },
  message('u1', null, 'user', 'Rename the flag.'),
  message('a1', 'u1', 'assistant', 'Renamed in cli.ts.'),
  message('u2', 'a1', 'user', 'Now the docs.'),
  message('a2', 'u2', 'assistant', 'Docs updated.'),
  {
    type: 'compaction',
    id: 'k1',
    parentId: 'a2',
    summary: 'The flag was renamed in cli.ts and the docs.',
    firstKeptEntryId: 'u2',
    tokensBefore: 900,
  },
  message('u3', 'k1', 'user', 'Add a test.'),
  message('a3', 'u3', 'assistant', 'Test added.'),
];
const text = entries.map((e) => JSON.stringify(e)).join('\n') + '\n';
const texts = (items: { type: string }[]) =>
  items.map((i) => [
    i.type,
    messageText((i as unknown as { message: Parameters<typeof messageText>[0] }).message),
  ]);

describe('a pi session with a compaction of its own', () => {
  it('imports as the context pi would send: its summary, what it kept, what came after', () => {
    const session = importSession(text, { tokenizer: fakeTokenizer, fileName: 's.jsonl' });
    expect(texts(session.items)).toEqual([
      ['COMPACTION_SUMMARY', expect.stringContaining('The flag was renamed in cli.ts and the docs.')],
      ['USER_MESSAGE', 'Now the docs.'],
      ['ASSISTANT_MESSAGE', 'Docs updated.'],
      ['USER_MESSAGE', 'Add a test.'],
      ['ASSISTANT_MESSAGE', 'Test added.'],
    ]);
  });

  it('replays whole with wholeHistory: every message of the path, no summary', () => {
    const session = importSession(text, {
      tokenizer: fakeTokenizer,
      fileName: 's.jsonl',
      wholeHistory: true,
    });
    expect(texts(session.items)).toEqual([
      ['USER_MESSAGE', 'Rename the flag.'],
      ['ASSISTANT_MESSAGE', 'Renamed in cli.ts.'],
      ['USER_MESSAGE', 'Now the docs.'],
      ['ASSISTANT_MESSAGE', 'Docs updated.'],
      ['USER_MESSAGE', 'Add a test.'],
      ['ASSISTANT_MESSAGE', 'Test added.'],
    ]);
    expect(session.items.map((i) => i.round)).toEqual([1, 1, 2, 2, 3, 3]);
  });
});
