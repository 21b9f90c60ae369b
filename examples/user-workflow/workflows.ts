/**
 * Your own agent-loop workflow, the usual shape on Temporal (model activity → tool activities →
 * again, until the model answers without tool calls), keeping its messages in durable-compaction's
 * store and compacting them with our compaction child when the context fills up.
 *
 * This is the worker's workflows file: it exports your workflow and our `compaction` child.
 */
import { proxyActivities } from '@temporalio/workflow';
import {
  CLAIM,
  compactConversation,
  needsCompaction,
  storedConversation,
  type StoredMessage,
  type ToolDefinition,
} from 'durable-compaction/workflows/stored-conversation';
import type * as activities from './activities';

// Our compaction child runs on your worker.
export { compaction } from 'durable-compaction/workflows';

const mine = proxyActivities<typeof activities>({ startToCloseTimeout: '1 minute' });

const TOOLS: ToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: 'fetch_page',
      description: 'Fetch a web page as text.',
      parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
    },
  },
];

export interface ResearchInput {
  conversationId: string;
  questions: string[];
  model: string;
  /** The compaction configuration: the window at least. */
  config: { maxContextTokens: number } & Record<string, unknown>;
}

export interface ResearchResult {
  modelCalls: number;
  compactions: { status: string; tokensBefore: number; tokensAfter: number }[];
}

export async function research(input: ResearchInput): Promise<ResearchResult> {
  const { conversationId, model, config } = input;
  const result: ResearchResult = { modelCalls: 0, compactions: [] };
  await storedConversation.openStoredConversation({
    ...CLAIM,
    conversationId,
    systemPrompt: 'You are a research agent. Use fetch_page to read pages.',
    tools: TOOLS,
    model,
  });
  for (const question of input.questions) {
    let totals = await storedConversation.appendStoredMessages({
      ...CLAIM,
      conversationId,
      messages: [{ role: 'user', content: question }],
      model,
    });
    for (let step = 0; step < 8; step++) {
      if (needsCompaction(totals, config)) {
        const { status, tokensBefore, tokensAfter } = await compactConversation({
          conversationId,
          model,
          config,
        });
        result.compactions.push({ status, tokensBefore, tokensAfter });
      }
      const context = await storedConversation.readStoredContext({ conversationId });
      result.modelCalls += 1;
      const { message } = await mine.callAgentModel({
        ...CLAIM,
        model,
        messages: context.messages,
        tools: context.tools,
      });
      totals = await storedConversation.appendStoredMessages({
        ...CLAIM,
        conversationId,
        messages: [message],
        model,
      });
      const calls = message.tool_calls ?? [];
      if (calls.length === 0) break;
      const results: StoredMessage[] = [];
      for (const call of calls) {
        const { content } = await mine.fetchPage({ arguments: call.function.arguments });
        results.push({ role: 'tool', tool_call_id: call.id, content });
      }
      totals = await storedConversation.appendStoredMessages({
        ...CLAIM,
        conversationId,
        messages: results,
        model,
      });
    }
  }
  return result;
}
