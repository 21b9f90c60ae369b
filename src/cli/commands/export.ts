/**
 * `durable-compaction export <id> [--version N] [--format json|jsonl] [--out file]`: the active
 * context (or version N) from PostgreSQL, lowered to the OpenAI chat messages the model is sent.
 */
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { EXPORT_FORMATS, exportContext, type ExportFormat, type ExportResult } from '../../client/export';
import type { ConversationStore } from '../../store';
import { action, intArgument, UsageError, withStore } from '../client';

/** Checks `--format`. */
export function parseExportFormat(value: string | undefined): ExportFormat {
  if (value === undefined) return 'json';
  if ((EXPORT_FORMATS as readonly string[]).includes(value)) return value as ExportFormat;
  throw new UsageError(`--format must be json or jsonl (got ${JSON.stringify(value)})`);
}

/**
 * Reads and lowers the context from the store, as `ConversationClient.export` does: the CLI's
 * export needs PostgreSQL only, not Temporal.
 * @throws ConversationNotFoundError, or BadInputError when the version does not exist
 */
export function exportConversation(
  store: ConversationStore,
  options: { id: string; version?: number; format?: ExportFormat },
): Promise<ExportResult> {
  const { id, ...rest } = options;
  return exportContext(store, id, rest);
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
