/**
 * What the importers share: the result types, item construction, token counting and rounds. Pure.
 */
import type {
  AssistantMessage,
  ChatMessage,
  ContextItem,
  ItemBase,
  ItemOrigin,
  SessionFormat,
  SystemMessage,
  ToolDefinition,
  ToolDefinitionsItem,
  ToolMessage,
  UserMessage,
} from '../context/items';
import { hasPin } from '../context/agent-notes';
import { withFactsAll } from '../context/item-facts';
import { assignRounds } from '../context/segments';
import { withTokenCount } from '../context/token-accounting';
import { asWritten } from '../context/written-items';
import type { Tokenizer } from '../context/tokenizer';
import { contentHash, jsonEqual, type JsonObject } from './json';
import type { LineSlot, PartRef } from './line-slots';
import type { MarkdownFrame } from './task-markdown';

export interface ImportOptions {
  /** Counts each item's tokens (content + per-message overhead, see `token-accounting.ts`). */
  tokenizer: Tokenizer;
  /**
   * Prefix of the item ids; an item's id is the prefix plus its position in the source. Default:
   * `<format>-<12 hex digits of the content hash>:`, so importing the same text again gives the
   * same ids. Give one (e.g. the conversation id) to import the same file into two conversations.
   */
  idPrefix?: string;
  /**
   * A session's whole history, the agent's own compactions left out (replaying what the agent did,
   * as `eval` does), instead of the context the agent would send next (its latest summary and what
   * it kept): pi's active path, Claude Code's chain through its compact boundaries, every item of a
   * Codex rollout, OpenHands' events without its `condense` summaries. OpenAI chat lists and
   * SWE-agent trajectories have no compactions. Default false.
   */
  wholeHistory?: boolean;
}

/** How an OpenAI chat list was laid out: a bare array, `{ messages, tools?, ... }`, or JSONL. */
export type OpenAILayout = 'array' | 'object' | 'jsonl';

/** A pi session line: an entry that became an item, or one kept as it was. */
export type PiSlot = { itemId: string } | { entry: unknown };

/** The layouts of a mini-SWE-agent trajectory (`mini-swe-agent.ts`). */
export type MiniLayout = 'mini' | 'mini_text';

/** A message of a list kept out of the context, with its position in the list (`index`). */
export interface AsideMessage {
  index: number;
  message: unknown;
}

/** What the exporter of a format needs beyond the items to write the source back. */
export type SessionDocument =
  | {
      format: 'anthropic';
      /** `markdown`: a task exported by Cline or Roo Code (`task-markdown.ts`). */
      layout: OpenAILayout | 'markdown';
      /** Markdown layout: what is around the messages. */
      frame?: MarkdownFrame;
      /** Object layout: the top-level keys in order (`system` and `tools` as they were), `messages` a `null` placeholder. */
      top?: JsonObject;
      /** The messages as Claude Code's lines without their envelope (`anthropic-messages.ts`). */
      slots: LineSlot[];
    }
  | {
      format: 'gemini';
      /**
       * A chat recording: `json`, the record as one object; `jsonl`, its lines (v0.39 on). A list
       * of the API's `Content` (`gemini-contents.ts`): `contents`, bare; `checkpoint`, a saved chat's
       * `history`.
       */
      layout: 'json' | 'jsonl' | 'contents' | 'checkpoint';
      /** The record's keys in order (its metadata, for JSONL; a checkpoint's), the list a `null` placeholder. */
      top: JsonObject;
      /** The messages (or `Content`) as read (folded, for JSONL): what each line of `slots` came from. */
      messages: unknown[];
      /** JSONL: the lines as they were, written back while no message changed. */
      lines?: unknown[];
      indent: number;
      /** The messages as Claude Code's lines (`gemini-cli.ts`). */
      slots: LineSlot[];
    }
  | {
      /** An OpenCode export (`opencode.ts`). */
      format: 'opencode';
      /** The export's keys in order, `messages` a `null` placeholder. */
      top: JsonObject;
      /** The messages as read: what each line of `slots` came from. */
      messages: unknown[];
      /** How each message was read (into the context, kept out, as a compaction's summary). */
      views: ('context' | 'kept' | 'summary')[];
      /** Whether the whole history was read (outputs OpenCode cleared, whole). */
      whole: boolean;
      indent: number;
      /** The messages as Claude Code's lines (`opencode.ts`). */
      slots: LineSlot[];
    }
  | {
      format: 'openai';
      layout: OpenAILayout;
      /** Object layout: the top-level keys in order, `messages` (and `tools`) as `null` placeholders. */
      top?: JsonObject;
      /**
       * Messages of subagents written into the list (role `assistant-subagent-<id>`), kept out of
       * the context: each with its position in the list, written back there.
       */
      aside?: AsideMessage[];
    }
  | {
      format: 'swe-agent';
      /** Every top-level key in order (`trajectory`, `info`, ...), `history` as a `null` placeholder. */
      top: JsonObject;
      /**
       * `'thought_action'`: the older history of SWE-agent v0.x (assistant entries with `thought` and
       * `action`, observations as user entries, no tool messages), written back in that layout.
       * `'mini'`, `'mini_text'`: a mini-SWE-agent trajectory (`mini-swe-agent.ts`), its list in
       * `messages`, with tool calls or with commands in the text. Absent: the function-calling
       * layout.
       */
      layout?: 'thought_action' | MiniLayout;
      /** mini-SWE-agent 2.x: the `exit` messages that ended the list, written back after it. */
      exit?: unknown[];
    }
  | {
      format: 'pi';
      /** Every entry of the file in order. */
      slots: PiSlot[];
    }
  | {
      /** Claude Code session JSONL, Codex rollout JSONL (`line-slots.ts`). */
      format: 'claude-code' | 'codex';
      /** Every line of the file in order. */
      slots: LineSlot[];
    }
  | {
      /** An OpenHands trajectory: a JSON list of events (`line-slots.ts`, a slot per event). */
      format: 'openhands';
      /** A V1 event history (software-agent-sdk, `openhands-sdk.ts`); absent: a V0 trajectory. */
      sdk?: true;
      /** Every event of the list in order. */
      slots: LineSlot[];
      /** A wrapper object: its keys in order, the list's key (`history`, `trajectory`) as `null`. */
      top?: JsonObject;
      key?: string;
      /** Spaces the source was indented by (OpenHands writes 4), 0 for one line. */
      indent: number;
    };

