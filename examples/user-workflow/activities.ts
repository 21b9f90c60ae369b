/** Your activities: your own model call and your own tool. */
import OpenAI from 'openai';
import { CLAIM, type Claimed } from 'durable-compaction';
import type {
  AssistantMessage,
  ChatMessage,
  ToolDefinition,
} from 'durable-compaction/workflows/stored-conversation';

const openai = new OpenAI({
  baseURL: process.env.OPENAI_BASE_URL,
  apiKey: process.env.OPENAI_API_KEY ?? 'unset',
});

/** One chat completion. Its message is conversation text: marked, so it travels by reference. */
export async function callAgentModel(
  input: Claimed & { model: string; messages: ChatMessage[]; tools: ToolDefinition[] },
): Promise<Claimed & { message: AssistantMessage }> {
  const completion = await openai.chat.completions.create({
    model: input.model,
    messages: input.messages as OpenAI.ChatCompletionMessageParam[],
    ...(input.tools.length > 0 ? { tools: input.tools as OpenAI.ChatCompletionTool[] } : {}),
  });
  const message = completion.choices[0]?.message;
  if (!message) throw new Error('the model answered no choice');
  return { ...CLAIM, message: message as AssistantMessage };
}

/** The tool: a page of text (a stand-in for a real fetch). */
export async function fetchPage(input: { arguments: string }): Promise<Claimed & { content: string }> {
  const { url } = JSON.parse(input.arguments) as { url: string };
  return { ...CLAIM, content: `Contents of ${url}: ${'lorem ipsum dolor sit amet '.repeat(200)}` };
}
