/**
 * Small factories for context items, for the pure policy tests (STYLE.md §8).
 *
 * Every factory returns a token-counted item (the tokenizer of the factory counts it exactly as
 * the importers and the store do). Ids are `<prefix><n>` in creation order, so a test can name
 * them. {@link conversation} numbers the rounds the way the importers do.
 */
import type {
  AssistantMessageItem,
  CompactionSummaryItem,
  ContextItem,
  ItemBase,
  NoteItem,
  SystemPromptItem,
  ToolCall,
  ToolDefinition,
  ToolDefinitionsItem,
  ToolResultItem,
  UserMessageItem,
} from '../../src/context/items';
import { messageText } from '../../src/context/items';
import { assignRounds } from '../../src/context/segments';
import { countItemTokens } from '../../src/context/token-accounting';
import type { Tokenizer, TruncateResult } from '../../src/context/tokenizer';

/**
 * A cheap deterministic tokenizer for property tests: one token per started 4 characters. Its
 * `truncate` keeps a prefix of `4 × maxTokens` characters, so a cut text counts at most
 * `maxTokens` (the contract of {@link Tokenizer}).
 */
export const fakeTokenizer: Tokenizer = {
  countText: (text: string): number => Math.ceil(text.length / 4),
  truncate: (text: string, maxTokens: number): TruncateResult => {
    const originalTokens = Math.ceil(text.length / 4);
    if (originalTokens <= maxTokens) return { text, originalTokens };
    let end = maxTokens * 4;
    const code = text.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end--;
    return { text: text.slice(0, end), originalTokens };
  },
  prefix: (text: string, maxTokens: number): string => fakeTokenizer.truncate(text, maxTokens).text,
};

/** Item flags a test may set. */
export interface ItemOptions {
  id?: string;
  isMeta?: boolean;
  pinned?: boolean;
  ephemeral?: boolean;
}

/** A tool call as a test writes it: the tool name, its arguments (object or raw text) and its id. */
export interface CallSpec {
  name: string;
  args?: Record<string, unknown> | string;
  id?: string;
}

export interface ItemsFactory {
  readonly tokenizer: Tokenizer;
  system(text: string, options?: ItemOptions): SystemPromptItem;
  tools(tools: ToolDefinition[], options?: ItemOptions): ToolDefinitionsItem;
  skill(text: string, type?: 'SKILL_PROMPT' | 'SKILL_METADATA', options?: ItemOptions): SystemPromptItem;
  user(text: string, options?: ItemOptions): UserMessageItem;
  /** A meta user message (injected by the system): never starts a round. */
  meta(text: string, options?: ItemOptions): UserMessageItem;
  assistant(text: string | null, options?: ItemOptions): AssistantMessageItem;
  /** An assistant message with tool calls. */
  calls(calls: CallSpec[], text?: string | null, options?: ItemOptions): AssistantMessageItem;
  /** A tool result answering `callId`. */
  result(callId: string, content: string, options?: ItemOptions & { name?: string }): ToolResultItem;
  /** A tool block: one call and its result. */
  block(
    name: string,
    args: Record<string, unknown> | string,
    output: string,
    options?: { text?: string | null; pinned?: boolean },
  ): [AssistantMessageItem, ToolResultItem];
  summary(text: string, options?: ItemOptions): CompactionSummaryItem;
  note(type: NoteItem['type'], text: string, options?: ItemOptions): NoteItem;
}

/** Items counted with `tokenizer` (default: {@link fakeTokenizer}); ids `<prefix><n>`. */
export function itemsFactory(tokenizer: Tokenizer = fakeTokenizer, prefix = 'i'): ItemsFactory {
  let next = 0;
  let nextCall = 0;
  const base = (options: ItemOptions = {}): ItemBase => ({
    id: options.id ?? `${prefix}${++next}`,
    tokens: 0,
    round: 0,
    isMeta: options.isMeta ?? false,
    pinned: options.pinned ?? false,
    ephemeral: options.ephemeral ?? false,
  });
  const counted = <T extends ContextItem>(item: T): T => ({
    ...item,
    tokens: countItemTokens(item, tokenizer),
  });
  const toolCall = (spec: CallSpec): ToolCall => ({
    id: spec.id ?? `call_${++nextCall}`,
    type: 'function',
    function: {
      name: spec.name,
      arguments: typeof spec.args === 'string' ? spec.args : JSON.stringify(spec.args ?? {}),
    },
  });
  const factory: ItemsFactory = {
    tokenizer,
    system: (text, options) =>
      counted({ ...base(options), type: 'SYSTEM_PROMPT', message: { role: 'system', content: text } }),
    tools: (tools, options) => counted({ ...base(options), type: 'TOOL_DEFINITIONS', tools }),
    skill: (text, type = 'SKILL_PROMPT', options) =>
      counted({ ...base(options), type, message: { role: 'user', content: text } }),
    user: (text, options) =>
      counted({ ...base(options), type: 'USER_MESSAGE', message: { role: 'user', content: text } }),
    meta: (text, options) => factory.user(text, { ...options, isMeta: true }),
    assistant: (text, options) =>
      counted({ ...base(options), type: 'ASSISTANT_MESSAGE', message: { role: 'assistant', content: text } }),
    calls: (calls, text = null, options) =>
      counted({
        ...base(options),
        type: 'ASSISTANT_MESSAGE',
        message: { role: 'assistant', content: text, tool_calls: calls.map(toolCall) },
      }),
    result: (callId, content, options = {}) =>
      counted({
        ...base(options),
        type: 'TOOL_RESULT',
        message: {
          role: 'tool',
          content,
          tool_call_id: callId,
          ...(options.name ? { name: options.name } : {}),
        },
      }),
    block: (name, args, output, options = {}) => {
      const call = factory.calls([{ name, args }], options.text ?? null, { pinned: options.pinned ?? false });
      const id = call.message.tool_calls?.[0]?.id ?? '';
      return [call, factory.result(id, output, { name, pinned: options.pinned ?? false })];
    },
    summary: (text, options) =>
      counted({
        ...base(options),
        type: 'COMPACTION_SUMMARY',
        summarizer: 'llm',
        message: { role: 'user', content: text },
      }),
    note: (type, text, options) =>
      counted({ ...base(options), type, message: { role: 'user', content: text } }),
  };
  return factory;
}

/** Items, or lists of them nested to any depth. */
export type ItemTree = ContextItem | readonly ItemTree[];

/** The items in order, with their rounds numbered (a round starts at each real user message). */
export function conversation(...parts: ItemTree[]): ContextItem[] {
  const out: ContextItem[] = [];
  const visit = (part: ItemTree): void => {
    if (Array.isArray(part)) for (const p of part as readonly ItemTree[]) visit(p);
    else out.push(part as ContextItem);
  };
  parts.forEach(visit);
  return assignRounds(out);
}

/** `n` words of filler text (about `n` tokens with a real tokenizer: " w1 w2 …" style words). */
export function words(n: number, word = 'alpha'): string {
  return Array.from({ length: n }, () => word).join(' ');
}

/** The ids of items, in order. */
export function ids(items: readonly ContextItem[]): string[] {
  return items.map((item) => item.id);
}

/** Each item as [type, isMeta, text]: what an importer made of a session, at a glance. */
export function itemSummary(items: readonly ContextItem[]): [string, boolean, string][] {
  return items.map((i) => [i.type, i.isMeta, i.type === 'TOOL_DEFINITIONS' ? '' : messageText(i.message)]);
}
