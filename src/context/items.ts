/**
 * The context model: typed, token-counted items in two segments (seed 002's context IR).
 *
 * Every item carries an OpenAI-shaped message (or, for TOOL_DEFINITIONS, the tool list), so
 * `lower()` can produce the exact request sent to the model. Items are immutable: a truncated or
 * summarized form is a new item whose `sourceId` points at the original.
 *
 * Pure module: imported by workflows and activities alike.
 */

/** A tool call as the OpenAI chat API shapes it. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A tool definition as the OpenAI chat API shapes it. */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** A content part of a user message (text only is counted; other parts are kept verbatim). */
export type ContentPart = { type: 'text'; text: string } | { type: string; [key: string]: unknown };

export interface SystemMessage {
  role: 'system';
  content: string;
  name?: string;
}
export interface UserMessage {
  role: 'user';
  content: string | ContentPart[];
  name?: string;
}
export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  tool_calls?: ToolCall[];
  /** Reasoning text some providers return beside the content; kept for fidelity, never sent back. */
  reasoning_content?: string;
  name?: string;
}
export interface ToolMessage {
  role: 'tool';
  content: string;
  tool_call_id: string;
  /** Not part of the OpenAI request; kept so importers round-trip formats that name the tool. */
  name?: string;
}
export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** Every item type. The order here is documentation only; priorities live in the config rules. */
export const ITEM_TYPES = [
  'SYSTEM_PROMPT',
  'TOOL_DEFINITIONS',
  'SUBAGENT_STRATEGY',
  'SKILL_PROMPT',
  'SKILL_METADATA',
  'USER_MESSAGE',
  'ASSISTANT_MESSAGE',
  'TOOL_RESULT',
  'COMPACTION_SUMMARY',
  'MEMORY',
  'TASK_LIST',
  'ARTIFACT_TRAIL',
  'OPEN_ERRORS',
  'GIT_DIFF_STAT',
] as const;
export type ItemType = (typeof ITEM_TYPES)[number];

/** Fields every item has. */
export interface ItemBase {
  /** Unique id (uuid made in the workflow, or derived deterministically by an importer). */
  id: string;
  /** Token count of this item as sent (content + per-message overhead), counted once at append. */
  tokens: number;
  /** Round number: a round starts at a real (non-meta) user message; header items have round 0. */
  round: number;
  /** A meta message (injected by the system, not typed by the user) never starts a round (seed 003). */
  isMeta: boolean;
  /** Pinned content (`<Pin>` in seed 001) is never compacted. */
  pinned: boolean;
  /** An ephemeral item goes into the next model call only and is gone after it (seed 002). */
  ephemeral: boolean;
  /** For a truncated or summarized form: the id of the item it replaces. */
  sourceId?: string;
  /** For an imported item: what the source format held beyond the message (see {@link ItemOrigin}). */
  origin?: ItemOrigin;
  /**
   * What a compaction reads of the item besides its tokens, worked out once when it is stored, like
   * `tokens` (`item-facts.ts`); absent on items stored before: then worked out when needed.
   */
  facts?: ItemFacts;
}

/** What a tool call does, read off its name and arguments once (`item-facts.ts`). */
export interface CallFacts {
  /** Files it touches, each with its operation (read, write, edit, delete, list, search, use). */
  touches: { path: string; op: string }[];
  /** The shell command it runs, or null. */
  command: string | null;
  /** An edit that names no file: it applies to the file opened before it. */
  editsOpenFile?: true;
  /** A shell command that only prints files or searches them: what it prints is theirs, not its errors. */
  printsOnly?: true;
  /** What it was applied to (a path or a command's first words; '' when nothing). */
  target: string;
  /** The note it makes when it is a task-list, memory or pin tool, or null. */
  note: CallNote | null;
  /**
   * Tokens of its arguments, counted with the conversation's tokenizer when the item was stored
   * (absent on items stored before: counted when a cut needs them).
   */
  argumentTokens?: number;
}

/** A task of a task list (`agent-notes.ts`). */
export interface Task {
  title: string;
  status: string;
}

/** A note a tool call makes (`agent-notes.ts`). */
export type CallNote = { kind: 'memory' | 'pin'; text: string } | { kind: 'task_list'; tasks: Task[] };

/** Facts of an item, by type. */
export interface ItemFacts {
  /** An assistant message: one per tool call, in order. */
  calls?: CallFacts[];
  /** A tool result: the error it reports (null: none). */
  error?: string | null;
  /**
   * An assistant message with tool calls: the tokens of its text and its calls' names, counted
   * with the conversation's tokenizer (what is left of its count when the arguments are cut).
   */
  framingTokens?: number;
}

/** The session formats the importers read and the exporters write (`src/importers/`). */
export const SESSION_FORMATS = [
  'openai',
  'anthropic',
  'swe-agent',
  'pi',
  'claude-code',
  'codex',
  'openhands',
  'gemini',
  'opencode',
] as const;
export type SessionFormat = (typeof SESSION_FORMATS)[number];

