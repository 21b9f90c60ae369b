/**
 * The summary of a planned compaction (`compaction-plan.ts`): the request an LLM summarizer gets,
 * the extractive summarizer's text, and the summary item either becomes. Shared by the summarize
 * activity and `eval`.
 *
 * Pure module.
 */
import type { CompactionConfig } from './config';
import type { CompactionPlan } from './compaction-plan';
import { extractiveSummary } from './extractive-summary';
import type { CompactionSummaryItem } from './items';
import { buildSummaryItem, summaryHandlesBudget } from './post-compaction';
import { buildSummaryRequest, type SummaryRequest } from './summary-request';
import type { Tokenizer } from './tokenizer';

/** The LLM summarizer's request for a plan (the context with its new carried state preserved). */
export function planSummaryRequest(
  plan: CompactionPlan,
  config: CompactionConfig,
  focus: string | null | undefined,
): SummaryRequest {
  return buildSummaryRequest({
    items: plan.carried.items,
    toSummarize: plan.toSummarize,
    previousSummaries: plan.previousSummaries,
    focus,
    config,
  });
}

/** The extractive summarizer's text for a plan, within its budget. */
export function planExtractiveSummary(plan: CompactionPlan, tokenizer: Tokenizer): string {
  return extractiveSummary({
    context: plan.carried.items,
    toSummarize: plan.toSummarize,
    previousSummaries: plan.previousSummaries,
    openErrors: plan.carried.openErrors,
    // The summary item adds its prefix line, framing and line of recall handles to the text.
    budgetTokens: plan.summaryBudget - SUMMARY_FRAMING_TOKENS - summaryHandlesBudget(plan.summaryBudget),
    tokenizer,
  });
}

/** Tokens the summary item adds to its text (the prefix line and the message framing), about. */
const SUMMARY_FRAMING_TOKENS = 20;

/** The id of a compaction's summary item (a retried activity writes the same one). */
export function summaryItemId(compactionId: string, plan: CompactionPlan): string {
  return `${compactionId}:summary:${plan.strategy ?? 'none'}`;
}

/** The summary item of a plan from the summarizer's text, cut to the plan's budget. */
export function planSummaryItem(
  plan: CompactionPlan,
  text: string,
  options: { compactionId: string; summarizer: CompactionSummaryItem['summarizer']; tokenizer: Tokenizer },
): CompactionSummaryItem {
  return buildSummaryItem({
    text,
    id: summaryItemId(options.compactionId, plan),
    summarizer: options.summarizer,
    budgetTokens: plan.summaryBudget,
    summarized: plan.toSummarize,
    tokenizer: options.tokenizer,
  });
}
