/**
 * Negative, non-numeric and out-of-range configuration values, from every source: the schema, the
 * environment, the YAML file, `start`'s flags and the workflow's start arguments. Each is refused
 * with the field (and the file or variable) named, before anything is stored or any model called.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/client';
import { buildStartInput } from '../../../src/cli/start-options';
import { ConfigError, parseCompactionConfig } from '../../../src/context/config';
import {
  compactionConfigFromEnv,
  compactionConfigFromYaml,
  loadCompactionConfig,
} from '../../../src/infra/config-sources';
import { startConversationEnv, type ConversationEnv } from '../../support/conversation-env';
import { innermostFailure, NOTHING, rejectionOf, storeSnapshot } from '../../support/bad-input';

/** The problems of a ConfigError thrown by `fn` (fails the test when it does not throw one). */
function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('the schema', () => {
  it.each([
    [{ maxContextTokens: -1 }, 'maxContextTokens: maxContextTokens must be at least 256'],
    [{ maxContextTokens: Number.NaN }, 'maxContextTokens: maxContextTokens must be a number'],
    [{ maxContextTokens: Number.POSITIVE_INFINITY }, 'maxContextTokens: maxContextTokens must be a number'],
    [{ maxContextTokens: '4000' }, 'maxContextTokens: maxContextTokens must be a number'],
    [{ maxContextTokens: null }, 'maxContextTokens: maxContextTokens must be a number'],
    [{ triggerRatio: -0.5 }, 'triggerRatio: triggerRatio must be greater than 0 and at most 1'],
    [{ triggerRatio: 'high' }, 'triggerRatio: triggerRatio must be a number'],
    [{ cooldownMs: -1 }, 'cooldownMs: cooldownMs must be 0 or more'],
    [{ keepRecentRounds: -3 }, 'keepRecentRounds: keepRecentRounds must be 0 or more'],
    [{ summaryMaxTokens: 1.5 }, 'summaryMaxTokens: summaryMaxTokens must be a whole number'],
    [
      { importanceScoreThreshold: -1 },
      'importanceScoreThreshold: importanceScoreThreshold must be 0 or more',
    ],
    [{ loopGuardMinSavedRatio: 2 }, 'loopGuardMinSavedRatio: loopGuardMinSavedRatio must be between 0 and 1'],
    [{ toolBlocksKeepRecent: true }, 'toolBlocksKeepRecent: toolBlocksKeepRecent must be a number'],
    [
      { selectiveRules: { TOOL_RESULT: { strategy: 'truncate', keepRecent: -1, priority: 2 } } },
      'selectiveRules.TOOL_RESULT.keepRecent: keepRecent must be 0 or more',
    ],
  ])('%o is refused: "%s"', (raw, problem) => {
    expect(problems(() => parseCompactionConfig(raw))).toEqual([problem]);
  });
});

describe('the environment', () => {
  it.each([
    [{ DC_MAX_CONTEXT_TOKENS: '-5' }, 'DC_MAX_CONTEXT_TOKENS: maxContextTokens must be at least 256'],
    [
      { DC_MAX_CONTEXT_TOKENS: '12abc' },
      'DC_MAX_CONTEXT_TOKENS: maxContextTokens must be a number, got "12abc"',
    ],
    // `Number()` would read these as 256 and Infinity: a variable holds decimal numbers only.
    [
      { DC_MAX_CONTEXT_TOKENS: '0x100' },
      'DC_MAX_CONTEXT_TOKENS: maxContextTokens must be a number, got "0x100"',
    ],
    [{ DC_COOLDOWN_MS: 'Infinity' }, 'DC_COOLDOWN_MS: cooldownMs must be a number, got "Infinity"'],
    [{ DC_TRIGGER_RATIO: 'NaN' }, 'DC_TRIGGER_RATIO: triggerRatio must be a number, got "NaN"'],
    [{ DC_ENABLED: 'maybe' }, 'DC_ENABLED: enabled must be true or false, got "maybe"'],
    [
      { conversation_turn_threshold: '-2' },
      'conversation_turn_threshold: roundsThreshold must be at least 1',
    ],
    [
      { sliding_window_size: '-1' },
      'sliding_window_size: sliding_window_size must be a whole number, 0 or more',
    ],
  ])('%o is refused, naming the variable', (env, problem) => {
    expect(problems(() => compactionConfigFromEnv(env))).toEqual([problem]);
  });

  it('decimal forms are still read: exponent, sign, spaces', () => {
    expect(
      compactionConfigFromEnv({
        DC_TRIGGER_RATIO: '8e-1',
        DC_TARGET_RATIO: ' +0.25 ',
        DC_COOLDOWN_MS: '1e3',
      }),
    ).toEqual({ triggerRatio: 0.8, targetRatio: 0.25, cooldownMs: 1000 });
  });
});

