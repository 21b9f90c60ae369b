import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeOpenAI, step, type FakeOpenAI } from '../../support/fake-openai';
import { startTestWorker, uniqueId, type TestWorker } from '../../support/harness';

let llm: FakeOpenAI;
let env: TestWorker;

beforeAll(async () => {
  llm = await startFakeOpenAI();
  env = await startTestWorker({ llm: { apiKey: 'sk-smoke-test-key', baseURL: llm.url } });
});
afterAll(async () => {
  await env?.shutdown();
  await llm?.close();
});

it('runs a workflow whose activity writes to and reads from PostgreSQL and calls the LLM', async () => {
  llm.script(step.text('pong'));
  const key = uniqueId('smoke');
  const result = await env.client.workflow.execute('smokeWorkflow', {
    taskQueue: env.taskQueue,
    workflowId: key,
    args: [{ key, model: 'fake-model' }],
  });
  expect(result).toEqual({ stored: key, reply: 'pong' });
  const rows = await env.pool.query('select key from smoke_checks where key = $1', [key]);
  expect(rows.rowCount).toBe(1);
  const requests = llm.chatRequests();
  expect(requests).toHaveLength(1);
  expect(requests[0]?.body.messages?.[0]).toMatchObject({ role: 'user', content: `smoke ${key}` });
  expect(requests[0]?.headers.authorization).toBe('Bearer sk-smoke-test-key');
});
