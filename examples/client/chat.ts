/**
 * A client script: start a conversation on the workers' task queue, send it messages, compact it,
 * read its status and events, and end it — each call typed, each failure a typed error.
 *
 *   TEMPORAL_ADDRESS=localhost:7233 DATABASE_URL=postgres://… npx tsx chat.ts
 */
import { ConversationClient, ConversationNotFoundError } from 'durable-compaction';

async function main(): Promise<void> {
  const conversations = await ConversationClient.connect({
    address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
    // The workers' PostgreSQL: message bodies travel by reference through it.
    databaseUrl: process.env.DATABASE_URL,
    taskQueue: process.env.TASK_QUEUE ?? 'durable-compaction',
  });
  try {
    const { conversationId } = await conversations.start({
      systemPrompt: 'You are a careful assistant. Count words with the word_count tool.',
      tools: ['word_count'],
      model: { provider: 'openai', model: process.env.MODEL ?? 'gpt-4o-mini' },
      config: { maxContextTokens: 16_000 },
    });
    console.log(`started ${conversationId}`);

    const questions = [
      'How many words are in "durable context compaction"?',
      'What does compaction keep?',
      'Thank you.',
    ];
    for (const question of questions) {
      const round = await conversations.send(conversationId, question);
      console.log(`reply: ${round.reply}`);
    }

    const brief = await conversations.compact(conversationId, { focus: 'the word count' });
    console.log(
      `compaction #${brief.seq}: ${brief.status}, ${brief.tokensBefore} -> ${brief.tokensAfter} tokens`,
    );

    const status = await conversations.status(conversationId);
    console.log(
      `status: ${status.rounds} rounds, ${status.contextTokens} of ${status.window} tokens, ${status.compactions} compactions`,
    );

    const { events } = await conversations.events(conversationId);
    console.log(`events: ${events.map((e) => e.type).join(', ')}`);

    const ended = await conversations.end(conversationId);
    console.log(`ended after ${ended.rounds} rounds`);

    try {
      await conversations.status('no-such-conversation');
    } catch (err) {
      if (!(err instanceof ConversationNotFoundError)) throw err;
      console.log(`typed error: ${err.name} (${err.type})`);
    }
  } finally {
    await conversations.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
