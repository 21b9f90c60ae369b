/**
 * Watching a compaction while it runs (issue 23): the child's `progress` Query and Web UI current
 * details, the parent's `status` naming the running child, the summary's attempt after a 429 (from
 * the server's record of the pending activity), the rollback phase, and the CLI's progress line
 * from a real `compact` process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactionProgress } from '../../../src/client/compaction-progress';
import { formatCompactionProgress } from '../../../src/cli/format';
import { compactionProgressQuery, type ConversationEvent } from '../../../workflows/definitions';
import { spawnCli } from '../../support/cli-process';
import { isSummaryRequest, step } from '../../support/fake-openai';
import { startConversationEnv, waitFor, words, type ConversationEnv } from '../../support/conversation-env';
import { testDatabaseUrl, testTemporalAddress } from '../../support/harness';

let env: ConversationEnv;
beforeAll(async () => {
  env = await startConversationEnv();
});
afterAll(async () => {
  await env?.close();
});

/** A conversation with three rounds of 300 words: enough for a manual compaction to summarize. */
async function conversationWithHistory(config: Record<string, unknown> = {}) {
  env.llm.reset();
  const conv = await env.startConversation({ config: { maxContextTokens: 20_000, ...config } });
  for (let i = 0; i < 3; i++) await conv.send(words(300, `p${i}w`));
  return conv;
}

