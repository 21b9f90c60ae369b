/**
 * The agent conversation's state: ids, counters, cooldown and loop-guard state, the last events
 * and the requests waiting for the main loop — O(1) per round; bodies live in PostgreSQL. Built
 * from the carried form of a continued run, and turned back into it before continue-as-new.
 * What the `status` Query, the Web UI's current details and the search attributes show is read
 * from here.
 */
import { setCurrentDetails, upsertSearchAttributes, type ApplicationFailure } from '@temporalio/workflow';
import type { Totals } from '../../activities/types';
import type { CompactionConfig } from '../../src/context/config';
import type { TriggerObservation } from '../../src/context/compaction-decision';
import {
  CLAIM,
  type AgentConversationInput,
  type CarriedState,
  type CompactionBrief,
  type ConversationEvent,
  type ConversationStatus,
  type PendingReview,
  type Phase,
  type RestoreResult,
  type RunningCompaction,
  type SendMessageResult,
  type TriggerKind,
} from '../definitions';
import { CONVERSATION_SEARCH_ATTRIBUTES } from '../search-attributes';

/** Events kept for the `events` Query (bounded state, STYLE.md §12). */
const MAX_EVENTS = 100;
/** Events carried across continue-as-new. */
const CARRIED_EVENTS = 20;

export interface QueuedMessage {
  id: string;
  text: string;
  /** Signals have no caller waiting for the reply. */
  awaited: boolean;
}

/** A manual compaction (`focus`) or a restore (`restore`), in the order asked. */
export interface ManualRequest {
  id: string;
  focus: string | null;
  restore?: number;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: ApplicationFailure };

