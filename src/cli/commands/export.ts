/**
 * `durable-compaction export <id> [--version N] [--format json|jsonl] [--out file]`: the active
 * context (or version N) from PostgreSQL, lowered to the OpenAI chat messages the model is sent.
 */
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { lower, type ModelRequest } from '../../context/lower';
import { StoreError, type ConversationStore } from '../../store';
import { action, intArgument, UsageError, withStore } from '../client';

export const EXPORT_FORMATS = ['json', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface ExportOptions {
  id: string;
  /** Default: the active version. */
  version?: number;
  /** `json`: `{ messages, tools? }` (an OpenAI chat request body, importable again); `jsonl`: a message per line. Default json. */
  format?: ExportFormat;
}

export interface ExportResult {
  version: number;
  request: ModelRequest;
  text: string;
}

/** Checks `--format`. */
export function parseExportFormat(value: string | undefined): ExportFormat {
  if (value === undefined) return 'json';
  if ((EXPORT_FORMATS as readonly string[]).includes(value)) return value as ExportFormat;
  throw new UsageError(`--format must be json or jsonl (got ${JSON.stringify(value)})`);
}

/** The request as text in the chosen format (newline at the end). */
export function renderExport(request: ModelRequest, format: ExportFormat): string {
  if (format === 'jsonl') return request.messages.map((m) => `${JSON.stringify(m)}\n`).join('');
  const body = { messages: request.messages, ...(request.tools.length > 0 ? { tools: request.tools } : {}) };
  return `${JSON.stringify(body, null, 2)}\n`;
}

/**
 * Reads and lowers the context.
 * @throws UsageError when the conversation or the version does not exist
 */
export async function exportConversation(
  store: ConversationStore,
  options: ExportOptions,
): Promise<ExportResult> {
  const status = await store.conversationStatus(options.id);
  if (!status) throw new UsageError(`no conversation ${options.id}`);
  try {
    const { version, items } =
      options.version === undefined
        ? await store.getActiveContext(options.id)
        : { version: options.version, items: await store.getVersionItems(options.id, options.version) };
    const request = lower(items);
    return { version, request, text: renderExport(request, options.format ?? 'json') };
  } catch (err) {
    if (err instanceof StoreError && err.kind === 'VERSION_NOT_FOUND') throw new UsageError(err.message);
    throw err;
  }
}

export function registerExport(program: Command): void {
  program
    .command('export')
    .description('write the active context (or a version) as OpenAI chat messages, from PostgreSQL')
    .argument('<id>', 'conversation id')
    .option('--version <n>', 'export this version instead of the active one')
    .option('--format <format>', 'json ({ messages, tools }) or jsonl (one message per line)', 'json')
    .option('--out <file>', 'write to a file instead of stdout')
    .addHelpText(
      'after',
      '\nNeeds DATABASE_URL.\nExit codes: 0 written, 1 failure, 2 unknown conversation or version, bad option.',
    )
    .action(
      action(async (id: string, opts: { version?: string; format?: string; out?: string }) => {
        const format = parseExportFormat(opts.format);
        const version = opts.version === undefined ? undefined : intArgument('--version', opts.version);
        const result = await withStore((store) =>
          exportConversation(store, { id, format, ...(version !== undefined ? { version } : {}) }),
        );
        if (!opts.out) {
          process.stdout.write(result.text);
          return;
        }
        try {
          writeFileSync(opts.out, result.text);
        } catch (err) {
          throw new UsageError(
            `cannot write ${opts.out} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
          );
        }
        console.error(
          `version ${result.version}: ${result.request.messages.length} messages written to ${opts.out}`,
        );
      }),
    );
}
