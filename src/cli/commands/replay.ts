/**
 * `durable-compaction replay <workflow-id | history.json ...> [--query "…"] [--export file] [--json]`:
 * replays conversation histories against the current workflow code (reporting determinism errors
 * clearly) and prints each one's compaction timeline: every compaction child with its trigger,
 * strategy, attempts, outcome, tokens and reason, the cooldown timers and the skipped triggers.
 *
 * Exit codes: 0 every history replayed; 3 a determinism (or replay) error; 2 bad input; 1 failure.
 */
import { existsSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { InfraError } from '../../infra/errors';
import {
  HistoryFileError,
  readHistoryFile,
  replayHistories,
  type ReplayOutcome,
} from '../../replay/histories';
import {
  compactionTimeline,
  decodeTimelinePayloads,
  formatTimeline,
  type TimelineEntry,
} from '../../replay/timeline';

type History = ReturnType<typeof readHistoryFile>['history'];

export interface ReplayOptions {
  targets: string[];
  query?: string;
  exportPath?: string;
  json?: boolean;
  log?: (line: string) => void;
}

export interface ReplayReport {
  histories: { workflowId: string; error: string | null; timeline: TimelineEntry[] }[];
  ok: boolean;
}

/** Loads the histories named by files, workflow ids or a visibility query. */
async function loadHistories(options: ReplayOptions): Promise<{ workflowId: string; history: History }[]> {
  const out: { workflowId: string; history: History }[] = [];
  const ids: string[] = [];
  for (const target of options.targets) {
    if (target.endsWith('.json') || existsSync(target)) out.push(readHistoryFile(target));
    else ids.push(target);
  }
  if (ids.length === 0 && !options.query) return out;
  const { connectTemporal } = await import('../../infra/temporal');
  if (!process.env.TEMPORAL_ADDRESS) {
    throw new InfraError(
      'replay needs TEMPORAL_ADDRESS to fetch workflow histories',
      'set it, or pass history files',
    );
  }
  const temporal = await connectTemporal({});
  try {
    if (options.query) {
      for await (const execution of temporal.client.workflow.list({ query: options.query }))
        ids.push(execution.workflowId);
    }
    for (const id of ids) {
      try {
        const history = await temporal.client.workflow.getHandle(id).fetchHistory();
        out.push({ workflowId: id, history });
      } catch (err) {
        throw new HistoryFileError(`no workflow ${id} (${(err as Error).message})`);
      }
    }
  } finally {
    await temporal.shutdown();
  }
  return out;
}

/** Replays and builds the report; writes the first history to `exportPath` when asked. */
export async function replay(options: ReplayOptions): Promise<ReplayReport> {
  const histories = await loadHistories(options);
  if (histories.length === 0)
    throw new HistoryFileError('nothing to replay: give history files, workflow ids or --query');
  if (options.exportPath) {
    const { historyToJSON } = await import('@temporalio/common/lib/proto-utils');
    const { temporal } = await import('@temporalio/proto');
    const first = histories[0]!;
    writeFileSync(
      options.exportPath,
      historyToJSON(temporal.api.history.v1.History.fromObject(first.history)),
    );
  }
  const { DefaultLogger, Runtime } = await import('@temporalio/worker');
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // a runtime is already installed (tests): keep its logger
  }
  const { bundleWorkflows } = await import('../../worker');
  const bundle = await bundleWorkflows();
  // Bodies sent by reference are read from the store (DATABASE_URL) or a codec server.
  const { clientCodecs } = await import('../client');
  const codecs = await clientCodecs();
  let outcomes: ReplayOutcome[];
  try {
    outcomes = await replayHistories(bundle, histories, { payloadCodecs: codecs.payloadCodecs });
    for (const h of histories) await decodeTimelinePayloads(h.history, codecs.payloadCodecs);
  } finally {
    await codecs.close();
  }
  const report: ReplayReport = {
    histories: histories.map((h, i) => ({
      workflowId: h.workflowId,
      error: outcomes[i]?.error ?? null,
      timeline: compactionTimeline(h.history),
    })),
    ok: outcomes.every((o) => o.error === null),
  };
  return report;
}

export function registerReplay(program: Command): void {
  program
    .command('replay')
    .description('replay workflow histories against the current code and print their compaction timelines')
    .argument(
      '[targets...]',
      'workflow ids (fetched from TEMPORAL_ADDRESS) or history files (temporal workflow show --output json)',
    )
    .option(
      '--query <query>',
      'replay every workflow a visibility query lists, e.g. "WorkflowType=\'agentConversation\'"',
    )
    .option('--export <file>', 'write the (first) history to a file for a bug report')
    .option('--json', 'print the report as JSON')
    .action(async (targets: string[], opts: { query?: string; export?: string; json?: boolean }) => {
      let report: ReplayReport;
      try {
        report = await replay({ targets, query: opts.query, exportPath: opts.export, json: opts.json });
      } catch (err) {
        if (err instanceof HistoryFileError) {
          console.error(`error: ${err.message}`);
          process.exit(2);
        }
        throw err;
      }
      if (opts.json) console.log(JSON.stringify(report, null, 2));
      else {
        for (const h of report.histories) {
          console.log(`${h.workflowId}: ${h.error ? `REPLAY FAILED — ${h.error}` : 'replayed OK'}`);
          for (const line of formatTimeline(h.timeline)) console.log(`  ${line}`);
        }
        if (opts.export) console.log(`history written to ${opts.export}`);
      }
      // Once stdout is written out: a piped one (a large --json) is written asynchronously.
      process.stdout.write('', () => process.exit(report.ok ? 0 : 3));
    });
}
