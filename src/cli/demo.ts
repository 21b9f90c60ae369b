/**
 * The newcomer's demo: replays the project's sample session (samples/sample-session.json) through
 * the agent conversation workflow with a recorded model, a small window and the extractive
 * summarizer, printing each round's usage and every compaction as it happens.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { importSession } from '../importers';
import { loadCompactionConfig } from '../infra/config-sources';
import { tokenCounterForModel } from '../tokens';
import { Recording } from '../../activities/recordings';
import type { AgentConversationInput, ConversationEvent } from '../../workflows/definitions';
import type { ConversationClient } from '../client';
import { formatEvent, formatUsage } from './format';

export const SAMPLE_SESSION = join(__dirname, '..', '..', 'samples', 'sample-session.json');

export async function runDemo(options: {
  /** The client to run it through; it starts the conversation on its task queue. */
  conversations: ConversationClient;
  uiUrl: string | null;
  log: (line: string) => void;
  window?: number;
  /** The compaction config file (default: DC_COMPACTION_CONFIG). */
  configFile?: string;
}): Promise<{ conversationId: string; compactions: number }> {
  const { conversations, log } = options;
  const text = readFileSync(SAMPLE_SESSION, 'utf8');
  const recording = new Recording(
    importSession(text, { fileName: SAMPLE_SESSION, tokenizer: tokenCounterForModel('gpt-4o') }).items,
  );
  const conversationId = `demo-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const window = options.window ?? 6000;
  const input: AgentConversationInput = {
    conversationId,
    systemPrompt: recording.systemPrompt ?? 'You are a coding agent.',
    tools: ['read_file', 'list_directory', 'search_text', 'write_file', 'remember', 'update_tasks', 'pin'],
    model: { provider: 'recorded', model: 'gpt-4o', recordingPath: SAMPLE_SESSION },
    // The demo's window and summarizer win; everything else comes from DC_COMPACTION_CONFIG and the
    // environment (seed 001's variables, DC_<KEY>), validated before anything starts.
    config: loadCompactionConfig({
      ...(options.configFile !== undefined ? { file: options.configFile } : {}),
      overrides: { maxContextTokens: window, summarizer: 'extractive', cooldownMs: 2000 },
    }) as unknown as Record<string, unknown>,
  };
  await conversations.start(input);
  log(`conversation ${conversationId} (window ${window.toLocaleString('en-US')} tokens)`);
  if (options.uiUrl)
    log(`  watch it: ${options.uiUrl}/namespaces/default/workflows/${encodeURIComponent(conversationId)}`);
  let cursor = 0;
  let compactions = 0;
  for (const [i, message] of recording.userMessages.entries()) {
    const result = await conversations.send(conversationId, message);
    log(`round ${i + 1}: ${message.slice(0, 70)}`);
    const page = await conversations.events(conversationId, { since: cursor });
    const events: ConversationEvent[] = page.events;
    cursor = page.next;
    // The compactions that ran before the reply was written are printed before it.
    const beforeReply = new Set(
      result.compactions.slice(0, result.compactionsBeforeReply ?? 0).map((c) => c.seq),
    );
    const ranBefore = (event: ConversationEvent): boolean => 'seq' in event && beforeReply.has(event.seq);
    const print = (event: ConversationEvent): void => {
      const line = formatEvent(event);
      if (line) log(`  ${line}`);
      if (event.type === 'context_compacted') compactions++;
    };
    events.filter(ranBefore).forEach(print);
    log(`  ↳ ${result.reply.slice(0, 90)}  [${formatUsage(result.contextTokens, result.window)}]`);
    events.filter((e) => !ranBefore(e)).forEach(print);
  }
  await conversations.end(conversationId);
  log(`done: ${recording.userMessages.length} rounds, ${compactions} compactions.`);
  return { conversationId, compactions };
}
