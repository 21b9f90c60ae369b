/**
 * The files the client commands read, refused with exit 2 and a line naming the problem: compaction
 * config files (the file and key) and session files (the line and field).
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/context/config';
import { exitCodeFor } from '../../../src/cli/client';
import { prepareImport } from '../../../src/cli/commands/import';
import { SAMPLE_SESSION } from '../../../src/cli/demo';
import { buildStartInput, resolveStartConfig } from '../../../src/cli/start-options';
import { readCompactionConfigFile } from '../../../src/infra/config-sources';
import { tempFiles, thrown } from '../../support/files';

const file = tempFiles('dc-cli-files-');
const noEnv = {};

describe('config files', () => {
  it('a context_compaction block or top-level keys, snake_case or camelCase', () => {
    expect(
      readCompactionConfigFile(file('block.yaml', 'context_compaction:\n  trigger_ratio: 0.7\n')),
    ).toEqual({
      triggerRatio: 0.7,
    });
    expect(
      readCompactionConfigFile(file('top.yaml', 'triggerRatio: 0.7\nmax_context_tokens: 9000\n')),
    ).toEqual({
      triggerRatio: 0.7,
      maxContextTokens: 9000,
    });
    expect(readCompactionConfigFile(file('empty.yaml', ''))).toEqual({});
  });

  it.each([
    ['an unknown key at top level', 'trigger_ratio: 0.7\nbogus: 1\n', /top-level.yaml: bogus: unknown key/],
    [
      'an unknown key in the block',
      'context_compaction:\n  bogus: 1\n',
      /block-bad.yaml: context_compaction.bogus: unknown key/,
    ],
    [
      'a ratio above 1',
      'trigger_ratio: 1.2\n',
      /c.yaml: trigger_ratio: triggerRatio must be greater than 0 and at most 1 \(got 1.2\)/,
    ],
    [
      'a window too small',
      'max_context_tokens: 10\n',
      /c.yaml: max_context_tokens: maxContextTokens must be at least 256 \(got 10\)/,
    ],
    ['not YAML', 'a: [1, 2\n', /not valid YAML/],
    ['a list', '- 1\n- 2\n', /expected a mapping of compaction keys/],
  ])('%s is refused with the file and key', (name, text, message) => {
    const path = file(
      name.includes('block') ? 'block-bad.yaml' : name.includes('top') ? 'top-level.yaml' : 'c.yaml',
      text,
    );
    const err = thrown(() => buildStartInput({ config: path }, noEnv));
    expect(err).toBeInstanceOf(ConfigError);
    expect(exitCodeFor(err)).toBe(2);
    expect(err.message).toMatch(message);
  });

  it('a missing file is named', () => {
    expect(thrown(() => readCompactionConfigFile('/nonexistent.yaml')).message).toMatch(
      /\/nonexistent.yaml: cannot read the file \(ENOENT\)/,
    );
  });

  it('later wins: file → environment → --window; the merged whole is checked', () => {
    const path = file('merge.yaml', 'trigger_ratio: 0.7\nmax_context_tokens: 9000\ntarget_ratio: 0.4\n');
    expect(resolveStartConfig({ file: path, window: 20000, env: { DC_TRIGGER_RATIO: '0.75' } })).toEqual({
      triggerRatio: 0.75,
      maxContextTokens: 20000,
      targetRatio: 0.4,
    });
    // DC_COMPACTION_CONFIG names the file when --config is not given.
    expect(resolveStartConfig({ env: { DC_COMPACTION_CONFIG: path } })).toMatchObject({ triggerRatio: 0.7 });
    expect(() => resolveStartConfig({ env: { DC_TRIGER_RATIO: '0.5' } })).toThrow(
      /DC_TRIGER_RATIO: unknown compaction setting/,
    );
    // target 0.9 over trigger 0.7: each value is in range, the whole is not.
    expect(() => resolveStartConfig({ file: path, env: { DC_TARGET_RATIO: '0.9' } })).toThrow(ConfigError);
  });
});

describe('session files', () => {
  it('a malformed JSONL line is named', () => {
    const path = file('s.jsonl', '{"role":"system","content":"hi"}\n{"role":"user","content":"x"\n');
    const err = thrown(() => prepareImport({ file: path, id: 'imp-1' }));
    expect(exitCodeFor(err)).toBe(2);
    expect(err.message).toMatch(/cannot import .*s.jsonl: line 2: not valid JSON/);
  });

  it('a bad field is named with its line', () => {
    const path = file(
      'f.jsonl',
      '{"role":"user","content":"x"}\n{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":5,"arguments":"{}"}}]}\n',
    );
    expect(thrown(() => prepareImport({ file: path, id: 'imp-2' })).message).toMatch(
      /line 2, message.tool_calls\[0\].function.name: expected a string/,
    );
  });

  it('a format that does not match the file is refused', () => {
    const path = file('chat.json', JSON.stringify([{ role: 'user', content: 'x' }]));
    expect(exitCodeFor(thrown(() => prepareImport({ file: path, format: 'swe-agent', id: 'imp-3' })))).toBe(
      2,
    );
  });

  it('a good file gives items with ids of the conversation', () => {
    const prepared = prepareImport({ file: SAMPLE_SESSION, id: 'imp-4' });
    expect(prepared.session.items.length).toBeGreaterThan(3);
    expect(prepared.session.items.every((i) => i.id.startsWith('imp-4:'))).toBe(true);
  });
});
