/**
 * Where a compaction child is, for its `progress` Query and the Web UI's current details. Kept in
 * the workflow's memory only: reporting a change writes no history of its own.
 */
import { setCurrentDetails, setHandler } from '@temporalio/workflow';
import { compactionProgressQuery, type CompactionInput, type CompactionProgress } from './definitions';
import { reviewDetails } from './compaction-review';

/** The child's current details in the Web UI: where it is, in a few lines of markdown. */
export function progressDetails(p: CompactionProgress): string {
  const tokens =
    p.tokensBefore === null
      ? ''
      : ` · ${p.tokensBefore.toLocaleString('en-US')} → ${(p.tokensAfter ?? p.tokensBefore).toLocaleString('en-US')} tokens`;
  const lines = [`**${p.trigger} compaction #${p.seq}** · ${p.phase}${tokens}`];
  if (p.step) lines.push(`Step: ${p.step}`);
  if (p.summaryCalls > 0) lines.push(`Summary calls ended: ${p.summaryCalls}`);
  if (p.review) lines.push(...reviewDetails(p.review));
  if (p.outcome)
    lines.push(`Outcome: ${p.outcome.status}${p.outcome.reason ? ` (${p.outcome.reason})` : ''}`);
  return lines.join('\n\n');
}

/** Answers the `progress` Query from now on; `report` records a change and shows it. */
export function trackProgress(input: CompactionInput): {
  progress: CompactionProgress;
  report: (change: Partial<CompactionProgress>) => void;
} {
  const progress: CompactionProgress = {
    seq: input.seq,
    trigger: input.trigger,
    phase: 'prune',
    step: null,
    tokensBefore: null,
    tokensAfter: null,
    prunedTokens: null,
    summaryCalls: 0,
    outcome: null,
  };
  const report = (change: Partial<CompactionProgress>): void => {
    Object.assign(progress, change);
    setCurrentDetails(progressDetails(progress));
  };
  setHandler(compactionProgressQuery, () => progress);
  report({});
  return { progress, report };
}
