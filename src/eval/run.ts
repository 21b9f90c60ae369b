/**
 * `durable-compaction eval`: each session replayed at each window (`replay.ts`), every compaction
 * judged (`metrics.ts`), the peers put beside ours at the same points (pi's `prepareCompaction`,
 * LangChain's `trimMessages`, when installed), and the broken invariants listed.
 */
import { performance } from 'node:perf_hooks';
import { planExtractiveSummary, planSummaryRequest } from '../context/compaction-summary';
import { summaryHandlesBudget } from '../context/post-compaction';
import { targetTokens, type CompactionConfig } from '../context/config';
import type { ContextItem } from '../context/items';
import { splitSegments } from '../context/segments';
import type { Tokenizer } from '../context/tokenizer';
import type { Pool } from 'pg';
import { judgeCompaction, type CompactionJudgement } from './metrics';
import { scoreRecall, type RecallScore } from './recall-eval';
import { peersAt, type PeerPoint } from './peers';
import { LlmError } from '../llm/errors';
import { SUMMARY_RETRY } from '../failures';
import { replaySession, SummarizerFatalError, type ReplayResult, type Summarizer } from './replay';

export interface EvalSession {
  /** A name for the reports (the file's name). */
  name: string;
  items: ContextItem[];
}

export interface EvalOptions {
  sessions: EvalSession[];
  windows: number[];
  /** The configuration of every replay; `maxContextTokens` is set per window. */
  config: (window: number) => CompactionConfig;
  tokenizer: Tokenizer;
  /** `extractive` (no model call) or an LLM summarizer (see {@link llmSummarizer}). */
  summarizer: 'extractive' | Summarizer;
  /** Put pi and LangChain beside ours (default true). */
  peers?: boolean;
  /** Progress, one line per session × window. */
  log?: (line: string) => void;
  /**
   * Score recall probes (issue 24) on this PostgreSQL: each replay is written to it as a
   * conversation of its own. Absent: no recall probes.
   */
  recallStore?: Pool;
}

/** Min, median and max of some numbers (NaN for none). */
export interface Spread {
  min: number;
  median: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { min: Number.NaN, median: Number.NaN, max: Number.NaN };
  const sorted = [...values].sort((a, b) => a - b);
  return {
    min: sorted[0] as number,
    median: sorted[Math.floor((sorted.length - 1) / 2)] as number,
    max: sorted[sorted.length - 1] as number,
  };
}

/** One session at one window. */
export interface EvalRow {
  session: string;
  window: number;
  target: number;
  sessionTokens: number;
  headerTokens: number;
  requests: number;
  compactions: number;
  skipped: number;
  /**
   * Compactions rolled back because their summary call failed (the replay went on without them),
   * and those rolled back without a call once the replay had stopped asking (replay.ts).
   */
  summaryFailures: number;
  summariesNotAsked: number;
  loopGuardPauses: number;
  /** Tokens before and after each committed compaction, as a share of the window. */
  before: Spread;
  after: Spread;
  /** Committed compactions at or under the target. */
  targetMet: number;
  /** Compactions the fill check applied to, and those filled to 70 % of the target or more. */
  fillChecked: number;
  filled: number;
  requestsOverWindow: number;
  /**
   * Of those, the ones over the window with the header and the latest reply alone: the recording's
   * reply is longer than this window allows (a replay at a smaller window than the recording's).
   */
  requestsReplyTooLong: number;
  largestRequest: number;
  orphanedResults: number;
  headerLost: number;
  /** Touched paths checked after each compaction (summed), and those missing. */
  pathsChecked: number;
  pathsMissing: number;
  probesChecked: number;
  probesMissing: number;
  msPerCompaction: Spread;
  /** The peers' tokens kept at the same points, as a share of the window (NaN: not run). */
  peers: { pi: Spread; trimMessages: Spread; piNote: string };
  compactionDetails: CompactionJudgement[];
  /** Context tokens at each request, and the requests at which compactions committed (for the chart). */
  timeline: { requests: number[]; compactedAt: number[] };
  /** Recall probes of the committed compactions (recall@3), or null when not scored. */
  recall: RecallScore | null;
  /** Every broken invariant, one line each. */
  violations: string[];
}

function sum(items: readonly ContextItem[]): number {
  return items.reduce((n, i) => n + i.tokens, 0);
}

