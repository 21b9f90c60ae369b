/**
 * Figure 1: durability cost per compaction. The same compaction (same stored context, same
 * policy, the fake LLM answering the summary in 0 ms or 500 ms) run twice over: in-process (the
 * compaction activities called directly, in the workflow's order, under MockActivityEnvironment)
 * and as the `compaction` child workflow on the local dev server (started with
 * client.workflow.execute), with the summary as an activity (the default) and as a local activity
 * (`summaryCalls: 'local'`). The difference is what Temporal adds: tasks, history, scheduling.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../activities';
import type {
  PruneInput,
  PruneResult,
  SummarizeInput,
  SummarizeResult,
  SummaryStep,
} from '../activities/types';
import { step, isSummaryRequest } from '../test/support/fake-openai';
import { encodeHistory } from '../test/support/histories';
import type { CompactionInput, CompactionResult } from '../workflows/definitions';
import { API_KEY, type BenchEnv } from './bench-env';
import { loadSession, prefixByTokens, sumTokens, withIdPrefix } from './fixtures';
import type { Figure } from './report';
import { fmt, now, summarize, type Summary } from './stats';

const CONFIG = { maxContextTokens: 16_000 };
const CONTEXT_TOKENS = 24_000;

/** Where the child runs its summary call: `AgentConversationInput.summaryCalls`. */
const MODES = [
  { summaryCalls: 'task_queue', label: 'activity (default)' },
  { summaryCalls: 'local', label: 'local activity' },
] as const;

interface Variant {
  delayMs: number;
  inProcess: Summary;
  /** By mode, in the order of MODES. */
  workflow: Summary[];
  summaryCalls: number;
}

