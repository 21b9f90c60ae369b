/**
 * Inputs and results of the stored-conversation activities (issue 26 item 4): what a workflow of
 * your own calls to keep its messages in our store, read its context back and run our compaction
 * child on it (`compactConversation`, workflows/user-compaction.ts). Workflows import these as
 * types only.
 *
 * Messages are OpenAI chat messages. They are conversation text: spread {@link CLAIM} into an input
 * that carries them, and the worker's claim-check codec keeps them out of workflow history (the
 * results that carry text are marked already).
 */
import type { Claimed } from '../src/claim';
import type {
  AssistantMessage,
  ChatMessage,
  ToolDefinition,
  ToolMessage,
  UserMessage,
} from '../src/context/items';
import type { Totals } from './types';

export type { Claimed } from '../src/claim';
export type { ChatMessage, ToolCall, ToolDefinition } from '../src/context/items';

/** A message a workflow appends: the user's, the model's (with its tool calls) or a tool result. */
export type StoredMessage = UserMessage | AssistantMessage | ToolMessage;

export interface OpenStoredConversationInput extends Claimed {
  /** 1–128 letters, digits, `.`, `_`, `:` or `-`, starting with a letter or digit. */
  conversationId: string;
  /** Never compacted. Empty or absent: none. */
  systemPrompt?: string;
  /** The tools the model is offered, as OpenAI function tools; never compacted. */
  tools?: ToolDefinition[];
  /** The model whose encoding counts tokens (the one the workflow calls). */
  model: string;
}

export interface AppendStoredMessagesInput extends Claimed {
  conversationId: string;
  messages: StoredMessage[];
  /** The model whose encoding counts the messages' tokens. */
  model: string;
}

/** The context's totals after an append, and the ids the messages were stored with. */
export interface AppendStoredMessagesResult extends Totals {
  itemIds: string[];
  /** The conversation's last round: each user message starts one. */
  round: number;
}

/** The active context as the model is sent it. */
export interface StoredContext extends Claimed, Totals {
  /** System prompt and header notes first, then the conversation; tool calls and results paired. */
  messages: ChatMessage[];
  /** The tools of the header: the ones given at open, and `recall` once a compaction offers it. */
  tools: ToolDefinition[];
}

/** The number the conversation's next compaction gets, its last round, and the context's totals. */
export interface StoredCompactionStart extends Totals {
  seq: number;
  round: number;
}

export interface RecallStoredArchiveInput extends Claimed {
  conversationId: string;
  /** The `recall` call's arguments, as the model wrote them (JSON text). */
  arguments: string;
  /** The model whose encoding pages long items. */
  model: string;
  /** The compaction configuration the conversation is compacted with (recall's page size and limit). */
  config?: Record<string, unknown>;
}

/** What the model reads as the `recall` call's result: append it as the call's tool message. */
export interface RecallStoredArchiveResult extends Claimed {
  content: string;
  isError?: true;
}

/**
 * The activities a workflow of your own calls, registered by `createWorker` (and `createActivities`).
 * Every write is idempotent: a retried append stores its messages once.
 */
export interface StoredConversationActivities {
  /** Creates the conversation with its header (system prompt, tools); opening it again changes nothing. */
  openStoredConversation(input: OpenStoredConversationInput): Promise<Totals>;
  /**
   * Appends messages to the archive and the active context, counting their tokens. A tool result
   * must answer a call of a message before it (in this batch or the context): otherwise
   * `TOOL_CALL_NOT_FOUND`; a message of another shape is `MESSAGE_INVALID` (neither is retried).
   */
  appendStoredMessages(input: AppendStoredMessagesInput): Promise<AppendStoredMessagesResult>;
  /** The active context as OpenAI messages and tools, ready for a chat completion request. */
  readStoredContext(input: { conversationId: string }): Promise<StoredContext>;
  /** What `compactConversation` starts a compaction with: its number, and the context now. */
  prepareStoredCompaction(input: { conversationId: string }): Promise<StoredCompactionStart>;
  /** Runs a call of the built-in `recall` tool, which a compaction offers when `recall` is on. */
  recallStoredArchive(input: RecallStoredArchiveInput): Promise<RecallStoredArchiveResult>;
}

export type { Totals };
