/**
 * A conversation's context as the model is sent it, read from the store: the active version (or
 * any earlier one), lowered to OpenAI chat messages and written as JSON or JSONL. Reads only the
 * store, never Temporal: `ConversationClient.export` and the CLI's `export` both call it.
 */
import { lower, type ModelRequest } from '../context/lower';
import type { ConversationStore } from '../store';
import { conversationErrorFrom } from './error-mapping';
import { ConversationNotFoundError } from './errors';

/** The formats `export` writes. */
export const EXPORT_FORMATS = ['json', 'jsonl'] as const;
/**
 * `json`: `{ messages, tools? }`, an OpenAI chat request body (importable again);
 * `jsonl`: one message per line.
 */
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** What to export. */
export interface ExportOptions {
  /** The format of `text`. Default `json`. */
  format?: ExportFormat;
  /** The version to export. Default: the active one. */
  version?: number;
}

/** An exported context. */
export interface ExportResult {
  /** The version exported. */
  version: number;
  /** The context lowered to the request the model is sent: messages and tool definitions. */
  request: ModelRequest;
  /** `request` in the chosen format, ending with a newline. */
  text: string;
}

/** The request as text in `format` (a newline at the end). */
export function renderExport(request: ModelRequest, format: ExportFormat): string {
  if (format === 'jsonl') return request.messages.map((m) => `${JSON.stringify(m)}\n`).join('');
  const body = { messages: request.messages, ...(request.tools.length > 0 ? { tools: request.tools } : {}) };
  return `${JSON.stringify(body, null, 2)}\n`;
}

/**
 * Reads and lowers the context of conversation `id`.
 * @throws ConversationNotFoundError when the store has no such conversation
 * @throws BadInputError `VERSION_NOT_FOUND` when it has no such version
 */
export async function exportContext(
  store: ConversationStore,
  id: string,
  options: ExportOptions = {},
): Promise<ExportResult> {
  const status = await store.conversationStatus(id);
  if (!status) throw new ConversationNotFoundError(id);
  try {
    const { version, items } =
      options.version === undefined
        ? await store.getActiveContext(id)
        : { version: options.version, items: await store.getVersionItems(id, options.version) };
    const request = lower(items);
    return { version, request, text: renderExport(request, options.format ?? 'json') };
  } catch (err) {
    throw conversationErrorFrom(err, id);
  }
}
