/**
 * Inputs and results of the activities. Workflows import these as types only. They carry ids,
 * counts and short metadata — message bodies stay in PostgreSQL (DESIGN.md §2).
 */
import type { TriggerObservation } from '../src/context/compaction-decision';
import type { TriggerKind } from '../src/context/triggers';
import type { Claimed } from '../src/claim';

/** Which model answers the agent's turns. */
export interface ModelSettings {
  /** `openai`: any OpenAI-compatible endpoint (key and URL from the worker's environment). `recorded`: play back an imported session. */
  provider: 'openai' | 'recorded';
  /** Agent model name. */
  model: string;
  /** Summarizer model (a cheaper one is common); defaults to `model`. */
  summaryModel?: string;
  /** For `recorded`: the session file, as the worker sees it. */
  recordingPath?: string;
  /** Upper bound on the tokens of one answer. */
  maxOutputTokens?: number;
}

export interface UsageInfo {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** Totals of the active context after a write. */
export interface Totals {
  version: number;
  tokens: number;
  itemCount: number;
}

export interface InitConversationInput extends Claimed {
  conversationId: string;
  systemPrompt: string;
  tools: string[];
  model: string;
  /** The context window: a new conversation whose header alone is larger is refused. */
  maxContextTokens?: number;
}

/** What `initConversation` returns: the totals, and the rounds the store already holds. */
export interface InitConversationResult extends Totals {
  /**
   * Real user rounds already stored (an imported conversation's; 0 for a new one): the workflow
   * numbers its rounds after them. Absent from results recorded before it existed.
   */
  rounds?: number;
}

export interface AppendUserMessageInput {
  conversationId: string;
  itemId: string;
  text: string;
  round: number;
  model: string;
}

export interface CallModelInput {
  conversationId: string;
  /** Id for the assistant item this call writes (made in the workflow, so a retry finds it). */
  itemId: string;
  round: number;
  /** Model calls already made in this round (the recorded model plays back step N of round R). */
  step: number;
  model: ModelSettings;
  /** Characters of the reply returned to the workflow (the rest stays in the store). */
  replyPreviewChars: number;
  /** The marker that asks for a compaction (seed 001). */
  marker: string;
  /**
   * Local calls only, whose input stays out of history: the round's user message, appended before
   * the call (one marker event per round instead of two).
   */
  userMessage?: { itemId: string; text: string };
  /**
   * With `userMessage`: the precheck's inputs. When a trigger would fire on the context with the
   * message in it, the call stops before asking the model (`kind: 'precheck'`) and the workflow
   * decides, exactly as it does before the round's later calls.
   */
  precheck?: PrecheckInput;
}

/** What the workflow's trigger decision needs besides the context's totals (which the call makes). */
export type PrecheckInput = Omit<
  TriggerObservation,
  'contextTokens' | 'itemCount' | 'reportedTokens' | 'markerSeen'
>;

export interface ToolCallRef {
  id: string;
  name: string;
}

/**
 * Fields that are false or empty are left out: every byte here is in history once per call. The
 * answer's item id is the workflow's `itemId`: not echoed (results recorded before this change
 * carry it too; nothing reads it).
 */
export interface CallModelResult extends Claimed {
  /**
   * Absent: the model answered. `turn_end`: the recorded session has no more assistant turns in
   * this round. `precheck`: the model was not called, a precheck trigger fires (see
   * `CallModelInput.precheck`).
   */
  kind?: 'turn_end' | 'precheck';
  tokens: number;
  usage: UsageInfo | null;
  finishReason: string | null;
  toolCalls: ToolCallRef[];
  markerSeen?: true;
  /** The reply (its first `replyPreviewChars`); absent when the answer has no text. */
  reply?: string;
  replyTruncated?: true;
  totals: Totals;
}

export interface RunToolInput {
  conversationId: string;
  round: number;
  callItemId: string;
  toolCallId: string;
  name: string;
  resultItemId: string;
  workspace: string | null;
  model: ModelSettings;
  /**
   * For a call of the built-in `recall` tool, with recall on: the conversation's settings (issue
   * 24). Absent: the call goes to the worker's tools like any other.
   */
  recall?: { pageTokens: number; searchLimit: number };
}

/** The result item's id is the workflow's `resultItemId`: not echoed (every byte is in history). */
export interface RunToolResult {
  tokens: number;
  /** Present when the tool failed (its error is the result the model reads). */
  isError?: true;
  totals: Totals;
}

export interface RecordSkippedInput {
  conversationId: string;
  compactionId: string;
  seq: number;
  trigger: TriggerKind;
  reason: string;
}

export interface RestoreInput {
  conversationId: string;
  version: number;
  idemKey: string;
}

// ---- compaction ----------------------------------------------------------------------------

export interface PruneInput extends Claimed {
  conversationId: string;
  compactionId: string;
  seq: number;
  trigger: TriggerKind;
  focus: string | null;
  config: Record<string, unknown>;
  /** The model whose encoding counts the context: the conversation's. */
  model: string;
  /** The conversation's workspace: its `git diff --stat` becomes a header item (absent: none). */
  workspace?: string | null;
}

export interface PruneResult {
  baseVersion: number;
  stagedVersion: number;
  tokensBefore: number;
  tokensAfter: number;
  targetTokens: number;
  underTarget: boolean;
  taskType: string;
  /** The strategies after the prune: the task type's chain, then seed 001's fixed fallback order. */
  chain: string[];
  stats: {
    toolBlocksKept: number;
    toolBlocksDropped: number;
    toolCallsTruncated: number;
    toolResultsTruncated: number;
    /** Items removed by the prune, by item type. */
    itemsDropped: Record<string, number>;
  };
  /** Set when an automatic compaction cannot help (the header and carried state fill the target). */
  impossible: string | null;
}

export interface SummarizeInput extends Claimed {
  conversationId: string;
  compactionId: string;
  /** The staged version written by selectivePrune: every strategy starts from it. */
  prunedVersion: number;
  strategy: string;
  /** For the `full` strategy: rounds kept verbatim (fewer when still over target). */
  keepRecentRounds: number | null;
  /**
   * The steps to fall back on, in order, while a step's plan summarizes nothing: planning is pure,
   * so such steps cost no summary call and need no activity of their own. The last one runs even
   * when it summarizes nothing.
   */
  then?: SummaryStep[];
  focus: string | null;
  config: Record<string, unknown>;
  summaryModel: string;
  /** The conversation's model, whose encoding counts the summary item; absent: `summaryModel`. */
  model?: string;
  workspace: string | null;
  /**
   * Set for an emergency compaction whose summary call failed every attempt: why. The extractive
   * summary (no model call) stands in, whatever the configuration.
   */
  fallbackFrom?: string;
}

export interface SummaryStep {
  strategy: string;
  keepRecentRounds: number | null;
}

export interface SummarizeResult extends Claimed {
  /** The step that ran: 0 for `strategy`, i + 1 for `then[i]` (absent: 0). */
  stepIndex?: number;
  stagedVersion: number;
  tokensAfter: number;
  underTarget: boolean;
  summaryItemId: string | null;
  summaryTokens: number;
  itemsCompacted: number;
  summaryPreview: string;
  /** The most tokens the summary could have (absent from results recorded before review). */
  summaryBudget?: number;
  attempts: number;
  /** The last step of the plan (`tool_blocks`, `sliding_window`, `full(keep 1)`, ...). */
  strategy?: string;
  /**
   * The whole plan ran in this call (every step, decided before the summary): the workflow goes on
   * to commit. Absent from results recorded before planning moved into one pure function.
   */
  final?: true;
}

export interface DropOldestInput {
  conversationId: string;
  compactionId: string;
  prunedVersion: number;
  config: Record<string, unknown>;
}

/** A reviewer's edited summary, to stage in place of the proposal (issue 23). */
export interface ReviseSummaryInput extends Claimed {
  conversationId: string;
  compactionId: string;
  /** The staged version under review, holding the proposal. */
  stagedVersion: number;
  /** The proposed summary item, replaced by the edit. */
  summaryItemId: string;
  /** The most tokens the edit may have (the proposal's budget). */
  summaryBudget: number;
  /** The context's tokens before the compaction: the edit must leave it smaller. */
  tokensBefore: number;
  text: string;
  /** Names the edit (from the workflow): the new item's id and the staged version's key. */
  editId: string;
  /** The conversation's model, whose encoding counts the summary. */
  model: string;
}

/** The staged version with the reviewer's summary. */
export interface RevisedSummary extends Claimed {
  stagedVersion: number;
  tokensAfter: number;
  summaryItemId: string;
  summaryTokens: number;
  summaryPreview: string;
}

export interface CommitInput {
  compactionId: string;
  stagedVersion: number;
}

export interface DiscardInput {
  compactionId: string;
  reason: string;
  /** `skipped` when nothing went wrong but compaction could not help (default `rolled_back`). */
  outcome?: 'rolled_back' | 'skipped';
}

export interface RecordEventInput {
  compactionId: string;
  key: string;
  phase: string;
  data: Record<string, unknown>;
}

/** The activities the conversation workflow calls. Implementations: `createActivities` (activities/index.ts). */
export interface ConversationActivities {
  initConversation(input: InitConversationInput): Promise<InitConversationResult>;
  appendUserMessage(input: AppendUserMessageInput): Promise<Totals>;
  callModel(input: CallModelInput): Promise<CallModelResult>;
  runTool(input: RunToolInput): Promise<RunToolResult>;
  recordSkippedCompaction(input: RecordSkippedInput): Promise<void>;
  restoreVersion(input: RestoreInput): Promise<Totals>;
  endConversation(input: { conversationId: string }): Promise<void>;
}

/** The activities the compaction child workflow calls. */
export interface CompactionActivities {
  selectivePrune(input: PruneInput): Promise<PruneResult>;
  summarize(input: SummarizeInput): Promise<SummarizeResult>;
  dropOldestRounds(input: DropOldestInput): Promise<SummarizeResult>;
  commitCompaction(input: CommitInput): Promise<Totals>;
  discardStaged(input: DiscardInput): Promise<{ status: string }>;
  recordCompactionEvent(input: RecordEventInput): Promise<void>;
}

/** The activity of a compaction's review (`reviewSummary`). */
export interface ReviewActivities {
  /**
   * Stages the reviewer's summary in place of the proposal; refuses an empty one, one over the
   * budget, or one that leaves the context no smaller (`SUMMARY_EDIT_REFUSED`, nothing written).
   */
  reviseSummary(input: ReviseSummaryInput): Promise<RevisedSummary>;
}
