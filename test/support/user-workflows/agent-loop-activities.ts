/**
 * The activities of the user's agent loop (./agent-loop.ts): their own model call and their own
 * tool, registered with `createWorker({ activities })`. The model call goes to the fake OpenAI
 * server of the test (`configureUserActivities`).
 */
import OpenAI from 'openai';
import { CLAIM, type Claimed } from '../../../src/claim';
import type { AssistantMessage, ChatMessage, ToolDefinition } from '../../../src/context/items';

let client: OpenAI | null = null;
let page: (url: string) => string = (url) => `contents of ${url}`;

/** Points the model call at `baseURL` and sets what `fetch_page` returns. */
export function configureUserActivities(options: {
  baseURL: string;
  apiKey: string;
  page?: (url: string) => string;
}): void {
  client = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey, maxRetries: 0 });
  if (options.page) page = options.page;
}

/** One chat completion: the assistant message, as the API shapes it (bodies by reference, CLAIM). */
export async function callAgentModel(
  input: Claimed & { model: string; messages: ChatMessage[]; tools: ToolDefinition[] },
): Promise<Claimed & { message: AssistantMessage }> {
  if (!client) throw new Error('configureUserActivities was not called');
  const completion = await client.chat.completions.create({
    model: input.model,
    messages: input.messages as OpenAI.ChatCompletionMessageParam[],
    ...(input.tools.length > 0 ? { tools: input.tools as OpenAI.ChatCompletionTool[] } : {}),
  });
  const message = completion.choices[0]?.message;
  if (!message) throw new Error('the model answered no choice');
  return { ...CLAIM, message: message as AssistantMessage };
}

/** The user's tool. */
export async function runUserTool(input: {
  name: string;
  arguments: string;
}): Promise<Claimed & { content: string }> {
  if (input.name !== 'fetch_page') return { ...CLAIM, content: `Error: unknown tool ${input.name}` };
  const { url } = JSON.parse(input.arguments) as { url: string };
  return { ...CLAIM, content: page(url) };
}
