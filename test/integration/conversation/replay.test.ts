/**
 * Recorded histories of representative runs (test/histories/) replayed against the current
 * workflow code: a change that makes the workflows nondeterministic fails here, before it can
 * break running conversations.
 *
 * `RECORD_HISTORIES=1 npx vitest run --project integration test/integration/conversation/replay.test.ts`
 * records them again (do that only for a deliberate, versioned change of the workflows). Keep the
 * earlier recordings beside them under a version prefix (`v0-*`: before any `patched` branch, with
 * prune and commit as activities; `v1-*`: recorded at e6951e7, one summarize activity passing over
 * empty steps, patched, prune and commit still activities): running workflows of every earlier
 * version must replay too.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal, type TemporalHandle } from '../../../src/infra/temporal';
import { readHistoryFile, replayHistories } from '../../../src/replay/histories';
import { findTemporalCli } from '../../../src/infra/temporal-cli';
import { isSummaryRequest, step } from '../../support/fake-openai';
import {
  startConversationEnv,
  words,
  type Conversation,
  type ConversationEnv,
} from '../../support/conversation-env';
import { testTemporalAddress, testWorkflowBundle } from '../../support/harness';

const DIR = join(__dirname, '..', '..', 'histories');
const record = process.env.RECORD_HISTORIES === '1';

/** Saves every run and compaction child as `temporal workflow show --output json` writes it. */
async function save(name: string, conv: Conversation, address: string): Promise<void> {
  const cli = findTemporalCli();
  if (!cli) throw new Error('recording needs the temporal CLI');
  const show = (workflowId: string, runId: string) =>
    execFileSync(
      cli,
      ['workflow', 'show', '-w', workflowId, '-r', runId, '--output', 'json', '--address', address],
      {
        maxBuffer: 64 * 1024 * 1024,
      },
    );
  const full = await conv.fullHistory();
  full.runs.forEach((run, i) =>
    writeFileSync(join(DIR, `${name}-run${i + 1}.json`), show(conv.id, run.runId)),
  );
  full.children.forEach((child, i) =>
    writeFileSync(join(DIR, `${name}-compaction${i + 1}.json`), show(child.workflowId, child.runId)),
  );
}

if (record)
  describe('recording representative histories', () => {
    let env: ConversationEnv;
    let temporal: TemporalHandle;
    let canEnv: ConversationEnv;
    beforeAll(async () => {
      env = await startConversationEnv();
      temporal = await connectTemporal({
        ui: false,
        extraArgs: ['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=60'],
      });
      canEnv = await startConversationEnv({ temporalAddress: temporal.address });
    });
    afterAll(async () => {
      await env?.close();
      await canEnv?.close();
      await temporal?.shutdown();
    });

    it('records a committed compaction, a rollback with cooldown, and continue-as-new', async () => {
      env.llm.reset();
      const summaries = env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('recorded summary'));
      env.llm.setDefault(step.text(words(1500, 'rec')));
      const committed = await env.startConversation({
        name: 'committed',
        config: { maxContextTokens: 8000, emitCompactionMetaEvents: true },
      });
      for (let i = 0; i < 5; i++) await committed.send(words(600, `c${i}w`));
      await committed.compact('keep the numbers');
      await committed.end();
      await save('committed', committed, testTemporalAddress());

      summaries.setDefault(step.contentNull());
      const rolledBack = await env.startConversation({
        name: 'rolled-back',
        config: { maxContextTokens: 20_000, roundsThreshold: 2, cooldownMs: 60_000 },
      });
      for (let i = 0; i < 3; i++) await rolledBack.send(words(300, `r${i}w`));
      await rolledBack.end();
      await save('rolled-back-cooldown', rolledBack, testTemporalAddress());

      canEnv.llm.reset();
      canEnv.llm.setDefault(step.text('ok'));
      const continued = await canEnv.startConversation({
        name: 'continued',
        config: { maxContextTokens: 64_000 },
      });
      for (let i = 0; i < 12; i++) await continued.send(`message ${i}`);
      await continued.end();
      await save('continue-as-new', continued, temporal.address);
      expect(readdirSync(DIR).some((f) => f.startsWith('continue-as-new-run2'))).toBe(true);
    });

    it('records a compaction whose summary ran as a local activity', async () => {
      env.llm.reset();
      env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('recorded local summary'));
      env.llm.setDefault(step.text(words(1500, 'rec')));
      const local = await env.startConversation({
        name: 'local-summary',
        config: { maxContextTokens: 8000 },
        summaryCalls: 'local',
      });
      for (let i = 0; i < 5; i++) await local.send(words(600, `l${i}w`));
      await local.compact('keep the numbers');
      await local.end();
      await save('local-summary', local, testTemporalAddress());
      expect(readdirSync(DIR).some((f) => f.startsWith('local-summary-compaction1'))).toBe(true);
    });
  });

describe('replaying the recorded histories', () => {
  it('every history in test/histories replays against the current workflow code', async () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));
    expect(files.map((f) => f.replace(/-(run|compaction)\d+\.json$/, ''))).toEqual(
      expect.arrayContaining(['committed', 'rolled-back-cooldown', 'continue-as-new', 'local-summary']),
    );
    const outcomes = await replayHistories(
      testWorkflowBundle(),
      files.map((f) => readHistoryFile(join(DIR, f))),
    );
    expect(outcomes).toHaveLength(files.length);
    expect(outcomes.filter((o) => o.error !== null)).toEqual([]);
  });

  it('the replay command reports each file OK with its compaction timeline', async () => {
    const { replay } = await import('../../../src/cli/commands/replay');
    const report = await replay({
      targets: ['rolled-back-cooldown-run1.json', 'committed-run1.json'].map((f) => join(DIR, f)),
    });
    expect(report.ok).toBe(true);
    expect(report.histories.map((h) => [h.workflowId, h.error])).toEqual([
      ['rolled-back-cooldown-run1', null],
      ['committed-run1', null],
    ]);
    expect(report.histories[0]?.timeline.map((e) => e.kind)).toEqual(['compaction', 'cooldown', 'skipped']);
  });
});
