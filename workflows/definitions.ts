/**
 * Messages of the agent conversation and compaction workflows: their inputs, results, Updates and
 * Queries. Everything here travels through workflow history, so it holds ids, counts and short
 * metadata — never message bodies (DESIGN.md §2). What does carry conversation text (the user's
 * message, a reply's preview, a summary's preview, a compaction's focus) is marked with
 * {@link CLAIM}: the claim-check codec (src/infra/claim-check.ts) stores such a payload in
 * PostgreSQL and history holds only its reference.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { CLAIM, type Claimed } from '../src/claim';
import type { TriggerKind } from '../src/context/triggers';
import type { ModelSettings, UsageInfo } from '../activities/types';
import type { PendingReview, ReviewVerdict, RunningCompaction } from './compaction-definitions';
import type { ConversationState } from './conversation/state';

/** What fired a compaction (DESIGN.md §3): one definition, in the pure policy. */
export type { TriggerKind };

/** The mark of a payload that carries conversation text (see src/claim.ts). */
export { CLAIM, type Claimed };

/** The model settings and usage the activities take and report. */
export type { ModelSettings, UsageInfo };

/** The compaction child's input, result, review and progress. */
export * from './compaction-definitions';

/**
 * A user message as clients send it (`sendMessage`, `userMessage`): marked, so its text goes by
 * reference. A bare string is accepted too (older clients; it travels inline).
 */
export interface MessageBody extends Claimed {
  text: string;
}

/** A message as our clients send it. */
export function messageBody(text: string): MessageBody {
  return { ...CLAIM, text };
}

/** The text of a message in either form; null when it is neither. */
export function bodyText(input: unknown): string | null {
  if (typeof input === 'string') return input;
  if (typeof input === 'object' && input !== null && typeof (input as MessageBody).text === 'string')
    return (input as MessageBody).text;
  return null;
}

/**
 * State carried across continue-as-new: ids, counters and cooldown state only. Each field means
 * what it means in the running conversation (workflows/conversation/state.ts).
 */
export type CarriedState = Claimed &
  Pick<
    ConversationState,
    | 'rounds'
    | 'compactionSeq'
    | 'lastCompactionRound'
    | 'cooldownUntil'
    | 'contextTokens'
    | 'itemCount'
    | 'activeVersion'
    | 'lastReportedTokens'
    | 'recentAutomatic'
    | 'pausedReason'
    | 'runs'
  > & {
    /** The round the loop guard paused automatic compaction at (absent in runs before it was kept). */
    pausedAtRound?: number | null;
    /** The last events (the `events` Query's). */
    recentEvents: ConversationEvent[];
    /** Events pushed since the conversation began (the cursor of `eventsPage`; absent before it was kept). */
    eventsTotal?: number;
  };

export interface AgentConversationInput extends Claimed {
  conversationId: string;
  /** The system prompt; only on the first run (a continued run finds it in the store). */
  systemPrompt?: string;
  /** Names of the tools the agent may call (built-in or registered on the worker). */
  tools?: string[];
  /** Workspace directory for the built-in file tools, as the worker sees it. */
  workspace?: string;
  model: ModelSettings;
  /** Compaction configuration (partial; validated against the schema, defaults fill the rest). */
  config?: Record<string, unknown>;
  /** Upper bound on model calls in one round (a runaway tool loop ends the round). Default 25. */
  maxStepsPerRound?: number;
  /** Set the search attributes (they must be registered on the namespace). Default true. */
  searchAttributes?: boolean;
  /**
   * Where the agent's model and tool calls run. `local` (default): as local activities on the
   * workflow's worker — one marker event per call and no task-queue round trip, about half the
   * history and latency per round; a dead worker's call is retried when its workflow task times
   * out (10 s). `task_queue`: as regular activities with heartbeats, for separate LLM/tool workers
   * or tools that run for minutes (a local call longer than a workflow task heartbeats it every 8 s).
   */
  agentCalls?: 'local' | 'task_queue';
  /**
   * Where a compaction's summary call runs. `task_queue` (default): as an activity of the
   * compaction child, heartbeating, with its attempts and pending state visible in the Web UI and
   * able to run on separate workers. `local`: as a local activity on the child's worker — the
   * whole compaction is then one workflow task, ~17 ms and ~0.8 KB of history less per compaction
   * (bench figure 1); a dead worker's summary is retried when that task times out (10 s).
   */
  summaryCalls?: 'local' | 'task_queue';
  /** Present on a continued run. */
  carried?: CarriedState;
}

/** One compaction as the conversation reports it. */
export interface CompactionBrief {
  seq: number;
  compactionId: string;
  trigger: TriggerKind;
  status: 'committed' | 'rolled_back' | 'skipped';
  round: number;
  strategy: string | null;
  tokensBefore: number;
  tokensAfter: number;
  savedRatio: number;
  reason: string | null;
  /** How its review decided (`reviewSummary`); absent when there was none. */
  review?: ReviewVerdict;
  /** Committed with the extractive summary because the summary call failed (an emergency): why. */
  summaryFallback?: string;
}

