/**
 * `eval`'s replay (DESIGN.md §5 "Measure, don't assume"): a recorded session played item by item
 * into a context with a given window, through the same pure functions the workflow and the
 * compaction activities call — triggers before and after each model call (`decideCompaction`),
 * the loop guard (`recordForLoopGuard`), `planCompaction`, the summary of the plan and
 * `finishCompaction` — with an overflow when a request would exceed the window, as the model would
 * refuse it. Each assistant message of the session is one model call; its request is the context
 * as it stands just before it. A meta assistant message is no call: it is part of a prompt (a
 * SWE-agent demonstration, `is_demo`, written as a chat), added like any other message.
 *
 * A summary that fails (the summarizer throws once its retries are spent) rolls its compaction back,
 * as the compaction workflow does: the context stays as it was, the loop guard does not count it,
 * and automatic triggers cool down until the next model call (the workflow's `cooldownMs` is wall
 * time, which a replay has none of). An emergency compaction (`overflow`) commits with the
 * extractive summary instead, as the workflow's does, and the cooldown starts all the same. After
 * {@link MAX_SUMMARY_FAILURES_IN_A_ROW} such failures with
 * no committed compaction between them, the replay stops asking: every later compaction that needs
 * a summary is rolled back without a call, and the replay goes on to show what that leaves. A
 * {@link SummarizerFatalError} (a failure every call would repeat: a bad key, an unknown model)
 * stops the replay at once, naming the compaction.
 *
 * What it records is judged in `metrics.ts`; nothing here decides what is good.
 */
import { planOfferingRecall } from '../context/recall-tool';
import { performance } from 'node:perf_hooks';
import {
  decideCompaction,
  recordForLoopGuard,
  type CompactionDecision,
  type TriggerPoint,
} from '../context/compaction-decision';
import { finishCompaction, planCompaction, type CompactionPlan } from '../context/compaction-plan';
import { planExtractiveSummary, planSummaryItem } from '../context/compaction-summary';
import type { CompactionConfig } from '../context/config';
import type { CompactionSummaryItem, ContextItem } from '../context/items';
import { messageText } from '../context/items';
import { isRoundStart, splitSegments } from '../context/segments';
import type { Tokenizer } from '../context/tokenizer';
import { isAutomatic, type RecentCompaction, type TriggerKind } from '../context/triggers';

/** Writes the summary of a plan: the extractive summarizer, or an LLM. May throw (see the module comment). */
export type Summarizer = (
  plan: CompactionPlan,
) => Promise<{ text: string; summarizer: CompactionSummaryItem['summarizer'] }>;

/**
 * Thrown by a summarizer for a failure every later call would repeat (a bad key, an unknown model):
 * the replay stops, and rethrows it with the compaction named.
 */
export class SummarizerFatalError extends Error {
  override readonly name = 'SummarizerFatalError';
}

/** Summary failures in a row (no compaction committed between) after which a replay stops asking. */
export const MAX_SUMMARY_FAILURES_IN_A_ROW = 3;

/** One compaction the replay ran (or skipped), with the contexts before and after it. */
export interface ReplayCompaction {
  seq: number;
  /** Requests made before it. */
  atRequest: number;
  trigger: TriggerKind;
  /** `rolled_back`: its summary failed (`reason` says how); the context stayed as it was. */
  status: 'committed' | 'skipped' | 'rolled_back';
  reason: string | null;
  /**
   * Why a compaction was rolled back: its summary call `failed`, or was `not_asked` (the replay had
   * stopped asking after {@link MAX_SUMMARY_FAILURES_IN_A_ROW} failures in a row). Null otherwise.
   */
  summaryFailure: 'failed' | 'not_asked' | null;
  strategy: string | null;
  tokensBefore: number;
  tokensAfter: number;
  ms: number;
  before: ContextItem[];
  after: ContextItem[];
  plan: CompactionPlan | null;
  /** How many of the session's items the context had received when it ran (what the agent had done). */
  seen: number;
}

/** One model request. */
export interface ReplayRequest {
  tokens: number;
  /**
   * Tool results produced since the previous request that are not in it with their call (of those
   * whose call the session made: a transcript may start with a result of an earlier one).
   */
  orphaned: number;
  /**
   * Over the window with the header and the latest reply alone: a replay at a window smaller than
   * the recording's. A live model could not have written that reply here (its output shares the
   * window with its prompt, which holds the header), so no compaction is to blame.
   */
  replyTooLong: boolean;
}

