/**
 * Claude Code sessions (`~/.claude/projects/<project>/<session>.jsonl`, one line an event).
 *
 * The items are the conversation Claude Code would send next (the chain of `claude-code-path.ts`):
 * - `user` lines: text content (a string, or text and image blocks) → a user message; meta when the
 *   line is `isMeta` or the text is what Claude Code itself writes (a slash command's
 *   `<command-name>` and `<local-command-stdout>`, a `!` shell command's `<bash-input>` and
 *   `<bash-stdout>`, `[Request interrupted by user]`: no task, and no round of its own); a text block
 *   of the agent's own context (`<system-reminder>`, Cline's `<environment_details>`) → a meta
 *   message of its own; every
 *   `tool_result` block → a tool message (`tool_use_id` → `tool_call_id`, text blocks joined,
 *   `is_error` marked so the open errors see it); a line with `isCompactSummary` (Claude Code's own
 *   compaction) → a COMPACTION_SUMMARY;
 * - `assistant` lines: the lines of one API message (one `message.id`, often one line per block)
 *   → one assistant message: text blocks → content, thinking → `reasoning_content`, `tool_use`
 *   → `tool_calls` (`input` as JSON arguments); Claude Code's synthetic API-error messages are left
 *   out, as they are never sent back;
 * - `attachment` lines (Claude Code 2.x): a message the user typed while the agent worked → a user
 *   message; a file named with `@` or edited by the user meanwhile → a meta message (see
 *   {@link attachmentItem}); the other attachments are kept as lines only.
 * With `wholeHistory` (`eval`), the chain goes through Claude Code's compactions and their summaries
 * are left out, so the whole history is replayed. Every other line (`summary`, `system`,
 * `file-history-snapshot`, `queue-operation`, subagents' sidechains, lines off the chain, unknown
 * types) is kept as it is in the document, so the exporter (`claude-code-export.ts`) writes the
 * file back whole. The system prompt and tool definitions are not in these files. Pure.
 */
import type { ContentPart, ContextItem, SessionFormat, ToolCall } from '../context/items';
import { takeText, takeToolCalls } from './blocks';
import { activeChain, type ClaudeLine } from './claude-code-path';
import { claudeParts, isTypedPrompt, TEXT_SEPARATOR } from './claude-code-export';
import {
  defaultIdPrefix,
  finishItems,
  makeItem,
  lineFields,
  rawFields,
  type Converted,
  type ImportedSession,
  type ImportOptions,
} from './common';
import { ImportError } from './errors';
import { describe, isRecord, importJsonLines, type JsonLine, type JsonObject } from './json';
import type { LineSlot, PartRef } from './line-slots';

/**
 * One line's share of an item (side fields): the line without its content (`message.content` a
 * placeholder) when the item's part opens the line, else null; the item's blocks of the line with
 * their texts taken out, or null when the content is the item's own (a string, a user's blocks).
 */
export interface ClaudePart {
  line: JsonObject | null;
  blocks: JsonObject[] | null;
}

