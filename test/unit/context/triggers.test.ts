import { describe, expect, it } from 'vitest';
import { parseCompactionConfig, type CompactionConfig } from '../../../src/context/config';
import {
  madeProgress,
  recordForLoopGuard,
  type CompactionOutcome,
} from '../../../src/context/compaction-decision';
import {
  evaluateTriggers,
  isAutomatic,
  loopGuard,
  type RecentCompaction,
  type TriggerKind,
  type TriggerState,
} from '../../../src/context/triggers';

const DEFAULTS = parseCompactionConfig({});

/** A quiet state: nothing fires. */
function state(over: Partial<TriggerState> = {}): TriggerState {
  return {
    phase: 'precheck',
    estimatedTokens: 0,
    reportedTokens: null,
    itemCount: 0,
    roundsSinceCompaction: 0,
    markerSeen: false,
    cooldownActive: false,
    paused: false,
    ...over,
  };
}

const fired = (s: TriggerState, config: CompactionConfig = DEFAULTS): TriggerKind[] =>
  evaluateTriggers(s, config).fired.map((f) => f.trigger);

describe('evaluateTriggers: token thresholds are inclusive and exact', () => {
  // [window, triggerRatio, tokens just under, tokens at the threshold]
  it.each([
    [80_000, 0.8, 63_999, 64_000], // 79.99875% vs 80%
    [100_000, 0.8, 79_900, 80_000], // 79.9% vs 80%
    [700, 0.7, 489, 490], // 0.7 × 700 = 489.99999999999994
    [100_000, 0.57, 56_999, 57_000], // 0.57 × 100,000 = 56999.99999999999
    [100_000, 0.55, 54_999, 55_000], // 0.55 × 100,000 = 55000.00000000001
    [1001, 0.8, 800, 801], // 800.8: 800 is under
  ])('window %d, ratio %d: %d does not fire, %d does', (window, triggerRatio, under, at) => {
    const config = parseCompactionConfig({ maxContextTokens: window, triggerRatio, targetRatio: 0.3 });
    for (const phase of ['precheck', 'check'] as const) {
      const trigger = phase === 'precheck' ? 'precheck' : 'check';
      expect(fired(state({ phase, estimatedTokens: under }), config)).toStrictEqual([]);
      expect(fired(state({ phase, estimatedTokens: at }), config)).toStrictEqual([trigger]);
      expect(fired(state({ phase, estimatedTokens: at + 1 }), config)).toStrictEqual([trigger]);
    }
  });

  it('says why, with the numbers compared', () => {
    const evaluation = evaluateTriggers(state({ estimatedTokens: 64_000 }), DEFAULTS);
    expect(evaluation).toStrictEqual({
      fired: [
        { trigger: 'precheck', reason: 'estimated 64000 tokens ≥ 64000 (80.0% of 80000, trigger 0.8)' },
      ],
      skipped: false,
      skipReason: null,
    });
  });
});

describe('evaluateTriggers: rounds, events and marker', () => {
  it.each([
    ['rounds', { roundsSinceCompaction: 199 }, []],
    ['rounds', { roundsSinceCompaction: 200 }, ['rounds']],
    ['rounds', { roundsSinceCompaction: 201 }, ['rounds']],
    ['events', { itemCount: 699 }, []],
    ['events', { itemCount: 700 }, ['events']],
    ['events', { itemCount: 701 }, ['events']],
    ['both', { roundsSinceCompaction: 200, itemCount: 700 }, ['rounds', 'events']],
  ] as const)('%s: %j → %j (precheck)', (_, over, expected) => {
    expect(fired(state(over))).toStrictEqual(expected);
  });

  it('rounds and events are counted before a model call only (precheck)', () => {
    expect(fired(state({ phase: 'check', roundsSinceCompaction: 500, itemCount: 5000 }))).toStrictEqual([]);
  });

  it('configured thresholds are exact too', () => {
    const config = parseCompactionConfig({ roundsThreshold: 3, eventsThreshold: 10 });
    expect(fired(state({ roundsSinceCompaction: 2, itemCount: 9 }), config)).toStrictEqual([]);
    expect(fired(state({ roundsSinceCompaction: 3, itemCount: 10 }), config)).toStrictEqual([
      'rounds',
      'events',
    ]);
  });

  it('the marker fires after a response (check), with the marker in the reason', () => {
    expect(evaluateTriggers(state({ phase: 'check', markerSeen: true }), DEFAULTS).fired).toStrictEqual([
      { trigger: 'marker', reason: 'the model wrote !!!SUMMARY!!!' },
    ]);
    expect(fired(state({ phase: 'precheck', markerSeen: true }))).toStrictEqual([]);
  });
});

