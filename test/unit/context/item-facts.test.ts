/**
 * Item facts (src/context/item-facts.ts): worked out once when an item is stored, then read by the
 * carried state instead of the item's text — and worked out on the spot for items stored before.
 */
import { describe, expect, it } from 'vitest';
import { collectArtifactTrail } from '../../../src/context/artifact-trail';
import {
  callFactsOf,
  framingTokensOf,
  resultErrorOf,
  resultSource,
  withFacts,
  withFactsAll,
} from '../../../src/context/item-facts';
import type { ContextItem } from '../../../src/context/items';
import { collectOpenErrors } from '../../../src/context/open-errors';
import { conversation, fakeTokenizer, itemsFactory } from '../../support/items-factory';

const f = itemsFactory();

describe('withFacts', () => {
  it('an assistant message: one entry per call, with its files, command, target and note', () => {
    const item = f.calls([
      { name: 'read_file', args: { path: 'src/a.ts' } },
      { name: 'bash', args: { command: 'cd web && npm test -- --watch=false' } },
      { name: 'update_tasks', args: { tasks: [{ title: 'ship', status: 'pending' }] } },
    ]);
    expect(withFacts(item).facts).toStrictEqual({
      calls: [
        { touches: [{ path: 'src/a.ts', op: 'read' }], command: null, target: 'src/a.ts', note: null },
        { touches: [], command: 'cd web && npm test -- --watch=false', target: 'npm test --', note: null },
        {
          touches: [],
          command: null,
          target: '',
          note: { kind: 'task_list', tasks: [{ title: 'ship', status: 'pending' }] },
        },
      ],
    });
  });

  it.each([
    ['bash', 'Traceback (most recent call last):\n  File "x.py"', 'Traceback (most recent call last):'],
    ['read_file', 'raise Error: this is file content', null],
    ['read_file', 'Error: file "x" does not exist', 'Error: file "x" does not exist'],
    ['bash', 'all 12 tests passed', null],
  ])('a %s result %j reports %j', (tool, content, error) => {
    expect(withFacts(f.result('k', content), { tool, printsOnly: false }).facts).toStrictEqual({ error });
  });

  it.each([
    ['cat schema.sql', 'CREATE TABLE runs (\n  error TEXT,\n  id INT\n);', null],
    ["cd app && sed -n '1,40p' docker-compose.yml | nl", '    test: curl -f localhost || exit 1', null],
    ["bash -lc 'grep -rn Exception src'", 'src/a.py:3: raise ValueError: bad', null],
    ['cat setup.log', 'Error: cannot open setup.log', 'Error: cannot open setup.log'],
    ['npm test 2>&1 | tail -5', 'FAIL src/a.test.ts', 'FAIL src/a.test.ts'],
    ["sed -i 's/a/b/' a.py && python a.py", 'ValueError: bad', 'ValueError: bad'],
    ["python - <<'PY'\nprint(1)\nPY", 'ValueError: bad', 'ValueError: bad'],
    // Judged as written: a line break runs another command, and a long command is not cut first.
    ['cat a.py\npython a.py', 'Traceback (most recent call last):\nValueError: boom', 'ValueError: boom'],
    [
      `cat ${Array.from({ length: 12 }, (_, i) => `src/module-${i}/index.ts`).join(' ')} && node build.js`,
      'built 3 files\nTypeError: x is not a function',
      'TypeError: x is not a function',
    ],
    // A printer's own failure, under an agent's wrapper; a search that finds nothing is none.
    [
      'git status --short',
      'Process exited with code 128\nOutput:\nfatal: not a git repository',
      'fatal: not a git repository',
    ],
    [
      'rg --files src',
      'Exit code: 127\nOutput:\n/bin/bash: line 1: rg: command not found',
      '/bin/bash: line 1: rg: command not found',
    ],
    [
      "sed -n '1,260p' AGENTS.md",
      "Exit code: 2\nOutput:\nsed: can't read AGENTS.md: No such file or directory",
      "sed: can't read AGENTS.md: No such file or directory",
    ],
    ['grep -n TODO a.ts', 'Exit code: 1\nOutput:\n', null],
    // A command's output saved to a file and printed: that command's failures.
    ['tail -n 40 build.log', 'compiled 12 files\nnpm ERR! code 1', 'npm ERR! code 1'],
    ["sed -n '1,80p' /tmp/test-run.txt", 'ok 1\nFAIL src/a.test.ts', 'FAIL src/a.test.ts'],
  ])('a shell command %j that prints %j reports %j', (command, content, error) => {
    const call = {
      id: 'k',
      type: 'function' as const,
      function: { name: 'bash', arguments: JSON.stringify({ command }) },
    };
    expect(withFacts(f.result('k', content), resultSource(call)).facts).toStrictEqual({ error });
  });

  it('with the tokenizer, an assistant message also stores its framing: text and call names, counted', () => {
    const item = f.calls([
      { name: 'read_file', args: { path: 'src/a.ts' } },
      { name: 'bash', args: { command: 'x'.repeat(400) } },
    ]);
    const facts = withFacts(item, undefined, fakeTokenizer).facts;
    const expected =
      fakeTokenizer.countText(item.message.content ?? '') +
      fakeTokenizer.countText('read_file') +
      fakeTokenizer.countText('bash');
    expect(facts?.framingTokens).toBe(expected);
    expect(framingTokensOf({ ...item, facts } as typeof item, fakeTokenizer)).toBe(expected);
    // Stored facts are read, not recounted: a tokenizer that must not be called.
    const refuse = { ...fakeTokenizer, countText: () => Number.NaN };
    expect(framingTokensOf({ ...item, facts } as typeof item, refuse)).toBe(expected);
    // Without them (items stored before) they are counted.
    expect(framingTokensOf(item, fakeTokenizer)).toBe(expected);
  });

  it('leaves items without facts to have as they are', () => {
    const user = f.user('hello');
    expect(withFacts(user)).toBe(user);
    const answer = f.assistant('done');
    expect(withFacts(answer)).toBe(answer);
  });

  it('withFactsAll names each result’s tool from the call it answers', () => {
    const [call, result] = f.block('read_file', { path: 'a.ts' }, 'fatal: not a git repository');
    const items = withFactsAll(conversation(call, result));
    // An explicit error counts whatever the tool.
    expect(items[1]?.facts).toStrictEqual({ error: 'fatal: not a git repository' });
    const [bash, out] = f.block('bash', { command: 'make' }, 'make: *** [all] Error 2\nexit code 2');
    expect(withFactsAll(conversation(bash, out))[1]?.facts?.error).toBe('make: *** [all] Error 2');
  });
});

