/**
 * A user's own agent-loop workflow, shaped like the usual agent loop on Temporal (model activity →
 * tool activities → again, until the model answers without tool calls), that keeps its messages in
 * our store and compacts them with `compactConversation` (issue 26 item 4) — written only against
 * what a user imports: the stored-conversation helpers and our compaction child.
 *
 * This file is the user's workflows file: it exports their workflow and our `compaction`, and a
 * worker bundles it with `createWorker({ workflowsPath })`. Their activities are in
 * ./agent-loop-activities.ts. Used by test/integration/compaction/user-workflow.test.ts.
 */
import { proxyActivities } from '@temporalio/workflow';
import {
  CLAIM,
  compactConversation,
  needsCompaction,
  storedConversation,
  type CompactionResult,
  type StoredMessage,
  type ToolDefinition,
} from '../../../workflows/stored-conversation';
import type * as userActivities from './agent-loop-activities';

// Our compaction child runs on this worker: the user's workflows file exports it.
export { compaction } from '../../../workflows';

const user = proxyActivities<typeof userActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

export const TOOLS: ToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: 'fetch_page',
      description: 'Fetch a web page as text.',
      parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
    },
  },
];

export interface UserAgentLoopInput {
  conversationId: string;
  /** The user's messages, one turn each. */
  turns: string[];
  model: string;
  /** The compaction configuration (the window at least). */
  config: Record<string, unknown>;
  /** Model calls per turn at most. */
  maxSteps?: number;
}

/** Small figures of each compaction, and how many model calls the loop made. */
export interface UserAgentLoopResult {
  compactions: Pick<
    CompactionResult,
    'status' | 'tokensBefore' | 'tokensAfter' | 'summaryItemId' | 'reason' | 'failedPhase' | 'trigger' | 'seq'
  >[];
  modelCalls: number;
}

export async function userAgentLoop(input: UserAgentLoopInput): Promise<UserAgentLoopResult> {
  const { conversationId, model, config } = input;
  const result: UserAgentLoopResult = { compactions: [], modelCalls: 0 };
  await storedConversation.openStoredConversation({
    ...CLAIM,
    conversationId,
    systemPrompt: 'You are a research agent. Use fetch_page to read pages.',
    tools: TOOLS,
    model,
  });
  for (const turn of input.turns) {
    let totals = await storedConversation.appendStoredMessages({
      ...CLAIM,
      conversationId,
      messages: [{ role: 'user', content: turn }],
      model,
    });
    for (let step = 0; step < (input.maxSteps ?? 8); step++) {
      // Before each model call, as the agent conversation does: compact when the context is full.
      if (needsCompaction(totals, config)) {
        const compacted = await compactConversation({ conversationId, model, config, trigger: 'precheck' });
        const { status, tokensBefore, tokensAfter, summaryItemId, reason, failedPhase, trigger, seq } =
          compacted;
        result.compactions.push({
          status,
          tokensBefore,
          tokensAfter,
          summaryItemId,
          reason,
          failedPhase,
          trigger,
          seq,
        });
      }
      const context = await storedConversation.readStoredContext({ conversationId });
      result.modelCalls += 1;
      const { message } = await user.callAgentModel({
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
        const { content } = await user.runUserTool({
          name: call.function.name,
          arguments: call.function.arguments,
        });
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