describe('evaluateTriggers: the reported usage wins over the estimate (check)', () => {
  it.each([
    ['reported over, estimate under', 64_000, 10_000, ['check'], 'reported usage 64000'],
    ['reported under, estimate over', 63_999, 90_000, [], null],
    ['no usage reported: the estimate', null, 64_000, ['check'], 'estimated usage 64000'],
    ['no usage reported, estimate under', null, 63_999, [], null],
  ] as const)('%s', (_, reportedTokens, estimatedTokens, expected, reason) => {
    const evaluation = evaluateTriggers(state({ phase: 'check', reportedTokens, estimatedTokens }), DEFAULTS);
    expect(evaluation.fired.map((f) => f.trigger)).toStrictEqual(expected);
    if (reason) expect(evaluation.fired[0]?.reason).toMatch(new RegExp(`^${reason} tokens ≥ 64000`));
  });

  it('the precheck uses the estimate whatever was reported before', () => {
    expect(fired(state({ phase: 'precheck', reportedTokens: 79_000, estimatedTokens: 100 }))).toStrictEqual(
      [],
    );
  });
});

describe('evaluateTriggers: cooldown, pause and disabled hold back automatic triggers only', () => {
  const automatic: Partial<TriggerState>[] = [
    { estimatedTokens: 70_000 },
    { roundsSinceCompaction: 200 },
    { itemCount: 700 },
    { phase: 'check', markerSeen: true },
    { phase: 'check', reportedTokens: 70_000 },
  ];

  it.each([
    [
      'cooldown',
      { cooldownActive: true },
      DEFAULTS,
      'cooldown: automatic compaction is cooling down after a summary failure',
    ],
    ['loop guard', { paused: true }, DEFAULTS, 'loop_guard: automatic compaction is paused'],
    [
      'disabled',
      {},
      parseCompactionConfig({ enabled: false }),
      'disabled: automatic compaction is off (enabled: false)',
    ],
  ] as const)('%s: automatic triggers fire but are skipped', (_, hold, config, reason) => {
    for (const trigger of automatic) {
      const evaluation = evaluateTriggers(state({ ...trigger, ...hold }), config);
      expect(evaluation.fired.length).toBeGreaterThan(0);
      expect(evaluation.skipped).toBe(true);
      expect(evaluation.skipReason).toBe(reason);
    }
  });

  it.each([
    ['cooldown', { cooldownActive: true }, DEFAULTS],
    ['loop guard', { paused: true }, DEFAULTS],
    ['disabled', {}, parseCompactionConfig({ enabled: false })],
    ['all three', { cooldownActive: true, paused: true }, parseCompactionConfig({ enabled: false })],
  ] as const)('%s: manual and overflow still run', (_, hold, config) => {
    for (const extra of [{ manualRequested: true }, { overflowed: true }]) {
      const evaluation = evaluateTriggers(state({ ...hold, ...extra, estimatedTokens: 70_000 }), config);
      expect(evaluation.skipped).toBe(false);
      expect(evaluation.skipReason).toBeNull();
    }
  });

  it('nothing fired: nothing skipped, even in a cooldown', () => {
    expect(evaluateTriggers(state({ cooldownActive: true, paused: true }), DEFAULTS)).toStrictEqual({
      fired: [],
      skipped: false,
      skipReason: null,
    });
  });

  it('the most urgent first: overflow, manual, then the automatic ones', () => {
    expect(
      fired(state({ overflowed: true, manualRequested: true, estimatedTokens: 70_000, itemCount: 700 })),
    ).toStrictEqual(['overflow', 'manual', 'precheck', 'events']);
  });

  it.each([
    ['precheck', true],
    ['check', true],
    ['rounds', true],
    ['events', true],
    ['marker', true],
    ['manual', false],
    ['overflow', false],
  ] as const)('isAutomatic(%s) = %s', (trigger, expected) => {
    expect(isAutomatic(trigger)).toBe(expected);
  });
});

