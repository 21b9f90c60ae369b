/**
 * The summarizer call: a chat completion whose answer must be a usable summary (seed 003).
 * Unusable answers fail with {@link SummaryInvalidError} (`SUMMARY_INVALID`, retryable) carrying
 * the typed reason, so the summarize activity retries and the rollback records why.
 */
import { checkSummary, type SummaryCheckOptions } from '../context/summary-result';
import { chatCompletion, type ChatRequest, type ChatResult } from './chat';
import { SummaryInvalidError } from './errors';

/**
 * The summary text of a completion (the inside of its `<summary>` block), or throws
 * {@link SummaryInvalidError} with the reason: `content_none`, `empty_summary`,
 * `max_tokens_no_content`, `thinking_only_no_content` or `missing_summary_tags`.
 */
export function summaryFromCompletion(completion: ChatResult, options: SummaryCheckOptions = {}): string {
  const check = checkSummary(
    {
      content: completion.message.content,
      finishReason: completion.finishReason,
      reasoning: completion.reasoning,
    },
    options,
  );
  if (check.type === 'ok') return check.summary;
  const details: { finishReason: string | null; requestId?: string } = {
    finishReason: completion.finishReason,
  };
  if (completion.id) details.requestId = completion.id;
  throw new SummaryInvalidError(check.reason, check.detail, details);
}

export interface SummaryOutcome {
  /** The summary text, tags removed. */
  summary: string;
  /** The completion it came from (usage, model, finish reason). */
  completion: ChatResult;
}

/**
 * Asks the summarizer (no tools) and validates the answer. Throws {@link LlmError} for API
 * failures and {@link SummaryInvalidError} for unusable answers.
 */
export async function requestSummary(
  client: Parameters<typeof chatCompletion>[0],
  request: Omit<ChatRequest, 'tools'> & SummaryCheckOptions,
): Promise<SummaryOutcome> {
  const { requireTags, ...chat } = request;
  const completion = await chatCompletion(client, chat);
  const summary = summaryFromCompletion(completion, requireTags === undefined ? {} : { requireTags });
  return { summary, completion };
}
