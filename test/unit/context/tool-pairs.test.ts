/**
 * Pairing tool calls with their results (`src/context/tool-pairs.ts`) against the rule written
 * plainly: a result answers the latest earlier call with its id that has no result yet. Random
 * conversations reuse ids, leave calls unanswered, answer out of order and send results for no call.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ContextItem } from '../../../src/context/items';
import { pairToolCalls, unansweredCalls } from '../../../src/context/tool-pairs';
import { itemsFactory } from '../../support/items-factory';

/** The rule, scanning back over every earlier call for each result. */
function referencePairs(items: readonly ContextItem[]): { answered: Map<string, string>; orphans: string[] } {
  const calls: { key: string; id: string; answered: boolean }[] = [];
  const answered = new Map<string, string>();
  const orphans: string[] = [];
  for (const item of items) {
    if (item.type === 'ASSISTANT_MESSAGE') {
      (item.message.tool_calls ?? []).forEach((call, i) =>
        calls.push({ key: `${item.id}#${i}`, id: call.id, answered: false }),
      );
    } else if (item.type === 'TOOL_RESULT') {
      const call = [...calls].reverse().find((c) => !c.answered && c.id === item.message.tool_call_id);
      if (call) {
        call.answered = true;
        answered.set(call.key, item.id);
      } else orphans.push(item.id);
    }
  }
  return { answered, orphans };
}

type Step = { kind: 'calls'; ids: number[] } | { kind: 'result'; id: number } | { kind: 'text' };

const steps = fc.array(
  fc.oneof(
    fc.record({
      kind: fc.constant('calls' as const),
      ids: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 4 }),
    }),
    fc.record({ kind: fc.constant('result' as const), id: fc.integer({ min: 0, max: 6 }) }),
    fc.constant({ kind: 'text' as const }),
  ),
  { maxLength: 40 },
);

function build(plan: Step[]): ContextItem[] {
  const f = itemsFactory();
  const items: ContextItem[] = [f.user('task')];
  for (const step of plan) {
    if (step.kind === 'calls')
      items.push(f.calls(step.ids.map((id) => ({ id: `call_${id}`, name: 'run', args: {} }))));
    else if (step.kind === 'result') items.push(f.result(`call_${step.id}`, 'ok'));
    else items.push(f.assistant('thinking'));
  }
  return items;
}

describe('pairToolCalls', () => {
  it('pairs each result with the latest earlier unanswered call with its id', () => {
    fc.assert(
      fc.property(steps, (plan) => {
        const items = build(plan);
        const expected = referencePairs(items);
        const pairs = pairToolCalls(items);
        const answered = new Map(
          pairs.pairs
            .filter((p) => p.resultItemId !== undefined)
            .map((p) => [`${p.callItemId}#${p.callIndex}`, p.resultItemId]),
        );
        expect(answered).toEqual(expected.answered);
        expect(pairs.orphanResults).toEqual(expected.orphans);
        for (const pair of pairs.pairs) {
          expect(pair.callItem.id).toBe(pair.callItemId);
          expect(pair.result?.id).toBe(pair.resultItemId);
          expect(pairs.byCall.get(pair.callItemId)?.[pair.callIndex]).toBe(pair);
          if (pair.resultItemId !== undefined) expect(pairs.byResult.get(pair.resultItemId)).toBe(pair);
        }
        const calls = items.reduce(
          (n, i) => n + (i.type === 'ASSISTANT_MESSAGE' ? (i.message.tool_calls?.length ?? 0) : 0),
          0,
        );
        expect(pairs.pairs).toHaveLength(calls);
        expect(unansweredCalls(pairs)).toHaveLength(calls - expected.answered.size);
      }),
      { numRuns: 2000 },
    );
  });
});
