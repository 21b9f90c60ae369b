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
    ...(effect.printsOnly ? { printsOnly: true as const } : {}),
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

/**
 * The error a tool result reports (`tool`: the name of the tool that produced it; `printsOnly`: its
 * call only prints files, `CallFacts.printsOnly`): stored, or worked out now.
 */
export function resultErrorOf(item: ToolResultItem, tool: string, printsOnly = false): string | null {
  return item.facts?.error !== undefined ? item.facts.error : toolResultError(item, tool, printsOnly);
}

/** What a tool result's error is read with: the tool that produced it, and whether its call only prints files. */
export interface ResultSource {
  tool: string;
  printsOnly: boolean;
}

/** The {@link ResultSource} of each call's results of an assistant message, from its facts. */
export function resultSources(item: AssistantMessageItem): ResultSource[] {
  const facts = callFactsOf(item);
  return (item.message.tool_calls ?? []).map((call, i) => ({
    tool: call.function.name,
    printsOnly: facts[i]?.printsOnly === true,
  }));
}

/** The {@link ResultSource} of a call's result (`tool`: its name, when the result gives another). */
export function resultSource(call: ToolCall, tool = call.function.name): ResultSource {
  return { tool, printsOnly: callFacts(call).printsOnly === true };
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
 * The item with its facts (`source`: for a tool result, the tool that produced it and whether its
 * call only prints files; default its message's `name`, not; `tokenizer`: the conversation's, for
 * the counts among them). Items without facts to have are returned as they are.
 */
export function withFacts<T extends ContextItem>(item: T, source?: ResultSource, tokenizer?: Tokenizer): T {
  let facts: ItemFacts | null = null;
  if (item.type === 'ASSISTANT_MESSAGE' && (item.message.tool_calls?.length ?? 0) > 0) {
    facts = {
      calls: (item.message.tool_calls ?? []).map((call) => callFacts(call, tokenizer)),
      ...(tokenizer ? { framingTokens: framingTokens(item, tokenizer) } : {}),
    };
  } else if (item.type === 'TOOL_RESULT') {
    facts = {
      error: toolResultError(item, source?.tool ?? item.message.name ?? 'tool', source?.printsOnly ?? false),
    };
  }
  return facts ? { ...item, facts } : item;
}

/** Every item with its facts; a result's are read with the call it answers (its tool, whether it only prints files). */
export function withFactsAll(items: readonly ContextItem[], tokenizer?: Tokenizer): ContextItem[] {
  const pairs = pairToolCalls(items);
  const withCalls = items.map((item) =>
    item.type === 'TOOL_RESULT' ? item : withFacts(item, undefined, tokenizer),
  );
  const sourceOf = new Map<string, ResultSource>();
  for (const item of withCalls) {
    if (item.type !== 'ASSISTANT_MESSAGE') continue;
    resultSources(item).forEach((source, i) => sourceOf.set(`${item.id}#${i}`, source));
  }
  return withCalls.map((item) => {
    if (item.type !== 'TOOL_RESULT') return item;
    const pair = pairs.byResult.get(item.id);
    return withFacts(
      item,
      pair ? sourceOf.get(`${pair.callItemId}#${pair.callIndex}`) : undefined,
      tokenizer,
    );
  });
}
