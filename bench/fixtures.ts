/**
 * Inputs of the benchmarks: generated contexts of a given size (token counts are item fields, no
 * tokenization), the shared real sessions (read by path from ../shared/data/sessions, never
 * copied), and helpers to give a context fresh ids so it can be stored once per conversation.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { importSession } from '../src/importers';
import type { ContextItem } from '../src/context/items';
import { assignRounds } from '../src/context/segments';
import { tokenCounterForModel } from '../src/tokens';

export const SESSIONS_DIR = join(__dirname, '..', '..', 'shared', 'data', 'sessions');
export const SESSION_FILES = [
  'pi-large-session.jsonl',
  'swe-agent-marshmallow-1867.traj',
  'swe-agent-function-calling-simple.traj',
] as const;

export function sessionPath(name: string): string {
  return join(SESSIONS_DIR, name);
}

export function readSessionText(name: string): string {
  return readFileSync(sessionPath(name), 'utf8');
}

/** A shared session imported as items, token-counted with gpt-4o's encoding (o200k_base). */
export function loadSession(name: string): ContextItem[] {
  return importSession(readSessionText(name), {
    fileName: name,
    tokenizer: tokenCounterForModel('gpt-4o'),
  }).items;
}

const TOOLS = ['read_file', 'edit_file', 'bash', 'search', 'read_file', 'list_dir'];
const SAYINGS = [
  'I will look at the module first.',
  'The test failed with an error in the parser.',
  'Fixed: the parser handles the empty case now.',
  'We must keep the public API unchanged.',
  'Next I will run the whole suite.',
  'All tests pass.',
];

/**
 * A generated agent conversation of `count` items and about `totalTokens` tokens: a system prompt,
 * then rounds of user message → assistant tool call → tool result → assistant answer, with tool
 * names and texts varied so task detection and scoring do real work. Tokens are spread evenly.
 */
export function generateContext(count: number, totalTokens: number, prefix = 'g'): ContextItem[] {
  const per = Math.max(1, Math.round(totalTokens / count));
  const base = { tokens: per, round: 0, isMeta: false, pinned: false, ephemeral: false };
  const items: ContextItem[] = [
    {
      ...base,
      id: `${prefix}0`,
      type: 'SYSTEM_PROMPT',
      message: { role: 'system', content: 'You are an agent.' },
    },
  ];
  for (let r = 0; items.length < count; r++) {
    const saying = SAYINGS[r % SAYINGS.length] ?? '';
    const tool = TOOLS[r % TOOLS.length] ?? 'read_file';
    const callId = `call_${r}`;
    const next = (): string => `${prefix}${items.length}`;
    items.push({
      ...base,
      id: next(),
      type: 'USER_MESSAGE',
      message: { role: 'user', content: `Step ${r}: go on.` },
    });
    if (items.length >= count) break;
    items.push({
      ...base,
      id: next(),
      type: 'ASSISTANT_MESSAGE',
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: callId,
            type: 'function',
            function: { name: tool, arguments: `{"path":"src/file${r % 97}.ts"}` },
          },
        ],
      },
    });
    if (items.length >= count) {
      items.pop();
      break;
    }
    items.push({
      ...base,
      id: next(),
      type: 'TOOL_RESULT',
      message: { role: 'tool', tool_call_id: callId, content: `contents of file ${r % 97}: ${saying}` },
    });
    if (items.length >= count) break;
    items.push({
      ...base,
      id: next(),
      type: 'ASSISTANT_MESSAGE',
      message: { role: 'assistant', content: saying },
    });
  }
  return assignRounds(items);
}

/** The items with ids prefixed (ids are unique across conversations in the store). */
export function withIdPrefix(items: readonly ContextItem[], prefix: string): ContextItem[] {
  return items.map((item) => ({
    ...item,
    id: `${prefix}${item.id}`,
    ...(item.sourceId !== undefined ? { sourceId: `${prefix}${item.sourceId}` } : {}),
  }));
}

/** The first items of a context, up to about `tokens` tokens, ending before a round boundary. */
export function prefixByTokens(items: readonly ContextItem[], tokens: number): ContextItem[] {
  let total = 0;
  let cut = items.length;
  for (let i = 0; i < items.length; i++) {
    total += items[i]?.tokens ?? 0;
    if (total > tokens) {
      cut = i;
      break;
    }
  }
  // End before the user message that starts the next round, so no tool call loses its result.
  while (cut > 0 && cut < items.length && !(items[cut]?.type === 'USER_MESSAGE' && !items[cut]?.isMeta))
    cut--;
  return items.slice(0, cut);
}

export function sumTokens(items: readonly ContextItem[]): number {
  return items.reduce((n, i) => n + i.tokens, 0);
}