/** Text Claude Code writes in a user message itself. */
const AGENT_WRITTEN =
  /^\s*(<command-name>|<command-message>|<local-command-stdout>|<local-command-stderr>|<bash-input>|<bash-stdout>|<bash-stderr>|\[Request interrupted by user)/;

/**
 * A text block an agent adds to a user message as context of its own: Claude Code's system
 * reminders, Cline's environment details (open tabs, the working directory's files, the time).
 * It is a meta message of its own, so the user's words around it stay the user's message (the
 * task, the current message) without it.
 */
export const AGENT_CONTEXT = /^\s*<(system-reminder|environment_details)>/;

function fail(detail: string, line: ClaudeLine, field?: string): never {
  throw new ImportError(detail, field === undefined ? { line: line.line } : { line: line.line, field });
}

function messageOf(line: ClaudeLine): JsonObject {
  const message = line.value.message;
  if (!isRecord(message)) fail(`expected a message object, got ${describe(message)}`, line, 'message');
  return message;
}

function blocksOf(content: unknown, line: ClaudeLine): JsonObject[] {
  if (!Array.isArray(content)) {
    fail(`expected a string or a list of content blocks, got ${describe(content)}`, line, 'message.content');
  }
  return content.map((block, i) => {
    if (!isRecord(block) || typeof block.type !== 'string') {
      fail(
        `expected a content block with a string type, got ${describe(block)}`,
        line,
        `message.content[${i}]`,
      );
    }
    return block;
  });
}

/** The line without its content: `message.content` a placeholder, to keep the keys' order. */
function lineShell(line: ClaudeLine): JsonObject {
  return { ...line.value, message: { ...messageOf(line), content: 0 } };
}

/** An item in the making: what it converts to and its parts, one per line it came from. */
interface Pending {
  converted: Converted;
  isMeta: boolean;
  parts: ClaudePart[];
  isError?: boolean;
  /** Its line is kept whole (an attachment's), written back as it was while the item is unchanged. */
  whole?: boolean;
  /** The assistant message's id, to merge the lines of one API message. */
  messageId?: string;
  lines: ClaudeLine[];
}

function textOfUser(content: string | ContentPart[]): string {
  return typeof content === 'string'
    ? content
    : content.map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
}

function userItem(
  content: string | ContentPart[],
  line: ClaudeLine,
  opens: boolean,
  context = false,
): Pending {
  const summary = line.value.isCompactSummary === true;
  return {
    converted: summary
      ? { type: 'COMPACTION_SUMMARY', message: { role: 'user', content } }
      : { type: 'USER_MESSAGE', message: { role: 'user', content } },
    isMeta: summary || context || line.value.isMeta === true || AGENT_WRITTEN.test(textOfUser(content)),
    parts: [{ line: opens ? lineShell(line) : null, blocks: null }],
    lines: [line],
  };
}

function toolResultItem(block: JsonObject, line: ClaudeLine, field: string, opens: boolean): Pending {
  if (typeof block.tool_use_id !== 'string') {
    fail(`expected a string, got ${describe(block.tool_use_id)}`, line, `${field}.tool_use_id`);
  }
  let text: string;
  let layout: unknown;
  if (typeof block.content === 'string') {
    text = block.content;
    layout = 0;
  } else if (block.content === undefined) {
    text = '';
    layout = undefined;
  } else {
    const taken = takeText(blocksOf(block.content, line), 'text', 'text', TEXT_SEPARATOR);
    text = taken.text ?? '';
    layout = taken.layout;
  }
  return {
    converted: {
      type: 'TOOL_RESULT',
      message: { role: 'tool', content: text, tool_call_id: block.tool_use_id },
    },
    isMeta: false,
    parts: [
      {
        line: opens ? lineShell(line) : null,
        blocks: [layout === undefined ? { ...block } : { ...block, content: layout }],
      },
    ],
    ...(block.is_error === true ? { isError: true } : {}),
    lines: [line],
  };
}

/**
 * A user line: its tool results, the agent's context blocks each a meta message, and a user
 * message of each run of the other blocks (in the blocks' order).
 */
function userItems(line: ClaudeLine): Pending[] {
  const content = messageOf(line).content;
  if (typeof content === 'string') return [userItem(content, line, true)];
  const out: Pending[] = [];
  let run: ContentPart[] = [];
  const flush = (context = false): void => {
    if (run.length === 0) return;
    out.push(userItem(run, line, out.length === 0, context));
    run = [];
  };
  blocksOf(content, line).forEach((block, i) => {
    if (block.type === 'tool_result') {
      flush();
      out.push(toolResultItem(block, line, `message.content[${i}]`, out.length === 0));
    } else if (block.type === 'text' && typeof block.text === 'string' && AGENT_CONTEXT.test(block.text)) {
      flush();
      run.push(block as ContentPart);
      flush(true);
    } else run.push(block as ContentPart);
  });
  flush();
  return out;
}

/**
 * What an `attachment` line puts before the model, as an item: a message queued while the agent
 * worked (`queued_command`) → the user's message when a person typed it as a prompt, else (a
 * background task's notice, another session's message) a meta message; a file Claude Code
 * attached (`file`: named with `@`, or read again after its compaction) or one the user edited
 * meanwhile (`edited_text_file`) → a meta message with its path and text; the attachments that hold
 * something of the session (skills, the plan, MCP instructions, tools, memory files, hook output the
 * model sees: {@link attachmentText}) → a meta message of it. Reminders, notices, hook output shown
 * to the user only and malformed attachments are left out.
 */
function attachmentItem(line: ClaudeLine): Pending | undefined {
  const attachment = line.value.attachment;
  if (!isRecord(attachment)) return undefined;
  const item = (content: string | ContentPart[], isMeta: boolean): Pending => ({
    converted: { type: 'USER_MESSAGE', message: { role: 'user', content } },
    isMeta,
    parts: [{ line: null, blocks: null }],
    whole: true,
    lines: [line],
  });
  if (attachment.type === 'queued_command') {
    const { prompt } = attachment;
    const typed = isTypedPrompt(attachment);
    if (typeof prompt === 'string') return item(prompt, !typed);
    const blocks = Array.isArray(prompt) ? prompt : [];
    if (blocks.length === 0 || !blocks.every((b) => isRecord(b) && typeof b.type === 'string'))
      return undefined;
    return item(blocks as ContentPart[], !typed);
  }
  const text = attachmentText(attachment);
  return text === null ? undefined : item(text, true);
}

/** The strings of a list (none for anything else). */
function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/**
 * What Claude Code tells the model of an attachment that holds something the conversation goes on
 * from (as a meta message; the wording here is ours, the content the attachment's): a file it
 * attached, with its path, and one the user edited meanwhile, with the changed lines; the skills
 * available and those invoked, the plan file, MCP servers' instructions, the deferred tools now
 * available, a project memory file, a hook's output the model sees (session start, a prompt
 * submitted), a new date, a file too large to attach again. Null for the rest: reminders and notices
 * with nothing of the session in them, hook output shown to the user only, bookkeeping.
 */
function attachmentText(attachment: JsonObject): string | null {
  const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
  switch (attachment.type) {
    case 'file': {
      const file = isRecord(attachment.content) ? attachment.content.file : undefined;
      if (!isRecord(file) || typeof file.content !== 'string') return null;
      const path = typeof file.filePath === 'string' ? file.filePath : attachment.filename;
      return typeof path === 'string' ? `${path}:\n${file.content}` : file.content;
    }
    case 'edited_text_file':
      if (typeof attachment.filename !== 'string' || typeof attachment.snippet !== 'string') return null;
      return `${attachment.filename} was modified:\n${attachment.snippet}`;
    case 'skill_listing': {
      const content = text(attachment.content);
      return content && `Skills available:\n\n${content}`;
    }
    case 'invoked_skills': {
      const skills = (Array.isArray(attachment.skills) ? attachment.skills : []).filter(isRecord);
      if (skills.length === 0) return null;
      const each = skills.map(
        (s) =>
          `### Skill: ${String(s.name ?? '')}\nPath: ${String(s.path ?? '')}\n\n${String(s.content ?? '')}`,
      );
      return `Skills invoked in this session:\n\n${each.join('\n\n---\n\n')}`;
    }
    case 'plan_file_reference': {
      const plan = text(attachment.planContent);
      return plan && `The plan file ${String(attachment.planFilePath ?? '')}:\n\n${plan}`;
    }
    case 'mcp_instructions_delta': {
      const added = strings(attachment.addedBlocks);
      return added.length > 0 ? `MCP servers' instructions:\n\n${added.join('\n\n')}` : null;
    }
    case 'deferred_tools_delta': {
      const added = strings(attachment.addedLines);
      return added.length > 0 ? `Tools now available through ToolSearch:\n${added.join('\n')}` : null;
    }
    case 'nested_memory': {
      const memory = isRecord(attachment.content) ? attachment.content : {};
      const content = text(memory.content);
      return content && `Contents of ${String(memory.path ?? '')}:\n\n${content}`;
    }
    case 'hook_success': {
      const seen = ['SessionStart', 'UserPromptSubmit', 'UserPromptExpansion'].includes(
        String(attachment.hookEvent),
      );
      const content = text(attachment.content);
      return seen && content ? `${String(attachment.hookName ?? 'hook')}: ${content}` : null;
    }
    case 'hook_additional_context': {
      const content = strings(attachment.content);
      return content.length > 0 ? `${String(attachment.hookName ?? 'hook')}: ${content.join('\n')}` : null;
    }
    case 'date_change': {
      const date = text(attachment.newDate);
      return date && `The date is now ${date}.`;
    }
    case 'compact_file_reference': {
      const name = text(attachment.filename);
      return name && `${name} was read before the conversation was summarized; read it again when needed.`;
    }
    default:
      return null;
  }
}

/**
 * Attachments Claude Code writes again right after its own compaction (the files read, the plan,
 * the skills invoked, the tools and MCP instructions announced anew, the session-start hooks):
 * in the whole history they were there before it, and are left out.
 */
const ATTACHED_AGAIN = new Set([
  'file',
  'compact_file_reference',
  'plan_file_reference',
  'plan_mode',
  'invoked_skills',
  'deferred_tools_delta',
  'mcp_instructions_delta',
  'agent_listing_delta',
  'task_status',
  'hook_success',
  'hook_additional_context',
]);

/** An assistant line's blocks: its text, thinking and tool calls, and their layout. */
function assistantShare(line: ClaudeLine): {
  text: string | null;
  thinking: string | null;
  calls: ToolCall[];
  layout: JsonObject[];
} {
  const content = messageOf(line).content;
  const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : blocksOf(content, line);
  const text = takeText(blocks, 'text', 'text', TEXT_SEPARATOR);
  const thinking = takeText(text.layout, 'thinking', 'thinking', TEXT_SEPARATOR);
  const { calls, layout } = takeToolCalls(thinking.layout, 'tool_use', 'input', (detail, field) =>
    fail(detail, line, field),
  );
  return { text: text.text, thinking: thinking.text, calls, layout };
}

const join = (a: string | null | undefined, b: string | null): string | null =>
  a == null ? b : b === null ? a : `${a}${TEXT_SEPARATOR}${b}`;

/** Adds an assistant line to the open assistant message of its API message, or starts one. */
function addAssistant(line: ClaudeLine, open: Pending | undefined): Pending | undefined {
  const share = assistantShare(line);
  const messageId = messageOf(line).id;
  const part: ClaudePart = { line: lineShell(line), blocks: share.layout };
  if (open && typeof messageId === 'string' && open.messageId === messageId) {
    const message = open.converted.message as Extract<Converted, { type: 'ASSISTANT_MESSAGE' }>['message'];
    const content = join(message.content, share.text);
    const reasoning = join(message.reasoning_content, share.thinking);
    const calls = [...(message.tool_calls ?? []), ...share.calls];
    open.converted = {
      type: 'ASSISTANT_MESSAGE',
      message: {
        role: 'assistant',
        content,
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
        ...(reasoning !== null ? { reasoning_content: reasoning } : {}),
      },
    };
    open.parts.push(part);
    open.lines.push(line);
    return undefined;
  }
  return {
    converted: {
      type: 'ASSISTANT_MESSAGE',
      message: {
        role: 'assistant',
        content: share.text,
        ...(share.calls.length > 0 ? { tool_calls: share.calls } : {}),
        ...(share.thinking !== null ? { reasoning_content: share.thinking } : {}),
      },
    },
    isMeta: false,
    parts: [part],
    ...(typeof messageId === 'string' ? { messageId } : {}),
    lines: [line],
  };
}

/** The lines as objects with a string `type`; a `user` or `assistant` line must hold a message object. */
function readLines(lines: readonly JsonLine[]): ClaudeLine[] {
  return lines.map(({ line, value }, index) => {
    if (!isRecord(value))
      throw new ImportError(`expected a session line object, got ${describe(value)}`, { line });
    if (typeof value.type !== 'string') {
      throw new ImportError(`expected a string, got ${describe(value.type)}`, { line, field: 'type' });
    }
    if ((value.type === 'user' || value.type === 'assistant') && !isRecord(value.message)) {
      throw new ImportError(`expected a message object, got ${describe(value.message)}`, {
        line,
        field: 'message',
      });
    }
    return { index, line, value };
  });
}

/** Import from parsed JSONL lines. */
export function claudeCodeFromLines(
  jsonLines: readonly JsonLine[],
  options: ImportOptions,
  idPrefix: string,
  /** Whether the lines of one API message (one `message.id`) make one item, as Claude Code writes them. */
  mergeById = true,
): ImportedSession {
  const lines = readLines(jsonLines);
  const whole = options.wholeHistory === true;
  const pending: Pending[] = [];
  const partsOfLine = new Map<number, PartRef[]>();
  let open: Pending | undefined;
  // In the whole history, right after a compaction's summary left out: the files Claude Code
  // attached again then were read before it, and are left out too.
  let afterSummary = false;
  for (const line of activeChain(lines, whole)) {
    const { type } = line.value;
    if (type !== 'attachment') afterSummary = false;
    if (type === 'assistant') {
      if (line.value.isApiErrorMessage === true) continue;
      const started = addAssistant(line, mergeById ? open : undefined);
      if (started) {
        pending.push(started);
        open = started;
      }
    } else if (type === 'user') {
      if (whole && line.value.isCompactSummary === true) {
        afterSummary = true;
        continue;
      }
      pending.push(...userItems(line));
    } else if (type === 'attachment') {
      const attached = isRecord(line.value.attachment) ? line.value.attachment.type : undefined;
      if (afterSummary && typeof attached === 'string' && ATTACHED_AGAIN.has(attached)) continue;
      const item = attachmentItem(line);
      if (item) pending.push(item);
    }
  }
  const items: ContextItem[] = [];
  const opened = new Map<number, number>();
  for (const item of pending) {
    const index = (item.lines[0] as ClaudeLine).index;
    opened.set(index, (opened.get(index) ?? 0) + 1);
  }
  const seenOfLine = new Map<number, number>();
  for (const item of pending) {
    const first = item.lines[0] as ClaudeLine;
    const nth = seenOfLine.get(first.index) ?? 0;
    seenOfLine.set(first.index, nth + 1);
    const id = `${idPrefix}${first.index}${nth > 0 ? `.${nth}` : ''}`;
    item.lines.forEach((line, part) => {
      partsOfLine.set(line.index, [...(partsOfLine.get(line.index) ?? []), { itemId: id, part }]);
    });
    const parts: JsonObject = { parts: item.parts as unknown as JsonObject[] };
    // The mapping covers the shapes Claude Code writes; a line it does not rebuild is kept whole.
    const fields = item.whole
      ? rawFields([first.value], item.converted.message)
      : lineFields(
          parts,
          item.lines.map((l) => l.value),
          item.converted.message,
          opened.get(first.index) === 1 ? claudeParts(item.converted.message, parts) : null,
          item.isError === true,
        );
    items.push(
      makeItem(item.converted, {
        id,
        isMeta: item.isMeta,
        origin: { format: 'claude-code', index: first.index, fields },
      }),
    );
  }
  const slots: LineSlot[] = lines.map((line) => {
    const parts = partsOfLine.get(line.index);
    if (!parts) return { entry: line.value };
    const { uuid, parentUuid } = line.value;
    // A line of several items keeps its envelope, for when the item that opened it is dropped.
    const shell = parts.length > 1 ? { shell: lineShell(line) } : {};
    return typeof uuid === 'string'
      ? { parts, link: { id: uuid, parent: typeof parentUuid === 'string' ? parentUuid : null }, ...shell }
      : { parts, ...shell };
  });
  return {
    format: 'claude-code',
    items: finishItems(items, options.tokenizer),
    document: { format: 'claude-code', slots },
  };
}

/**
 * Items of another format read as the Claude Code lines its entries amount to (Anthropic's message
 * lists, Gemini CLI's chats): each line whole (no two merged by message id), the whole chain, the
 * items named as `format`'s; their lines' slots, for {@link claudeCodeLinesOf} to write them back.
 * Their tokens are not counted yet. A line marked `isCompactSummary` is a COMPACTION_SUMMARY unless
 * `whole` (then it is left out, as Claude Code's own are from the whole history).
 */
export function itemsThroughClaudeCode(
  lines: readonly JsonLine[],
  options: ImportOptions,
  idPrefix: string,
  format: SessionFormat,
  whole = true,
): { items: ContextItem[]; slots: LineSlot[] } {
  const read = claudeCodeFromLines(lines, { ...options, wholeHistory: whole }, idPrefix, false);
  if (read.document.format !== 'claude-code') throw new Error('unreachable: a Claude Code document');
  const items = read.items.map((item) =>
    item.origin ? { ...item, origin: { ...item.origin, format } } : item,
  );
  return { items, slots: read.document.slots };
}

/**
 * Imports a Claude Code session (JSONL).
 * @throws ImportError naming the line and, for a bad message, the field
 */
export function importClaudeCodeSession(text: string, options: ImportOptions): ImportedSession {
  return importJsonLines(text, (lines) =>
    claudeCodeFromLines(lines, options, options.idPrefix ?? defaultIdPrefix('claude-code', text)),
  );
}
