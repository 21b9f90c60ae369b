/**
 * The activities of the worker, built from the process's dependencies (store, LLM client, tools).
 * Workflows import only the types (activities/types.ts).
 */
import type { Pool } from 'pg';
import type OpenAI from 'openai';
import { importSession } from '../src/importers';
import { createLlmClient } from '../src/llm';
import { ConversationStore } from '../src/store';
import { tokenCounterForModel } from '../src/tokens';
import { countItemTokens } from '../src/context/token-accounting';
import { compactionActivities } from './compaction';
import { conversationActivities } from './conversation';
import type { ActivityDeps, TokenService } from './deps';
import { RecordingLibrary } from './recordings';
import { reviewActivities } from './review';
import { smokeActivities } from './smoke';
import { BUILTIN_TOOLS } from './tools/builtin';
import { ToolRegistry, type AgentTool } from './tools/registry';

export type { ActivityDeps } from './deps';
export type { AgentTool, ToolOutput, ToolContext } from './tools/registry';
export { ToolError } from './tools/registry';

export interface CreateActivitiesOptions {
  pool: Pool;
  /** The LLM endpoint (from the worker's environment; never from workflow arguments). */
  llm?: { apiKey?: string; baseURL?: string; timeoutMs?: number };
  /** Extra tools besides the built-in ones. */
  tools?: AgentTool[];
}

/** Token counting per model encoding, cached. */
export const tokenService: TokenService = {
  forModel(model: string) {
    const counter = tokenCounterForModel(model);
    return {
      countItem: (item) => countItemTokens(item, counter),
      countText: (text) => counter.countText(text),
      truncate: (text, maxTokens) => counter.truncate(text, maxTokens),
      prefix: (text, maxTokens) => counter.prefix(text, maxTokens),
    };
  },
};

export function createActivities(options: CreateActivitiesOptions) {
  const llmSettings = options.llm ?? {
    apiKey: process.env.OPENAI_API_KEY,
    baseURL: process.env.OPENAI_BASE_URL,
    timeoutMs: process.env.LLM_TIMEOUT_MS ? Number(process.env.LLM_TIMEOUT_MS) : undefined,
  };
  let client: OpenAI | null = null;
  const llm = (): OpenAI => {
    client ??= createLlmClient({
      apiKey: llmSettings.apiKey || 'not-set',
      ...(llmSettings.baseURL ? { baseURL: llmSettings.baseURL } : {}),
      ...(llmSettings.timeoutMs ? { timeoutMs: llmSettings.timeoutMs } : {}),
    });
    return client;
  };
  const deps: ActivityDeps = {
    store: new ConversationStore(options.pool),
    tokens: tokenService,
    tools: new ToolRegistry([...BUILTIN_TOOLS, ...(options.tools ?? [])]),
    llm,
    recordings: new RecordingLibrary(
      (text, fileName) => importSession(text, { fileName, tokenizer: tokenCounterForModel('gpt-4o') }).items,
    ),
  };
  return {
    ...conversationActivities(deps),
    ...compactionActivities(deps),
    ...reviewActivities(deps),
    ...smokeActivities({ pool: options.pool, llm }),
  };
}
