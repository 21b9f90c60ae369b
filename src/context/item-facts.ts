/**
 * Item facts: what a compaction reads of an item besides its tokens — for an assistant message,
 * the files each tool call touches, the command it runs, what it was applied to and the note it
 * makes; for a tool result, the error it reports. Worked out once, when the item is stored (as its
 * token count is, DESIGN.md §6), so a compaction reads them instead of parsing every tool call's
 * arguments and scanning every result again; items stored without them get them worked out here.
 *
 * Pure module.
 */
import { noteOfToolCall } from './agent-notes';
import type {
  AssistantMessageItem,
  CallFacts,
  ContextItem,
  ItemFacts,
  ToolCall,
  ToolResultItem,
} from './items';
import type { Tokenizer } from './tokenizer';
import { targetOf, toolCallEffect, toolResultError } from './tool-facts';
import { pairToolCalls } from './tool-pairs';

/** The facts of one tool call (`tokenizer`: the conversation's, for the count of its arguments). */
export function callFacts(call: ToolCall, tokenizer?: Tokenizer): CallFacts {
  const effect = toolCallEffect(call.function.name, call.function.arguments, null);
  return {
    touches: effect.touches,
    command: effect.command,
    ...(effect.editsOpenFile ? { editsOpenFile: true as const } : {}),
    target: targetOf(effect),
    note: noteOfToolCall(call.function.name, call.function.arguments),
    ...(tokenizer ? { argumentTokens: tokenizer.countText(call.function.arguments) } : {}),
  };
}

/** The facts of each tool call of an assistant message: stored, or worked out now. */
export function callFactsOf(item: AssistantMessageItem): CallFacts[] {
  const calls = item.message.tool_calls ?? [];
  const stored = item.facts?.calls;
  return stored && stored.length === calls.length ? stored : calls.map((call) => callFacts(call));
}

/** The error a tool result reports (`tool`: the name of the tool that produced it): stored, or worked out now. */
export function resultErrorOf(item: ToolResultItem, tool: string): string | null {
  return item.facts?.error !== undefined ? item.facts.error : toolResultError(item, tool);
}

/** The tokens of an assistant message's text and its calls' names (see `ItemFacts.framingTokens`). */
export function framingTokens(item: AssistantMessageItem, tokenizer: Tokenizer): number {
  return (
    tokenizer.countText(item.message.content ?? '') +
    (item.message.tool_calls ?? []).reduce((n, c) => n + tokenizer.countText(c.function.name), 0)
  );
}

/** An assistant message's framing tokens: stored, or counted now. */
export function framingTokensOf(item: AssistantMessageItem, tokenizer: Tokenizer): number {
  return item.facts?.framingTokens ?? framingTokens(item, tokenizer);
}

/**
 * The item with its facts (`toolName`: for a tool result, the tool that produced it; default its
 * message's `name`; `tokenizer`: the conversation's, for the counts among them). Items without
 * facts to have are returned as they are.
 */
export function withFacts<T extends ContextItem>(item: T, toolName?: string, tokenizer?: Tokenizer): T {
  let facts: ItemFacts | null = null;
  if (item.type === 'ASSISTANT_MESSAGE' && (item.message.tool_calls?.length ?? 0) > 0) {
    facts = {
      calls: (item.message.tool_calls ?? []).map((call) => callFacts(call, tokenizer)),
      ...(tokenizer ? { framingTokens: framingTokens(item, tokenizer) } : {}),
    };
  } else if (item.type === 'TOOL_RESULT') {
    facts = { error: toolResultError(item, toolName ?? item.message.name ?? 'tool') };
  }
  return facts ? { ...item, facts } : item;
}

/** Every item with its facts; a result's tool is the one of the call it answers. */
export function withFactsAll(items: readonly ContextItem[], tokenizer?: Tokenizer): ContextItem[] {
  const pairs = pairToolCalls(items);
  const nameOf = new Map<string, string>();
  for (const item of items) {
    if (item.type !== 'ASSISTANT_MESSAGE') continue;
    (item.message.tool_calls ?? []).forEach((call, i) => nameOf.set(`${item.id}#${i}`, call.function.name));
  }
  return items.map((item) => {
    if (item.type !== 'TOOL_RESULT') return withFacts(item, undefined, tokenizer);
    const pair = pairs.byResult.get(item.id);
    return withFacts(item, pair ? nameOf.get(`${pair.callItemId}#${pair.callIndex}`) : undefined, tokenizer);
  });
}
