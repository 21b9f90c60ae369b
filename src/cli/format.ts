/** How the CLI shows usage and compaction events. */
import type { CompactionBrief, ConversationEvent, SendMessageResult } from '../../workflows/definitions';
import type { CompactionProgressView, WatchedStatus } from '../client/compaction-progress';

/** A token count as people read it: `41,200`. */
export function formatTokens(x: number): string {
  return Math.round(x).toLocaleString('en-US');
}
const n = formatTokens;

/** `41,200 / 128,000 · 32%` */
export function formatUsage(tokens: number, window: number): string {
  const pct = window > 0 ? Math.round((tokens / window) * 100) : 0;
  return `${n(tokens)} / ${n(window)} · ${pct}%`;
}

/** One line per event worth showing, or null. */
export function formatEvent(event: ConversationEvent): string | null {
  switch (event.type) {
    case 'pre_compact':
      return `⟳ compaction #${event.seq} (${event.trigger}): ${event.detail}`;
    case 'context_compacted':
      return (
        `✓ compacted #${event.seq} (${event.trigger}, ${event.strategy ?? '-'}): ` +
        `${n(event.originalTokens)} → ${n(event.newTokens)} tokens, saved ${Math.round(event.savedRatio * 100)}%`
      );
    case 'compaction_rolled_back':
      return `✗ compaction #${event.seq} rolled back: ${event.reason}`;
    case 'compaction_skipped':
      return `– compaction #${event.seq} skipped: ${event.reason}`;
    case 'summary_fallback':
      return `⚠ compaction #${event.seq}: the summary call failed (${event.reason}); the extractive summary stands in`;
    case 'cooldown_started':
      return `⏸ cooldown ${Math.round(event.ms / 1000)} s`;
    case 'cooldown_ended':
      return '▶ cooldown over';
    case 'loop_guard':
      return `⚠ automatic compaction paused: ${event.reason}`;
    case 'loop_guard_lifted':
      return `▶ automatic compaction armed again after ${event.pausedRounds} paused round(s)`;
    case 'awaiting_approval':
      return `? a ${event.trigger} compaction awaits approval (${n(event.tokens)} tokens): run approve or reject`;
    case 'approval':
      return `approval: ${event.decision} → ${event.action}`;
    case 'awaiting_review':
      return `? compaction #${event.seq} (${event.trigger}) awaits review: ${n(event.tokensBefore)} → ${n(event.tokensAfter)} tokens; run review, approve or reject`;
    case 'review':
      return `review of #${event.seq}: ${event.decision}${event.edited ? ' (edited summary)' : ''} → ${event.action}`;
    case 'restored':
      return `↺ restored version ${event.version} as v${event.activeVersion} (${n(event.tokens)} tokens)`;
    case 'compaction_meta':
      return `  · ${event.phase}${event.tokensAfter !== undefined ? ` (${n(event.tokensAfter)} tokens)` : ''}`;
  }
}

/** One compaction of a round or a `compact`: `compaction #2 (precheck): 3,400 → 1,200 tokens, saved 65%`. */
export function formatCompaction(brief: CompactionBrief): string {
  const head = `compaction #${brief.seq} (${brief.trigger}${brief.strategy ? `, ${brief.strategy}` : ''})`;
  switch (brief.status) {
    case 'committed':
      return (
        `${head}: ${n(brief.tokensBefore)} → ${n(brief.tokensAfter)} tokens, ` +
        `saved ${Math.round(brief.savedRatio * 100)}%`
      );
    case 'rolled_back':
      return `${head} rolled back: ${brief.reason ?? 'no reason given'}`;
    case 'skipped':
      return `${head} skipped: ${brief.reason ?? 'no reason given'}`;
  }
}

/** What `send` prints for a round: the reply, the token usage, the compactions it ran. */
export function formatSendResult(conversationId: string, result: SendMessageResult): string[] {
  // The compactions that ran before the reply was written come before it, the others after.
  const before = result.compactionsBeforeReply ?? 0;
  const lines = result.compactions.slice(0, before).map(formatCompaction);
  lines.push(result.reply === '' ? '(no reply text)' : result.reply);
  if (result.replyTruncated)
    lines.push(`… (reply shortened; the whole text: durable-compaction export ${conversationId})`);
  lines.push(`tokens: ${formatUsage(result.contextTokens, result.window)}`);
  for (const brief of result.compactions.slice(before)) lines.push(formatCompaction(brief));
  return lines;
}

