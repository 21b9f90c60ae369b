/**
 * Figure 2: history footprint. Workflow history bytes and events per round over a long
 * conversation whose every round calls a tool returning 1 KB, 20 KB or 200 KB, beside the
 * computed "naive" alternative: the same history if the bodies (user message, reply, tool output)
 * went through activity payloads.
 */
import type { AgentTool } from '../activities/tools/registry';
import { localActivityType } from '../src/replay/timeline';
import { isSummaryRequest, step, type RecordedRequest } from '../test/support/fake-openai';
import { encodeHistory, fetchFullHistory, words } from '../test/support/histories';
import type { BenchEnv } from './bench-env';
import type { Figure } from './report';
import { fitLine, fmt, kb } from './stats';

const SIZES = [1_000, 20_000, 200_000];
const REPLY = 'read it';

interface FootprintRow {
  outputChars: number;
  rounds: number;
  runs: number;
  compactions: number;
  parentBytes: number;
  parentEvents: number;
  childBytes: number;
  childEvents: number;
  bodyBytesPerRound: number;
  seconds: number;
  /** Activities scheduled in the parent run(s), by name. */
  activities: Record<string, number>;
}

function toolName(chars: number): string {
  return `output_${chars}`;
}

export async function footprintFigure(env: BenchEnv, rounds: number): Promise<Figure> {
  const outputs = new Map(SIZES.map((n) => [toolName(n), words(n, `o${n}x`)]));
  const tools: AgentTool[] = [...outputs].map(([name, text]) => ({
    name,
    description: `returns ${text.length} characters`,
    parameters: { type: 'object', properties: {} },
    run: async () => ({ content: text }),
  }));
  const taskQueue = `bench-footprint-${Date.now()}`;
  const worker = await env.startWorker(taskQueue, { tools });
  env.llm.reset();
  env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('rounds of tool outputs were read'));
  // The model asks for the tool once a round and answers when the result is in. A compaction that
  // lands between the two may summarize the result away (the summary's "keep fewer rounds" steps):
  // the model must not ask again, or every round would loop until the loop guard pauses
  // compaction and the context grows without bound (a model that had read the summary would not).
  const asked = new Set<string>();
  env.llm.setDefault((r: RecordedRequest) => {
    const messages = r.body.messages ?? [];
    if (messages.at(-1)?.role === 'tool') return step.text(REPLY);
    const tool =
      (r.body.tools?.[0] as { function?: { name?: string } } | undefined)?.function?.name ?? 'missing';
    const lastRound = [...messages]
      .reverse()
      .find((m) => m.role === 'user' && typeof m.content === 'string' && m.content.startsWith('round '));
    const key = `${tool} ${String(lastRound?.content)}`;
    if (asked.has(key)) return step.text(REPLY);
    asked.add(key);
    return step.toolCalls([{ name: tool, arguments: {} }]);
  });
  const rows: FootprintRow[] = [];
  try {
    // The three sizes run side by side (history does not depend on timing).
    const results = await Promise.all(
      SIZES.map(async (chars) => {
        const started = Date.now();
        const name = toolName(chars);
        const conv = await env.startConversation(taskQueue, {
          name: `footprint-${chars}`,
          tools: [name],
          config: { maxContextTokens: 64_000 },
        });
        let userBytes = 0;
        for (let i = 0; i < rounds; i++) {
          const text = `round ${i}: call the tool`;
          userBytes += Buffer.byteLength(text);
          await conv.send(text);
        }
        const fetched = await fetchFullHistory(env.client, conv.id, conv.firstRunId);
        const full = {
          runs: fetched.runs.map((r) => r.history),
          children: fetched.children.map((c) => c.history),
        };
        const historyBytes = (h: (typeof full.runs)[number]) => encodeHistory(h).length;
        const output = outputs.get(name) ?? '';
        const row: FootprintRow = {
          outputChars: chars,
          rounds,
          runs: full.runs.length,
          compactions: full.children.length,
          parentBytes: full.runs.reduce((n, h) => n + historyBytes(h), 0),
          parentEvents: full.runs.reduce((n, h) => n + (h.events?.length ?? 0), 0),
          childBytes: full.children.reduce((n, h) => n + historyBytes(h), 0),
          childEvents: full.children.reduce((n, h) => n + (h.events?.length ?? 0), 0),
          bodyBytesPerRound: userBytes / rounds + Buffer.byteLength(REPLY) + Buffer.byteLength(output),
          seconds: (Date.now() - started) / 1000,
          activities: {},
        };
        for (const h of full.runs) {
          for (const e of h.events ?? []) {
            const activity =
              e.activityTaskScheduledEventAttributes?.activityType?.name ?? localActivityType(e);
            if (activity) row.activities[activity] = (row.activities[activity] ?? 0) + 1;
          }
        }
        console.error(
          `  footprint ${chars}: ${fmt(row.parentBytes / rounds)} B/round, ${row.compactions} compactions, ${row.seconds} s`,
        );
        return row;
      }),
    );
    rows.push(...results);
  } finally {
    await worker.stop();
  }
  const per = (r: FootprintRow) => (r.parentBytes + r.childBytes) / r.rounds;
  const small = rows[0];
  const big = rows[rows.length - 1];
  // The conversation's own history against how often it compacts: what a round costs by itself and
  // what each compaction adds to it (start, result, search attributes, one more workflow task).
  const fit = fitLine(
    rows.map((r) => r.compactions / r.rounds),
    rows.map((r) => r.parentBytes / r.rounds),
  );
  const compacted = rows.filter((r) => r.compactions > 0);
  const childMean =
    compacted.reduce((n, r) => n + r.childBytes, 0) / compacted.reduce((n, r) => n + r.compactions, 0);
  return {
    id: '2',
    title: 'History footprint per round',
    notes: [
      `${rounds} rounds per conversation; each round: user message → model asks for the tool → the tool returns N characters → ` +
        'model answers. Window 64k (compactions run as children when the context fills); otherwise the defaults (model ' +
        'and tool calls as local activities, the summary as an activity, search attributes upserted once a round). ' +
        'Bytes are the protobuf-encoded ' +
        'histories as the server stores them, every run (continue-as-new) and every compaction child included. ' +
        '"Naive" adds, per round, the bodies that would travel through activity payloads if they were not kept in ' +
        'PostgreSQL: the user message, the reply and the tool output (each would appear at least once in history).',
      `Measured: **${kb(small ? per(small) : NaN)}/round** with 1 KB outputs and **${kb(big ? per(big) : NaN)}/round** with 200 KB ` +
        `outputs (×${small && big ? (per(big) / per(small)).toFixed(2) : 'n/a'}), compaction children included; the ` +
        `conversation's own history: ${rows.map((r) => `${kb(r.parentBytes / r.rounds)}`).join(' / ')} per round. ` +
        `The goal (flat, under 3 KB/round whatever the message size): ${rows
          .map((r) => `${r.outputChars / 1000} KB ${per(r) < 3 * 1024 ? 'under' : 'over'}`)
          .join(
            ', ',
          )}. Bodies never enter history (naive would be ×${big ? ((per(big) + big.bodyBytesPerRound) / per(big)).toFixed(0) : '?'} ` +
        'larger at 200 KB); what grows with the output size is the number of compactions. A least-squares fit of ' +
        "the conversation's bytes per round against compactions per round over the three sizes: " +
        `**${kb(fit.intercept)} a round** whatever its messages' size, plus **${kb(fit.slope)} a compaction** in the ` +
        `conversation's history (start, result, search attributes, one more workflow task) and ${kb(childMean)} in the compaction's own ` +
        'history: the message size enters only through how often the window fills. A 200 KB ' +
        'output (~89k tokens) alone is over the 64k window, so that conversation compacts every round: the prune cuts ' +
        'the output to its 200-token preview and the summary runs (seed 003: always).',
      `Activities per round in the parent (local ones are one marker event each): ${rows
        .map(
          (r) =>
            `${r.outputChars / 1000} KB: ${Object.entries(r.activities)
              .map(([k, v]) => `${k} ${fmt(v / r.rounds, 2)}`)
              .join(', ')}`,
        )
        .join('; ')}.`,
    ],
    tables: [
      {
        columns: [
          'tool output',
          'bytes/round (parent)',
          'events/round (parent)',
          'compactions',
          'bytes/compaction (child)',
          'bytes/round (all)',
          'naive bytes/round',
          'naive / measured',
          'runs',
        ],
        rows: rows.map((r) => [
          `${r.outputChars / 1000} KB`,
          kb(r.parentBytes / r.rounds),
          fmt(r.parentEvents / r.rounds, 1),
          r.compactions,
          r.compactions > 0 ? kb(r.childBytes / r.compactions) : '-',
          kb(per(r)),
          kb(per(r) + r.bodyBytesPerRound),
          `×${((per(r) + r.bodyBytesPerRound) / per(r)).toFixed(1)}`,
          r.runs,
        ]),
      },
    ],
    data: { rows, fit: { bytesPerRound: fit.intercept, parentBytesPerCompaction: fit.slope, childMean } },
  };
}