export interface ReplayResult {
  window: number;
  requests: ReplayRequest[];
  compactions: ReplayCompaction[];
  /** Automatic triggers that fired while compaction was held back (loop guard). */
  skipped: number;
  /** Times the loop guard paused automatic compaction. */
  pauses: number;
}

export interface ReplayOptions {
  items: readonly ContextItem[];
  config: CompactionConfig;
  tokenizer: Tokenizer;
  summarize: Summarizer;
  /**
   * For tests: a compaction to force after the item at this index is appended (null: none), on top
   * of the triggers — e.g. between a reply's tool calls and their results.
   */
  force?: (index: number, item: ContextItem) => TriggerKind | null;
  /** For tests of the judging: builds the compacted context (default `finishCompaction`). */
  finish?: typeof finishCompaction;
}

function sum(items: readonly ContextItem[]): number {
  return items.reduce((n, i) => n + i.tokens, 0);
}

/** Replays a session (see the module comment). */
export async function replaySession(options: ReplayOptions): Promise<ReplayResult> {
  const { config, tokenizer } = options;
  let context: ContextItem[] = [];
  const requests: ReplayRequest[] = [];
  const compactions: ReplayCompaction[] = [];
  let produced: ContextItem[] = [];
  /** The ids of the calls the session has made so far. */
  const sessionCalls = new Set<string>();
  let round = 0;
  let lastCompactionRound = 0;
  let recent: RecentCompaction[] = [];
  let pausedReason: string | null = null;
  let pausedAtRound = 0;
  let skipped = 0;
  let pauses = 0;
  let seen = 0;
  /** Automatic triggers cool down after a summary failure until this many requests have been made. */
  let cooldownUntilRequest = 0;
  let failuresInARow = 0;

  const compact = async (trigger: TriggerKind): Promise<ReplayCompaction> => {
    const seq = compactions.length + 1;
    const started = performance.now();
    const before = context;
    // As the compaction activities do: with recall on, the context offers the recall tool (issue 24).
    const planInput = { items: before, config, tokenizer, trigger, compactionId: `eval-${seq}` };
    const plan = config.recall ? planOfferingRecall(planInput, 'eval') : planCompaction(planInput);
    const record = (
      status: ReplayCompaction['status'],
      reason: string | null,
      after: ContextItem[],
      summaryFailure: ReplayCompaction['summaryFailure'] = null,
    ): ReplayCompaction => ({
      seq,
      atRequest: requests.length,
      trigger,
      status,
      reason,
      summaryFailure,
      strategy: plan.strategy,
      tokensBefore: sum(before),
      tokensAfter: sum(after),
      ms: performance.now() - started,
      before,
      after,
      plan,
      seen,
    });
    if (plan.impossible) return record('skipped', plan.impossible, before);
    let summary: CompactionSummaryItem | null = null;
    /** Why the summary failed: an emergency compaction commits with the extractive summary then. */
    let fellBack: { reason: string; failure: 'failed' | 'not_asked' } | null = null;
    if (plan.toSummarize.length > 0) {
      let written: Awaited<ReturnType<Summarizer>> | null = null;
      if (failuresInARow >= MAX_SUMMARY_FAILURES_IN_A_ROW) {
        const reason = `summary not asked: the last ${failuresInARow} summaries failed (the replay stopped asking)`;
        fellBack = { reason, failure: 'not_asked' };
      } else {
        try {
          written = await options.summarize(plan);
          failuresInARow = 0;
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          if (err instanceof SummarizerFatalError) {
            throw new SummarizerFatalError(`compaction #${seq} (${trigger}): ${message}`, { cause: err });
          }
          failuresInARow++;
          fellBack = { reason: `summary failed: ${message}`, failure: 'failed' };
        }
      }
      if (fellBack && trigger !== 'overflow')
        return record('rolled_back', fellBack.reason, before, fellBack.failure);
      written ??= { text: planExtractiveSummary(plan, tokenizer), summarizer: 'extractive' };
      summary = planSummaryItem(plan, written.text, {
        compactionId: `eval-${seq}`,
        summarizer: written.summarizer,
        tokenizer,
      });
    }
    const after = (options.finish ?? finishCompaction)(plan, summary);
    // The workflow skips a compaction that does not make the context smaller.
    if (sum(after) >= sum(before))
      return record('skipped', 'no_progress: the compacted context is not smaller', before);
    if (fellBack)
      return record(
        'committed',
        `${fellBack.reason}; the extractive summary stood in (an emergency)`,
        after,
        fellBack.failure,
      );
    return record('committed', null, after);
  };

  const run = async (decision: CompactionDecision): Promise<void> => {
    const result = await compact(decision.trigger);
    compactions.push(result);
    if (result.status === 'committed') {
      context = result.after;
      lastCompactionRound = round;
      // A summary that stood in for a failed one is no sign the summarizer works again.
      if (result.summaryFailure === null) failuresInARow = 0;
    }
    const savedRatio =
      result.tokensBefore > 0 ? (result.tokensBefore - result.tokensAfter) / result.tokensBefore : 0;
    // The workflow's answer to a failed summary is the cooldown, not the loop guard (also when the
    // extractive summary stood in for it); a rolled-back compaction changes nothing else.
    if (result.summaryFailure !== null) cooldownUntilRequest = requests.length + 1;
    if (result.status === 'rolled_back') return;
    if (isAutomatic(decision.trigger)) {
      const guard = recordForLoopGuard(recent, { ...result, savedRatio }, round, config);
      recent = guard.recent;
      if (guard.pause) {
        pausedReason = guard.pause;
        pausedAtRound = round;
        pauses++;
      }
    } else if (result.status === 'committed') {
      pausedReason = null;
      recent = [];
    }
  };

  const maybeCompact = async (point: TriggerPoint, markerSeen = false): Promise<void> => {
    const decision = decideCompaction(point, {
      config,
      contextTokens: sum(context),
      reportedTokens: null,
      itemCount: context.length,
      roundsSinceCompaction: round - lastCompactionRound,
      markerSeen,
      cooldownActive: requests.length < cooldownUntilRequest,
      pausedReason,
    });
    if (!decision) return;
    if (decision.skip) {
      skipped++;
      return;
    }
    await run(decision);
  };

  /** The request of a model call: the context now; an overflow compaction first when it is over the window. */
  const request = async (): Promise<void> => {
    if (sum(context) > config.maxContextTokens) {
      await run({ trigger: 'overflow', detail: 'the model rejected the request as too long', skip: null });
    }
    // A result cut to a preview stands for itself under a new id that points at it.
    const ids = new Set(context.map((i) => i.sourceId ?? i.id));
    const calls = new Set(
      context.flatMap((i) =>
        i.type === 'ASSISTANT_MESSAGE' ? (i.message.tool_calls ?? []).map((c) => c.id) : [],
      ),
    );
    const orphaned = produced.filter(
      (r) => r.type === 'TOOL_RESULT' && (!ids.has(r.id) || !calls.has(r.message.tool_call_id)),
    ).length;
    const tokens = sum(context);
    let replyTooLong = false;
    if (tokens > config.maxContextTokens) {
      const reply = [...context].reverse().find((i) => i.type === 'ASSISTANT_MESSAGE' && !i.isMeta);
      const header = sum(splitSegments(context).header);
      replyTooLong = reply !== undefined && header + reply.tokens > config.maxContextTokens;
    }
    requests.push({ tokens, orphaned, replyTooLong });
    produced = [];
  };

  for (const [index, item] of options.items.entries()) {
    const forced = (): Promise<void> => {
      const trigger = options.force?.(index, item) ?? null;
      return trigger ? run({ trigger, detail: 'forced', skip: null }) : Promise.resolve();
    };
    if (item.type === 'ASSISTANT_MESSAGE')
      for (const call of item.message.tool_calls ?? []) sessionCalls.add(call.id);
    if (item.type === 'ASSISTANT_MESSAGE' && !item.isMeta) {
      await maybeCompact('before_model_call');
      await request();
      context = [...context, item];
      seen++;
      await maybeCompact('after_model_call', messageText(item.message).includes(config.marker));
      await forced();
      continue;
    }
    if (isRoundStart(item) || item.round > round) {
      round = Math.max(round, item.round);
      if (pausedReason !== null && round - pausedAtRound > config.loopGuardPauseRounds) {
        pausedReason = null;
        recent = [];
      }
    }
    context = [...context, item];
    seen++;
    // A result whose call the session never made (a transcript that starts mid-turn) can reach no
    // request with its call, whatever a compaction does: it is not counted.
    if (item.type === 'TOOL_RESULT' && sessionCalls.has(item.message.tool_call_id)) produced.push(item);
    await forced();
  }
  // Results after the last answer go into the next request.
  if (produced.length > 0) {
    await maybeCompact('before_model_call');
    await request();
  }
  return { window: config.maxContextTokens, requests, compactions, skipped, pauses };
}