/** What the phase of a conversation means to someone waiting on it; null for idle. */
export function formatPhase(
  status: Pick<WatchedStatus, 'phase' | 'awaitingApproval' | 'compactionProgress' | 'review'>,
): string | null {
  if (status.phase === 'compacting' && status.compactionProgress)
    return formatCompactionProgress(status.compactionProgress);
  switch (status.phase) {
    case 'starting':
      return 'starting…';
    case 'model':
      return 'waiting for the model…';
    case 'tool':
      return 'running tools…';
    case 'compacting':
      return 'compacting…';
    case 'awaiting_approval':
      return status.awaitingApproval
        ? `a ${status.awaitingApproval.trigger} compaction (${n(status.awaitingApproval.tokens)} tokens) awaits approval: approve or reject it`
        : 'a compaction awaits approval: approve or reject it';
    case 'awaiting_review':
      return status.review
        ? `compaction #${status.review.seq} (${status.review.trigger}) awaits review: ${n(status.review.tokensBefore)} → ${n(status.review.tokensAfter)} tokens; review, approve or reject it`
        : 'a compaction awaits review: review, approve or reject it';
    case 'ended':
      return 'ended';
    case 'idle':
      return null;
  }
}

/** `status` as lines. `now` decides whether a cooldown is still running. */
export function formatStatus(status: WatchedStatus, now: number = Date.now()): string[] {
  const lines = [
    `${status.conversationId} · ${status.ended ? 'ended' : status.phase}${status.runs > 1 ? ` · run ${status.runs}` : ''}`,
    `  context      ${formatUsage(status.contextTokens, status.window)} (${status.itemCount} items, version ${status.activeVersion})`,
    `  rounds       ${status.rounds}`,
    `  compactions  ${status.compactions}${status.lastCompaction ? ` · last: ${formatCompaction(status.lastCompaction)}` : ''}`,
  ];
  if (status.cooldownActive && status.cooldownUntil !== null)
    lines.push(
      `  cooldown     automatic compaction resumes in ${Math.max(0, Math.ceil((status.cooldownUntil - now) / 1000))} s`,
    );
  if (status.compaction)
    lines.push(
      `  running      ${status.compactionProgress ? formatCompactionProgress(status.compactionProgress, now) : `compaction #${status.compaction.seq} (${status.compaction.trigger})`} · ${status.compaction.workflowId}`,
    );
  if (status.pausedReason) lines.push(`  paused       automatic compaction: ${status.pausedReason}`);
  if (status.awaitingApproval)
    lines.push(`  approval     ${formatPhase({ ...status, phase: 'awaiting_approval' })}`);
  if (status.review) lines.push(`  review       ${formatPhase({ ...status, phase: 'awaiting_review' })}`);
  if (status.queued > 0)
    lines.push(`  queued       ${status.queued} message${status.queued === 1 ? '' : 's'}`);
  return lines;
}

/**
 * One line: `compaction #3 (check): prune 28,758 → 14,900 · summary attempt 2/3 (429 …, retrying
 * in 2 s)`. `now` decides the wait shown.
 */
export function formatCompactionProgress(p: CompactionProgressView, now: number = Date.now()): string {
  const steps: string[] = [];
  if (p.phase === 'prune') steps.push('prune…');
  else if (p.tokensBefore !== null)
    steps.push(`prune ${n(p.tokensBefore)} → ${n(p.prunedTokens ?? p.tokensAfter ?? p.tokensBefore)}`);
  if (p.phase === 'summary') {
    const a = p.summaryAttempt;
    let summary = `summary${p.step ? ` (${p.step})` : ''}`;
    if (a && a.attempt > 1) {
      const wait =
        a.nextAttemptAt !== null && a.nextAttemptAt > now
          ? `, retrying in ${Math.ceil((a.nextAttemptAt - now) / 1000)} s`
          : '';
      summary += ` attempt ${a.attempt}/${a.maximumAttempts || '∞'}${a.lastFailure ? ` (${a.lastFailure}${wait})` : wait ? ` (${wait.slice(2)})` : ''}`;
    } else summary += '…';
    steps.push(summary);
  }
  if (p.phase === 'review') steps.push(`summary → ${n(p.tokensAfter ?? 0)} awaits review`);
  if (p.phase === 'commit') steps.push(`committing ${n(p.tokensAfter ?? 0)}…`);
  if (p.phase === 'rollback') steps.push('rolling back…');
  if (p.phase === 'done' && p.outcome) {
    const after = p.tokensAfter ?? 0;
    const before = p.tokensBefore ?? after;
    steps.push(
      p.outcome.status === 'committed'
        ? `committed → ${n(after)} (saved ${before > 0 ? Math.round(((before - after) / before) * 100) : 0} %)`
        : `${p.outcome.status.replace('_', ' ')}${p.outcome.reason ? `: ${p.outcome.reason}` : ''}`,
    );
  }
  return `compaction #${p.seq} (${p.trigger}): ${steps.join(' · ')}`;
}
