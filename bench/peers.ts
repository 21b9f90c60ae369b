/**
 * Figure 5: peers side by side. Each shared session, taken as one context, is compacted for
 * windows of 16k, 32k and 64k tokens by: us (`planCompaction` — carried state, prune steps,
 * strategies — and `finishCompaction` with a fixed-size fake summary), pi-coding-agent's
 * `prepareCompaction`, and LangChain's `trimMessages`. Reported: time to decide, tokens kept (our
 * stored counts, summary included), fraction of the window, and tool calls separated from their
 * results in the output (calls without their result + results without their call).
 */
import { parseCompactionConfig } from '../src/context/config';
import type { CompactionSummaryItem, ContextItem } from '../src/context/items';
import { finishCompaction, planCompaction } from '../src/context/compaction-plan';
import { SUMMARY_MESSAGE_PREFIX } from '../src/context/post-compaction';
import { pairToolCalls, unansweredCalls } from '../src/context/tool-pairs';
import { tokenCounterForModel } from '../src/tokens';
import { loadSession, SESSION_FILES, sumTokens } from './fixtures';
import {
  langChainTrim,
  loadPrepareCompaction,
  toLangChain,
  toPiEntries,
  type PrepareCompaction,
} from '../src/eval/peer-adapters';
import type { Figure } from './report';
import { fmt, now, summarize } from './stats';

/** Tokens of the fake summary every summarizing approach adds. */
const SUMMARY_TOKENS = 600;
const WINDOWS = [16_000, 32_000, 64_000];

interface Outcome {
  keptIds: string[];
  summaryTokens: number;
  note?: string;
  /** The time to decide when the approach measures it itself (ours: the plan, not the writing of the context). */
  decideMs?: number;
}

interface PeerRow {
  session: string;
  window: number;
  approach: string;
  decideMs: number;
  /** The first call's time to decide on this input (the first input: before anything is compiled). */
  firstMs: number;
  tokensKept: number;
  windowFraction: number;
  separated: number;
  note: string;
}

function separatedPairs(items: readonly ContextItem[]): number {
  const pairs = pairToolCalls(items);
  return unansweredCalls(pairs).length + pairs.orphanResults.length;
}

function fakeSummary(items: readonly ContextItem[], tokens: number): CompactionSummaryItem {
  return {
    id: 'fake-summary',
    type: 'COMPACTION_SUMMARY',
    summarizer: 'llm',
    message: { role: 'user', content: `${SUMMARY_MESSAGE_PREFIX}\n(a fixed-size fake summary)` },
    tokens,
    round: Math.max(0, ...items.map((i) => i.round)),
    isMeta: true,
    pinned: false,
    ephemeral: false,
  };
}

/**
 * Runs of each approach before the timed ones, so that each is timed as V8 runs it once compiled
 * (our planning path, larger than pi's, takes 10 to 20 calls to get there: after 3 warm-up runs
 * the 16k row measured compilation, 3 ms where the compiled path takes 0.7). The first call of
 * each approach on each input is reported beside the median.
 */
const WARM_UP = 100;