/**
 * Where an imported item came from. The item's message is OpenAI-shaped; `fields` keeps, as plain
 * JSON, everything of the source entry that shape cannot hold (SWE-agent's `thought`, `action`,
 * `agent`; pi's entry envelope, `usage`, `stopReason`, block layout; ...), so the exporter of the
 * same format writes the entry back without loss. Never sent to the model, never counted.
 */
export interface ItemOrigin {
  format: SessionFormat;
  /** Position in the source: message index (JSON formats) or entry index (JSONL formats). */
  index: number;
  /** Format-specific side fields, JSON values only (the importer of `format` defines them). */
  fields: Record<string, unknown>;
}

export interface SystemPromptItem extends ItemBase {
  type: 'SYSTEM_PROMPT' | 'SUBAGENT_STRATEGY' | 'SKILL_PROMPT' | 'SKILL_METADATA';
  message: SystemMessage | UserMessage;
}
export interface ToolDefinitionsItem extends ItemBase {
  type: 'TOOL_DEFINITIONS';
  tools: ToolDefinition[];
}
export interface UserMessageItem extends ItemBase {
  type: 'USER_MESSAGE';
  message: UserMessage;
}
export interface AssistantMessageItem extends ItemBase {
  type: 'ASSISTANT_MESSAGE';
  message: AssistantMessage;
}
export interface ToolResultItem extends ItemBase {
  type: 'TOOL_RESULT';
  message: ToolMessage;
}
export interface CompactionSummaryItem extends ItemBase {
  type: 'COMPACTION_SUMMARY';
  message: UserMessage;
  /** Which summarizer wrote it: an LLM, or the extractive summarizer (labelled as such). */
  summarizer: 'llm' | 'extractive';
}
/**
 * Notes that live in the header: memories, the task list, and the carried state a compaction writes
 * (the artifact trail, the open errors, the workspace's git diff stat; `carried-state.ts`).
 */
export interface NoteItem extends ItemBase {
  type: 'MEMORY' | 'TASK_LIST' | 'ARTIFACT_TRAIL' | 'OPEN_ERRORS' | 'GIT_DIFF_STAT';
  message: UserMessage | SystemMessage;
  /**
   * For carried state: the structured data the text was rendered from, so the next compaction
   * merges it instead of parsing the text. Never sent to the model (the message is).
   */
  carried?: CarriedData;
}

/** A file the conversation touched, as the artifact trail keeps it (`artifact-trail.ts`). */
export interface FileTouch {
  path: string;
  /** Operations seen, in first-seen order: read, write, edit, delete, list, search. */
  ops: string[];
  /** Round of the last tool call that touched it. */
  lastRound: number;
  /** The recall handle of that call's result (issue 24); absent in trails written before recall. */
  handle?: string;
  /**
   * Tokens of its line in the trail's text with the line break after it, counted with the
   * conversation's tokenizer by the compaction that wrote the trail; later compactions reuse it
   * while the file is not touched again (absent: counted when needed).
   */
  tokens?: number;
  /**
   * Tokens of its entry in the trail's list of older paths when another follows it (` src/a.ts,`
   * after a space), counted like {@link tokens}. It depends on the path alone: it stays when the
   * file is touched again.
   */
  listTokens?: number;
}

/** A shell command the conversation ran, as the artifact trail keeps it (`artifact-trail.ts`). */
export interface TrailCommand {
  command: string;
  round: number;
  /**
   * Tokens of its entry in the trail's line of commands when another follows it
   * (`` `npm test` (round 4);`` after a space), counted like {@link FileTouch.tokens}.
   */
  tokens?: number;
}

/** An error a tool reported that no later step resolved (`open-errors.ts`). */
export interface OpenError {
  /** The tool that failed. */
  tool: string;
  /** What it was applied to (a path or a command), '' when nothing: a later success on it resolves the error. */
  target: string;
  round: number;
  /** The error's first line (cut). */
  text: string;
  /**
   * The call that failed, whole (its command, else its target), when known: a later failure of the
   * same call replaces the error. Absent on errors read back from text.
   */
  call?: string;
}

/** Structured carried state, by kind. */
export type CarriedData =
  | { kind: 'artifact_trail'; files: FileTouch[]; commands: TrailCommand[]; workspace?: string }
  | { kind: 'open_errors'; errors: OpenError[] };

export type ContextItem =
  | SystemPromptItem
  | ToolDefinitionsItem
  | UserMessageItem
  | AssistantMessageItem
  | ToolResultItem
  | CompactionSummaryItem
  | NoteItem;

/** Items that carry a chat message (everything but TOOL_DEFINITIONS). */
export type MessageItem = Exclude<ContextItem, ToolDefinitionsItem>;

export function isMessageItem(item: ContextItem): item is MessageItem {
  return item.type !== 'TOOL_DEFINITIONS';
}

/** The user's text of a message, or '' (content parts other than text are not text). */
export function messageText(message: ChatMessage): string {
  const content = message.content;
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
    .join('');
}
