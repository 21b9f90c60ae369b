/**
 * Our items converted to the peers' formats and their decisions mapped back to our items, so the
 * same token counts and the same tool-pair check (src/context/tool-pairs.ts) judge every output
 * (`eval` and bench figure 5):
 * - pi-coding-agent: session entries (`type: "message"`, pi-ai messages with `toolCall` blocks and
 *   `toolResult` messages); `prepareCompaction` decides the first kept entry.
 * - LangChain: `SystemMessage`/`HumanMessage`/`AIMessage` with `tool_calls`/`ToolMessage`;
 *   `trimMessages` keeps the last messages that fit.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
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

/** pi's compaction module, inside its package (the `exports` map hides it). */
const PI_COMPACTION = join('@mariozechner', 'pi-coding-agent', 'dist', 'core', 'compaction', 'compaction.js');

/**
 * pi's `prepareCompaction`. The package's entry point exports `findCutPoint` but not
 * `prepareCompaction`, and its `exports` map hides the module, so it is loaded by file path: the
 * first `node_modules` that holds it, from this file's directory up, as Node resolves a package
 * (the source runs from `src/eval`, the compiled package from `dist/src/eval`). Imported by its
 * path, not a `file:` URL: the compiled CommonJS turns `import()` into `require`, which takes an ES
 * module from Node 20.19 (the engines' floor) but no URL.
 */
export async function loadPrepareCompaction(): Promise<PrepareCompaction> {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const file = join(dir, 'node_modules', PI_COMPACTION);
    if (existsSync(file)) {
      const mod = (await import(file)) as { prepareCompaction: PrepareCompaction };
      return mod.prepareCompaction;
    }
    if (dirname(dir) === dir) break;
  }
  throw new Error(
    `@mariozechner/pi-coding-agent is not installed (a development dependency): no node_modules from ${__dirname} up holds ${PI_COMPACTION}`,
  );
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
  // Where nothing fits from a human message on (the only one is too large), LangChain 1.x gives
  // `[undefined]` with `includeSystem` (it puts back the first of what it kept, and kept nothing):
  // nothing is kept.
  return kept.filter((m): m is BaseMessage => m !== undefined).map((m) => m.id ?? '');
}
