/**
 * The summary phase of the compaction child (DESIGN.md §4): the strategy chain the prune planned,
 * then the last-resort full summary keeping fewer and fewer recent rounds (seed 004), asked of the
 * summarize activity — which runs every step the pure plan needs in one call and summarizes once.
 */
import { CLAIM, type CompactionInput, type CompactionProgress } from './definitions';
import type { CompactionActivities, PruneResult, SummarizeResult, SummaryStep } from '../activities/types';
import type { ActivityCalls, LocalActivityCalls } from './activity-options';
import { patched } from '@temporalio/workflow';

/** What the summary phase has done so far; read by the rollback when it fails midway. */
export interface SummaryTally {
  /** Summary calls made, retries included. */
  attempts: number;
  /** The strategy of the last step that ran. */
  strategy: string | null;
  /** The last step's result: the staged context the commit takes. */
  chosen: SummarizeResult | undefined;
}

export interface SummaryPhase {
  input: CompactionInput;
  pruned: PruneResult;
  keepRecentRounds: number;
  calls: ActivityCalls<CompactionActivities> | LocalActivityCalls<CompactionActivities>;
  progress: CompactionProgress;
  report: (change: Partial<CompactionProgress>) => void;
  /** Prune and commit run as local activities (such a compaction also skips empty steps in one call). */
  storeStepsLocal: boolean;
  /** The summary call that failed every attempt, when the extractive summary stands in for it. */
  fallbackFrom?: string;
}

/** Rounds kept verbatim by the last-resort full summary, then fewer (seed 004: "keep fewer rounds"). */
function fullSummarySteps(keepRecentRounds: number): SummaryStep[] {
  const steps: SummaryStep[] = [];
  for (let k = keepRecentRounds; k >= 0; k--) steps.push({ strategy: 'full', keepRecentRounds: k });
  return steps;
}

function nameOf(step: SummaryStep): string {
  return step.keepRecentRounds === null ? step.strategy : `full(keep ${step.keepRecentRounds})`;
}

/** Runs the summary steps until one brings the context under its target (or the last has run). */
export async function summarizeInSteps(phase: SummaryPhase, tally: SummaryTally): Promise<void> {
  const { input, pruned, calls, progress, report } = phase;
  const steps: SummaryStep[] = [
    ...pruned.chain.map((s) => ({ strategy: s, keepRecentRounds: null })),
    ...fullSummarySteps(phase.keepRecentRounds),
  ];
  // One activity passes over the steps that would summarize nothing (compactions before this
  // change ran an activity per step; their histories replay on that path). Local prune and
  // commit came later: a compaction that has them has this too, and records one marker fewer.
  const skipsEmptySteps = phase.storeStepsLocal || patched('summary-skips-empty-steps');
  for (let i = 0; i < steps.length;) {
    const step = steps[i] as SummaryStep;
    report({ step: nameOf(step) });
    const then = skipsEmptySteps ? steps.slice(i + 1) : [];
    const r = await calls.call.summarize.executeWithOptions(
      {
        ...calls.options,
        // The plan runs the steps it needs (prune, the chain, the full summary) and summarizes once.
        summary:
          phase.fallbackFrom === undefined
            ? `summary: planned steps (prune → ${pruned.chain.join(' → ')} → full), one summary`
            : `extractive summary (the summary call failed): planned steps, no model call`,
      },
      [
        {
          ...(input.focus ? CLAIM : {}),
          conversationId: input.conversationId,
          compactionId: input.compactionId,
          prunedVersion: pruned.stagedVersion,
          strategy: step.strategy,
          keepRecentRounds: step.keepRecentRounds,
          ...(then.length > 0 ? { then } : {}),
          focus: input.focus,
          config: input.config,
          summaryModel: input.summaryModel,
          ...(input.model ? { model: input.model } : {}),
          workspace: input.workspace,
          ...(phase.fallbackFrom !== undefined ? { fallbackFrom: phase.fallbackFrom } : {}),
        },
      ],
    );
    i += (r.stepIndex ?? 0) + 1;
    tally.strategy = r.strategy ?? nameOf(steps[i - 1] as SummaryStep);
    report({ step: tally.strategy, summaryCalls: progress.summaryCalls + 1, tokensAfter: r.tokensAfter });
    tally.attempts += r.attempts;
    tally.chosen = r;
    // The pure plan ran every step it needed in that one call (src/context/compaction-plan.ts).
    if (r.final) break;
    // Before it, a strategy that summarized nothing did not compact (seed 003).
    if (r.underTarget && r.itemsCompacted > 0) break;
  }
}
