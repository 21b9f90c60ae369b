/**
 * Which tool result answers which tool call.
 *
 * Pairing is by position, not by id alone: a result answers the latest earlier call with its
 * `tool_call_id` that has no result yet. Real sessions reuse ids (the SWE-agent demonstrations
 * send the same `call_…` id in several turns), so a map keyed by tool_call_id alone would pair a
 * result with the wrong turn.
 *
 * Pure module.
 */
import type { AssistantMessageItem, ContextItem, ToolResultItem } from './items';

export interface ToolPair {
  toolCallId: string;
  /** The assistant item holding the call. */
  callItemId: string;
  /** Position of the call in that item's `tool_calls`. */
  callIndex: number;
  /** The assistant item holding the call. */
  callItem: AssistantMessageItem;
  /** The TOOL_RESULT item answering it, when there is one. */
  resultItemId?: string;
  /** That item. */
  result?: ToolResultItem;
}

export interface ToolPairs {
  /** Every call, in order of the items and then of `tool_calls`. */
  pairs: ToolPair[];
  /** Assistant item id → its calls' pairs, in `tool_calls` order. */
  byCall: Map<string, ToolPair[]>;
  /** TOOL_RESULT item id → the pair it answers. */
  byResult: Map<string, ToolPair>;
  /** TOOL_RESULT items that answer no earlier unanswered call. */
  orphanResults: string[];
}

/** An unanswered call, and the one with the same id before it (the stack of calls waiting on an id). */
interface Waiting {
  pair: ToolPair;
  below: Waiting | undefined;
}

/** Pairs every tool call in the items with its result (see the module comment for the rule). */
export function pairToolCalls(items: readonly ContextItem[]): ToolPairs {
  const pairs: ToolPair[] = [];
  const byCall = new Map<string, ToolPair[]>();
  const byResult = new Map<string, ToolPair>();
  const orphanResults: string[] = [];
  // tool_call_id → the latest unanswered call with that id.
  const open = new Map<string, Waiting>();
  for (const item of items) {
    if (item.type === 'ASSISTANT_MESSAGE') {
      const calls = item.message.tool_calls;
      if (!calls || calls.length === 0) continue;
      const mine: ToolPair[] = [];
      for (let callIndex = 0; callIndex < calls.length; callIndex++) {
        const id = (calls[callIndex] as { id: string }).id;
        const pair: ToolPair = { toolCallId: id, callItemId: item.id, callIndex, callItem: item };
        pairs.push(pair);
        mine.push(pair);
        open.set(id, { pair, below: open.get(id) });
      }
      byCall.set(item.id, mine);
    } else if (item.type === 'TOOL_RESULT') {
      const id = item.message.tool_call_id;
      const waiting = open.get(id);
      if (waiting) {
        if (waiting.below) open.set(id, waiting.below);
        else open.delete(id);
        const { pair } = waiting;
        pair.resultItemId = item.id;
        pair.result = item;
        byResult.set(item.id, pair);
      } else {
        orphanResults.push(item.id);
      }
    }
  }
  return { pairs, byCall, byResult, orphanResults };
}

/** Calls without a result in the items (a request with them is refused by the API). */
export function unansweredCalls(pairs: ToolPairs): ToolPair[] {
  return pairs.pairs.filter((pair) => pair.resultItemId === undefined);
}