describe('loopGuard', () => {
  const at = (round: number, savedRatio = 0.5): RecentCompaction => ({ round, savedRatio });

  it.each<[string, RecentCompaction[], number, string | null]>([
    ['no compactions yet', [], 10, null],
    ['saved 50%', [at(9)], 10, null],
    ['saved exactly 10%', [at(9, 0.1)], 10, null],
    [
      'saved 9.9%',
      [at(9, 0.099)],
      10,
      'the last automatic compaction saved 9.9%, under 10% (loopGuardMinSavedRatio)',
    ],
    [
      'saved nothing',
      [at(9, 0)],
      10,
      'the last automatic compaction saved 0.0%, under 10% (loopGuardMinSavedRatio)',
    ],
    ['an earlier one saved little, the last one enough', [at(2, 0.01), at(9)], 10, null],
    ['4 within the last 2 rounds', [at(9), at(9), at(10), at(10)], 10, null],
    [
      '5 within the last 2 rounds',
      [at(9), at(9), at(10), at(10), at(10)],
      10,
      '5 automatic compactions without progress within 2 round(s) (loopGuardMaxCompactions 5)',
    ],
    ['5, but one of them 2 rounds back', [at(8), at(9), at(10), at(10), at(10)], 10, null],
    ['5 long ago', [at(1), at(1), at(2), at(2), at(2)], 10, null],
  ])('%s', (_, recent, round, expected) => {
    expect(loopGuard(recent, round, DEFAULTS)).toBe(expected);
  });

  it('uses the configured window and count', () => {
    const config = parseCompactionConfig({
      loopGuardMaxCompactions: 2,
      loopGuardWithinRounds: 1,
      loopGuardMinSavedRatio: 0,
    });
    expect(loopGuard([at(5, 0), at(6, 0)], 6, config)).toBeNull();
    expect(loopGuard([at(6, 0), at(6, 0)], 6, config)).toBe(
      '2 automatic compactions without progress within 1 round(s) (loopGuardMaxCompactions 2)',
    );
  });
});

describe('the loop guard counts only compactions without progress (DESIGN.md §3)', () => {
  const outcome = (over: Partial<CompactionOutcome> = {}): CompactionOutcome => ({
    status: 'committed',
    tokensAfter: 30_000,
    savedRatio: 0.5,
    ...over,
  });

  it.each<[string, Partial<CompactionOutcome>, boolean]>([
    ['committed, saved half, under the target (40,000)', {}, true],
    ['committed at the target exactly', { tokensAfter: 40_000 }, true],
    ['committed, one token over the target', { tokensAfter: 40_001 }, false],
    ['committed, saved 9.9%', { savedRatio: 0.099 }, false],
    ['skipped', { status: 'skipped', savedRatio: 0 }, false],
    ['rolled back', { status: 'rolled_back', savedRatio: 0 }, false],
  ])('%s → progress %s', (_, over, expected) => {
    expect(madeProgress(outcome(over), DEFAULTS)).toBe(expected);
  });

  it('healthy compactions are never remembered, however many run in a round', () => {
    const config = parseCompactionConfig({ loopGuardMaxCompactions: 1, loopGuardWithinRounds: 1 });
    let recent: RecentCompaction[] = [];
    for (let i = 0; i < 10; i++) {
      const r = recordForLoopGuard(recent, outcome(), 3, config);
      expect(r.pause).toBeNull();
      recent = r.recent;
    }
    expect(recent).toEqual([]);
  });

  it('a compaction left over the target counts, and enough of them pause', () => {
    const config = parseCompactionConfig({ loopGuardMaxCompactions: 2, loopGuardWithinRounds: 1 });
    const over = outcome({ tokensAfter: 45_000, savedRatio: 0.3 });
    const first = recordForLoopGuard([], over, 4, config);
    expect(first.pause).toBeNull();
    expect(first.recent).toEqual([{ round: 4, savedRatio: 0.3 }]);
    const second = recordForLoopGuard(first.recent, over, 4, config);
    expect(second.pause).toBe(
      '2 automatic compactions without progress within 1 round(s) (loopGuardMaxCompactions 2)',
    );
  });

  it('one that saved under loopGuardMinSavedRatio pauses at once', () => {
    expect(recordForLoopGuard([], outcome({ status: 'skipped', savedRatio: 0 }), 2, DEFAULTS).pause).toBe(
      'the last automatic compaction saved 0.0%, under 10% (loopGuardMinSavedRatio)',
    );
  });
});

describe('evaluateTriggers: a request over the window is never sent', () => {
  const window = DEFAULTS.maxContextTokens;

  it.each<[string, Partial<TriggerState>]>([
    ['paused by the loop guard', { paused: true }],
    ['cooling down', { cooldownActive: true }],
  ])('%s: over the window, the emergency compaction (overflow) runs', (_, over) => {
    const result = evaluateTriggers(state({ estimatedTokens: window + 1, ...over }), DEFAULTS);
    expect(result.fired[0]?.trigger).toBe('overflow');
    expect(result.fired[0]?.reason).toBe(
      `emergency: the request would be ${window + 1} tokens, over the window of ${window}`,
    );
    expect(result.skipped).toBe(false);
  });

  it('with compaction disabled too', () => {
    const config = parseCompactionConfig({ enabled: false });
    expect(fired(state({ estimatedTokens: window + 1 }), config)).toEqual(['overflow', 'precheck']);
  });

  it('at the window exactly, or while nothing holds compaction back, the precheck does it', () => {
    expect(fired(state({ estimatedTokens: window, paused: true }))).toEqual(['precheck']);
    expect(fired(state({ estimatedTokens: window + 1 }))).toEqual(['precheck']);
  });
});
