/**
 * The peers at our compaction points: what pi's `prepareCompaction` and LangChain's
 * `trimMessages` would keep of the same context with the same budget (the target), counted with
 * our stored counts — as bench figure 5 does for a whole session. Both are development
 * dependencies: when they are not installed, the figures are NaN and the note says why.
 */
import type { ContextItem } from '../context/items';
import { langChainTrim, loadPrepareCompaction, toLangChain, toPiEntries } from './peer-adapters';

/** Tokens of the fixed-size summary each summarizing peer is credited with. */
export const PEER_SUMMARY_TOKENS = 600;

export interface PeerPoint {
  /** Tokens pi keeps (its summary counted at {@link PEER_SUMMARY_TOKENS}). */
  pi: number;
  /** Tokens `trimMessages` keeps (it does not summarize). */
  trim: number;
  note: string;
}

function sum(items: readonly ContextItem[]): number {
  return items.reduce((n, i) => n + i.tokens, 0);
}

/** The peers on each context, with `target` tokens of budget in a window of `window`. */
export async function peersAt(
  contexts: readonly ContextItem[][],
  target: number,
  window: number,
): Promise<PeerPoint[]> {
  let prepare: Awaited<ReturnType<typeof loadPrepareCompaction>> | null = null;
  let note = '';
  try {
    prepare = await loadPrepareCompaction();
  } catch (err) {
    note = `pi-coding-agent not available: ${(err as Error).message.split('\n')[0]}`;
  }
  const out: PeerPoint[] = [];
  for (const items of contexts) {
    const byId = new Map(items.map((i) => [i.id, i]));
    const tokensById = new Map(items.map((i) => [i.id, i.tokens]));
    const system = items.filter((i) => i.type === 'SYSTEM_PROMPT' || i.type === 'TOOL_DEFINITIONS');
    let pi = Number.NaN;
    if (prepare) {
      const entries = toPiEntries(items);
      const prep = prepare(entries, {
        enabled: true,
        reserveTokens: window - target,
        keepRecentTokens: target - PEER_SUMMARY_TOKENS,
      });
      if (!prep) pi = sum(items);
      else {
        const from = entries.findIndex((e) => e.id === prep.firstKeptEntryId);
        const kept = entries.slice(Math.max(0, from)).map((e) => byId.get(e.id));
        const summarized = prep.messagesToSummarize.length > 0 || prep.isSplitTurn;
        pi =
          sum(system) +
          sum(kept.filter((i): i is ContextItem => i !== undefined)) +
          (summarized ? PEER_SUMMARY_TOKENS : 0);
      }
    }
    let trim = Number.NaN;
    try {
      const kept = await langChainTrim(await toLangChain(items), tokensById, target, 'human');
      trim = sum(kept.map((id) => byId.get(id)).filter((i): i is ContextItem => i !== undefined));
    } catch (err) {
      note ||= `LangChain not available: ${(err as Error).message.split('\n')[0]}`;
    }
    out.push({ pi, trim, note });
  }
  return out;
}
