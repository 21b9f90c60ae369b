/**
 * Activities of the compaction child workflow: selective prune, summarize, drop-oldest (seed 004's
 * alternative), commit and the compensation — thin adapters: each loads what it needs from
 * PostgreSQL, calls the pure plan of src/context (`planCompaction`, the summary of the plan,
 * `finishCompaction`; the same functions `eval` runs) and the LLM, and writes a staged version —
 * returning only ids and counts. Every write is idempotent (keys derived from the compaction id).
 */
import { Context } from '@temporalio/activity';
import * as policy from '../src/context';
import type { CompactionConfig } from '../src/context/config';
import type { CompactionSummaryItem, ContextItem } from '../src/context/items';
import { llmBoundary, requestSummary } from '../src/llm';
import type { ActivityDeps } from './deps';
import { CLAIM } from '../src/claim';
import { storeBoundary } from './failures';
import { checkedInput, finalFailure } from '../src/failures';
import { faultPoint } from './faults';
import { withHeartbeat } from './heartbeat';
import { gitDiffStat } from './git-stat';
import type {
  CommitInput,
  CompactionActivities,
  DiscardInput,
  DropOldestInput,
  PruneInput,
  PruneResult,
  RecordEventInput,
  SummarizeInput,
  SummarizeResult,
  Totals,
} from './types';

/** Characters of the summary carried in workflow history as a preview (the text is in the store). */
export const SUMMARY_PREVIEW_CHARS = 300;

/** The configuration as given, defaults filled; a bad one is `CONFIG_INVALID`, not retried. */
function parseConfig(raw: Record<string, unknown>): CompactionConfig {
  return checkedInput(() => policy.parseCompactionConfig(raw));
}

/** The inputs of `planCompaction` for a running compaction: the base context and the git diff stat. */
interface PlanSource {
  baseItems: ContextItem[];
  gitDiffStat: string | null | undefined;
}

