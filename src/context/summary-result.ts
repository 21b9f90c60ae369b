/**
 * Is a summarizer's answer a usable summary? (seed 003: the failure reasons that make the summary
 * step retry and, when retries run out, roll the compaction back.)
 *
 * Pure module: no I/O, no clock, no imports. The LLM adapter (`src/llm`) feeds it the normalized
 * completion; the workflow only ever sees the resulting reason.
 */

/** Why an answer is not a usable summary. Stable strings: they are stored as rollback reasons. */
export const SUMMARY_FAILURE_REASONS = [
  'content_none',
  'empty_summary',
  'max_tokens_no_content',
  'thinking_only_no_content',
  'missing_summary_tags',
] as const;
export type SummaryFailureReason = (typeof SUMMARY_FAILURE_REASONS)[number];

/** The parts of a completion the check looks at. */
export interface SummaryCandidate {
  /** The assistant message's content as returned (`null` when the provider sent none). */
  content: string | null | undefined;
  /** The choice's finish reason (`stop`, `length`, ...), when known. */
  finishReason?: string | null | undefined;
  /** Reasoning text returned beside the content (`reasoning_content` / `reasoning`), when any. */
  reasoning?: string | null | undefined;
}

export interface SummaryCheckOptions {
  /**
   * Require the summary inside `<summary>…</summary>` (the structured prompt asks for it).
   * When false, an answer without tags is taken whole. Default: true.
   */
  requireTags?: boolean;
}

/** The verdict: the summary text, or a typed reason with a one-line human explanation. */
export type SummaryCheck =
  { type: 'ok'; summary: string } | { type: 'invalid'; reason: SummaryFailureReason; detail: string };

const SUMMARY_BLOCK = /<summary>([\s\S]*?)<\/summary>/gi;
const OPEN_TAG = /<summary>/i;
// Some providers inline the model's thinking in the content instead of a separate field.
const THINK_BLOCK = /<think(?:ing)?>[\s\S]*?<\/think(?:ing)?>/gi;

/**
 * Checks an answer, most specific reason first:
 * - no content at all: `max_tokens_no_content` if the output was cut at the token limit,
 *   `thinking_only_no_content` if the model produced only reasoning, else `content_none`
 *   (content `null`) or `empty_summary` (empty or whitespace);
 * - content: the text of the last complete `<summary>` block (an answer may think aloud first);
 *   `missing_summary_tags` when there is none (and tags are required), `empty_summary` when the
 *   block is empty.
 *
 * Never throws; never trims inside the summary beyond leading/trailing whitespace.
 */
export function checkSummary(candidate: SummaryCandidate, options: SummaryCheckOptions = {}): SummaryCheck {
  const requireTags = options.requireTags ?? true;
  const raw = candidate.content;
  const visible = raw == null ? '' : raw.replace(THINK_BLOCK, '').trim();
  const inlineThinking = raw != null && raw.trim().length > 0 && visible.length === 0;
  const hasReasoning = (candidate.reasoning ?? '').trim().length > 0 || inlineThinking;

  if (visible.length === 0) {
    if (candidate.finishReason === 'length') {
      return invalid(
        'max_tokens_no_content',
        'the model hit its output token limit (finish_reason "length") before writing any content',
      );
    }
    if (hasReasoning) {
      return invalid('thinking_only_no_content', 'the model returned reasoning but no content');
    }
    if (raw == null) return invalid('content_none', 'the model returned no content (content is null)');
    return invalid('empty_summary', 'the model returned empty content');
  }

  const blocks = [...visible.matchAll(SUMMARY_BLOCK)];
  const last = blocks[blocks.length - 1];
  if (last) {
    const summary = (last[1] ?? '').trim();
    if (summary.length === 0) return invalid('empty_summary', 'the <summary> block is empty');
    return { type: 'ok', summary };
  }
  if (!requireTags) return { type: 'ok', summary: visible };
  if (OPEN_TAG.test(visible) && candidate.finishReason === 'length') {
    return invalid(
      'missing_summary_tags',
      'the summary was cut off at the output token limit before </summary>',
    );
  }
  return invalid('missing_summary_tags', 'the answer has no <summary>…</summary> block');
}

function invalid(reason: SummaryFailureReason, detail: string): SummaryCheck {
  return { type: 'invalid', reason, detail };
}
