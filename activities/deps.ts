import type OpenAI from 'openai';
import type { ContextItem } from '../src/context/items';
import type { Tokenizer } from '../src/context/tokenizer';
import type { ConversationStore } from '../src/store';
import type { RecordingLibrary } from './recordings';
import type { ToolRegistry } from './tools/registry';

/** Token counting for the encoding of a model. */
export interface TokenService {
  forModel(model: string): Tokenizer & { countItem(item: ContextItem): number };
}

/** What the activities need from the worker process. Secrets stay here, never in workflow arguments. */
export interface ActivityDeps {
  store: ConversationStore;
  tokens: TokenService;
  tools: ToolRegistry;
  /** The OpenAI-compatible client (key and base URL from the worker's environment). */
  llm: () => OpenAI;
  recordings: RecordingLibrary;
}