export function compactionActivities(deps: ActivityDeps): CompactionActivities {
  const { store } = deps;

  /**
   * The plan of a compaction, as the prune activity made it: the summarize activity plans again
   * from the same inputs (planning is pure and deterministic), taking the git diff stat the prune
   * staged instead of running git again.
   */
  const planOf = (
    input: { trigger: policy.TriggerKind; compactionId: string; conversationId: string },
    source: PlanSource,
    config: CompactionConfig,
    tokenizer: policy.Tokenizer,
  ): policy.CompactionPlan => {
    const planInput = {
      items: source.baseItems,
      config,
      tokenizer,
      trigger: input.trigger,
      compactionId: input.compactionId,
      gitDiffStat: source.gitDiffStat,
    };
    // With recall on, the context a compaction leaves offers the recall tool (issue 24).
    return config.recall
      ? policy.planOfferingRecall(planInput, input.conversationId)
      : policy.planCompaction(planInput);
  };

  return {
    async selectivePrune(input: PruneInput): Promise<PruneResult> {
      return withHeartbeat(() =>
        storeBoundary(async () => {
          const config = parseConfig(input.config);
          const tokenizer = deps.tokens.forModel(input.model);
          const comp = await store.beginCompaction({
            id: input.compactionId,
            conversationId: input.conversationId,
            seq: input.seq,
            trigger: input.trigger,
            focus: input.focus,
          });
          const items = await store.getVersionItems(input.conversationId, comp.baseVersion);
          const tokensBefore = sum(items);
          await store.recordEvent(input.compactionId, 'selective_start', 'selective_start', {
            trigger: input.trigger,
            tokensBefore,
          });
          const plan = planOf(
            input,
            { baseItems: items, gitDiffStat: await gitDiffStat(input.workspace ?? null) },
            config,
            tokenizer,
          );
          const known = new Set(items.map((i) => i.id));
          const pruned = policy.prunedItems(plan);
          const staged = await store.stageVersion({
            compactionId: input.compactionId,
            idemKey: 'prune',
            baseVersion: comp.baseVersion,
            newItems: pruned.filter((i) => !known.has(i.id)),
            memberIds: pruned.map((i) => i.id),
          });
          await store.updateCompaction(input.compactionId, { taskType: plan.taskType });
          const stats = {
            toolBlocksKept: plan.stats.toolBlocksKept,
            toolBlocksDropped: plan.stats.toolBlocksDropped,
            toolCallsTruncated: plan.stats.toolCallsTruncated,
            toolResultsTruncated: plan.stats.toolResultsTruncated,
            itemsDropped: plan.stats.itemsDropped,
          };
          await store.recordEvent(input.compactionId, 'selective_done', 'selective_done', {
            tokensBefore,
            tokensAfter: staged.tokens,
            ...stats,
            steps: plan.steps.map((s) => `${s.name} → ${s.tokensAfter}`),
          });
          faultPoint('prune_staged');
          return {
            baseVersion: comp.baseVersion,
            stagedVersion: staged.version,
            tokensBefore,
            tokensAfter: staged.tokens,
            targetTokens: plan.targetTokens,
            underTarget: staged.tokens <= plan.targetTokens,
            taskType: plan.taskType,
            chain: plan.chain,
            stats,
            impossible: plan.impossible,
          };
        }),
      );
    },

    async summarize(input: SummarizeInput): Promise<SummarizeResult> {
      return withHeartbeat(() =>
        storeBoundary(async () => {
          const config = parseConfig(input.config);
          const attempt = Context.current().info.attempt;
          const comp = await store.getCompaction(input.compactionId);
          if (!comp) {
            throw finalFailure('COMPACTION_NOT_FOUND', `no compaction ${input.compactionId}`);
          }
          const baseItems = await store.getVersionItems(input.conversationId, comp.baseVersion);
          const known = new Set(baseItems.map((i) => i.id));
          // The git diff stat the prune wrote, if it wrote one: planning with it as the context's
          // keeps it as it is; without one, the prune found none (not a git repository, no change).
          const stat = await store.getItemsIfPresent([policy.gitDiffStatItemId(input.compactionId)]);
          // The summary joins the conversation's context: counted in its model's encoding.
          const tokenizer = deps.tokens.forModel(input.model ?? input.summaryModel);
          const plan = planOf(
            {
              trigger: comp.trigger as policy.TriggerKind,
              compactionId: input.compactionId,
              conversationId: input.conversationId,
            },
            { baseItems: [...baseItems, ...stat], gitDiffStat: stat.length > 0 ? undefined : null },
            config,
            tokenizer,
          );
          const label = plan.strategy ?? 'none';
          // The attempts of the summary call; a stand-in for one that failed keeps its count.
          await store.updateCompaction(input.compactionId, {
            strategy: label,
            ...(input.fallbackFrom === undefined ? { attempts: attempt } : {}),
          });
          await store.recordEvent(input.compactionId, `summary_start:${label}:${attempt}`, 'summary_start', {
            strategy: label,
            attempt,
            itemsToSummarize: plan.toSummarize.length,
            summaryBudget: plan.summaryBudget,
          });
          let summaryItem: CompactionSummaryItem | null = null;
          const extractive = config.summarizer === 'extractive' || input.fallbackFrom !== undefined;
          if (input.fallbackFrom !== undefined) {
            await store.recordEvent(input.compactionId, `summary_fallback:${label}`, 'summary_fallback', {
              strategy: label,
              reason: input.fallbackFrom,
            });
          }
          if (plan.toSummarize.length > 0) {
            let text: string;
            if (extractive) {
              text = policy.planExtractiveSummary(plan, tokenizer);
            } else {
              const request = policy.planSummaryRequest(plan, config, input.focus);
              faultPoint('summary_call');
              const outcome = await llmBoundary(() =>
                requestSummary(deps.llm(), {
                  model: input.summaryModel,
                  messages: request.messages,
                  // The summary item keeps room for its line of recall handles (issue 24).
                  maxTokens: plan.summaryBudget - policy.summaryHandlesBudget(plan.summaryBudget),
                }),
              );
              text = outcome.summary;
            }
            summaryItem = policy.planSummaryItem(plan, text, {
              compactionId: input.compactionId,
              summarizer: extractive ? 'extractive' : 'llm',
              tokenizer,
            });
          }
          const next = policy.finishCompaction(plan, summaryItem);
          const staged = await store.stageVersion({
            compactionId: input.compactionId,
            idemKey: `summary:${label}`,
            baseVersion: input.prunedVersion,
            // Carried state, cut forms and the summary (the store skips what it has already).
            newItems: next.filter((i) => !known.has(i.id)),
            memberIds: next.map((i) => i.id),
          });
          await store.updateCompaction(input.compactionId, {
            itemsCompacted: plan.toSummarize.length,
            ...(summaryItem ? { summaryItemId: summaryItem.id } : {}),
            tokensAfter: staged.tokens,
          });
          await store.recordEvent(input.compactionId, `summary_done:${label}`, 'summary_done', {
            strategy: label,
            tokensAfter: staged.tokens,
            itemsCompacted: plan.toSummarize.length,
            overTarget: staged.tokens > plan.targetTokens,
          });
          const summaryText = summaryItem ? String(summaryItem.message.content) : '';
          return {
            // The summary's preview is conversation text: by reference (see CLAIM).
            ...(summaryText !== '' ? CLAIM : {}),
            stagedVersion: staged.version,
            tokensAfter: staged.tokens,
            underTarget: staged.tokens <= plan.targetTokens,
            summaryItemId: summaryItem?.id ?? null,
            summaryTokens: summaryItem?.tokens ?? 0,
            itemsCompacted: plan.toSummarize.length,
            summaryPreview: summaryText.slice(0, SUMMARY_PREVIEW_CHARS),
            summaryBudget: plan.summaryBudget,
            // Attempts of a summary call; a plan with nothing to summarize made none, nor a stand-in.
            attempts: summaryItem && input.fallbackFrom === undefined ? attempt : 0,
            strategy: label,
            final: true,
          };
        }),
      );
    },

    async dropOldestRounds(input: DropOldestInput): Promise<SummarizeResult> {
      return storeBoundary(async () => {
        const config = parseConfig(input.config);
        const items = await store.getVersionItems(input.conversationId, input.prunedVersion);
        const kept = policy.dropOldestRounds(items, policy.targetTokens(config), config.maxContextTokens);
        const staged = await store.stageVersion({
          compactionId: input.compactionId,
          idemKey: 'drop_oldest',
          baseVersion: input.prunedVersion,
          newItems: [],
          memberIds: kept.map((i) => i.id),
        });
        await store.updateCompaction(input.compactionId, {
          strategy: 'drop_oldest',
          itemsCompacted: items.length - kept.length,
          tokensAfter: staged.tokens,
        });
        return {
          stagedVersion: staged.version,
          tokensAfter: staged.tokens,
          underTarget: staged.tokens <= policy.targetTokens(config),
          summaryItemId: null,
          summaryTokens: 0,
          itemsCompacted: items.length - kept.length,
          summaryPreview: '',
          attempts: 1,
        };
      });
    },

    async commitCompaction(input: CommitInput): Promise<Totals> {
      return withHeartbeat(() =>
        storeBoundary(async () => {
          const totals = await store.commitCompaction(input.compactionId, input.stagedVersion);
          faultPoint('commit_done');
          await store.recordEvent(input.compactionId, 'commit', 'commit', {
            version: totals.version,
            tokens: totals.tokens,
          });
          return totals;
        }),
      );
    },

    async discardStaged(input: DiscardInput): Promise<{ status: string }> {
      return withHeartbeat(() =>
        storeBoundary(async () => {
          faultPoint('compensation');
          const result = await store.discardStaged(
            input.compactionId,
            input.reason,
            input.outcome ?? 'rolled_back',
          );
          if (await store.getCompaction(input.compactionId)) {
            await store.recordEvent(input.compactionId, 'rollback', 'rollback', {
              reason: input.reason,
              status: result.status,
            });
          }
          return result;
        }),
      );
    },

    async recordCompactionEvent(input: RecordEventInput): Promise<void> {
      await storeBoundary(() => store.recordEvent(input.compactionId, input.key, input.phase, input.data));
    },
  };
}

function sum(items: ContextItem[]): number {
  return items.reduce((n, i) => n + i.tokens, 0);
}
