/**
 * `inspect --compaction N`'s classification: what a compaction kept, dropped, truncated and
 * summarized, from the items of the versions it read and wrote.
 */
import { describe, expect, it } from 'vitest';
import { diffCompaction, formatCompactionDiff, itemEntry } from '../../../src/cli/inspect-view';
import { itemsFactory } from '../../support/items-factory';

function scenario() {
  const f = itemsFactory();
  const system = f.system('You are a coding agent.');
  const task = f.user('Fix the failing test in parser.ts');
  const [oldCall, oldResult] = f.block('read_file', { path: 'old.ts' }, 'x'.repeat(400));
  const [bigCall, bigResult] = f.block('read_file', { path: 'big.ts' }, 'y'.repeat(2000));
  const reply = f.assistant('I read both files.');
  const next = f.user('Now run the tests');
  const last = f.assistant('All green.');
  const base = [system, task, oldCall, oldResult, bigCall, bigResult, reply, next, last];
  // The prune drops the old tool block and cuts the big result.
  const cut = {
    ...f.result(bigResult.message.tool_call_id, `${'y'.repeat(200)}…[truncated]`),
    sourceId: bigResult.id,
  };
  const pruned = [system, task, bigCall, cut, reply, next, last];
  // The summary folds the first round (the task, the call, its cut result and the reply) into one item.
  const summary = f.summary('The user asked to fix parser.ts; big.ts was read.');
  const final = [system, summary, next, last];
  return {
    f,
    base,
    pruned,
    final,
    ids: { system, task, oldCall, oldResult, bigCall, bigResult, cut, reply, next, last, summary },
  };
}

describe('diffCompaction', () => {
  it('sorts every item of the base version into kept, dropped, truncated or summarized', () => {
    const { base, pruned, final, ids } = scenario();
    const diff = diffCompaction(base, pruned, final);
    expect(diff.kept.map((e) => e.id)).toEqual([ids.system.id, ids.next.id, ids.last.id]);
    expect(diff.dropped.map((e) => e.id)).toEqual([ids.oldCall.id, ids.oldResult.id]);
    expect(diff.truncated).toHaveLength(1);
    expect(diff.truncated[0]).toMatchObject({
      original: { id: ids.bigResult.id, tokens: ids.bigResult.tokens },
      replacement: { id: ids.cut.id, tokens: ids.cut.tokens },
      thenSummarized: true,
    });
    expect(diff.summarized.map((e) => e.id)).toEqual([ids.task.id, ids.bigCall.id, ids.reply.id]);
    expect(diff.summary).toMatchObject({
      id: ids.summary.id,
      text: expect.stringContaining('fix parser.ts'),
    });
    const all = diff.kept.length + diff.dropped.length + diff.truncated.length + diff.summarized.length;
    expect(all).toBe(base.length);
    expect(diff.tokens.before).toBe(base.reduce((n, i) => n + i.tokens, 0));
    expect(diff.tokens.after).toBe(final.reduce((n, i) => n + i.tokens, 0));
  });

  it('a truncated item that stays is not "then summarized"; without a summary nothing is summarized', () => {
    const { base, pruned, ids } = scenario();
    const diff = diffCompaction(base, null, pruned);
    expect(diff.truncated[0]?.thenSummarized).toBe(false);
    expect(diff.summarized).toEqual([]);
    expect(diff.summary).toBeNull();
    expect(diff.dropped.map((e) => e.id)).toEqual([ids.oldCall.id, ids.oldResult.id]);
  });

  it('prints each section with its token total, and the summary text', () => {
    const { base, pruned, final, ids } = scenario();
    const lines = formatCompactionDiff(diffCompaction(base, pruned, final));
    // The figures of the scenario's own items, not only the section labels.
    const tokens = (...items: { tokens: number }[]) =>
      items.reduce((n, i) => n + i.tokens, 0).toLocaleString('en-US');
    expect(lines).toContain(`dropped: 2 items, ${tokens(ids.oldCall, ids.oldResult)} tokens`);
    expect(lines).toContain(`truncated: 1 item, ${tokens(ids.bigResult)} → ${tokens(ids.cut)} tokens`);
    expect(lines.filter((l) => l.startsWith(`    → ${tokens(ids.cut)} tok, then summarized  `))).toHaveLength(
      1,
    );
    expect(lines).toContain(`summarized: 3 items, ${tokens(ids.task, ids.bigCall, ids.reply)} tokens`);
    expect(lines).toContain(`kept: 3 items, ${tokens(ids.system, ids.next, ids.last)} tokens`);
    const summaryAt = lines.indexOf(`summary (${tokens(ids.summary)} tokens, item ${ids.summary.id}):`);
    expect(lines[summaryAt + 1]).toBe('  The user asked to fix parser.ts; big.ts was read.');
    expect(lines.at(-1)).toBe(`tokens: ${tokens(...base)} → ${tokens(...final)}`);
  });

  it('an entry previews the text on one line and names the calls', () => {
    const { ids } = scenario();
    expect(itemEntry(ids.bigCall).preview).toBe('[calls read_file]');
    const long = itemEntry({ ...ids.task, message: { role: 'user', content: `a\n${'b'.repeat(200)}` } });
    expect(long.preview).toHaveLength(72);
    expect(long.preview.startsWith('a b')).toBe(true);
  });
});