describe('the config file', () => {
  it('names the file and the key of every bad value at once', () => {
    const yaml = [
      'context_compaction:',
      '  max_context_tokens: -4000',
      '  trigger_ratio: abc',
      '  cooldown_ms: .nan',
      '  summary_max_tokens: .inf',
      '  keep_recent_rounds: -1',
    ].join('\n');
    expect(problems(() => compactionConfigFromYaml(yaml, 'bad.yaml'))).toEqual([
      'bad.yaml: context_compaction.max_context_tokens: maxContextTokens must be at least 256 (got -4000)',
      'bad.yaml: context_compaction.trigger_ratio: triggerRatio must be a number (got "abc")',
      'bad.yaml: context_compaction.cooldown_ms: cooldownMs must be a number (got NaN)',
      'bad.yaml: context_compaction.summary_max_tokens: summaryMaxTokens must be a number (got Infinity)',
      'bad.yaml: context_compaction.keep_recent_rounds: keepRecentRounds must be 0 or more (got -1)',
    ]);
  });

  it('explicit overrides are checked like the other sources', () => {
    expect(
      problems(() =>
        loadCompactionConfig({
          env: {},
          file: null,
          overrides: { maxContextTokens: '4000', cooldownMs: -1 },
        }),
      ),
    ).toEqual([
      'override maxContextTokens: maxContextTokens must be a number',
      'override cooldownMs: cooldownMs must be 0 or more',
    ]);
  });
});

describe("start's flags", () => {
  it.each([
    ['-5', UsageError, '--window must be a whole number ≥ 1 (got "-5")'],
    ['abc', UsageError, '--window must be a whole number ≥ 1 (got "abc")'],
    [
      '100',
      ConfigError,
      'invalid compaction config: maxContextTokens: maxContextTokens must be at least 256',
    ],
  ])('--window %s is refused before anything starts', (window, kind, message) => {
    expect(() => buildStartInput({ window }, {})).toThrow(kind);
    expect(() => buildStartInput({ window }, {})).toThrow(message);
  });

  it('a bad variable in the environment of `start` is refused the same way', () => {
    expect(() => buildStartInput({}, { DC_TRIGGER_RATIO: '-1' })).toThrow(
      'DC_TRIGGER_RATIO: triggerRatio must be greater than 0 and at most 1',
    );
  });
});

describe("the workflow's start arguments", () => {
  let env: ConversationEnv;
  beforeAll(async () => {
    env = await startConversationEnv();
  });
  afterAll(async () => {
    await env?.close();
  });

  it.each([
    [{ maxContextTokens: -1 }, /maxContextTokens: maxContextTokens must be at least 256/],
    [{ maxContextTokens: 'lots' }, /maxContextTokens: maxContextTokens must be a number/],
    [{ triggerRatio: 1.5, cooldownMs: -5 }, /triggerRatio: .*; cooldownMs: cooldownMs must be 0 or more/],
    [{ noSuchKey: 1 }, /unknown key: noSuchKey/],
  ])('%o fails the workflow at once with CONFIG_INVALID, nothing stored', async (config, message) => {
    env.llm.reset();
    const conv = await env.startConversation({ config });
    const failure = innermostFailure(await rejectionOf(conv.handle.result()));
    expect(failure.type).toBe('CONFIG_INVALID');
    expect(failure.message).toMatch(message);
    expect(env.llm.chatRequests()).toHaveLength(0);
    expect(await storeSnapshot(env.pool, conv.id)).toStrictEqual(NOTHING);
  });
});
