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

/**
 * The pairing of one items array by position: numbers in typed arrays, no object per call, for
 * code that walks those same items in order (a compaction's plan). Calls are numbered in order of
 * the items and then of `tool_calls`; an item's calls are consecutive.
 */
export interface PairIndex {
  /** The tool_call_id of each call. */
  readonly callIds: readonly string[];
  /** Position of the item holding each call. */
  readonly callItem: Int32Array;
  /** Position of the result answering each call; -1: none. */
  readonly callResult: Int32Array;
  /** For each item, its first call; -1: it has none. */
  readonly firstCall: Int32Array;
  /** For each item, the call it answers; -1: not a result, or a result answering no earlier call. */
  readonly resultCall: Int32Array;
}

/** Pairs every tool call in the items with its result, by position (see the module comment for the rule). */
export function indexPairs(items: readonly ContextItem[]): PairIndex {
  // Calls are counted as they come: most items hold at most one, so the arrays grow rarely.
  const callIds: string[] = [];
  let callItem = new Int32Array(Math.max(16, items.length));
  let callResult = new Int32Array(callItem.length);
  const firstCall = new Int32Array(items.length).fill(-1);
  const resultCall = new Int32Array(items.length).fill(-1);
  // The latest assistant item's calls [latestStart, next): most results answer one of them.
  let next = 0;
  let latestStart = 0;
  // tool_call_id → unanswered calls of earlier items with that id, latest last (rarely needed).
  let open: Map<string, number[]> | null = null;
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as ContextItem;
    if (item.type === 'ASSISTANT_MESSAGE') {
      const calls = item.message.tool_calls;
      if (!calls || calls.length === 0) continue;
      for (let c = latestStart; c < next; c++) {
        if (callResult[c] !== -1) continue;
        open ??= new Map();
        const id = callIds[c] as string;
        const waiting = open.get(id);
        if (waiting) waiting.push(c);
        else open.set(id, [c]);
      }
      if (next + calls.length > callItem.length) {
        const size = Math.max(2 * callItem.length, next + calls.length);
        callItem = grown(callItem, size);
        callResult = grown(callResult, size);
      }
      latestStart = next;
      firstCall[i] = next;
      for (const call of calls) {
        callIds.push(call.id);
        callItem[next] = i;
        callResult[next] = -1;
        next++;
      }
    } else if (item.type === 'TOOL_RESULT') {
      const id = item.message.tool_call_id;
      let call = -1;
      for (let c = next - 1; c >= latestStart; c--) {
        if (callResult[c] === -1 && callIds[c] === id) {
          call = c;
          break;
        }
      }
      if (call === -1 && open !== null) call = open.get(id)?.pop() ?? -1;
      if (call !== -1) {
        callResult[call] = i;
        resultCall[i] = call;
      }
    }
  }
  return {
    callIds,
    callItem: callItem.subarray(0, next),
    callResult: callResult.subarray(0, next),
    firstCall,
    resultCall,
  };
}

/** A copy of `array` with room for `size` numbers. */
function grown(array: Int32Array, size: number): Int32Array<ArrayBuffer> {
  const copy = new Int32Array(size);
  copy.set(array);
  return copy;
}

/**
 * The pairing of the same items moved: `moved[i]` is item i's new position (-1: taken out; no
 * call or result is), `length` the new array's; null: nothing moved, items only added at the end.
 */
export function movePairs(index: PairIndex, moved: Int32Array | null, length: number): PairIndex {
  const firstCall = new Int32Array(length).fill(-1);
  const resultCall = new Int32Array(length).fill(-1);
  if (!moved) {
    firstCall.set(index.firstCall);
    resultCall.set(index.resultCall);
    return { ...index, firstCall, resultCall };
  }
  const to = (position: number): number => (position === -1 ? -1 : (moved[position] as number));
  for (let i = 0; i < moved.length; i++) {
    const at = moved[i] as number;
    if (at === -1) continue;
    firstCall[at] = index.firstCall[i] as number;
    resultCall[at] = index.resultCall[i] as number;
  }
  return {
    callIds: index.callIds,
    callItem: index.callItem.map(to),
    callResult: index.callResult.map(to),
    firstCall,
    resultCall,
  };
}

/** Pairs every tool call in the items with its result (see the module comment for the rule). */
export function pairToolCalls(items: readonly ContextItem[]): ToolPairs {
  const index = indexPairs(items);
  const pairs: ToolPair[] = [];
  const byCall = new Map<string, ToolPair[]>();
  const byResult = new Map<string, ToolPair>();
  const orphanResults: string[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as ContextItem;
    const first = index.firstCall[i] as number;
    if (first !== -1 && item.type === 'ASSISTANT_MESSAGE') {
      const own: ToolPair[] = [];
      const calls = item.message.tool_calls ?? [];
      for (let callIndex = 0; callIndex < calls.length; callIndex++) {
        const pair: ToolPair = {
          toolCallId: index.callIds[first + callIndex] as string,
          callItemId: item.id,
          callIndex,
          callItem: item,
        };
        own.push(pair);
        pairs.push(pair);
      }
      byCall.set(item.id, own);
    } else if (item.type === 'TOOL_RESULT') {
      const call = index.resultCall[i] as number;
      if (call === -1) {
        orphanResults.push(item.id);
        continue;
      }
      const pair = pairs[call] as ToolPair;
      pair.resultItemId = item.id;
      pair.result = item;
      byResult.set(item.id, pair);
    }
  }
  return { pairs, byCall, byResult, orphanResults };
}

/** Calls without a result in the items (a request with them is refused by the API). */
export function unansweredCalls(pairs: ToolPairs): ToolPair[] {
  return pairs.pairs.filter((pair) => pair.resultItemId === undefined);
}
