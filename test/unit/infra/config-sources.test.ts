import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { compactionConfigFields, ConfigError, DEFAULT_COMPACTION_CONFIG } from '../../../src/context/config';
import {
  compactionConfigFromEnv,
  loadCompactionConfig,
  readCompactionConfigFile,
} from '../../../src/infra/config-sources';

const dir = mkdtempSync(join(tmpdir(), 'dc-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileNo = 0;
function yamlFile(text: string): string {
  const path = join(dir, `config-${++fileNo}.yaml`);
  writeFileSync(path, text);
  return path;
}

function problems(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('accepted');
}

const SAMPLE = join(__dirname, '../../../samples/compaction.yaml');

describe('samples/compaction.yaml', () => {
  it('holds the defaults', () => {
    expect(loadCompactionConfig({ file: SAMPLE, env: {} })).toStrictEqual(DEFAULT_COMPACTION_CONFIG);
  });

  it('documents every key', () => {
    const block = (parse(readFileSync(SAMPLE, 'utf8')) as { context_compaction: Record<string, unknown> })
      .context_compaction;
    const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    const expected = Object.keys(compactionConfigFields())
      .map((key) => (key === 'summaryMaxTokens' ? 'summary_max_length' : snake(key)))
      .sort();
    expect(Object.keys(block).sort()).toStrictEqual(expected);
  });
});

describe('the file: seed 004’s context_compaction block', () => {
  it('maps snake_case keys to the schema, summary_max_length to summaryMaxTokens', () => {
    const file = yamlFile(`
agent:
  name: other settings are left alone
context_compaction:
  enabled: false
  max_context_tokens: 32000
  trigger_ratio: 0.75
  keep_recent_rounds: 1
  require_confirmation: true
  summary_max_length: 800
  selective_rules:
    TOOL_RESULT: { strategy: truncate, keep_recent: 2, priority: 2 }
`);
    expect(readCompactionConfigFile(file)).toStrictEqual({
      enabled: false,
      maxContextTokens: 32_000,
      triggerRatio: 0.75,
      keepRecentRounds: 1,
      requireConfirmation: true,
      summaryMaxTokens: 800,
      selectiveRules: { TOOL_RESULT: { strategy: 'truncate', keepRecent: 2, priority: 2 } },
    });
  });

  it('accepts camelCase keys and seed 001’s names', () => {
    const file = yamlFile(`
context_compaction:
  maxContextTokens: 16000
  summaryMaxTokens: 500
  sliding_window_size: 9
  conversation_turn_threshold: 50
  incremental_summary_chunk_size: 10
  importance_score_threshold: 2.5
`);
    expect(readCompactionConfigFile(file)).toStrictEqual({
      maxContextTokens: 16_000,
      summaryMaxTokens: 500,
      slidingWindowAssistantMessages: 5,
      slidingWindowUserToolMessages: 4,
      roundsThreshold: 50,
      incrementalChunkRounds: 10,
      importanceScoreThreshold: 2.5,
    });
  });

  it('an empty block, or an empty file, is no setting', () => {
    expect(readCompactionConfigFile(yamlFile('context_compaction:\n'))).toStrictEqual({});
    expect(readCompactionConfigFile(yamlFile(''))).toStrictEqual({});
  });

  it('a file without the block holds the keys at top level', () => {
    expect(readCompactionConfigFile(yamlFile('triggerRatio: 0.7\nmax_context_tokens: 9000\n'))).toStrictEqual(
      {
        triggerRatio: 0.7,
        maxContextTokens: 9000,
      },
    );
  });

  it.each<[string, string, (path: string) => string[]]>([
    [
      'ratio 1.2',
      'context_compaction:\n  trigger_ratio: 1.2\n',
      (p) => [
        `${p}: context_compaction.trigger_ratio: triggerRatio must be greater than 0 and at most 1 (got 1.2)`,
      ],
    ],
    [
      'ratio 0',
      'context_compaction:\n  trigger_ratio: 0\n',
      (p) => [
        `${p}: context_compaction.trigger_ratio: triggerRatio must be greater than 0 and at most 1 (got 0)`,
      ],
    ],
    [
      'ratio "abc"',
      'context_compaction:\n  trigger_ratio: abc\n',
      (p) => [`${p}: context_compaction.trigger_ratio: triggerRatio must be a number (got "abc")`],
    ],
    [
      'a string number',
      'context_compaction:\n  max_context_tokens: "32000"\n',
      (p) => [`${p}: context_compaction.max_context_tokens: maxContextTokens must be a number (got "32000")`],
    ],
    [
      'enabled "yes please"',
      'context_compaction:\n  enabled: yes please\n',
      (p) => [`${p}: context_compaction.enabled: enabled must be true or false (got "yes please")`],
    ],
    [
      'unknown keys, every one named',
      'context_compaction:\n  trigger_ration: 0.8\n  max_tokens: 5\n',
      (p) => [
        `${p}: context_compaction.trigger_ration: unknown key`,
        `${p}: context_compaction.max_tokens: unknown key`,
      ],
    ],
    [
      'sliding_window_size 2.5',
      'context_compaction:\n  sliding_window_size: 2.5\n',
      (p) => [
        `${p}: context_compaction.sliding_window_size: sliding_window_size must be a whole number, 0 or more (got 2.5)`,
      ],
    ],
    [
      'truncate without keep_recent',
      'context_compaction:\n  selective_rules:\n    TOOL_RESULT: { strategy: truncate, priority: 2 }\n',
      (p) => [
        `${p}: context_compaction.selective_rules: rule for TOOL_RESULT: truncate needs keepRecent (got {"TOOL_RESULT":{"strategy":"truncate","priority":2}})`,
      ],
    ],
    [
      'no block: the top-level keys are read as compaction keys',
      'agent:\n  name: x\ntrigger_ratio: 2\n',
      (p) => [
        `${p}: agent: unknown key`,
        `${p}: trigger_ratio: triggerRatio must be greater than 0 and at most 1 (got 2)`,
      ],
    ],
    [
      'a list',
      '- 1\n',
      (p) => [`${p}: expected a mapping of compaction keys (or a context_compaction: block)`],
    ],
    [
      'a block that is a list',
      'context_compaction:\n  - 1\n',
      (p) => [`${p}: context_compaction must be a mapping of keys to values`],
    ],
    [
      'bad YAML',
      'context_compaction:\n  trigger_ratio: [0.8\n',
      (p) => [
        expect.stringMatching(
          new RegExp(`^${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not valid YAML: `),
        ) as unknown as string,
      ],
    ],
  ])('refuses %s', (_, text, expected) => {
    const path = yamlFile(text);
    expect(problems(() => readCompactionConfigFile(path))).toStrictEqual(expected(path));
  });

  it('refuses a missing file, naming it', () => {
    const path = join(dir, 'missing.yaml');
    expect(problems(() => readCompactionConfigFile(path))).toStrictEqual([
      `${path}: cannot read the file (ENOENT)`,
    ]);
  });
});

describe('the environment', () => {
  it.each([
    [9, 5, 4],
    [7, 4, 3],
    [1, 1, 0],
    [0, 0, 0],
  ])('sliding_window_size=%d → %d assistant + %d user/tool', (n, assistant, userTool) => {
    for (const variable of ['sliding_window_size', 'SLIDING_WINDOW_SIZE']) {
      expect(compactionConfigFromEnv({ [variable]: String(n) })).toStrictEqual({
        slidingWindowAssistantMessages: assistant,
        slidingWindowUserToolMessages: userTool,
      });
    }
  });

  it('reads seed 001’s variables in either case, and DC_ variables', () => {
    expect(
      compactionConfigFromEnv({
        importance_score_threshold: '2.5',
        INCREMENTAL_SUMMARY_CHUNK_SIZE: '10',
        conversation_turn_threshold: '50',
        DC_MAX_CONTEXT_TOKENS: '32000',
        DC_TRIGGER_RATIO: '0.75',
        DC_ENABLED: 'false',
        DC_REQUIRE_CONFIRMATION: 'yes',
        DC_MARKER: '<<compact>>',
        DC_SELECTIVE_RULES: '{"TOOL_RESULT":{"strategy":"truncate","keep_recent":1,"priority":2}}',
        DC_DATA_DIR: '.data',
        PATH: '/usr/bin',
      }),
    ).toStrictEqual({
      importanceScoreThreshold: 2.5,
      incrementalChunkRounds: 10,
      roundsThreshold: 50,
      maxContextTokens: 32_000,
      triggerRatio: 0.75,
      enabled: false,
      requireConfirmation: true,
      marker: '<<compact>>',
      selectiveRules: { TOOL_RESULT: { strategy: 'truncate', keepRecent: 1, priority: 2 } },
    });
  });

  it('a DC_ variable wins over seed 001’s name for the same key', () => {
    expect(
      compactionConfigFromEnv({ conversation_turn_threshold: '50', DC_ROUNDS_THRESHOLD: '70' }),
    ).toStrictEqual({
      roundsThreshold: 70,
    });
  });

  it.each<[string, Record<string, string>, string[]]>([
    [
      'ratio 1.2',
      { DC_TRIGGER_RATIO: '1.2' },
      ['DC_TRIGGER_RATIO: triggerRatio must be greater than 0 and at most 1'],
    ],
    [
      'ratio -1',
      { DC_TARGET_RATIO: '-1' },
      ['DC_TARGET_RATIO: targetRatio must be greater than 0 and at most 1'],
    ],
    [
      'ratio "abc"',
      { DC_TRIGGER_RATIO: 'abc' },
      ['DC_TRIGGER_RATIO: triggerRatio must be a number, got "abc"'],
    ],
    [
      'an empty number',
      { DC_MAX_CONTEXT_TOKENS: '' },
      ['DC_MAX_CONTEXT_TOKENS: maxContextTokens must be a number, got ""'],
    ],
    [
      'a small window',
      { DC_MAX_CONTEXT_TOKENS: '100' },
      ['DC_MAX_CONTEXT_TOKENS: maxContextTokens must be at least 256'],
    ],
    [
      'a fractional count',
      { conversation_turn_threshold: '2.5' },
      ['conversation_turn_threshold: roundsThreshold must be a whole number'],
    ],
    [
      'a non-numeric window size',
      { SLIDING_WINDOW_SIZE: 'nine' },
      ['SLIDING_WINDOW_SIZE: sliding_window_size must be a number, got "nine"'],
    ],
    [
      'a negative window size',
      { sliding_window_size: '-1' },
      ['sliding_window_size: sliding_window_size must be a whole number, 0 or more'],
    ],
    ['a bad boolean', { DC_ENABLED: 'maybe' }, ['DC_ENABLED: enabled must be true or false, got "maybe"']],
    [
      'bad JSON rules',
      { DC_SELECTIVE_RULES: '{oops' },
      ['DC_SELECTIVE_RULES: selectiveRules must be JSON (an object of item type → rule)'],
    ],
    ['an unknown DC_ setting', { DC_TRIGER_RATIO: '0.8' }, ['DC_TRIGER_RATIO: unknown compaction setting']],
    [
      'several at once',
      { DC_TRIGGER_RATIO: '2', DC_COOLDOWN_MS: 'soon' },
      [
        'DC_COOLDOWN_MS: cooldownMs must be a number, got "soon"',
        'DC_TRIGGER_RATIO: triggerRatio must be greater than 0 and at most 1',
      ],
    ],
  ])('refuses %s', (_, env, expected) => {
    expect(problems(() => compactionConfigFromEnv(env))).toStrictEqual(expected);
  });
});

describe('loadCompactionConfig: defaults → file → environment → overrides', () => {
  const file = () =>
    yamlFile(
      'context_compaction:\n  max_context_tokens: 32000\n  trigger_ratio: 0.7\n  keep_recent_rounds: 1\n',
    );

  it('defaults alone', () => {
    expect(loadCompactionConfig({ env: {} })).toStrictEqual(DEFAULT_COMPACTION_CONFIG);
  });

  it('later sources win, key by key', () => {
    const config = loadCompactionConfig({
      file: file(),
      env: { DC_TRIGGER_RATIO: '0.75', DC_KEEP_RECENT_ROUNDS: '3' },
      overrides: { keepRecentRounds: 0 },
    });
    expect(config).toStrictEqual({
      ...DEFAULT_COMPACTION_CONFIG,
      maxContextTokens: 32_000, // file
      triggerRatio: 0.75, // environment over file
      keepRecentRounds: 0, // override over environment and file
    });
  });

  it('finds the file through DC_COMPACTION_CONFIG, unless told there is none', () => {
    const path = file();
    expect(loadCompactionConfig({ env: { DC_COMPACTION_CONFIG: path } }).maxContextTokens).toBe(32_000);
    expect(loadCompactionConfig({ file: null, env: { DC_COMPACTION_CONFIG: path } }).maxContextTokens).toBe(
      80_000,
    );
  });

  it('reports the problems of every source together', () => {
    const path = yamlFile('context_compaction:\n  trigger_ratio: 1.5\n');
    expect(
      problems(() =>
        loadCompactionConfig({
          file: path,
          env: { DC_EVENTS_THRESHOLD: '0' },
          overrides: { bogus: 1, cooldownMs: -5 },
        }),
      ),
    ).toStrictEqual([
      `${path}: context_compaction.trigger_ratio: triggerRatio must be greater than 0 and at most 1 (got 1.5)`,
      'DC_EVENTS_THRESHOLD: eventsThreshold must be at least 1',
      'override bogus: unknown key',
      'override cooldownMs: cooldownMs must be 0 or more',
    ]);
  });

  it('checks the merged result: a target from one source against a trigger from another', () => {
    const path = yamlFile('context_compaction:\n  trigger_ratio: 0.6\n');
    expect(
      problems(() => loadCompactionConfig({ file: path, env: { DC_TARGET_RATIO: '0.7' } })),
    ).toStrictEqual([
      'targetRatio: targetRatio (0.7) must be below triggerRatio (0.6), or every compaction would fire again at once',
    ]);
    // Each is fine where it is set: 0.6 with the default target 0.5.
    expect(loadCompactionConfig({ file: path, env: {} }).triggerRatio).toBe(0.6);
  });
});