export async function durabilityFigure(env: BenchEnv, reps: number): Promise<Figure> {
  const context = prefixByTokens(loadSession('pi-large-session.jsonl'), CONTEXT_TOKENS);
  const taskQueue = `bench-durability-${Date.now()}`;
  const worker = await env.startWorker(taskQueue);
  const activities = createActivities({
    pool: worker.pool,
    llm: { apiKey: API_KEY, baseURL: env.llm.url, timeoutMs: 60_000 },
  });
  const mock = new MockActivityEnvironment();
  let n = 0;
  const seed = async (): Promise<string> => {
    const id = `bench-dur-${Date.now()}-${n++}`;
    await env.store.createConversation(id, withIdPrefix(context, `${id}:`));
    return id;
  };
  const input = (
    conversationId: string,
    summaryCalls: CompactionInput['summaryCalls'] = 'task_queue',
  ): CompactionInput => ({
    conversationId,
    compactionId: `${conversationId}:c1`,
    seq: 1,
    trigger: 'manual',
    round: 1,
    focus: null,
    config: CONFIG,
    summaryModel: 'fake-summarizer',
    mode: 'summarize',
    workspace: null,
    summaryCalls,
  });

  /** The child workflow's sequence, in-process: prune → strategies until one is under target → commit. */
  const inProcess = async (conversationId: string): Promise<number> => {
    const i = input(conversationId);
    const pruneInput: PruneInput = {
      conversationId,
      compactionId: i.compactionId,
      seq: 1,
      trigger: 'manual',
      focus: null,
      config: CONFIG,
      model: 'fake-summarizer',
    };
    const pruned: PruneResult = await mock.run(activities.selectivePrune, pruneInput);
    let chosen: SummarizeResult | undefined;
    let calls = 0;
    const steps: SummaryStep[] = [
      ...pruned.chain.map((s) => ({ strategy: s, keepRecentRounds: null })),
      { strategy: 'full', keepRecentRounds: 2 },
    ];
    // As the workflow: one activity per step that summarizes something; empty steps are passed over.
    for (let k = 0; k < steps.length;) {
      const s = steps[k] as SummaryStep;
      const summarizeInput: SummarizeInput = {
        conversationId,
        compactionId: i.compactionId,
        prunedVersion: pruned.stagedVersion,
        strategy: s.strategy,
        keepRecentRounds: s.keepRecentRounds,
        then: steps.slice(k + 1),
        focus: null,
        config: CONFIG,
        summaryModel: 'fake-summarizer',
        workspace: null,
      };
      const result: SummarizeResult = await mock.run(activities.summarize, summarizeInput);
      k += (result.stepIndex ?? 0) + 1;
      chosen = result;
      calls += result.attempts;
      if (result.underTarget && result.itemsCompacted > 0) break;
    }
    if (!chosen) throw new Error('no strategy ran');
    await mock.run(activities.commitCompaction, {
      compactionId: i.compactionId,
      stagedVersion: chosen.stagedVersion,
    });
    return calls;
  };
  const viaWorkflow = async (
    conversationId: string,
    summaryCalls: CompactionInput['summaryCalls'],
  ): Promise<CompactionResult> =>
    env.client.workflow.execute('compaction', {
      taskQueue,
      workflowId: `${conversationId}/compaction-1`,
      args: [input(conversationId, summaryCalls)],
    });
  /** History bytes and events of one child, by mode (the last run of each). */
  const childHistory: { bytes: number; events: number }[] = [];

  const variants: Variant[] = [];
  try {
    for (const delayMs of [0, 500]) {
      env.llm.reset();
      env.llm
        .when((r) => isSummaryRequest(r))
        .setDefault(step.summary('The benchmark summary of the work so far.', { delayMs }));
      // Warm-up: one of each (bundle load, connections, token ranks).
      await inProcess(await seed());
      for (const mode of MODES) await viaWorkflow(await seed(), mode.summaryCalls);
      const a: number[] = [];
      const b: number[][] = MODES.map(() => []);
      let summaryCalls = 0;
      for (let r = 0; r < reps; r++) {
        // Alternate, so drift on a shared machine hits every side alike.
        const c1 = await seed();
        let t = now();
        summaryCalls = await inProcess(c1);
        a.push(now() - t);
        for (const [m, mode] of MODES.entries()) {
          const c2 = await seed();
          t = now();
          const result = await viaWorkflow(c2, mode.summaryCalls);
          b[m]!.push(now() - t);
          if (result.status !== 'committed') throw new Error(`compaction ${result.status}: ${result.reason}`);
          if (r === reps - 1) {
            const history = await env.client.workflow.getHandle(`${c2}/compaction-1`).fetchHistory();
            childHistory[m] = { bytes: encodeHistory(history).length, events: history.events?.length ?? 0 };
          }
        }
      }
      variants.push({ delayMs, inProcess: summarize(a), workflow: b.map(summarize), summaryCalls });
      console.error(
        `  durability ${delayMs} ms: in-process p50 ${fmt(summarize(a).p50)} ms, ` +
          MODES.map((mode, m) => `child (summary ${mode.label}) p50 ${fmt(summarize(b[m]!).p50)} ms`).join(
            ', ',
          ),
      );
    }
  } finally {
    await worker.stop();
  }
  const zero = variants[0];
  const overhead0 = (m: number) => (zero ? zero.workflow[m]!.p50 - zero.inProcess.p50 : Number.NaN);
  return {
    id: '1',
    title: 'Durability cost per compaction (in-process vs child workflow)',
    notes: [
      `Context: the first ${context.length} items (${sumTokens(context).toLocaleString('en-US')} tokens) of pi-large-session, ` +
        `window ${CONFIG.maxContextTokens.toLocaleString('en-US')} (target 0.5), LLM summarizer answered by the fake server; ` +
        `${reps} repetitions of each, alternating, after one warm-up each; every repetition compacts a freshly stored copy. ` +
        `Both paths run the same activities (selectivePrune → summarize per strategy until under target → commit; ` +
        `${zero?.summaryCalls ?? '?'} summary call(s) each) against the same PostgreSQL; the workflow path adds Temporal ` +
        '(workflow and activity tasks, history, a local dev server with SQLite in memory).',
      `**Overhead at p50 with a 0 ms model: ${fmt(overhead0(0))} ms with the summary as an activity (the default), ` +
        `${fmt(overhead0(1))} ms as a local activity** (\`summaryCalls: 'local'\`; goal < 50 ms). ` +
        'As an activity the child is two workflow tasks around the summary activity, and the summary heartbeats, shows ' +
        'its attempts and pending state in the Web UI and can run on other workers; as a local activity prune, summary and ' +
        'commit run in one workflow task. ' +
        `One child's history: ${MODES.map((mode, m) => `${mode.label} ${fmt((childHistory[m]?.bytes ?? 0) / 1024)} KB, ${childHistory[m]?.events ?? '?'} events`).join('; ')}.`,
    ],
    tables: [
      {
        columns: [
          'LLM delay',
          'summary runs as',
          'in-process p50',
          'in-process p95',
          'workflow p50',
          'workflow p95',
          'overhead p50',
          'overhead p95',
          'workflow / in-process (p50)',
        ],
        rows: variants.flatMap((v) =>
          MODES.map((mode, m) => {
            const w = v.workflow[m]!;
            return [
              `${v.delayMs} ms`,
              mode.label,
              `${fmt(v.inProcess.p50)} ms`,
              `${fmt(v.inProcess.p95)} ms`,
              `${fmt(w.p50)} ms`,
              `${fmt(w.p95)} ms`,
              `${fmt(w.p50 - v.inProcess.p50)} ms`,
              `${fmt(w.p95 - v.inProcess.p95)} ms`,
              `×${(w.p50 / v.inProcess.p50).toFixed(2)}`,
            ];
          }),
        ),
      },
    ],
    data: {
      variants,
      modes: MODES,
      childHistory,
      contextItems: context.length,
      contextTokens: sumTokens(context),
      config: CONFIG,
    },
  };
}