/** The extractive summarizer as a replay's summarizer. */
export function extractiveSummarizer(tokenizer: Tokenizer): Summarizer {
  return async (plan) => ({ text: planExtractiveSummary(plan, tokenizer), summarizer: 'extractive' });
}

/** Attempts of a summary call: the summarize activity's retry policy (`SUMMARY_RETRY`). */
export const SUMMARY_ATTEMPTS = SUMMARY_RETRY.attempts;
/** Its first backoff, multiplied each attempt (1 s, 2 s). */
export const SUMMARY_RETRY_INITIAL_MS = SUMMARY_RETRY.initialIntervalMs;
/** The longest Retry-After a replay waits (the activity takes any). */
export const SUMMARY_RETRY_AFTER_MAX_MS = 60_000;

export interface LlmSummarizerOptions {
  /** Waits between attempts. Default: a timer. */
  sleep?: (ms: number) => Promise<void>;
  /** Told of each failed attempt before it is retried. */
  onRetry?: (retry: { attempt: number; delayMs: number; error: unknown }) => void;
}

/**
 * An LLM summarizer for replays: the same request the summarize activity sends (its `maxTokens`
 * leaves the summary item room for its line of recall handles), `call` doing the request (src/llm's
 * `requestSummary`), with the activity's retry policy: {@link SUMMARY_ATTEMPTS} attempts, 1 s then
 * 2 s apart or the provider's Retry-After. A failure the classification calls non-retryable is not
 * retried: a context length exceeded is this request's (the replay rolls the compaction back), any
 * other (a bad key, an unknown model) every call's, and stops the replay
 * ({@link SummarizerFatalError}).
 */
export function llmSummarizer(
  config: CompactionConfig,
  call: (messages: ReturnType<typeof planSummaryRequest>['messages'], maxTokens: number) => Promise<string>,
  options: LlmSummarizerOptions = {},
): Summarizer {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)));
  return async (plan) => {
    const request = planSummaryRequest(plan, config, null);
    const maxTokens = plan.summaryBudget - summaryHandlesBudget(plan.summaryBudget);
    for (let attempt = 1; ; attempt++) {
      try {
        return { text: await call(request.messages, maxTokens), summarizer: 'llm' };
      } catch (err) {
        if (err instanceof LlmError && !err.retryable) {
          if (err.type === 'LLM_CONTEXT_LENGTH_EXCEEDED') throw err;
          throw new SummarizerFatalError(`${err.message} (${err.type}, not retried)`, { cause: err });
        }
        if (attempt >= SUMMARY_ATTEMPTS) {
          const message = err instanceof Error ? err.message : String(err);
          throw new Error(`${message} (after ${attempt} attempts)`, { cause: err });
        }
        const retryAfter = err instanceof LlmError ? err.details.retryAfterMs : undefined;
        const delayMs =
          retryAfter !== undefined
            ? Math.min(retryAfter, SUMMARY_RETRY_AFTER_MAX_MS)
            : SUMMARY_RETRY_INITIAL_MS * SUMMARY_RETRY.backoffCoefficient ** (attempt - 1);
        options.onRetry?.({ attempt, delayMs, error: err });
        await sleep(delayMs);
      }
    }
  };
}

function violationsOf(row: Omit<EvalRow, 'violations'>): string[] {
  const out: string[] = [];
  const at = (j: CompactionJudgement): string => `compaction #${j.seq} (${j.trigger}, ${j.strategy ?? '-'})`;
  if (row.requestsOverWindow > 0) {
    const why =
      row.requestsReplyTooLong > 0
        ? `; ${row.requestsReplyTooLong} of them over it with the header and the latest reply alone: ` +
          'a reply longer than this window allows'
        : '';
    out.push(
      `${row.requestsOverWindow} request(s) over the window (largest ${row.largestRequest} tokens${why})`,
    );
  }
  if (row.orphanedResults > 0)
    out.push(`${row.orphanedResults} tool result(s) did not reach the next request with their call`);
  for (const j of row.compactionDetails) {
    if (j.headerLost.length > 0) out.push(`${at(j)}: header item(s) lost: ${j.headerLost.join(', ')}`);
    if (j.pathsMissing.length > 0)
      out.push(`${at(j)}: touched path(s) missing: ${j.pathsMissing.slice(0, 5).join(', ')}`);
    if (j.probesMissing.length > 0)
      out.push(`${at(j)}: carried state missing: ${j.probesMissing.slice(0, 3).join('; ')}`);
    if (j.overTarget)
      out.push(`${at(j)}: left the context over the target (${j.tokensAfter} > ${row.target})`);
    if (j.underFilled) {
      out.push(
        `${at(j)}: filled ${Math.floor((100 * j.tokensAfter) / row.target)} % of the target (under 70 %)`,
      );
    }
  }
  return out;
}

