/**
 * The newcomer's demo: replays the project's sample session (samples/sample-session.json) through
 * the agent conversation workflow with a recorded model, a small window and the extractive
 * summarizer, printing each round's usage and every compaction as it happens.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { importSession } from '../importers';
import { loadCompactionConfig } from '../infra/config-sources';
import { tokenCounterForModel } from '../tokens';
import { Recording } from '../../activities/recordings';
import {
  CLAIM,
  endUpdate,
  eventsQuery,
  messageBody,
  sendMessageUpdate,
  type AgentConversationInput,
  type ConversationEvent,
} from '../../workflows/definitions';
import { formatEvent, formatUsage } from './format';
import { newUpdateId } from '../update-ids';

export const SAMPLE_SESSION = join(__dirname, '..', '..', 'samples', 'sample-session.json');

export async function runDemo(options: {
  client: Client;
  taskQueue: string;
  uiUrl: string | null;
  log: (line: string) => void;
  window?: number;
  /** The compaction config file (default: DC_COMPACTION_CONFIG). */
  configFile?: string;
}): Promise<{ conversationId: string; compactions: number }> {
  const { client, log } = options;
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
  const handle = await client.workflow.start('agentConversation', {
    workflowId: conversationId,
    taskQueue: options.taskQueue,
    args: [{ ...CLAIM, ...input }],
  });
  log(`conversation ${conversationId} (window ${window.toLocaleString('en-US')} tokens)`);
  if (options.uiUrl)
    log(`  watch it: ${options.uiUrl}/namespaces/default/workflows/${encodeURIComponent(conversationId)}`);
  let seen = 0;
  let compactions = 0;
  for (const [i, message] of recording.userMessages.entries()) {
    const result = await handle.executeUpdate(sendMessageUpdate, {
      updateId: newUpdateId(),
      args: [messageBody(message)],
    });
    log(`round ${i + 1}: ${message.slice(0, 70)}`);
    const events: ConversationEvent[] = await handle.query(eventsQuery, { since: seen });
    seen += events.length;
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
  await handle.executeUpdate(endUpdate);
  log(`done: ${recording.userMessages.length} rounds, ${compactions} compactions.`);
  return { conversationId, compactions };
}
