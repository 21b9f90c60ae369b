/**
 * A reviewer's edit of a proposed summary (issue 23, config `reviewSummary`): the text a person
 * sees and edits, and the summary item their edit becomes — or why it cannot replace the proposal.
 * An edit is never cut to fit: one over the budget is refused, so what is committed is what the
 * reviewer wrote.
 *
 * Pure module.
 */
import type { CompactionSummaryItem } from './items';
import { buildSummaryItem, SUMMARY_MESSAGE_PREFIX } from './post-compaction';
import type { Tokenizer } from './tokenizer';

/** A summary item's text (or its preview) without the line every summary item starts with. */
export function withoutSummaryPrefix(content: string): string {
  return content.startsWith(`${SUMMARY_MESSAGE_PREFIX}\n`)
    ? content.slice(SUMMARY_MESSAGE_PREFIX.length + 1)
    : content;
}

/** The summary's text without the line every summary item starts with: what a reviewer edits. */
export function summaryText(item: CompactionSummaryItem): string {
  return withoutSummaryPrefix(String(item.message.content));
}

/** An edit that can replace the proposal, or why not (in words for the reviewer). */
export type SummaryEdit = { ok: true; item: CompactionSummaryItem } | { ok: false; reason: string };

/**
 * The summary item an edit becomes, checked: not empty, and within `budgetTokens` counted as the
 * summarizer's summary is (prefix line and message framing included). The item keeps the
 * proposal's round and summarizer label; its id is the caller's (a new item: content is
 * append-only). A pasted prefix line is not repeated.
 */
export function editedSummaryItem(input: {
  proposal: CompactionSummaryItem;
  text: string;
  id: string;
  budgetTokens: number;
  tokenizer: Tokenizer;
}): SummaryEdit {
  let text = input.text.trim();
  if (text.startsWith(SUMMARY_MESSAGE_PREFIX)) text = text.slice(SUMMARY_MESSAGE_PREFIX.length).trim();
  if (text.length === 0) return { ok: false, reason: 'the edited summary is empty' };
  const item = buildSummaryItem({
    text,
    id: input.id,
    summarizer: input.proposal.summarizer,
    // Built whole, then measured: an edit is refused, not cut.
    budgetTokens: Number.MAX_SAFE_INTEGER,
    summarized: [],
    tokenizer: input.tokenizer,
  });
  if (item.tokens > input.budgetTokens) {
    return {
      ok: false,
      reason:
        `the edited summary is ${item.tokens} tokens, over the summary budget of ${input.budgetTokens} ` +
        `(summaryMaxTokens, summaryRoomRatio)`,
    };
  }
  return { ok: true, item: { ...item, round: input.proposal.round } };
}
