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

/** Pairs every tool call in the items with its result (see the module comment for the rule). */
export function pairToolCalls(items: readonly ContextItem[]): ToolPairs {
  const pairs: ToolPair[] = [];
  const byCall = new Map<string, ToolPair[]>();
  const byResult = new Map<string, ToolPair>();
  const orphanResults: string[] = [];
  // The latest assistant item's calls; most results answer one of them.
  let latest: ToolPair[] = [];
  // tool_call_id → unanswered calls of earlier items with that id, latest last.
  const open = new Map<string, ToolPair[]>();
  const retire = (): void => {
    for (const pair of latest) {
      if (pair.result !== undefined) continue;
      const waiting = open.get(pair.toolCallId);
      if (waiting) waiting.push(pair);
      else open.set(pair.toolCallId, [pair]);
    }
  };
  for (const item of items) {
    if (item.type === 'ASSISTANT_MESSAGE') {
      const calls = item.message.tool_calls;
      if (!calls || calls.length === 0) continue;
      retire();
      latest = [];
      for (let callIndex = 0; callIndex < calls.length; callIndex++) {
        const id = (calls[callIndex] as { id: string }).id;
        const pair: ToolPair = { toolCallId: id, callItemId: item.id, callIndex, callItem: item };
        pairs.push(pair);
        latest.push(pair);
      }
      byCall.set(item.id, latest);
    } else if (item.type === 'TOOL_RESULT') {
      const id = item.message.tool_call_id;
      let pair: ToolPair | undefined;
      for (let i = latest.length - 1; i >= 0 && pair === undefined; i--) {
        const candidate = latest[i] as ToolPair;
        if (candidate.toolCallId === id && candidate.result === undefined) pair = candidate;
      }
      pair ??= open.get(id)?.pop();
      if (pair) {
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