describe('a running compaction tells where it is', () => {
  it('progress Query, current details and the parent status during a slow summary', async () => {
    const conv = await conversationWithHistory();
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('what was said', { delayMs: 3_000 }));
    const compacting = conv.compact();
    const status = await conv.waitForStatus((s) => s.phase === 'compacting' && Boolean(s.compaction));
    expect(status.compaction).toEqual({ workflowId: `${conv.id}/compaction-1`, seq: 1, trigger: 'manual' });
    const child = env.client.workflow.getHandle(status.compaction!.workflowId);
    const progress = await waitFor(
      () => child.query(compactionProgressQuery),
      (p) => p.phase === 'summary',
      30_000,
      'the summary phase',
    );
    expect(progress).toMatchObject({
      seq: 1,
      trigger: 'manual',
      phase: 'summary',
      summaryCalls: 0,
      outcome: null,
    });
    // The step the summary starts from: one of the strategy chain's, or the full summary.
    expect(progress.step).toMatch(/^(truncate|tool_blocks|sliding_window|full\(keep \d+\))$/);
    expect(progress.tokensBefore).toBeGreaterThan(0);
    expect(progress.tokensAfter).toBeLessThanOrEqual(progress.tokensBefore as number);
    // The Web UI's current details say the same: the same figures and step, not only the labels.
    const metadata = (await child.query('__temporal_workflow_metadata')) as { currentDetails?: string };
    const n = (x: number | null) => (x ?? NaN).toLocaleString('en-US');
    expect(metadata.currentDetails).toBe(
      `**manual compaction #1** · summary · ${n(progress.tokensBefore)} → ${n(progress.tokensAfter)} tokens` +
        `\n\nStep: ${progress.step}`,
    );

    const brief = await compacting;
    expect(brief.status).toBe('committed');
    const done = await child.query(compactionProgressQuery);
    expect(done).toMatchObject({
      phase: 'done',
      outcome: { status: 'committed', reason: null },
      tokensAfter: brief.tokensAfter,
      summaryCalls: 1,
    });
    expect((await conv.status()).compaction).toBeNull();
  });

  it('after a 429, the summary is on attempt 2 of 3, with the failure and the wait', async () => {
    const conv = await conversationWithHistory();
    env.llm
      .when((r) => isSummaryRequest(r))
      .script(step.rateLimited(4))
      .setDefault(step.summary('after the wait'));
    const compacting = conv.compact();
    const status = await conv.waitForStatus((s) => Boolean(s.compaction));
    const seen = await waitFor(
      () => compactionProgress(env.client.workflow, status.compaction!),
      (p) => (p?.summaryAttempt?.attempt ?? 0) >= 2,
      30_000,
      'the second attempt',
    );
    expect(seen?.summaryAttempt).toMatchObject({ attempt: 2, maximumAttempts: 3 });
    expect(seen?.summaryAttempt?.lastFailure).toMatch(/429|rate limit/i);
    const line = formatCompactionProgress(seen!);
    expect(line).toMatch(
      /^compaction #1 \(manual\): prune [\d,]+ → [\d,]+ · summary \(\S+\) attempt 2\/3 \(.*(429|rate limit)/i,
    );
    expect((await compacting).status).toBe('committed');
  });

  it('a summary that fails every attempt: the rollback phase, as a meta event and in the progress', async () => {
    const conv = await conversationWithHistory({ emitCompactionMetaEvents: true });
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.serverError());
    const brief = await conv.compact();
    expect(brief.status).toBe('rolled_back');
    const child = env.client.workflow.getHandle(`${conv.id}/compaction-1`);
    expect(await child.query(compactionProgressQuery)).toMatchObject({
      phase: 'done',
      outcome: { status: 'rolled_back' },
    });
    const phases = (await conv.events()).flatMap((e: ConversationEvent) =>
      e.type === 'compaction_meta' ? [e.phase] : [],
    );
    expect(phases).toEqual(['selective_start', 'selective_done', 'summary_start', 'rollback']);
  });

  it('the CLI progress line of `compact` follows the phases', async () => {
    const conv = await conversationWithHistory();
    env.llm
      .when((r) => isSummaryRequest(r))
      .script(step.rateLimited(3))
      .setDefault(step.summary('the talk', { delayMs: 1_000 }));
    const { child, output } = spawnCli(['compact', conv.id], {
      TEMPORAL_ADDRESS: testTemporalAddress(),
      DATABASE_URL: testDatabaseUrl(),
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    // The first attempt fails at once; the poll (every 500 ms) sees the second one and its wait.
    const lines = output.stderr.trim().split('\n');
    expect(
      lines.some((l) =>
        /^… compaction #1 \(manual\): prune [\d,]+ → [\d,]+ · summary \(\S+\) attempt 2\/3 \(LLM rate limited \(HTTP 429\).*retrying in \d s\)$/.test(
          l,
        ),
      ),
    ).toBe(true);
    expect(output.stdout).toMatch(/^compaction #1 \(manual, .+\): [\d,]+ → [\d,]+ tokens, saved \d+%$/m);
  });

  it('a round says which of its compactions ran before the reply was written', async () => {
    env.llm.reset();
    const conv = await env.startConversation({ config: { maxContextTokens: 4_000 } });
    const results = [];
    for (let i = 0; i < 6; i++) results.push(await conv.send(words(1_100, `b${i}w`)));
    let before = 0;
    for (const r of results) {
      const n = r.compactionsBeforeReply ?? -1;
      expect(n).toBeGreaterThanOrEqual(0);
      // One model call a round: before it the prechecks, after it the checks on its usage.
      expect(
        r.compactions.slice(0, n).every((c) => c.trigger === 'precheck' || c.trigger === 'overflow'),
      ).toBe(true);
      expect(r.compactions.slice(n).every((c) => c.trigger === 'check')).toBe(true);
      before += n;
    }
    expect(before).toBeGreaterThan(0);
  });

  it('events --follow, a real process, prints each phase while the compaction runs', async () => {
    const conv = await conversationWithHistory({ emitCompactionMetaEvents: true });
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('what was said', { delayMs: 3_000 }));
    const { child, output } = spawnCli(['events', conv.id, '--follow', '--json'], {
      TEMPORAL_ADDRESS: testTemporalAddress(),
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const phases = (): string[] =>
      output.stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { type: string; phase?: string })
        .map((e) => e.phase ?? e.type);
    const compacting = conv.compact();
    // While the summary call still runs, the phases so far are already printed.
    await waitFor(
      async () => phases(),
      (p) => p.includes('summary_start'),
      30_000,
      'summary_start printed',
    );
    const child1 = env.client.workflow.getHandle(`${conv.id}/compaction-1`);
    expect((await child1.query(compactionProgressQuery)).phase).toBe('summary');
    expect(phases()).toEqual(['pre_compact', 'selective_start', 'selective_done', 'summary_start']);
    expect((await compacting).status).toBe('committed');
    await conv.end();
    // The conversation ended: --follow prints what is left and stops.
    expect(await exited).toBe(0);
    expect(phases()).toEqual([
      'pre_compact',
      'selective_start',
      'selective_done',
      'summary_start',
      'summary_done',
      'commit',
      'context_compacted',
    ]);
    const cursors = output.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { cursor: number }).cursor);
    expect(cursors).toEqual(cursors.map((_, i) => i));
  });
});
