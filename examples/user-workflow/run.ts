/**
 * Starts your workflow and prints what its compactions did. The client carries the claim-check
 * codec (message bodies by reference), so it is built with `ConversationClient.connect`.
 */
import { ConversationClient } from 'durable-compaction';
import type { research } from './workflows';

async function main(): Promise<void> {
  const conversations = await ConversationClient.connect({
    address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
    databaseUrl: process.env.DATABASE_URL,
  });
  try {
    const conversationId = `research-${Date.now()}`;
    const result = await conversations.temporal.workflow.execute<typeof research>('research', {
      taskQueue: process.env.TASK_QUEUE ?? 'research',
      workflowId: conversationId,
      args: [
        {
          conversationId,
          model: process.env.MODEL ?? 'gpt-4o-mini',
          questions: ['Read https://example.com/a and https://example.com/b, then compare them.'],
          config: { maxContextTokens: 2_000 },
        },
      ],
    });
    console.log(`model calls: ${result.modelCalls}`);
    for (const c of result.compactions)
      console.log(`compaction: ${c.status}, ${c.tokensBefore} -> ${c.tokensAfter} tokens`);
  } finally {
    await conversations.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
