/**
 * The review of a compaction's summary (issue 23): a reviewer's edit, checked by the pure
 * `editedSummaryItem` and staged as a new version in place of the proposal. Content is
 * append-only: the edit is a new item, the proposal stays in the archive.
 */
import { finalFailure } from '../src/failures';
import { ApplicationFailure } from '@temporalio/activity';
import * as policy from '../src/context';
import type { ActivityDeps } from './deps';
import { SUMMARY_PREVIEW_CHARS } from './compaction';
import { storeBoundary } from './failures';
import type { RevisedSummary, ReviewActivities, ReviseSummaryInput } from './types';
import { CLAIM } from '../src/claim';

/** A refused edit: the reviewer is told why; nothing was written. */
function refused(reason: string): ApplicationFailure {
  return finalFailure('SUMMARY_EDIT_REFUSED', `${reason}; nothing changed`);
}

export function reviewActivities(deps: ActivityDeps): ReviewActivities {
  const { store } = deps;
  return {
    async reviseSummary(input: ReviseSummaryInput): Promise<RevisedSummary> {
      return storeBoundary(async () => {
        const staged = await store.getVersionItems(input.conversationId, input.stagedVersion);
        const proposal = staged.find(
          (i): i is policy.CompactionSummaryItem =>
            i.id === input.summaryItemId && i.type === 'COMPACTION_SUMMARY',
        );
        if (!proposal)
          throw refused(`version ${input.stagedVersion} holds no summary ${input.summaryItemId}`);
        const edit = policy.editedSummaryItem({
          proposal,
          text: input.text,
          id: `${input.compactionId}:summary:edit:${input.editId}`,
          budgetTokens: input.summaryBudget,
          tokenizer: deps.tokens.forModel(input.model),
        });
        if (!edit.ok) throw refused(edit.reason);
        const tokensAfter = staged.reduce((n, i) => n + (i === proposal ? edit.item.tokens : i.tokens), 0);
        if (tokensAfter >= input.tokensBefore) {
          throw refused(
            `with the edited summary the context would be ${tokensAfter} tokens, not smaller than the ${input.tokensBefore} it has now`,
          );
        }
        const revised = await store.stageVersion({
          compactionId: input.compactionId,
          idemKey: `review-edit:${input.editId}`,
          baseVersion: input.stagedVersion,
          newItems: [edit.item],
          memberIds: staged.map((i) => (i === proposal ? edit.item.id : i.id)),
        });
        await store.updateCompaction(input.compactionId, {
          summaryItemId: edit.item.id,
          tokensAfter: revised.tokens,
        });
        await store.recordEvent(input.compactionId, `review_edit:${input.editId}`, 'review_edit', {
          proposal: proposal.id,
          proposalTokens: proposal.tokens,
          summaryItemId: edit.item.id,
          summaryTokens: edit.item.tokens,
          tokensAfter: revised.tokens,
        });
        return {
          // The preview is conversation text: by reference (see CLAIM).
          ...CLAIM,
          stagedVersion: revised.version,
          tokensAfter: revised.tokens,
          summaryItemId: edit.item.id,
          summaryTokens: edit.item.tokens,
          summaryPreview: policy.summaryText(edit.item).slice(0, SUMMARY_PREVIEW_CHARS),
        };
      });
    },
  };
}
