import { describe, expect, it } from 'vitest';
import {
  compactionConfigFields,
  ConfigError,
  DEFAULT_COMPACTION_CONFIG,
  DEFAULT_SELECTIVE_RULES,
  parseCompactionConfig,
  selectiveRules,
  targetTokens,
  triggerTokens,
} from '../../../src/context/config';

/** The problems `parseCompactionConfig` reports for `raw` (fails the test when it accepts it). */
function problems(raw: unknown): string[] {
  try {
    parseCompactionConfig(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
}

const RATIO = 'must be greater than 0 and at most 1';

describe('DEFAULT_COMPACTION_CONFIG (the seeds’ values)', () => {
  it.each<[keyof typeof DEFAULT_COMPACTION_CONFIG, unknown, string]>([
    ['enabled', true, 'seed 004 enabled'],
    ['maxContextTokens', 80_000, 'seed 004 max_context_tokens'],
    ['triggerRatio', 0.8, 'seed 004 trigger_ratio, seed 002 80%'],
    ['targetRatio', 0.5, 'DESIGN.md §5'],
    ['keepRecentRounds', 2, 'seed 004 keep_recent_rounds'],
    ['roundsThreshold', 200, 'seed 001 conversation_turn_threshold'],
    ['eventsThreshold', 700, 'seed 000 MAX_TURNS'],
    ['marker', '!!!SUMMARY!!!', 'seed 001'],
    ['requireConfirmation', false, 'DESIGN.md §3: optional'],
    ['summaryMaxTokens', 1000, 'seed 004 summary_max_length'],
    ['summaryRoomRatio', 0.3, 'DESIGN.md §5: the summary’s share of the room under the target'],
    ['carriedStateRatio', 0.2, 'DESIGN.md §5: the carried state’s share of the target'],
    ['carriedStateMaxRatio', 0.4, 'issue 21: room to keep every path and open error whole'],
    ['summaryInputMaxChars', 200_000, 'seed 000 MAX_SAFE_CHARS'],
    ['summaryInputHeadRatio', 0.2, 'seed 000 head 20%'],
    ['summaryInputTailRatio', 0.3, 'seed 000 tail 30%'],
    ['cooldownMs', 8_000, 'seed 003 8 s cooldown'],
    ['emitCompactionMetaEvents', false, 'seed 003 emit_compaction_meta_events'],
    ['toolBlocksKeepRecent', 5, 'seed 003 tool_blocks_keep_recent'],
    ['toolCallThreshold', 500, 'seed 003 tool_call_threshold'],
    ['toolResultThreshold', 600, 'seed 003 tool_result_threshold'],
    ['previewTokens', 200, 'seed 003 preview_tokens'],
    ['protectedRounds', 12, 'seed 003 dialogue_rounds_keep_min'],
    ['slidingWindowUserToolMessages', 4, 'seed 001 sliding window 4 user/tool'],
    ['slidingWindowAssistantMessages', 5, 'seed 001 sliding window 5 assistant'],
    ['importanceScoreThreshold', 3.0, 'seed 001 importance_score_threshold'],
    ['strategyKeepRecentOthers', 5, 'seed 001 last 5 others'],
    ['incrementalChunkRounds', 20, 'seed 001 incremental_summary_chunk_size'],
    ['summarizer', 'llm', 'DESIGN.md §4'],
  ])('%s = %j (%s)', (key, value) => {
    expect(DEFAULT_COMPACTION_CONFIG[key]).toStrictEqual(value);
  });

  it('the default selective rules are seed 002’s table', () => {
    expect(selectiveRules(DEFAULT_COMPACTION_CONFIG)).toStrictEqual(DEFAULT_SELECTIVE_RULES);
    expect(DEFAULT_SELECTIVE_RULES).toMatchObject({
      SKILL_PROMPT: { strategy: 'drop' },
      SKILL_METADATA: { strategy: 'drop' },
      TOOL_RESULT: { strategy: 'truncate', keepRecent: 3 },
      ASSISTANT_MESSAGE: { strategy: 'truncate', keepRecent: 5 },
      USER_MESSAGE: { strategy: 'truncate', keepRecent: 5 },
      SYSTEM_PROMPT: { strategy: 'none' },
      SUBAGENT_STRATEGY: { strategy: 'none' },
      COMPACTION_SUMMARY: { strategy: 'none' },
    });
    // Lowest priority first: skills, then tool results, then the dialogue.
    const p = (t: keyof typeof DEFAULT_SELECTIVE_RULES) => DEFAULT_SELECTIVE_RULES[t]?.priority ?? NaN;
    expect(p('SKILL_PROMPT')).toBeLessThan(p('TOOL_RESULT'));
    expect(p('TOOL_RESULT')).toBeLessThan(p('USER_MESSAGE'));
    expect(p('USER_MESSAGE')).toBe(p('ASSISTANT_MESSAGE'));
  });

  it('is what parsing nothing gives', () => {
    expect(parseCompactionConfig({})).toStrictEqual(DEFAULT_COMPACTION_CONFIG);
    expect(parseCompactionConfig(undefined)).toStrictEqual(DEFAULT_COMPACTION_CONFIG);
    expect(parseCompactionConfig(null)).toStrictEqual(DEFAULT_COMPACTION_CONFIG);
  });

  it('the thresholds in tokens: 80% and 50% of 80,000', () => {
    expect(triggerTokens(DEFAULT_COMPACTION_CONFIG)).toBe(64_000);
    expect(targetTokens(DEFAULT_COMPACTION_CONFIG)).toBe(40_000);
  });
});

describe('parseCompactionConfig accepts', () => {
  it('a partial config and fills the rest', () => {
    const config = parseCompactionConfig({
      maxContextTokens: 16_000,
      triggerRatio: 0.75,
      keepRecentRounds: 0,
    });
    expect(config).toStrictEqual({
      ...DEFAULT_COMPACTION_CONFIG,
      maxContextTokens: 16_000,
      triggerRatio: 0.75,
      keepRecentRounds: 0,
    });
  });

  it.each([
    ['triggerRatio 1 (the whole window)', { triggerRatio: 1 }],
    ['the smallest window', { maxContextTokens: 256 }],
    ['a target just under the trigger', { triggerRatio: 0.8, targetRatio: 0.79 }],
    ['no cooldown', { cooldownMs: 0 }],
    ['keeping no tool blocks', { toolBlocksKeepRecent: 0 }],
    ['all the room for the summary', { summaryRoomRatio: 1 }],
    ['a tiny summary share', { summaryRoomRatio: 0.01 }],
    ['the whole target for carried state', { carriedStateRatio: 1 }],
    ['a tiny carried-state share', { carriedStateRatio: 0.001 }],
    [
      'a truncate rule with keepRecent',
      { selectiveRules: { TOOL_RESULT: { strategy: 'truncate', keepRecent: 1, priority: 0 } } },
    ],
    ['a drop rule without keepRecent', { selectiveRules: { MEMORY: { strategy: 'drop', priority: 0 } } }],
    ['"none" for a fixed type', { selectiveRules: { SYSTEM_PROMPT: { strategy: 'none', priority: 9 } } }],
  ])('%s', (_, raw) => {
    expect(parseCompactionConfig(raw)).toMatchObject(raw);
  });

  it('merges configured rules over the defaults', () => {
    const config = parseCompactionConfig({
      selectiveRules: { TOOL_RESULT: { strategy: 'truncate', keepRecent: 1, priority: 0 } },
    });
    expect(selectiveRules(config)).toStrictEqual({
      ...DEFAULT_SELECTIVE_RULES,
      TOOL_RESULT: { strategy: 'truncate', keepRecent: 1, priority: 0 },
    });
  });
});

describe('parseCompactionConfig refuses, with exact messages', () => {
  const knownKeys = Object.keys(compactionConfigFields()).join(', ');

  it.each<[string, unknown, string[]]>([
    ['ratio 1.2', { triggerRatio: 1.2 }, [`triggerRatio: triggerRatio ${RATIO}`]],
    ['ratio 0', { triggerRatio: 0 }, [`triggerRatio: triggerRatio ${RATIO}`]],
    ['ratio -1', { triggerRatio: -1 }, [`triggerRatio: triggerRatio ${RATIO}`]],
    ['ratio "abc"', { triggerRatio: 'abc' }, ['triggerRatio: triggerRatio must be a number']],
    ['ratio "0.8" (a string)', { triggerRatio: '0.8' }, ['triggerRatio: triggerRatio must be a number']],
    ['targetRatio 1.5', { targetRatio: 1.5 }, [`targetRatio: targetRatio ${RATIO}`]],
    [
      'toolCallThreshold 0',
      { toolCallThreshold: 0 },
      ['toolCallThreshold: toolCallThreshold must be at least 1'],
    ],
    ['tailRatio 2', { summaryInputTailRatio: 2 }, [`summaryInputTailRatio: summaryInputTailRatio ${RATIO}`]],
    ['targetRatio 0', { targetRatio: 0 }, [`targetRatio: targetRatio ${RATIO}`]],
    ['summaryRoomRatio 0', { summaryRoomRatio: 0 }, [`summaryRoomRatio: summaryRoomRatio ${RATIO}`]],
    ['summaryRoomRatio 1.2', { summaryRoomRatio: 1.2 }, [`summaryRoomRatio: summaryRoomRatio ${RATIO}`]],
    ['summaryRoomRatio -0.3', { summaryRoomRatio: -0.3 }, [`summaryRoomRatio: summaryRoomRatio ${RATIO}`]],
    [
      'summaryRoomRatio "0.3" (a string)',
      { summaryRoomRatio: '0.3' },
      ['summaryRoomRatio: summaryRoomRatio must be a number'],
    ],
    ['carriedStateRatio 0', { carriedStateRatio: 0 }, [`carriedStateRatio: carriedStateRatio ${RATIO}`]],
    [
      'carriedStateRatio 1.01',
      { carriedStateRatio: 1.01 },
      [`carriedStateRatio: carriedStateRatio ${RATIO}`],
    ],
    ['carriedStateRatio -1', { carriedStateRatio: -1 }, [`carriedStateRatio: carriedStateRatio ${RATIO}`]],
    [
      'carriedStateRatio null',
      { carriedStateRatio: null },
      ['carriedStateRatio: carriedStateRatio must be a number'],
    ],
    [
      'targetRatio equal to triggerRatio',
      { targetRatio: 0.8 },
      [
        'targetRatio: targetRatio (0.8) must be below triggerRatio (0.8), or every compaction would fire again at once',
      ],
    ],
    [
      'targetRatio above triggerRatio',
      { triggerRatio: 0.6, targetRatio: 0.7 },
      [
        'targetRatio: targetRatio (0.7) must be below triggerRatio (0.6), or every compaction would fire again at once',
      ],
    ],
    ['unknown key', { triggerRation: 0.8 }, [`unknown key: triggerRation (known keys: ${knownKeys})`]],
    ['unknown keys', { foo: 1, bar: 2 }, [`unknown keys: foo, bar (known keys: ${knownKeys})`]],
    [
      'a window under 256',
      { maxContextTokens: 100 },
      ['maxContextTokens: maxContextTokens must be at least 256'],
    ],
    [
      'a fractional window',
      { maxContextTokens: 1000.5 },
      ['maxContextTokens: maxContextTokens must be a whole number'],
    ],
    [
      'negative keepRecentRounds',
      { keepRecentRounds: -1 },
      ['keepRecentRounds: keepRecentRounds must be 0 or more'],
    ],
    ['roundsThreshold 0', { roundsThreshold: 0 }, ['roundsThreshold: roundsThreshold must be at least 1']],
    [
      'eventsThreshold 1.5',
      { eventsThreshold: 1.5 },
      ['eventsThreshold: eventsThreshold must be a whole number'],
    ],
    ['an empty marker', { marker: '' }, ['marker: marker must not be empty']],
    ['enabled "yes"', { enabled: 'yes' }, ['enabled: enabled must be true or false']],
    ['summarizer "gpt"', { summarizer: 'gpt' }, ['summarizer: summarizer must be llm or extractive']],
    [
      'onReject "ignore"',
      { onReject: 'ignore' },
      ['onReject: onReject must be drop_oldest, continue or fail'],
    ],
    ['negative cooldown', { cooldownMs: -1 }, ['cooldownMs: cooldownMs must be 0 or more']],
    [
      'importance threshold -1',
      { importanceScoreThreshold: -1 },
      ['importanceScoreThreshold: importanceScoreThreshold must be 0 or more'],
    ],
    [
      'loop guard ratio 2',
      { loopGuardMinSavedRatio: 2 },
      ['loopGuardMinSavedRatio: loopGuardMinSavedRatio must be between 0 and 1'],
    ],
    [
      'head + tail over 1',
      { summaryInputHeadRatio: 0.8 },
      ['summaryInputHeadRatio: summaryInputHeadRatio + summaryInputTailRatio must be at most 1'],
    ],
    [
      'previewTokens not below the thresholds',
      { previewTokens: 500 },
      ['previewTokens: previewTokens must be below toolCallThreshold and toolResultThreshold'],
    ],
    [
      'a rule for an unknown item type',
      { selectiveRules: { TOOL_OUTPUT: { strategy: 'drop', priority: 1 } } },
      [
        'selectiveRules: unknown item type "TOOL_OUTPUT" (one of SYSTEM_PROMPT, TOOL_DEFINITIONS, SUBAGENT_STRATEGY, ' +
          'SKILL_PROMPT, SKILL_METADATA, USER_MESSAGE, ASSISTANT_MESSAGE, TOOL_RESULT, COMPACTION_SUMMARY, MEMORY, ' +
          'TASK_LIST, ARTIFACT_TRAIL, OPEN_ERRORS, GIT_DIFF_STAT)',
      ],
    ],
    [
      'a lower-case item type',
      { selectiveRules: { skill_prompt: { strategy: 'drop', priority: 1 } } },
      [expect.stringContaining('selectiveRules: unknown item type "skill_prompt"') as unknown as string],
    ],
    [
      'truncate without keepRecent',
      { selectiveRules: { TOOL_RESULT: { strategy: 'truncate', priority: 2 } } },
      ['selectiveRules: rule for TOOL_RESULT: truncate needs keepRecent'],
    ],
    [
      'an unknown rule strategy',
      { selectiveRules: { USER_MESSAGE: { strategy: 'summarize', priority: 3 } } },
      ['selectiveRules.USER_MESSAGE.strategy: strategy must be one of drop, truncate, none'],
    ],
    [
      'an unknown key in a rule',
      { selectiveRules: { USER_MESSAGE: { strategy: 'drop', priority: 3, keep: 1 } } },
      ['unknown key in selectiveRules.USER_MESSAGE: keep'],
    ],
    [
      'dropping the system prompt',
      { selectiveRules: { SYSTEM_PROMPT: { strategy: 'drop', priority: 1 } } },
      ['selectiveRules: rule for SYSTEM_PROMPT must be "none": it is never compacted'],
    ],
    [
      'truncating compaction summaries',
      { selectiveRules: { COMPACTION_SUMMARY: { strategy: 'truncate', keepRecent: 1, priority: 1 } } },
      ['selectiveRules: rule for COMPACTION_SUMMARY must be "none": it is never compacted'],
    ],
  ])('%s', (_, raw, expected) => {
    expect(problems(raw)).toStrictEqual(expected);
  });

  it('names every bad field at once, in one ConfigError message', () => {
    const err = (() => {
      try {
        parseCompactionConfig({ triggerRatio: 1.2, roundsThreshold: 0, extra: true });
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('accepted');
    })();
    expect(err.name).toBe('ConfigError');
    expect(err.problems).toHaveLength(3);
    expect(err.message).toMatch(/^invalid compaction config: /);
    expect(err.message).toContain(`triggerRatio: triggerRatio ${RATIO}`);
    expect(err.message).toContain('roundsThreshold: roundsThreshold must be at least 1');
    expect(err.message).toContain('unknown key: extra');
  });
});

describe('triggerTokens and targetTokens', () => {
  it.each([
    // [triggerRatio, window, threshold]: float error of ratio × window never moves the threshold.
    [0.7, 700, 490], // 0.7 × 700 = 489.99999999999994
    [0.57, 100_000, 57_000], // 0.57 × 100,000 = 56999.99999999999
    [0.29, 3000, 870], // 0.29 × 3000 = 869.9999999999999
    [0.55, 100_000, 55_000], // 0.55 × 100,000 = 55000.00000000001
    [0.8, 80_000, 64_000],
    [0.8, 1001, 801], // 800.8: fires at 801 tokens, not at 800
    [1, 256, 256],
  ])('triggerRatio %d of %d → fires at %d tokens', (triggerRatio, maxContextTokens, expected) => {
    const config = parseCompactionConfig({ triggerRatio, targetRatio: 0.1, maxContextTokens });
    expect(triggerTokens(config)).toBe(expected);
  });

  it.each([
    [0.5, 80_000, 40_000],
    [0.5, 1001, 500],
    [0.3, 16_000, 4800],
  ])('targetRatio %d of %d → at most %d tokens', (targetRatio, maxContextTokens, expected) => {
    expect(targetTokens(parseCompactionConfig({ targetRatio, maxContextTokens }))).toBe(expected);
  });
});
