/** How the CLI shows usage and compaction events. */
import type { ConversationEvent } from '../../workflows/definitions';

const n = (x: number): string => Math.round(x).toLocaleString('en-US');

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
    case 'cooldown_started':
      return `⏸ cooldown ${Math.round(event.ms / 1000)} s`;
    case 'cooldown_ended':
      return '▶ cooldown over';
    case 'loop_guard':
      return `⚠ automatic compaction paused: ${event.reason}`;
    case 'awaiting_approval':
      return `? a ${event.trigger} compaction awaits approval (${n(event.tokens)} tokens): run approve or reject`;
    case 'approval':
      return `approval: ${event.decision} → ${event.action}`;
    case 'restored':
      return `↺ restored version ${event.version} as v${event.activeVersion} (${n(event.tokens)} tokens)`;
    case 'compaction_meta':
      return `  · ${event.phase}${event.tokensAfter !== undefined ? ` (${n(event.tokensAfter)} tokens)` : ''}`;
  }
}