export function formatTokens(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export class ConversationState {
  /** The context window, in tokens. */
  readonly window: number;
  /** Workflow runs so far, this one included (continue-as-new starts the next). */
  readonly runs: number;

  phase: Phase = 'starting';
  /** Rounds so far: user messages answered, imported rounds included. */
  rounds: number;
  /** Compactions so far, skipped ones included: the next one's number is one more. */
  compactionSeq: number;
  /** The round of the last committed compaction (the `rounds` trigger counts from it). */
  lastCompactionRound: number;
  /** Workflow time (ms since epoch) until which automatic compaction is cooling down. */
  cooldownUntil: number | null;
  /** The active context's tokens, as the store counts them. */
  contextTokens: number;
  itemCount: number;
  /** The context version in use (a compaction or a restore makes a new one active). */
  activeVersion: number;
  /** The tokens the model last reported using (null after a compaction, until it reports again). */
  lastReportedTokens: number | null;
  /** Rounds at which recent automatic compactions ran, and what they saved (the loop guard's memory). */
  recentAutomatic: { round: number; savedRatio: number }[];
  /** Why the loop guard paused automatic compaction, or null. */
  pausedReason: string | null;
  /** The round the loop guard paused automatic compaction at. */
  pausedAtRound: number | null;
  events: ConversationEvent[];
  /** Events pushed since the conversation began: `events` holds the last ones, up to this. */
  eventsTotal: number;
  lastCompaction: CompactionBrief | null = null;
  ended = false;
  awaitingApproval: { trigger: TriggerKind; tokens: number } | null = null;
  approvalDecision: 'approved' | 'rejected' | null = null;
  /** The running compaction's summary while it waits for review (`reviewSummary`; its child says). */
  review: PendingReview | null = null;
  /** The compaction child running now (the `status` Query names it; its `progress` Query says where it is). */
  runningCompaction: RunningCompaction | null = null;

  /** User messages waiting for their round, in order. */
  readonly inbox: QueuedMessage[] = [];
  /**
   * Manual compactions and restores, in the order asked: the main loop runs them one at a time,
   * never during a compaction or a round, and before it ends (`end` waits for them).
   */
  readonly manualRequests: ManualRequest[] = [];
  /** What the main loop settled for each request an Update waits on. */
  readonly outcomes = new Map<string, Outcome<SendMessageResult | CompactionBrief | RestoreResult>>();

  constructor(
    readonly input: AgentConversationInput,
    readonly conversationId: string,
    readonly config: CompactionConfig,
  ) {
    const carried = input.carried;
    this.window = config.maxContextTokens;
    this.rounds = carried?.rounds ?? 0;
    this.compactionSeq = carried?.compactionSeq ?? 0;
    this.lastCompactionRound = carried?.lastCompactionRound ?? 0;
    this.cooldownUntil = carried?.cooldownUntil ?? null;
    this.contextTokens = carried?.contextTokens ?? 0;
    this.itemCount = carried?.itemCount ?? 0;
    this.activeVersion = carried?.activeVersion ?? 0;
    this.lastReportedTokens = carried?.lastReportedTokens ?? null;
    this.recentAutomatic = carried?.recentAutomatic ?? [];
    this.pausedReason = carried?.pausedReason ?? null;
    // A pause carried from a run that did not record its round counts from this run's start.
    this.pausedAtRound = carried?.pausedAtRound ?? (carried?.pausedReason ? carried.rounds : null);
    this.events = carried?.recentEvents ?? [];
    this.eventsTotal = carried?.eventsTotal ?? this.events.length;
    this.runs = (carried?.runs ?? 0) + 1;
  }

  /** The state a continued run starts from (a cooldown that has ended is not carried). */
  carried(): CarriedState {
    return {
      ...CLAIM,
      rounds: this.rounds,
      compactionSeq: this.compactionSeq,
      lastCompactionRound: this.lastCompactionRound,
      cooldownUntil: this.cooldownActive() ? this.cooldownUntil : null,
      contextTokens: this.contextTokens,
      itemCount: this.itemCount,
      activeVersion: this.activeVersion,
      lastReportedTokens: this.lastReportedTokens,
      recentAutomatic: this.recentAutomatic,
      pausedReason: this.pausedReason,
      pausedAtRound: this.pausedAtRound,
      recentEvents: this.events.slice(-CARRIED_EVENTS),
      eventsTotal: this.eventsTotal,
      runs: this.runs,
    };
  }

  pushEvent(event: ConversationEvent): void {
    if (event.type === 'compaction_meta' && !this.config.emitCompactionMetaEvents) return;
    this.events.push(event);
    this.eventsTotal += 1;
    if (this.events.length > MAX_EVENTS) this.events = this.events.slice(-MAX_EVENTS);
  }

  cooldownActive(): boolean {
    return this.cooldownUntil !== null && Date.now() < this.cooldownUntil;
  }

  /** Automatic compaction runs again, and the loop guard starts counting afresh. */
  liftPause(): void {
    this.pausedReason = null;
    this.pausedAtRound = null;
    this.recentAutomatic = [];
  }

  applyTotals(totals: Totals): void {
    this.contextTokens = totals.tokens;
    this.itemCount = totals.itemCount;
    this.activeVersion = totals.version;
  }

  /** Are messages or manual requests waiting for the main loop? */
  get busy(): boolean {
    return this.inbox.length > 0 || this.manualRequests.length > 0;
  }

  /** The conversation's side of a trigger decision (the context's side comes from its totals). */
  triggerState(): Pick<
    TriggerObservation,
    'config' | 'roundsSinceCompaction' | 'cooldownActive' | 'pausedReason'
  > {
    return {
      config: this.config,
      roundsSinceCompaction: this.rounds - this.lastCompactionRound,
      cooldownActive: this.cooldownActive(),
      pausedReason: this.pausedReason,
    };
  }

  /** The context's share of the window, in percent. */
  percentOfWindow(): number {
    return this.window > 0 ? Math.round((this.contextTokens / this.window) * 100) : 0;
  }

  status(): ConversationStatus {
    return {
      conversationId: this.conversationId,
      phase: this.phase,
      rounds: this.rounds,
      contextTokens: this.contextTokens,
      window: this.window,
      ratio: this.window > 0 ? this.contextTokens / this.window : 0,
      itemCount: this.itemCount,
      activeVersion: this.activeVersion,
      compactions: this.compactionSeq,
      lastCompaction: this.lastCompaction,
      cooldownUntil: this.cooldownUntil,
      cooldownActive: this.cooldownActive(),
      pausedReason: this.pausedReason,
      queued: this.inbox.length,
      awaitingApproval: this.awaitingApproval,
      ended: this.ended,
      runs: this.runs,
      maxInputChars: this.config.maxInputChars,
      compaction: this.runningCompaction,
      review: this.review,
    };
  }

  /** Shows the state in the Web UI (current details) and in the search attributes. */
  publish(): void {
    const last = this.lastCompaction;
    const lines = [
      `**${this.conversationId}** · ${this.phase}`,
      `Context: ${formatTokens(this.contextTokens)} / ${formatTokens(this.window)} tokens (${this.percentOfWindow()}%) · ${this.itemCount} items · v${this.activeVersion}`,
      `Rounds: ${this.rounds} · Compactions: ${this.compactionSeq}` +
        (last ? ` · last: ${last.status} (${last.trigger})` : ''),
    ];
    if (this.cooldownActive())
      lines.push(`Cooldown until ${new Date(this.cooldownUntil ?? 0).toISOString()}`);
    if (this.pausedReason) lines.push(`Automatic compaction paused: ${this.pausedReason}`);
    if (this.awaitingApproval)
      lines.push(`Awaiting approval of a ${this.awaitingApproval.trigger} compaction`);
    if (this.review) lines.push(`Compaction #${this.review.seq} awaits review: ${this.review.workflowId}`);
    setCurrentDetails(lines.join('\n\n'));
    if (this.input.searchAttributes !== false) {
      upsertSearchAttributes([
        { key: CONVERSATION_SEARCH_ATTRIBUTES.contextTokens, value: this.contextTokens },
        { key: CONVERSATION_SEARCH_ATTRIBUTES.compactionCount, value: this.compactionSeq },
        ...(last ? [{ key: CONVERSATION_SEARCH_ATTRIBUTES.lastCompactionStatus, value: last.status }] : []),
      ]);
    }
  }
}
