/**
 * Figure 7: effect of compaction on a real session. pi-large-session replayed through the
 * agentConversation workflow (the recorded model plays the assistant turns and tool results back)
 * with a 32k window and the extractive summarizer: each compaction's tokens before and after, the
 * items kept verbatim, and how many of the file paths touched in the compacted span are still in
 * the context after it (the carried artifact trail, the summary or the kept items).
 */
import { Recording } from '../activities/recordings';
import { collectArtifactTrail } from '../src/context/artifact-trail';
import { contextText } from '../src/eval/metrics';
import type { BenchEnv } from './bench-env';
import { loadSession, sessionPath } from './fixtures';
import type { Figure } from './report';
import { fmt } from './stats';

const SESSION = 'pi-large-session.jsonl';
const WINDOW = 32_000;

interface CompactionRow {
  seq: number;
  strategy: string | null;
  tokensBefore: number;
  tokensAfter: number;
  savedRatio: number;
  itemsBefore: number;
  keptVerbatim: number;
  keptCut: number;
  compactedItems: number;
  pathsTouched: number;
  pathsInContext: number;
}

export async function realSessionFigure(env: BenchEnv, maxRounds: number | null): Promise<Figure> {
  const imported = loadSession(SESSION);
  const recording = new Recording(imported);
  const messages = maxRounds === null ? recording.userMessages : recording.userMessages.slice(0, maxRounds);
  const taskQueue = `bench-replay-${Date.now()}`;
  const worker = await env.startWorker(taskQueue);
  const started = Date.now();
  const rows: CompactionRow[] = [];
  try {
    const conv = await env.startConversation(taskQueue, {
      name: 'bench-pi-replay',
      systemPrompt: recording.systemPrompt ?? 'You are a coding agent.',
      model: { provider: 'recorded', model: 'gpt-4o', recordingPath: sessionPath(SESSION) },
      config: { maxContextTokens: WINDOW, summarizer: 'extractive' },
      maxStepsPerRound: 200,
    });
    for (const message of messages) await conv.send(message);
    const committed = (await env.store.listCompactions(conv.id)).filter((c) => c.status === 'committed');
    for (const c of committed) {
      const before = await env.store.getVersionItems(conv.id, c.baseVersion);
      const after = c.stagedVersion === null ? [] : await env.store.getVersionItems(conv.id, c.stagedVersion);
      // The committed version keeps growing as later rounds are appended: judge it by what it took from `before`.
      const beforeIds = new Set(before.map((i) => i.id));
      const afterIds = new Set(after.map((i) => i.id));
      const cutSources = new Set(after.filter((i) => i.sourceId !== undefined).map((i) => i.sourceId));
      const compacted = before.filter((i) => !afterIds.has(i.id) && !cutSources.has(i.id));
      const paths = collectArtifactTrail(compacted).files.map((f) => f.path);
      const afterText = contextText(after);
      rows.push({
        seq: c.seq,
        strategy: c.strategy,
        tokensBefore: c.tokensBefore ?? 0,
        tokensAfter: c.tokensAfter ?? 0,
        savedRatio: c.tokensBefore ? 1 - (c.tokensAfter ?? 0) / c.tokensBefore : 0,
        itemsBefore: before.length,
        keptVerbatim: after.filter((x) => beforeIds.has(x.id) && x.type !== 'COMPACTION_SUMMARY').length,
        keptCut: after.filter(
          (x) => x.sourceId !== undefined && beforeIds.has(x.sourceId) && !beforeIds.has(x.id),
        ).length,
        compactedItems: compacted.length,
        pathsTouched: paths.length,
        pathsInContext: paths.filter((p) => afterText.includes(p)).length,
      });
    }
  } finally {
    await worker.stop();
  }
  const seconds = (Date.now() - started) / 1000;
  const touched = rows.reduce((n, r) => n + r.pathsTouched, 0);
  const kept = rows.reduce((n, r) => n + r.pathsInContext, 0);
  const saved = rows.length > 0 ? rows.reduce((n, r) => n + r.savedRatio, 0) / rows.length : NaN;
  return {
    id: '7',
    title: 'Effect of compaction on a real session (pi-large-session)',
    notes: [
      `${messages.length} of ${recording.userMessages.length} user rounds of ${SESSION} replayed through the workflow (recorded ` +
        `model: the session's own assistant turns and tool results), window ${WINDOW.toLocaleString('en-US')}, extractive ` +
        `summarizer (no LLM), in ${fmt(seconds)} s. Items kept verbatim: originals in the context after the compaction; ` +
        '"cut" are tool calls/results kept with their bodies truncated. Compacted span: items of the context before that are ' +
        'in the context after in no form. Paths: files the tool calls of the span touched (src/context/artifact-trail.ts); ' +
        '"in context": the path appears verbatim in the context after the compaction (carried state, summary or kept items).',
      `**${rows.length} compactions, ${(saved * 100).toFixed(0)} % of tokens saved on average, ${kept} of ${touched} touched paths ` +
        `(${touched > 0 ? ((kept / touched) * 100).toFixed(0) : 'n/a'} %) are in the context after the compaction.**`,
    ],
    tables: [
      {
        columns: [
          '#',
          'strategy',
          'tokens before',
          'tokens after',
          'saved',
          'items before',
          'kept verbatim',
          'kept cut',
          'compacted',
          'paths touched',
          'paths in context',
        ],
        rows: rows.map((r) => [
          r.seq,
          r.strategy ?? '',
          r.tokensBefore.toLocaleString('en-US'),
          r.tokensAfter.toLocaleString('en-US'),
          `${(r.savedRatio * 100).toFixed(0)} %`,
          r.itemsBefore,
          r.keptVerbatim,
          r.keptCut,
          r.compactedItems,
          r.pathsTouched,
          r.pathsInContext,
        ]),
      },
    ],
    data: { rows, rounds: messages.length, window: WINDOW, seconds },
  };
}