export interface ImportedSession {
  format: SessionFormat;
  /** The context: OpenAI-shaped, token-counted items with rounds assigned, in context order. */
  items: ContextItem[];
  document: SessionDocument;
  /**
   * What the import read but could not map, said once per kind (e.g. Anthropic `tool_use` blocks
   * in an OpenAI list: kept for export, never seen by the model). Absent when there is none.
   */
  warnings?: string[];
}

/** A converted source message: the item type and the OpenAI-shaped message. */
export type Converted =
  | { type: 'SYSTEM_PROMPT'; message: SystemMessage }
  | { type: 'USER_MESSAGE'; message: UserMessage }
  | { type: 'ASSISTANT_MESSAGE'; message: AssistantMessage }
  | { type: 'TOOL_RESULT'; message: ToolMessage }
  | { type: 'COMPACTION_SUMMARY'; message: UserMessage };

export function defaultIdPrefix(format: SessionFormat, text: string): string {
  return `${format}-${contentHash(text)}:`;
}

/** A tool definitions item (the tools a session's requests were sent with); tokens are filled by {@link finishItems}. */
export function toolsItem(id: string, tools: readonly ToolDefinition[]): ToolDefinitionsItem {
  return {
    id,
    type: 'TOOL_DEFINITIONS',
    tools: [...tools],
    tokens: 0,
    round: 0,
    isMeta: false,
    pinned: false,
    ephemeral: false,
  };
}

/** The item for a converted message; tokens and rounds are filled by {@link finishItems}. */
export function makeItem(
  converted: Converted,
  base: { id: string; isMeta: boolean; origin: ItemOrigin },
): ContextItem {
  const common: ItemBase = {
    id: base.id,
    tokens: 0,
    round: 0,
    isMeta: base.isMeta,
    pinned: converted.type === 'USER_MESSAGE' && hasPin(converted.message),
    ephemeral: false,
    origin: base.origin,
  };
  switch (converted.type) {
    case 'SYSTEM_PROMPT':
      return { ...common, type: converted.type, message: converted.message };
    case 'USER_MESSAGE':
      return { ...common, type: converted.type, message: converted.message };
    case 'ASSISTANT_MESSAGE':
      return { ...common, type: converted.type, message: converted.message };
    case 'TOOL_RESULT':
      return { ...common, type: converted.type, message: converted.message };
    case 'COMPACTION_SUMMARY':
      return { ...common, type: converted.type, message: converted.message, summarizer: 'llm' };
  }
}

