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
import { storedConversationActivities } from './stored-conversation';
import { BUILTIN_TOOLS } from './tools/builtin';
import { ToolRegistry, type AgentTool } from './tools/registry';
import { RECALL_TOOL_NAME } from '../src/context/recall-tool';

export type { ActivityDeps } from './deps';
export type { AgentTool, ToolOutput, ToolContext } from './tools/registry';
export { ToolError } from './tools/registry';
export {
  defineTool,
  DEFAULT_MAX_OUTPUT_CHARS,
  DEFAULT_TOOL_TIMEOUT_MS,
  MAX_TOOL_TIMEOUT_MS,
  type DefinedTool,
  type JsonSchema,
  type JsonSchemaToolSpec,
  type ToolCallContext,
  type ToolResultValue,
  type ZodToolSpec,
} from './tools/define-tool';
export type * from './stored-conversation-types';

/**
 * The OpenAI-compatible endpoint the worker's model and summary calls go to. It stays in the worker
 * process: secrets never enter workflow arguments or history. The model's name is not here: each
 * conversation names its own (`model`, `summaryModel` at start).
 */
export interface LlmSettings {
  /** Default: OPENAI_API_KEY. */
  apiKey?: string;
  /** E.g. `http://localhost:11434/v1`. Default: OPENAI_BASE_URL, else OpenAI's. */
  baseURL?: string;
  /** One request's time limit. Default: LLM_TIMEOUT_MS, else the client's (src/llm/client.ts). */
  timeoutMs?: number;
}

export interface CreateActivitiesOptions {
  pool: Pool;
  /** The LLM endpoint; a field left out is read from the environment. */
  llm?: LlmSettings;
  /** Extra tools besides the built-in ones (`defineTool`); a built-in tool's name is refused. */
  tools?: AgentTool[];
}

/** Names the user's tools cannot take: the built-in tools' and recall's. */
export const BUILTIN_TOOL_NAMES: readonly string[] = [...BUILTIN_TOOLS.map((t) => t.name), RECALL_TOOL_NAME];

/**
 * The built-in tools and the user's, as one registry.
 * @throws Error when a user tool takes a built-in tool's name, or two take the same name
 */
export function toolRegistry(tools: readonly AgentTool[] = []): ToolRegistry {
  for (const tool of tools) {
    if (BUILTIN_TOOL_NAMES.includes(tool.name)) {
      throw new Error(
        `tool name ${JSON.stringify(tool.name)} is a built-in tool's (${BUILTIN_TOOL_NAMES.join(', ')}): give your tool another name`,
      );
    }
  }
  return new ToolRegistry([...BUILTIN_TOOLS, ...tools]);
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
  const llmSettings: LlmSettings = {
    apiKey: options.llm?.apiKey ?? process.env.OPENAI_API_KEY,
    baseURL: options.llm?.baseURL ?? process.env.OPENAI_BASE_URL,
    timeoutMs:
      options.llm?.timeoutMs ?? (process.env.LLM_TIMEOUT_MS ? Number(process.env.LLM_TIMEOUT_MS) : undefined),
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
    tools: toolRegistry(options.tools),
    llm,
    recordings: new RecordingLibrary(
      (text, fileName) => importSession(text, { fileName, tokenizer: tokenCounterForModel('gpt-4o') }).items,
    ),
  };
  return {
    ...conversationActivities(deps),
    ...compactionActivities(deps),
    ...reviewActivities(deps),
    ...storedConversationActivities(deps),
    ...smokeActivities({ pool: options.pool, llm }),
  };
}
