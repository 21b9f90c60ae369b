/**
 * Compaction for a workflow of your own (issue 26 item 4). A workflow that keeps its messages in our
 * store — through the stored-conversation activities, {@link storedConversation} — runs our
 * compaction child on them with {@link compactConversation} and gets its result back, without
 * adopting the agent conversation workflow:
 *
 * ```ts
 * import { CLAIM, compactConversation, needsCompaction, storedConversation } from '…/workflows/stored-conversation';
 * export { compaction } from '…/workflows'; // the child runs on your worker
 *
 * const config = { maxContextTokens: 32_000 };
 * await storedConversation.openStoredConversation({ ...CLAIM, conversationId, systemPrompt, tools, model });
 * let totals = await storedConversation.appendStoredMessages({ ...CLAIM, conversationId, messages: [user], model });
 * // … your loop: readStoredContext → your model activity → appendStoredMessages …
 * if (needsCompaction(totals, config)) await compactConversation({ conversationId, model, config });
 * ```
 *
 * Everything here runs in the workflow sandbox: activities through proxies, no I/O.
 */
import {
  type ActivityOptions,
  type LocalActivityOptions,
  CancellationScope,
  executeChild,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { StoredConversationActivities } from '../activities/stored-conversation-types';
import { parseCompactionConfig, triggerTokens } from '../src/context/config';
import { checkConversationId } from '../src/context/conversation-id';
import { checkedInput } from '../src/failures';
import { compaction } from './compaction';
import { CLAIM, type CompactionResult, type TriggerKind } from './definitions';
import { childEndedResult } from './compaction-outcome';

export { CLAIM, type CompactionResult, type TriggerKind };
export type { AssistantMessage } from '../src/context/items';
export type {
  AppendStoredMessagesInput,
  AppendStoredMessagesResult,
  ChatMessage,
  OpenStoredConversationInput,
  RecallStoredArchiveInput,
  RecallStoredArchiveResult,
  StoredContext,
  StoredConversationActivities,
  StoredMessage,
  ToolCall,
  ToolDefinition,
} from '../activities/stored-conversation-types';

/** Store reads and writes: quick, retried until they succeed (bad input is not retried). */
export const STORED_CONVERSATION_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200ms', maximumInterval: '10s', maximumAttempts: 20 },
};

/**
 * The stored-conversation activities, called with {@link STORED_CONVERSATION_OPTIONS} (make your own
 * proxy of `StoredConversationActivities` for other options). Spread {@link CLAIM} into inputs that
 * carry messages, so the worker's claim-check codec keeps their text out of workflow history.
 */
export const storedConversation = proxyActivities<StoredConversationActivities>(STORED_CONVERSATION_OPTIONS);

/** The read that numbers a compaction: a local activity (one marker event). */
const prepareOptions: LocalActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200ms', maximumInterval: '10s', maximumAttempts: 20 },
};
const local = proxyLocalActivities<StoredConversationActivities>(prepareOptions);

/**
 * Whether a context of `totals.tokens` is at the point where the agent conversation compacts before
 * a model call: `triggerRatio` × `maxContextTokens` of `config` (defaults: 0.8 × 128,000).
 * @throws ApplicationFailure CONFIG_INVALID for a configuration the schema refuses
 */
export function needsCompaction(totals: { tokens: number }, config: Record<string, unknown> = {}): boolean {
  return totals.tokens >= triggerTokens(checkedInput(() => parseCompactionConfig(config)));
}

export interface CompactConversationOptions {
  /** The stored conversation (opened with `openStoredConversation`). */
  conversationId: string;
  /** The model your workflow calls: its encoding counts the context, the summary included. */
  model: string;
  /** The model that writes the summary (a cheaper one is common). Default: `model`. */
  summaryModel?: string;
  /**
   * The compaction configuration (src/context/config.ts; its defaults fill the rest): the window
   * (`maxContextTokens`), the target after compaction (`targetRatio`), what stays verbatim, ...
   */
  config?: Record<string, unknown>;
  /** What the compaction is recorded as having been started by. Default `manual`. */
  trigger?: TriggerKind;
  /** What the summary should keep in particular (conversation text: sent by reference). */
  focus?: string;
  /** `summarize` (default), or `drop_oldest`: drop the oldest rounds without a summary. */
  mode?: 'summarize' | 'drop_oldest';
  /** The child's workflow id. Default: `<this workflow's id>/compaction-<n>`. */
  workflowId?: string;
  /** A task queue whose workers have our workflows and activities. Default: this workflow's. */
  taskQueue?: string;
  /** Where the summary call runs: an activity (`task_queue`, default) or a local activity. */
  summaryCalls?: 'local' | 'task_queue';
  /** A workspace directory: its `git diff --stat` joins the carried state. Default: none. */
  workspace?: string | null;
}

/**
 * Compacts the stored conversation: runs our compaction child (prune, summary, commit; compensated
 * when a step fails) and returns its result. `committed`: the context read back from now on is the
 * compacted one (`tokensAfter`, `summaryItemId`). `rolled_back` or `skipped`: the context is exactly
 * as it was, and `reason` says why — a failed compaction is a result, not an exception, so your
 * loop can go on. Cancelling your workflow cancels the child (which rolls back) and rethrows the
 * cancellation.
 *
 * @throws ApplicationFailure CONFIG_INVALID or INVALID_CONVERSATION_ID before anything runs
 */
export async function compactConversation(options: CompactConversationOptions): Promise<CompactionResult> {
  const conversationId = checkedInput(() => checkConversationId(options.conversationId));
  const config = options.config ?? {};
  // Refused here, in the caller's workflow, rather than in a child that would only roll back.
  checkedInput(() => parseCompactionConfig(config));
  const trigger = options.trigger ?? 'manual';
  const start = await local.prepareStoredCompaction.executeWithOptions(
    { ...prepareOptions, summary: `prepare compaction of ${conversationId}` },
    [{ conversationId }],
  );
  const compactionId = uuid4();
  const summaryModel = options.summaryModel ?? options.model;
  try {
    return await executeChild(compaction, {
      workflowId: options.workflowId ?? `${workflowInfo().workflowId}/compaction-${start.seq}`,
      ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
      staticSummary: `${trigger} compaction #${start.seq} of ${conversationId}: ${start.tokens} tokens`,
      args: [
        {
          // A focus is the user's text: by reference (see CLAIM).
          ...(options.focus ? CLAIM : {}),
          conversationId,
          compactionId,
          seq: start.seq,
          trigger,
          round: start.round,
          focus: options.focus ?? null,
          config,
          summaryModel,
          ...(summaryModel !== options.model ? { model: options.model } : {}),
          mode: options.mode ?? 'summarize',
          workspace: options.workspace ?? null,
          ...(options.summaryCalls ? { summaryCalls: options.summaryCalls } : {}),
        },
      ],
    });
  } catch (err) {
    // This workflow is being cancelled: so was the child (it rolled back); let the caller see it.
    if (isCancellation(err) && CancellationScope.current().consideredCancelled) throw err;
    // The child compensated before it ended (failed, or cancelled by someone else): nothing changed.
    return childEndedResult(
      { contextTokens: start.tokens, activeVersion: start.version, itemCount: start.itemCount },
      compactionId,
      start.seq,
      trigger,
      err,
    );
  }
}