export async function peersFigure(reps: number): Promise<Figure> {
  const tokenizer = tokenCounterForModel('gpt-4o');
  let prepare: PrepareCompaction | null = null;
  let piProblem = '';
  try {
    prepare = await loadPrepareCompaction();
  } catch (err) {
    piProblem = `pi-coding-agent could not be loaded: ${(err as Error).message}`;
  }
  const rows: PeerRow[] = [];
  for (const file of SESSION_FILES) {
    const items = loadSession(file);
    const byId = new Map(items.map((i) => [i.id, i]));
    const tokensById = new Map(items.map((i) => [i.id, i.tokens]));
    const system = items.filter((i) => i.type === 'SYSTEM_PROMPT' || i.type === 'TOOL_DEFINITIONS');
    const entries = toPiEntries(items);
    const messages = await toLangChain(items);
    for (const window of WINDOWS) {
      const config = parseCompactionConfig({ maxContextTokens: window });
      const budget = Math.floor(config.targetRatio * window);
      const approaches: Record<string, () => Promise<Outcome>> = {
        ours: async () => {
          const started = now();
          const plan = planCompaction({
            items,
            config,
            tokenizer,
            trigger: 'precheck',
            compactionId: 'bench',
          });
          const decideMs = now() - started;
          const summaryTokens = Math.min(SUMMARY_TOKENS, plan.summaryBudget);
          const summary = plan.toSummarize.length > 0 ? fakeSummary(items, summaryTokens) : null;
          const out = finishCompaction(plan, summary);
          for (const i of out) if (!byId.has(i.id)) byId.set(i.id, i);
          // The workflow skips a compaction that does not make the context smaller.
          if (sumTokens(out) >= sumTokens(items))
            return { keptIds: items.map((i) => i.id), summaryTokens: 0, note: 'no progress: skipped' };
          return {
            keptIds: out.filter((i) => i.type !== 'COMPACTION_SUMMARY').map((i) => i.id),
            summaryTokens: summary ? summaryTokens : 0,
            note: `${plan.steps.map((s) => s.name).join(' → ')}; writing the context ${fmt(now() - started - decideMs, 3)} ms more`,
            decideMs,
          };
        },
        'pi prepareCompaction': async () => {
          if (!prepare) throw new Error(piProblem);
          const prep = prepare(entries, {
            enabled: true,
            reserveTokens: window - budget,
            keepRecentTokens: budget - SUMMARY_TOKENS,
          });
          if (!prep) return { keptIds: items.map((i) => i.id), summaryTokens: 0, note: 'nothing to compact' };
          const from = entries.findIndex((e) => e.id === prep.firstKeptEntryId);
          const kept = [...system.map((i) => i.id), ...entries.slice(Math.max(0, from)).map((e) => e.id)];
          const summarized = prep.messagesToSummarize.length > 0 || prep.isSplitTurn;
          return {
            keptIds: kept,
            summaryTokens: summarized ? SUMMARY_TOKENS : 0,
            note: prep.isSplitTurn ? 'split turn' : '',
          };
        },
        'LangChain trimMessages (startOn human)': async () => ({
          keptIds: await langChainTrim(messages, tokensById, budget, 'human'),
          summaryTokens: 0,
        }),
        'LangChain trimMessages (defaults)': async () => ({
          keptIds: await langChainTrim(messages, tokensById, budget, undefined),
          summaryTokens: 0,
        }),
      };
      for (const [approach, decide] of Object.entries(approaches)) {
        try {
          const times: number[] = [];
          let firstMs = NaN;
          let outcome: Outcome = { keptIds: [], summaryTokens: 0 };
          for (let r = 0; r < reps + WARM_UP; r++) {
            const t = now();
            outcome = await decide();
            const ms = outcome.decideMs ?? now() - t;
            if (r === 0) firstMs = ms;
            if (r >= WARM_UP) times.push(ms);
          }
          const kept = outcome.keptIds
            .map((id) => byId.get(id))
            .filter((i): i is ContextItem => i !== undefined);
          const tokensKept = sumTokens(kept) + outcome.summaryTokens;
          rows.push({
            session: file,
            window,
            approach,
            decideMs: summarize(times).p50,
            firstMs,
            tokensKept,
            windowFraction: tokensKept / window,
            separated: separatedPairs(kept),
            note: [sumTokens(items) < config.triggerRatio * window ? 'under trigger' : '', outcome.note ?? '']
              .filter(Boolean)
              .join('; '),
          });
        } catch (err) {
          rows.push({
            session: file,
            window,
            approach,
            decideMs: NaN,
            firstMs: NaN,
            tokensKept: NaN,
            windowFraction: NaN,
            separated: NaN,
            note: `failed: ${(err as Error).message}`,
          });
        }
      }
    }
    console.error(`  peers ${file} done (${sumTokens(items)} tokens)`);
  }
  const sessionTokens = Object.fromEntries(SESSION_FILES.map((f) => [f, sumTokens(loadSession(f))]));
  return {
    id: '5',
    title: 'Peers side by side on the shared sessions',
    notes: [
      'Each session, taken whole as one context, compacted once for each window. Budget = target 0.5 × window for all: ' +
        `we plan to it (\`planCompaction\`, the workflow's own planning); pi gets keepRecentTokens = budget − ${SUMMARY_TOKENS} (its summary) and reserveTokens = ` +
        `window − budget; trimMessages gets maxTokens = budget (it does not summarize). Summaries are a fixed fake of ${SUMMARY_TOKENS} ` +
        'tokens (no model call); "tokens kept" counts every kept item with our stored o200k counts, plus that summary. ' +
        'pi estimates tokens itself (chars / 4), trimMessages is given our counts. Time to decide: median of ' +
        `${reps} runs after ${WARM_UP} warm-up runs of the same approach on the same input (conversion to each format not included), and the first of those runs beside it (on the first session's first window, before anything is compiled); ours is \`planCompaction\` (carried state, every step, ` +
        "what to summarize); the writing of the compacted context (cut previews) is given in the note. pi's " +
        `\`prepareCompaction\` is not exported from the package's ` +
        'entry point (only `findCutPoint` is), so it is loaded from its module file. System prompt and tool definitions count as kept for all.',
      `Session sizes (our counts): ${Object.entries(sessionTokens)
        .map(([f, t]) => `${f} ${t.toLocaleString('en-US')}`)
        .join(', ')} tokens; ` +
        'the small ones are under the trigger (0.8 × window): no compaction would fire in the workflow ("under trigger"); they are run anyway.',
      ...(piProblem ? [`**${piProblem}**`] : []),
    ],
    tables: [
      {
        columns: [
          'session',
          'window',
          'approach',
          'decide (ms)',
          'first call (ms)',
          'tokens kept',
          'of window',
          'calls/results separated',
          'note',
        ],
        rows: rows.map((r) => [
          r.session,
          `${r.window / 1000}k`,
          r.approach,
          fmt(r.decideMs, 3),
          fmt(r.firstMs, 3),
          Number.isFinite(r.tokensKept) ? r.tokensKept.toLocaleString('en-US') : 'n/a',
          Number.isFinite(r.windowFraction) ? `${(r.windowFraction * 100).toFixed(0)} %` : 'n/a',
          Number.isFinite(r.separated) ? r.separated : 'n/a',
          r.note,
        ]),
      },
    ],
    data: { rows, summaryTokens: SUMMARY_TOKENS, sessionTokens },
  };
}
