/**
 * Activities of the compaction child workflow: selective prune, summarize (one strategy per call),
 * drop-oldest (seed 004's alternative), commit and the compensation. Each loads what it needs from
 * PostgreSQL, applies the pure policy of src/context, and writes a staged version — returning only
 * ids and counts. Every write is idempotent (keys derived from the compaction id).
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import * as policy from '../src/context';
import type { CompactionConfig } from '../src/context/config';
import type { CompactionSummaryItem, ContextItem } from '../src/context/items';
import { llmBoundary, requestSummary } from '../src/llm';
import type { ActivityDeps } from './deps';
import { storeBoundary } from './failures';
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
  SummaryStep,
  Totals,
} from './types';

/** Characters of the summary carried in workflow history as a preview (the text is in the store). */
const SUMMARY_PREVIEW_CHARS = 300;

function parseConfig(raw: Record<string, unknown>): CompactionConfig {
  try {
    return policy.parseCompactionConfig(raw);
  } catch (err) {
    throw ApplicationFailure.nonRetryable(
      `invalid compaction config: ${(err as Error).message}`,
      'CONFIG_INVALID',
    );
  }
}

function targetTokens(config: CompactionConfig): number {
  return Math.floor(config.targetRatio * config.maxContextTokens);
}

export function compactionActivities(deps: ActivityDeps): CompactionActivities {
  const { store } = deps;

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
          const target = targetTokens(config);
          const pruned = policy.selectivePrune(items, config, tokenizer, target);
          const taskType = policy.detectTaskType(items);
          const chain = policy.strategyChain(taskType);
          const headerTokens = sum(policy.splitSegments(items).header);
          const impossible =
            headerTokens > target
              ? `header_exceeds_target: the header alone is ${headerTokens} tokens, over the target of ${target} ` +
                `(${config.targetRatio} × ${config.maxContextTokens}); shorten the system prompt, tools or pinned content`
              : null;
          const staged = await store.stageVersion({
            compactionId: input.compactionId,
            idemKey: 'prune',
            baseVersion: comp.baseVersion,
            newItems: pruned.newItems,
            memberIds: pruned.items.map((i) => i.id),
          });
          await store.updateCompaction(input.compactionId, { taskType });
          const stats = {
            toolBlocksKept: pruned.stats.toolBlocksKept,
            toolBlocksDropped: pruned.stats.toolBlocksDropped,
            toolCallsTruncated: pruned.stats.toolCallsTruncated,
            toolResultsTruncated: pruned.stats.toolResultsTruncated,
            itemsDropped: pruned.stats.itemsDropped,
          };
          await store.recordEvent(input.compactionId, 'selective_done', 'selective_done', {
            tokensBefore,
            tokensAfter: staged.tokens,
            ...stats,
          });
          faultPoint('prune_staged');
          return {
            baseVersion: comp.baseVersion,
            stagedVersion: staged.version,
            tokensBefore,
            tokensAfter: staged.tokens,
            targetTokens: target,
            underTarget: staged.tokens <= target,
            taskType,
            chain,
            stats,
            impossible,
          };
        }),
      );
    },

    async summarize(input: SummarizeInput): Promise<SummarizeResult> {
      return withHeartbeat(() =>
        storeBoundary(async () => {
          const config = parseConfig(input.config);
          const attempt = Context.current().info.attempt;
          const items = await store.getVersionItems(input.conversationId, input.prunedVersion);
          // The summary joins the conversation's context: counted in its model's encoding.
          const tokenizer = deps.tokens.forModel(input.model ?? input.summaryModel);
          // The first step whose plan summarizes something (or the last one).
          const steps = [
            { strategy: input.strategy, keepRecentRounds: input.keepRecentRounds },
            ...(input.then ?? []),
          ];
          const labelOf = (s: SummaryStep) =>
            s.keepRecentRounds === null ? s.strategy : `${s.strategy}-${s.keepRecentRounds}`;
          let stepIndex = 0;
          let plan: ReturnType<typeof policy.planStrategy>;
          let toSummarize: ContextItem[];
          for (;;) {
            const s = steps[stepIndex] as SummaryStep;
            plan = policy.planStrategy(s.strategy, items, config, {
              keepRecentRounds: s.keepRecentRounds ?? undefined,
            });
            const ids = plan.summarizeIds;
            toSummarize = items.filter((i) => ids.has(i.id));
            if (toSummarize.length > 0 || stepIndex === steps.length - 1) break;
            stepIndex++;
          }
          const label = labelOf(steps[stepIndex] as SummaryStep);
          await store.updateCompaction(input.compactionId, { strategy: label, attempts: attempt });
          await store.recordEvent(input.compactionId, `summary_start:${label}:${attempt}`, 'summary_start', {
            strategy: label,
            attempt,
            ...(stepIndex > 0 ? { nothingToSummarize: steps.slice(0, stepIndex).map(labelOf) } : {}),
          });
          let summaryItem: CompactionSummaryItem | null = null;
          if (toSummarize.length > 0) {
            const previous = items.filter((i) => i.type === 'COMPACTION_SUMMARY');
            let text: string;
            if (config.summarizer === 'extractive') {
              text = policy.extractiveSummary(items, toSummarize);
            } else {
              const request = policy.buildSummaryRequest({
                items,
                toSummarize,
                previousSummaries: previous,
                focus: input.focus,
                gitDiffStat: await gitDiffStat(input.workspace),
                config,
              });
              faultPoint('summary_call');
              const outcome = await llmBoundary(() =>
                requestSummary(deps.llm(), {
                  model: input.summaryModel,
                  messages: request.messages,
                  maxTokens: policy.summaryTokenBudget(config),
                }),
              );
              text = outcome.summary;
            }
            const cut = tokenizer.truncate(text, policy.summaryTokenBudget(config));
            const body = `${policy.SUMMARY_MESSAGE_PREFIX}\n${cut.text}`;
            const draft: CompactionSummaryItem = {
              id: `${input.compactionId}:summary:${label}`,
              type: 'COMPACTION_SUMMARY',
              summarizer: config.summarizer === 'extractive' ? 'extractive' : 'llm',
              message: { role: 'user', content: body },
              tokens: 0,
              round: Math.max(...toSummarize.map((i) => i.round)),
              isMeta: true,
              pinned: false,
              ephemeral: false,
            };
            summaryItem = { ...draft, tokens: tokenizer.countItem(draft) };
          }
          const next = summaryItem ? policy.buildPostCompactionContext(items, plan, summaryItem) : items;
          const staged = await store.stageVersion({
            compactionId: input.compactionId,
            idemKey: `summary:${label}`,
            baseVersion: input.prunedVersion,
            newItems: summaryItem ? [summaryItem] : [],
            memberIds: next.map((i) => i.id),
          });
          const target = targetTokens(config);
          await store.updateCompaction(input.compactionId, {
            itemsCompacted: toSummarize.length,
            ...(summaryItem ? { summaryItemId: summaryItem.id } : {}),
            tokensAfter: staged.tokens,
          });
          await store.recordEvent(input.compactionId, `summary_done:${label}`, 'summary_done', {
            strategy: label,
            tokensAfter: staged.tokens,
            itemsCompacted: toSummarize.length,
          });
          const summaryText = summaryItem ? String(summaryItem.message.content) : '';
          return {
            ...(stepIndex > 0 ? { stepIndex } : {}),
            stagedVersion: staged.version,
            tokensAfter: staged.tokens,
            underTarget: staged.tokens <= target,
            summaryItemId: summaryItem?.id ?? null,
            summaryTokens: summaryItem?.tokens ?? 0,
            itemsCompacted: toSummarize.length,
            summaryPreview: summaryText.slice(0, SUMMARY_PREVIEW_CHARS),
            // Attempts of a summary call; a strategy with nothing to summarize made none.
            attempts: summaryItem ? attempt : 0,
          };
        }),
      );
    },

    async dropOldestRounds(input: DropOldestInput): Promise<SummarizeResult> {
      return storeBoundary(async () => {
        const config = parseConfig(input.config);
        const items = await store.getVersionItems(input.conversationId, input.prunedVersion);
        const kept = policy.dropOldestRounds(items, targetTokens(config));
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
          underTarget: staged.tokens <= targetTokens(config),
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