/**
 * Counts every item's tokens, keeping the rounds the importer set; a message a compaction of ours
 * wrote (a session written back after one) is typed back as what it was (`written-items.ts`).
 */
export function countItems(items: readonly ContextItem[], tokenizer: Tokenizer): ContextItem[] {
  return withFactsAll(
    items.map((item) => withTokenCount(asWritten(item), tokenizer)),
    tokenizer,
  );
}

/** Counts every item's tokens and numbers the rounds (a round starts at each real user message). */
export function finishItems(items: readonly ContextItem[], tokenizer: Tokenizer): ContextItem[] {
  return assignRounds(countItems(items, tokenizer));
}

/** JSON text with object keys sorted: the same for equal values whatever their key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as JsonObject)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Digest of a message, to tell later whether an item still holds the message it was imported with. */
export function messageDigest(message: ChatMessage): string {
  return contentHash(canonicalJson(message));
}

/**
 * Side fields that keep a whole source entry. Used when the structured mapping of a format cannot
 * rebuild an entry exactly (an unusual shape): the exporter writes `raw` back as long as the item's
 * message is the one imported, and converts the message otherwise.
 */
export function rawFields(raw: unknown, message: ChatMessage): JsonObject {
  return { raw, digest: messageDigest(message) };
}

/**
 * Side fields of an item read from several source lines (Claude Code, Codex): `fields` when the
 * lines the exporter would write from them (`rebuilt`; null: not checked) equal the source lines,
 * else the lines kept whole ({@link rawFields}); with `isError` when the source flagged the item
 * as a failed tool result.
 */
export function lineFields(
  fields: JsonObject,
  lines: readonly unknown[],
  message: ChatMessage,
  rebuilt: readonly unknown[] | null,
  isError: boolean,
): JsonObject {
  const checked =
    rebuilt !== null && !lines.every((line, i) => jsonEqual(rebuilt[i], line))
      ? rawFields([...lines], message)
      : fields;
  return isError ? { ...checked, isError: true } : checked;
}

/** An item an importer made of source lines, before it has an id (see {@link itemsOfLines}). */
export interface LineItem {
  converted: Converted;
  isMeta: boolean;
  /** Each source line with the item's text taken out, in the lines' order. */
  parts: JsonObject[];
  isError?: boolean;
}

/**
 * The items of a format whose source lines each make part of one item at most (Codex's lines,
 * OpenHands' events) — or several items of one line each, in the line's order (Codex's developer
 * bundles) — with the document's slots: each item named after its first line (`.1`, `.2` … after
 * the first of a line), its side fields the parts of its lines (the lines whole where `rebuild`
 * does not give them back exactly, `lineFields`; null: checked by the importer); each line a slot
 * of its items' parts, or kept as it is.
 */
export function itemsOfLines<L extends { index: number; value: JsonObject }, P extends LineItem>(
  pending: readonly P[],
  sourcesOf: (item: P) => readonly L[],
  lines: readonly L[],
  origin: { format: SessionFormat; idPrefix: string },
  rebuild: (item: P, parts: JsonObject) => readonly unknown[] | null,
): { items: ContextItem[]; slots: LineSlot[] } {
  const items: ContextItem[] = [];
  const partsOfLine = new Map<number, PartRef[]>();
  for (const item of pending) {
    const sources = sourcesOf(item);
    const first = sources[0] as L;
    const nth = partsOfLine.get(first.index)?.length ?? 0;
    const id = `${origin.idPrefix}${first.index}${nth > 0 ? `.${nth}` : ''}`;
    sources.forEach((line, part) =>
      partsOfLine.set(line.index, [...(partsOfLine.get(line.index) ?? []), { itemId: id, part }]),
    );
    const parts: JsonObject = { parts: item.parts };
    const fields = lineFields(
      parts,
      sources.map((l) => l.value),
      item.converted.message,
      rebuild(item, parts),
      item.isError === true,
    );
    items.push(
      makeItem(item.converted, {
        id,
        isMeta: item.isMeta,
        origin: { format: origin.format, index: first.index, fields },
      }),
    );
  }
  const slots: LineSlot[] = lines.map((line) => {
    const parts = partsOfLine.get(line.index);
    return parts ? { parts } : { entry: line.value };
  });
  return { items, slots };
}

/** The kept source entry, if the fields hold one and the message is unchanged since import. */
export function unchangedRaw(fields: JsonObject | undefined, message: ChatMessage): unknown {
  if (!fields || !('raw' in fields)) return undefined;
  return fields.digest === messageDigest(message) ? fields.raw : undefined;
}
