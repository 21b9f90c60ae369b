import { describe, expect, it } from 'vitest';
import { finishCompaction, planCompaction } from '../../../src/context/compaction-plan';
import { parseCompactionConfig } from '../../../src/context/config';
import { lower } from '../../../src/context/lower';
import { headerRoles, splitSegments } from '../../../src/context/segments';
import { createTokenCounter } from '../../../src/tokens';
import { conversation, ids, itemsFactory, words } from '../../support/items-factory';

const o200k = createTokenCounter({ encoding: 'o200k_base' });
const perm = (mode: string) => `<permissions instructions>\nsandbox: ${mode}\n</permissions instructions>`;
const mode = (text: string) => `<collaboration_mode>${text}</collaboration_mode>`;

describe('headerRoles: system prompts an agent writes again as its settings change', () => {
  it('only the latest of each opening tag is header; earlier ones of that tag are conversation', () => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.system('You are a coding agent.', { id: 'base' }),
      f.system(perm('workspace-write'), { id: 'perm1' }),
      f.system(
        mode(
          '# Plan Mode\nChat your way to a plan; a new <collaboration_mode></collaboration_mode> ends it.',
        ),
        {
          id: 'mode1',
        },
      ),
      f.user('Build it.', { id: 'task' }),
      f.system(mode('# Default\nYou are now in Default mode.'), { id: 'mode2' }),
      f.system(perm('danger-full-access'), { id: 'perm2' }),
      f.system('<model_switch>\nContinue with these instructions.\n</model_switch>', { id: 'switch' }),
      f.system('Another plain system message.', { id: 'plain' }),
    );
    const { header, conversation: rest } = splitSegments(items);
    expect(ids(header)).toStrictEqual(['base', 'mode2', 'perm2', 'switch', 'plain', 'task']);
    expect(ids(rest)).toStrictEqual(['perm1', 'mode1']);
  });

  it("Codex's notes of approved command prefixes are conversation once its permissions are sent again, and replace nothing", () => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.system(perm('workspace-write'), { id: 'perm1' }),
      f.user('Build it.', { id: 'task' }),
      f.system('Approved command prefix saved:\n- ["pytest"]', { id: 'saved1' }),
      // A network rule is no prefix the permissions list; a note beside another section is no note alone.
      f.system('Allowed network rule saved in execpolicy (allowlist): pypi.org', { id: 'rule1' }),
      f.system(`Approved command prefix saved:\n- ["make"]\n\n${mode('Default')}`, { id: 'bundle' }),
      f.system(perm('workspace-write; approved: ["pytest"]'), { id: 'perm2' }),
      f.system('Approved command prefix saved:\n- ["ls"]', { id: 'saved2' }),
    );
    const { header, conversation: rest } = splitSegments(items);
    // The note after the latest copy says what that copy does not: it stays; the latest copy is
    // not replaced by it.
    expect(ids(header)).toStrictEqual(['rule1', 'bundle', 'perm2', 'saved2', 'task']);
    expect(ids(rest)).toStrictEqual(['perm1', 'saved1']);
  });

  it('a prompt with anything beside its tagged sections, or with a section no later prompt has, stays header', () => {
    const f = itemsFactory(o200k);
    const items = conversation(
      // The user's own instructions bundled with the settings.
      f.system(`${perm('read-only')}\nAlways answer in French.`, { id: 'bundle' }),
      f.system(`${perm('workspace-write')}\n${mode('# Plan Mode')}`, { id: 'sections' }),
      f.user('task', { id: 'task' }),
      f.system(perm('danger-full-access'), { id: 'perm' }),
    );
    expect(headerRoles(items)).toStrictEqual(['system', 'system', 'task', 'system']);
    // Both of its sections written again later: replaced.
    const both = conversation(...items, f.system(mode('# Default'), { id: 'mode' }));
    expect(headerRoles(both)).toStrictEqual(['system', undefined, 'task', 'system', 'system']);
  });

  it('a replaced prompt is sent with the system prompts, before the one that replaced it', () => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.system('base', { id: 'base' }),
      f.system(perm('read-only'), { id: 'perm1' }),
      f.user('task', { id: 'task' }),
      f.assistant('ok', { id: 'reply' }),
      f.system(perm('danger-full-access'), { id: 'perm2' }),
      f.user('go on', { id: 'now' }),
    );
    expect(
      lower(items).messages.map((m) => [m.role, typeof m.content === 'string' ? m.content : '']),
    ).toStrictEqual([
      ['system', 'base'],
      ['system', perm('read-only')],
      ['system', perm('danger-full-access')],
      ['user', 'task'],
      ['assistant', 'ok'],
      ['user', 'go on'],
    ]);
  });

  it('a tag with attributes, or text before the tag, names no kind: each such prompt stays header', () => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.system('<rules version="1">old</rules>', { id: 'a1' }),
      f.system('<rules version="2">new</rules>', { id: 'a2' }),
      f.system('Note: <rules> apply', { id: 'b1' }),
      f.system('Note: <rules> apply again', { id: 'b2' }),
      f.user('task', { id: 'task' }),
    );
    expect(headerRoles(items)).toStrictEqual(['system', 'system', 'system', 'system', 'task']);
  });

  it('a compaction drops the replaced prompt and keeps the latest, so the header fits the target', () => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.system('sys', { id: 'sys' }),
      f.system(mode(`# Plan Mode\n${words(1500, 'plan')}`), { id: 'plan-mode' }),
      f.user('Plan it, then build it.', { id: 'task' }),
      f.assistant(words(400, 'planning'), { id: 'plan' }),
      f.system(mode('# Default mode\nPlan mode no longer applies.'), { id: 'default-mode' }),
      ...Array.from({ length: 6 }, (_, r) => [
        f.user(`Step ${r}.`, { id: `u${r}` }),
        ...f.block('read_file', { path: `src/m${r}.ts` }, words(500, `code${r}`)),
      ]).flat(),
    );
    const config = parseCompactionConfig({ maxContextTokens: 4000 });
    const plan = planCompaction({ items, config, tokenizer: o200k, trigger: 'check', compactionId: 'c1' });
    expect(plan.impossible).toBeNull();
    expect(ids(plan.toSummarize)).toContain('plan-mode');
    const out = finishCompaction(plan, null);
    expect(ids(out)).not.toContain('plan-mode');
    expect(ids(out)).toContain('default-mode');
    expect(plan.work.total()).toBeLessThanOrEqual(plan.targetTokens);
  });
});
