/**
 * Our items converted to the peers' formats and their decisions mapped back to our items, so the
 * same token counts and the same tool-pair check (src/context/tool-pairs.ts) judge every output
 * (`eval` and bench figure 5):
 * - pi-coding-agent: session entries (`type: "message"`, pi-ai messages with `toolCall` blocks and
 *   `toolResult` messages); `prepareCompaction` decides the first kept entry.
 * - LangChain: `SystemMessage`/`HumanMessage`/`AIMessage` with `tool_calls`/`ToolMessage`;
 *   `trimMessages` keeps the last messages that fit.
 */
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import type { BaseMessage } from '@langchain/core/messages';
import type { CompactionSettings, SessionEntry } from '@mariozechner/pi-coding-agent';
import { messageText, type ContextItem } from '../context/items';

/** LangChain's message classes and `trimMessages` (a development dependency: loaded when used). */
type LangChain = typeof import('@langchain/core/messages');
let langChain: Promise<LangChain> | null = null;
function loadLangChain(): Promise<LangChain> {
  langChain ??= import('@langchain/core/messages');
  return langChain;
}

/** The part of pi's `CompactionPreparation` this benchmark reads. */
export interface PiPreparation {
  firstKeptEntryId: string;
  isSplitTurn: boolean;
  tokensBefore: number;
  messagesToSummarize: unknown[];
}
export type PrepareCompaction = (
  entries: SessionEntry[],
  settings: CompactionSettings,
) => PiPreparation | undefined;

/**
 * pi's `prepareCompaction`. The package's entry point exports `findCutPoint` but not
 * `prepareCompaction`, and its `exports` map hides the module, so it is loaded by file path.
 */
export async function loadPrepareCompaction(): Promise<PrepareCompaction> {
  const file = join(
    __dirname,
    '..',
    '..',
    'node_modules',
    '@mariozechner',
    'pi-coding-agent',
    'dist',
    'core',
    'compaction',
    'compaction.js',
  );
  const mod = (await import(pathToFileURL(file).href)) as { prepareCompaction: PrepareCompaction };
  return mod.prepareCompaction;
}

function parseArgs(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { input: value };
  } catch {
    return { raw: text };
  }
}

const ZERO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

/**
 * The conversation (system prompt and tool definitions excluded: pi keeps its system prompt apart
 * from the session) as pi session entries, each with the id of its item.
 */
export function toPiEntries(items: readonly ContextItem[]): SessionEntry[] {
  const entries: SessionEntry[] = [];
  let parentId: string | null = null;
  const timestamp = 1_700_000_000_000;
  for (const item of items) {
    let message: unknown;
    switch (item.type) {
      case 'ASSISTANT_MESSAGE': {
        const text = item.message.content ? [{ type: 'text', text: item.message.content }] : [];
        const calls = (item.message.tool_calls ?? []).map((c) => ({
          type: 'toolCall',
          id: c.id,
          name: c.function.name,
          arguments: parseArgs(c.function.arguments),
        }));
        message = {
          role: 'assistant',
          content: [...text, ...calls],
          api: 'openai-completions',
          provider: 'openai',
          model: 'gpt-4o',
          usage: ZERO_USAGE,
          stopReason: calls.length > 0 ? 'toolUse' : 'stop',
          timestamp,
        };
        break;
      }
      case 'TOOL_RESULT':
        message = {
          role: 'toolResult',
          toolCallId: item.message.tool_call_id,
          toolName: item.message.name ?? 'tool',
          content: [{ type: 'text', text: item.message.content }],
          isError: false,
          timestamp,
        };
        break;
      case 'SYSTEM_PROMPT':
      case 'TOOL_DEFINITIONS':
        continue;
      default:
        message = { role: 'user', content: messageText(item.message), timestamp };
    }
    entries.push({
      type: 'message',
      id: item.id,
      parentId,
      timestamp: new Date(timestamp).toISOString(),
      message,
    } as SessionEntry);
    parentId = item.id;
  }
  return entries;
}

/** The items as LangChain messages, each with the id of its item. */
export async function toLangChain(items: readonly ContextItem[]): Promise<BaseMessage[]> {
  const { AIMessage, HumanMessage, SystemMessage, ToolMessage } = await loadLangChain();
  const out: BaseMessage[] = [];
  for (const item of items) {
    switch (item.type) {
      case 'TOOL_DEFINITIONS':
        continue;
      case 'SYSTEM_PROMPT':
        out.push(new SystemMessage({ content: messageText(item.message), id: item.id }));
        break;
      case 'ASSISTANT_MESSAGE':
        out.push(
          new AIMessage({
            id: item.id,
            content: item.message.content ?? '',
            tool_calls: (item.message.tool_calls ?? []).map((c) => ({
              id: c.id,
              name: c.function.name,
              args: parseArgs(c.function.arguments),
              type: 'tool_call' as const,
            })),
          }),
        );
        break;
      case 'TOOL_RESULT':
        out.push(
          new ToolMessage({
            id: item.id,
            content: item.message.content,
            tool_call_id: item.message.tool_call_id,
          }),
        );
        break;
      default:
        out.push(new HumanMessage({ id: item.id, content: messageText(item.message) }));
    }
  }
  return out;
}

/** LangChain's `trimMessages` with our stored token counts as its counter; returns the kept ids. */
export async function langChainTrim(
  messages: BaseMessage[],
  tokensById: Map<string, number>,
  maxTokens: number,
  startOn: 'human' | undefined,
): Promise<string[]> {
  const { trimMessages } = await loadLangChain();
  const kept = await trimMessages(messages, {
    maxTokens,
    strategy: 'last',
    includeSystem: true,
    ...(startOn ? { startOn } : {}),
    tokenCounter: (msgs: BaseMessage[]) => msgs.reduce((n, m) => n + (tokensById.get(m.id ?? '') ?? 0), 0),
  });
  return kept.map((m) => m.id ?? '');
}