/** Events of a conversation (the `events` Query), seeds 003 and 004. */
export type ConversationEvent =
  | { type: 'pre_compact'; seq: number; trigger: TriggerKind; round: number; tokens: number; detail: string }
  | {
      type: 'compaction_meta';
      seq: number;
      phase: MetaPhase;
      tokensBefore?: number;
      tokensAfter?: number;
      toolBlocksKept?: number;
      toolBlocksDropped?: number;
      toolCallsTruncated?: number;
      toolResultsTruncated?: number;
      reason?: string;
    }
  | {
      type: 'context_compacted';
      seq: number;
      trigger: TriggerKind;
      strategy: string | null;
      originalTokens: number;
      newTokens: number;
      savedRatio: number;
      summaryItemId: string | null;
      /** The first characters of the summary; the whole text is in the store (`inspect`). */
      summaryPreview: string;
    }
  | { type: 'compaction_rolled_back'; seq: number; trigger: TriggerKind; reason: string }
  | { type: 'compaction_skipped'; seq: number; trigger: TriggerKind; reason: string }
  | { type: 'summary_fallback'; seq: number; reason: string }
  | { type: 'cooldown_started'; until: number; ms: number }
  | { type: 'cooldown_ended' }
  | { type: 'loop_guard'; reason: string }
  | { type: 'loop_guard_lifted'; pausedRounds: number }
  | { type: 'awaiting_approval'; trigger: TriggerKind; tokens: number }
  | { type: 'approval'; decision: 'approved' | 'rejected' | 'timed_out'; action: string }
  | { type: 'awaiting_review'; seq: number; trigger: TriggerKind; tokensBefore: number; tokensAfter: number }
  | {
      type: 'review';
      seq: number;
      decision: 'approved' | 'rejected' | 'timed_out';
      /** The reviewer's summary was committed instead of the summarizer's. */
      edited: boolean;
      /** What followed: `commit`, `none` (a manual compaction), or the configured `onReject`. */
      action: string;
    }
  | { type: 'restored'; version: number; activeVersion: number; tokens: number };

export type MetaPhase =
  | 'selective_start'
  | 'selective_done'
  | 'summary_start'
  | 'summary_done'
  | 'rollback'
  | 'commit'
  | 'cooldown';

export interface SendMessageResult extends Claimed {
  round: number;
  replyItemId: string | null;
  /** The reply, cut to a preview length when long (`replyTruncated`); the whole text is in the store. */
  reply: string;
  replyTruncated?: true;
  usage: UsageInfo | null;
  contextTokens: number;
  window: number;
  compactions: CompactionBrief[];
  /**
   * How many of `compactions` ran before the model wrote the reply (the rest ran after it, on its
   * usage): a client shows those first. Absent from results of rounds before it was reported.
   */
  compactionsBeforeReply?: number;
}

export type Phase =
  'starting' | 'idle' | 'model' | 'tool' | 'compacting' | 'awaiting_approval' | 'awaiting_review' | 'ended';

export interface ConversationStatus {
  conversationId: string;
  phase: Phase;
  rounds: number;
  contextTokens: number;
  window: number;
  ratio: number;
  itemCount: number;
  activeVersion: number;
  compactions: number;
  lastCompaction: CompactionBrief | null;
  cooldownUntil: number | null;
  cooldownActive: boolean;
  pausedReason: string | null;
  queued: number;
  awaitingApproval: { trigger: TriggerKind; tokens: number } | null;
  ended: boolean;
  runs: number;
  /** The longest user message accepted, in characters (config `maxInputChars`; absent before it was reported). */
  maxInputChars?: number;
  /** The compaction child running now (its `progress` Query says where it is), or null. */
  compaction?: RunningCompaction | null;
  /** The summary of the running compaction, waiting for review (`reviewSummary`), or null. */
  review?: PendingReview | null;
}

// ---- Updates, Queries, Signals -------------------------------------------------------------

export const sendMessageUpdate = defineUpdate<SendMessageResult, [MessageBody | string]>('sendMessage');
export const compactUpdate = defineUpdate<CompactionBrief, [({ focus?: string } & Claimed) | undefined]>(
  'compact',
);
export const approveCompactionUpdate = defineUpdate<
  { decision: 'approved' | 'rejected' },
  [{ approve: boolean }]
>('approveCompaction');
/** What a restore did: the version asked for, made active again as `activeVersion`. */
export interface RestoreResult {
  version: number;
  activeVersion: number;
  tokens: number;
}
export const restoreUpdate = defineUpdate<RestoreResult, [{ version: number }]>('restore');
export const endUpdate = defineUpdate<{ rounds: number }, []>('end');
/** Fire-and-forget input (no reply); queued like `sendMessage`. */
export const userMessageSignal = defineSignal<[MessageBody | string]>('userMessage');
export const statusQuery = defineQuery<ConversationStatus>('status');
/** A page of events from a cursor that holds across continue-as-new (see `eventsPageQuery`). */
export interface EventsPage {
  /** The cursor of the first event returned (earlier ones are gone when it is above `since`). */
  from: number;
  events: ConversationEvent[];
  /** The cursor to ask from next time. */
  next: number;
}
/** Events from cursor `since` (0: the oldest kept); the conversation keeps its last 100. */
export const eventsPageQuery = defineQuery<EventsPage, [{ since?: number } | undefined]>('eventsPage');
/** A compaction child's meta event, sent to its parent as it happens (`emitCompactionMetaEvents`). */
export const compactionMetaSignal = defineSignal<[ConversationEvent]>('compactionMeta');

export const eventsQuery = defineQuery<ConversationEvent[], [{ since?: number } | undefined]>('events');
