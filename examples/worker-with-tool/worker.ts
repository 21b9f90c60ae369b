/**
 * A worker with a tool of your own: it runs durable-compaction's workflows and activities on your
 * task queue, and the agent may call `word_count` like a built-in tool (arguments checked against
 * the schema, a timeout, the output capped, errors returned to the model as tool errors).
 *
 *   TEMPORAL_ADDRESS=localhost:7233 DATABASE_URL=postgres://… OPENAI_API_KEY=… npx tsx worker.ts
 */
import { NativeConnection } from '@temporalio/worker';
import { createWorker, defineTool } from 'durable-compaction/worker';
import { z } from 'zod';

const wordCount = defineTool({
  name: 'word_count',
  description: 'Count the words of a text.',
  parameters: z.object({ text: z.string().describe('The text whose words to count') }),
  run: ({ text }) => `${text.trim().split(/\s+/).filter(Boolean).length} words`,
  timeoutMs: 5_000,
});

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('set DATABASE_URL to the PostgreSQL the conversations are kept in');
  const connection = await NativeConnection.connect({
    address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
  });
  const worker = await createWorker({
    connection,
    databaseUrl,
    taskQueue: process.env.TASK_QUEUE ?? 'durable-compaction',
    // Any OpenAI-compatible endpoint; a field left out is read from OPENAI_BASE_URL / OPENAI_API_KEY.
    llm: { baseURL: process.env.OPENAI_BASE_URL },
    tools: [wordCount],
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
  console.log(`worker ready on task queue ${worker.options.taskQueue}`);
  await worker.run();
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