describe('stored facts are what the carried state reads', () => {
  it('the trail and the open errors come from the facts, not from parsing the text again', () => {
    const [call, result] = f.block('edit', { path: 'src/real.ts' }, 'ok');
    // Facts stored by an earlier version that differ from the text: the stored ones win.
    const stored: ContextItem = {
      ...call,
      facts: {
        calls: [
          {
            touches: [{ path: 'src/stored.ts', op: 'edit' }],
            command: null,
            target: 'src/stored.ts',
            note: null,
          },
        ],
      },
    };
    const failed: ContextItem = { ...result, facts: { error: 'Error: stored' } };
    const items = conversation(f.user('go'), stored, failed);
    expect(collectArtifactTrail(items).files.map((file) => file.path)).toEqual(['src/stored.ts']);
    expect(collectOpenErrors(items)).toEqual([
      { tool: 'edit', target: 'src/stored.ts', round: 1, text: 'Error: stored', call: 'src/stored.ts' },
    ]);
  });

  it('items stored without facts get them worked out (and a stored list of the wrong length is not trusted)', () => {
    const call = f.calls([{ name: 'write_file', args: { path: 'b.ts' } }]);
    expect(callFactsOf(call)[0]?.touches).toEqual([{ path: 'b.ts', op: 'write' }]);
    const wrong = { ...call, facts: { calls: [] } };
    expect(callFactsOf(wrong)[0]?.touches).toEqual([{ path: 'b.ts', op: 'write' }]);
    expect(resultErrorOf(f.result('k', 'Error: boom'), 'bash')).toBe('Error: boom');
  });
});
