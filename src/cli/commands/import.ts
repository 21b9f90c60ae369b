/**
 * `durable-compaction import <file>
 * [--format openai|anthropic|swe-agent|pi|claude-code|codex|openhands|gemini] [--id ...]`: a session
 * file (OpenAI chat JSON/JSONL, Anthropic messages or a task Cline or Roo Code exported as Markdown,
 * SWE-agent `.traj`, pi, Claude Code or Codex JSONL, OpenHands trajectory or V1 event JSON, a Gemini CLI chat
 * recording) into a new conversation in the store, so it can be inspected,
 * exported, or continued by starting the workflow on its id.
 */
import type { Command } from 'commander';
import { ImportError, importSession, type ImportedSession } from '../../importers';
import { SESSION_FORMATS, type SessionFormat } from '../../context/items';
import type { ConversationStore } from '../../store';
import { tokenCounterForModel } from '../../tokens';
import { newConversationId } from '../../client/start';
import { action, printJson, UsageError, withStore } from '../client';
import { formatTokens } from '../format';
import { checkConversationId, DEFAULT_MODEL } from '../start-options';
import { readTextInput } from '../text-input';

export interface ImportOptions {
  file: string;
  /** Default: detected from the content and the file name. */
  format?: SessionFormat;
  /** Default: a generated `import-…` id. */
  id?: string;
  /** Whose tokenizer counts the items. Default gpt-4o. */
  model?: string;
  /** Accept bytes that are not UTF-8 (replaced with U+FFFD); default: refused with their offset. */
  lossy?: boolean;
}

export interface ImportResult {
  conversationId: string;
  format: SessionFormat;
  version: number;
  items: number;
  tokens: number;
}

/** Checks `--format`. */
export function parseSessionFormat(value: string | undefined): SessionFormat | undefined {
  if (value === undefined) return undefined;
  if ((SESSION_FORMATS as readonly string[]).includes(value)) return value as SessionFormat;
  throw new UsageError(
    `--format must be one of ${SESSION_FORMATS.join(', ')} (got ${JSON.stringify(value)})`,
  );
}

/**
 * Parses a session file into items (ids prefixed with the conversation id, so one file can be
 * imported into several conversations).
 * @throws UsageError naming the file and, for malformed content, the line and/or field
 */
export function readSession(
  file: string,
  options: {
    format?: SessionFormat;
    conversationId: string;
    model: string;
    lossy?: boolean;
    /** See `ImportOptions.wholeHistory`. */
    wholeHistory?: boolean;
  },
): ImportedSession {
  const text = readTextInput(file, options.lossy);
  const importOptions = {
    tokenizer: tokenCounterForModel(options.model),
    idPrefix: `${options.conversationId}:`,
    ...(options.wholeHistory ? { wholeHistory: true } : {}),
  };
  try {
    return importSession(text, {
      ...importOptions,
      fileName: file,
      ...(options.format ? { format: options.format } : {}),
    });
  } catch (err) {
    if (err instanceof ImportError) throw new UsageError(`cannot import ${file}: ${err.message}`);
    throw err;
  }
}

/** A parsed session, ready to be stored under its conversation id. */
export interface PreparedImport {
  conversationId: string;
  file: string;
  session: ImportedSession;
}

/**
 * Reads and checks the file and the id, before any connection: bad input fails fast.
 * @throws UsageError for a bad id, an unreadable, malformed or empty file
 */
export function prepareImport(options: ImportOptions): PreparedImport {
  const conversationId = checkConversationId(options.id ?? newConversationId('import'));
  const session = readSession(options.file, {
    conversationId,
    model: options.model ?? DEFAULT_MODEL,
    ...(options.format ? { format: options.format } : {}),
    ...(options.lossy ? { lossy: true } : {}),
  });
  if (session.items.length === 0) throw new UsageError(`cannot import ${options.file}: it holds no messages`);
  return { conversationId, file: options.file, session };
}

/**
 * Stores a prepared import as a new conversation (its first, active version).
 * @throws UsageError when the id is already in the store
 */
export async function saveImport(store: ConversationStore, prepared: PreparedImport): Promise<ImportResult> {
  const { conversationId, session } = prepared;
  if (await store.exists(conversationId))
    throw new UsageError(`conversation ${conversationId} already exists: choose another --id`);
  const totals = await store.createConversation(conversationId, session.items);
  return {
    conversationId,
    format: session.format,
    version: totals.version,
    items: totals.itemCount,
    tokens: totals.tokens,
  };
}

/**
 * Imports the file as a new conversation: {@link prepareImport}, then {@link saveImport}.
 * @throws UsageError for an unreadable or malformed file, or an id already in the store
 */
export async function importConversation(
  store: ConversationStore,
  options: ImportOptions,
): Promise<ImportResult> {
  return saveImport(store, prepareImport(options));
}

export function registerImport(program: Command): void {
  program
    .command('import')
    .description(
      'import a session file (OpenAI chat, SWE-agent .traj, pi, Claude Code or Codex JSONL, OpenHands trajectory or V1 events) as a new conversation in PostgreSQL',
    )
    .argument('<file>', 'the session file')
    .option('--format <format>', `${SESSION_FORMATS.join(' | ')} (default: detected)`)
    .option('--id <id>', 'conversation id (default: a generated one)')
    .option('--model <name>', `count tokens with this model's encoding (default ${DEFAULT_MODEL})`)
    .option('--json', 'print the result as JSON')
    .option('--lossy', 'accept a file that is not valid UTF-8, replacing bad bytes with U+FFFD')
    .addHelpText(
      'after',
      '\nNeeds DATABASE_URL. Continue the conversation with `start --id <id>` (its stored system prompt and\n' +
        'tools are kept).\nExit codes: 0 imported, 1 failure, 2 bad file (line and field named) or id taken.',
    )
    .action(
      action(
        async (
          file: string,
          opts: { format?: string; id?: string; model?: string; json?: boolean; lossy?: boolean },
        ) => {
          const format = parseSessionFormat(opts.format);
          const prepared = prepareImport({
            file,
            ...(format ? { format } : {}),
            ...(opts.id !== undefined ? { id: opts.id } : {}),
            ...(opts.model !== undefined ? { model: opts.model } : {}),
            ...(opts.lossy ? { lossy: true } : {}),
          });
          for (const warning of prepared.session.warnings ?? []) console.error(`warning: ${warning}`);
          const result = await withStore((store) => saveImport(store, prepared), { migrate: true });
          if (opts.json) printJson(result);
          else {
            console.log(result.conversationId);
            console.log(
              `  ${result.format} session: ${result.items} items, ${formatTokens(result.tokens)} tokens (version ${result.version})`,
            );
            console.log(`  continue it: durable-compaction start --id ${result.conversationId}`);
          }
        },
      ),
    );
}