/** Runs the evaluation (see the module comment). */
export async function runEval(options: EvalOptions): Promise<EvalRow[]> {
  const rows: EvalRow[] = [];
  for (const session of options.sessions) {
    for (const window of options.windows) {
      const config = options.config(window);
      const target = targetTokens(config);
      const summarize =
        options.summarizer === 'extractive' ? extractiveSummarizer(options.tokenizer) : options.summarizer;
      const started = performance.now();
      // A model's summaries take a while: say which replay the retries and waits belong to.
      if (options.summarizer !== 'extractive') options.log?.(`eval ${session.name} @ ${window}: replaying…`);
      let replay: ReplayResult;
      try {
        replay = await replaySession({
          items: session.items,
          config,
          tokenizer: options.tokenizer,
          summarize,
        });
      } catch (err) {
        if (!(err instanceof SummarizerFatalError)) throw err;
        throw new SummarizerFatalError(`eval ${session.name} @ ${window}: ${err.message}`, { cause: err });
      }
      const judged = replay.compactions.map((c) => judgeCompaction(c, session.items, target));
      const committed = judged.filter((j) => j.status === 'committed');
      const points: PeerPoint[] =
        options.peers === false
          ? []
          : await peersAt(
              replay.compactions.filter((c) => c.status === 'committed').map((c) => c.before),
              target,
              window,
            );
      const fill = committed.filter((j) => j.underFilled !== null);
      const base: Omit<EvalRow, 'violations'> = {
        session: session.name,
        window,
        target,
        sessionTokens: sum(session.items),
        headerTokens: sum(splitSegments(session.items).header),
        requests: replay.requests.length,
        compactions: committed.length,
        skipped: judged.filter((j) => j.status === 'skipped').length + replay.skipped,
        summaryFailures: judged.filter((j) => j.summaryFailure === 'failed').length,
        summariesNotAsked: judged.filter((j) => j.summaryFailure === 'not_asked').length,
        loopGuardPauses: replay.pauses,
        before: spread(committed.map((j) => j.tokensBefore / window)),
        after: spread(committed.map((j) => j.tokensAfter / window)),
        targetMet: committed.filter((j) => j.tokensAfter <= target).length,
        fillChecked: fill.length,
        filled: fill.filter((j) => j.underFilled === false).length,
        requestsOverWindow: replay.requests.filter((r) => r.tokens > window).length,
        requestsReplyTooLong: replay.requests.filter((r) => r.replyTooLong).length,
        largestRequest: Math.max(0, ...replay.requests.map((r) => r.tokens)),
        orphanedResults: replay.requests.reduce((n, r) => n + r.orphaned, 0),
        headerLost: committed.reduce((n, j) => n + j.headerLost.length, 0),
        pathsChecked: committed.reduce((n, j) => n + j.pathsTouched, 0),
        pathsMissing: committed.reduce((n, j) => n + j.pathsMissing.length, 0),
        probesChecked: committed.reduce((n, j) => n + j.probesChecked, 0),
        probesMissing: committed.reduce((n, j) => n + j.probesMissing.length, 0),
        msPerCompaction: spread(judged.map((j) => j.ms)),
        peers: {
          pi: spread(points.flatMap((p) => (Number.isFinite(p.pi) ? [p.pi / window] : []))),
          trimMessages: spread(points.flatMap((p) => (Number.isFinite(p.trim) ? [p.trim / window] : []))),
          piNote: points.find((p) => p.note)?.note ?? '',
        },
        compactionDetails: judged,
        timeline: {
          requests: replay.requests.map((r) => r.tokens),
          compactedAt: replay.compactions.filter((c) => c.status === 'committed').map((c) => c.atRequest),
        },
        recall: options.recallStore ? await scoreRecall(options.recallStore, replay.compactions) : null,
      };
      rows.push({ ...base, violations: violationsOf(base) });
      const recall = base.recall ? `, recall@3 ${base.recall.found}/${base.recall.probes}` : '';
      options.log?.(
        `eval ${session.name} @ ${window}: ${committed.length} compactions, ${replay.requests.length} requests${recall}, ` +
          `${(performance.now() - started).toFixed(0)} ms`,
      );
    }
  }
  return rows;
}
