/**
 * `durable-compaction eval <session files…> --window 8000,16000,32000,64000 [--summarizer
 * extractive|llm] [--json] [--out DIR]`: replays each recorded session (any importer format) item
 * by item through the same pure planning the compaction activities run, at each window, and
 * reports what survives a compaction and what is lost (src/eval), and how much of what it lost
 * `recall` finds again (PostgreSQL: DATABASE_URL or an embedded one; `--no-recall` needs none). No
 * Temporal; an LLM only with `--summarizer llm`.
 *
 * Exit codes: 0 every invariant held; 4 an invariant broke (listed); 2 bad input; 1 a failure (a
 * summary call failed: its compaction was rolled back and listed, the rest still measured; or one
 * every call would repeat, such as a bad key, which stops the run).
 */
import { closeSync, mkdirSync, openSync, readdirSync, readSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import type { Command } from 'commander';
import { loadCompactionConfig } from '../../infra/config-sources';
import { connectPostgres } from '../../infra/postgres';
import { createLlmClient, requestSummary } from '../../llm';
import { tokenCounterForModel } from '../../tokens';
import { evalJson, evalSvg, markdownTable, textTable } from '../../eval/report';
import { isTaskMarkdown } from '../../importers/task-markdown';
import { MAX_SUMMARY_FAILURES_IN_A_ROW } from '../../eval/replay';
import { llmSummarizer, runEval, SUMMARY_ATTEMPTS, type EvalRow, type EvalSession } from '../../eval/run';
import { action, intArgument, printJson, UsageError } from '../client';
import { DEFAULT_MODEL } from '../start-options';
import { readSession } from './import';

/** Exit code when an invariant broke. */
export const EVAL_VIOLATION_EXIT = 4;
export const DEFAULT_EVAL_WINDOWS = [8000, 16000, 32000, 64000];

export interface EvalCommandOptions {
  files: string[];
  windows: number[];
  summarizer: 'extractive' | 'llm';
  /** Counts tokens in this model's encoding. Default gpt-4o. */
  model: string;
  /** The summary model, for `llm`. Default: `model`. */
  summaryModel?: string;
  /** A compaction config file (as `DC_COMPACTION_CONFIG`); the window is set per run. */
  configFile?: string;
  peers: boolean;
  /**
   * Score recall probes (issue 24) on PostgreSQL: DATABASE_URL when set (each replay becomes a
   * conversation `eval-recall-…` there), else an embedded PostgreSQL for the run. Default false.
   */
  recall?: boolean;
  log?: (line: string) => void;
  /**
   * Called for each file that cannot be read or imported, which is then left out; without it such
   * a file refuses the whole run. Every file refused refuses the run either way.
   */
  onRefused?: (file: string, reason: string) => void;
  /** Waits between summary attempts (tests). Default: a timer. */
  sleep?: (ms: number) => Promise<void>;
}

/** Parses `--window 8000,16000`. */
export function parseWindows(value: string): number[] {
  const windows = value.split(',').map((part) => {
    const n = Number(part.trim());
    if (!/^\s*\d+\s*$/.test(part) || !Number.isSafeInteger(n) || n < 256) {
      throw new UsageError(
        `--window takes whole numbers of tokens ≥ 256, comma-separated (got ${JSON.stringify(part)})`,
      );
    }
    return n;
  });
  if (windows.length === 0) throw new UsageError('--window needs at least one window');
  return windows;
}

/** The files a directory is searched for: sessions of every importer format. */
const SESSION_FILE = /\.(jsonl|json|traj)$/i;
/** Markdown files, searched too when they are a task Cline or Roo Code exported. */
const MARKDOWN_FILE = /\.md$/i;

/** Whether a Markdown file is a task export: its first bytes are a message's heading. */
function isTaskExport(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(64);
    const read = readSync(fd, head, 0, head.length, 0);
    return isTaskMarkdown(head.subarray(0, read).toString('utf8'));
  } finally {
    closeSync(fd);
  }
}

/**
 * The session files named: a file as it is (named by its base name), a directory as every session
 * file under it (`.jsonl`, `.json`, `.traj`, at any depth, in path order; hidden entries and
 * `node_modules` skipped),
 * each named by its path under the directory — `~/.codex/sessions` or a Claude Code project's
 * directory is given as it is. A path that does not exist is left to the reader, which says so.
 * @throws UsageError for a directory that holds no session file
 */
export function sessionFiles(paths: readonly string[]): { path: string; name: string }[] {
  const out: { path: string; name: string }[] = [];
  for (const path of paths) {
    let directory = false;
    try {
      directory = statSync(path).isDirectory();
    } catch {
      directory = false;
    }
    if (!directory) {
      out.push({ path, name: basename(path) });
      continue;
    }
    const found: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
        const full = join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (!entry.isFile()) continue;
        else if (SESSION_FILE.test(entry.name)) found.push(full);
        else if (MARKDOWN_FILE.test(entry.name) && isTaskExport(full)) found.push(full);
      }
    };
    walk(path);
    if (found.length === 0)
      throw new UsageError(`${path} holds no session file (.jsonl, .json, .traj or a task exported as .md)`);
    for (const file of found.sort()) out.push({ path: file, name: relative(path, file) });
  }
  return out;
}

/** Runs the evaluation of the command (see the module comment). */
export async function evaluate(options: EvalCommandOptions): Promise<EvalRow[]> {
  if (options.files.length === 0) throw new UsageError('name at least one session file');
  const config = (window: number) =>
    loadCompactionConfig({
      ...(options.configFile !== undefined ? { file: options.configFile } : {}),
      overrides: { maxContextTokens: window, summarizer: options.summarizer },
    });
  // Bad configuration fails before any replay.
  config(options.windows[0] ?? 8000);
  const sessions: EvalSession[] = [];
  const refused: string[] = [];
  for (const { path: file, name } of sessionFiles(options.files)) {
    try {
      // What the agent did, whole: a pi session's own compactions are left out (ours replace them).
      const session = readSession(file, { conversationId: 'eval', model: options.model, wholeHistory: true });
      if (session.items.length === 0) throw new UsageError(`${file} holds no messages`);
      for (const warning of session.warnings ?? []) options.log?.(`warning: ${name}: ${warning}`);
      sessions.push({ name, items: session.items });
    } catch (err) {
      if (!(err instanceof UsageError) || !options.onRefused) throw err;
      refused.push(err.message);
      options.onRefused(file, err.message);
    }
  }
  if (sessions.length === 0) {
    throw new UsageError(
      refused.length === 1 ? (refused[0] as string) : `no file could be read:\n  ${refused.join('\n  ')}`,
    );
  }
  let summarizer: Parameters<typeof runEval>[0]['summarizer'] = 'extractive';
  if (options.summarizer === 'llm') {
    if (!process.env.OPENAI_API_KEY && !process.env.OPENAI_BASE_URL) {
      throw new UsageError('--summarizer llm needs OPENAI_API_KEY and/or OPENAI_BASE_URL');
    }
    // One call's time limit, as the worker reads it (activities/index.ts); else the client's 5 minutes.
    const timeout = process.env.LLM_TIMEOUT_MS;
    const client = createLlmClient({
      apiKey: process.env.OPENAI_API_KEY || 'not-set',
      ...(process.env.OPENAI_BASE_URL ? { baseURL: process.env.OPENAI_BASE_URL } : {}),
      ...(timeout ? { timeoutMs: intArgument('LLM_TIMEOUT_MS', timeout) } : {}),
    });
    const model = options.summaryModel ?? options.model;
    const log = options.log;
    summarizer = llmSummarizer(
      config(options.windows[0] ?? 8000),
      async (messages, maxTokens) => {
        const outcome = await requestSummary(client, { model, messages, maxTokens });
        return outcome.summary;
      },
      {
        ...(options.sleep ? { sleep: options.sleep } : {}),
        onRetry: ({ attempt, delayMs, error }) =>
          log?.(
            `  summary call failed (attempt ${attempt} of ${SUMMARY_ATTEMPTS}), retrying in ${delayMs} ms: ` +
              (error instanceof Error ? error.message : String(error)),
          ),
      },
    );
  }
  const postgres = options.recall ? await connectPostgres({ poolSize: 2 }) : null;
  try {
    return await runEval({
      sessions,
      windows: options.windows,
      config,
      tokenizer: tokenCounterForModel(options.model),
      summarizer,
      peers: options.peers,
      ...(options.log ? { log: options.log } : {}),
      ...(postgres ? { recallStore: postgres.pool } : {}),
    });
  } finally {
    await postgres?.shutdown();
  }
}

/** Writes eval.json, eval.md and eval.svg into `dir`. */
export function writeEvalFiles(dir: string, rows: readonly EvalRow[]): string[] {
  mkdirSync(dir, { recursive: true });
  const files = {
    'eval.json': `${JSON.stringify(evalJson(rows), null, 2)}\n`,
    'eval.md': `${markdownTable(rows)}\n`,
    'eval.svg': evalSvg(rows),
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return Object.keys(files).map((name) => join(dir, name));
}

export function registerEval(program: Command): void {
  program
    .command('eval')
    .description(
      'replay recorded sessions through the compaction policy at several windows and report what survives (no servers needed)',
    )
    .argument(
      '<files...>',
      'session files (OpenAI chat JSON/JSONL, SWE-agent .traj, mini-SWE-agent .traj.json, pi, Claude Code or Codex JSONL, OpenHands trajectory or V1 event JSON), or directories to search for them',
    )
    .option('--window <tokens,...>', 'context windows to replay at', DEFAULT_EVAL_WINDOWS.join(','))
    .option(
      '--summarizer <kind>',
      'extractive (no model call) or llm (OPENAI_API_KEY / OPENAI_BASE_URL; LLM_TIMEOUT_MS per call)',
      'extractive',
    )
    .option('--model <name>', `count tokens with this model's encoding (default ${DEFAULT_MODEL})`)
    .option(
      '--summary-model <name>',
      'the model that writes summaries with --summarizer llm (default: --model)',
    )
    .option('--config <file>', 'a compaction config file (YAML; the window is set by --window)')
    .option('--no-peers', "leave out pi's prepareCompaction and LangChain's trimMessages")
    .option(
      '--no-recall',
      'leave out the recall probes (they need PostgreSQL: DATABASE_URL, else an embedded one for the run)',
    )
    .option('--json', 'print every row as JSON')
    .option('--out <dir>', 'write eval.json, eval.md and eval.svg into this directory')
    .addHelpText(
      'after',
      '\nEach assistant message of a session is one model call (a demonstration written into the session is not):\n' +
        'triggers are checked before and after it, and a request over the window is refused as the model would\n' +
        '(overflow). A pi session is replayed whole, its own compactions left out. Reported per session and window:\n' +
        'compactions, tokens after each (% of the window), target met, fill, requests over the window, tool results\n' +
        'orphaned, header items lost, touched files kept, carried state kept, ms per compaction, recall@3 (strings\n' +
        'only the compacted span held, searched the way a model would: a read file by its path, an error by its words,\n' +
        "a command's output by the command; found when a top-3 result holds them), and the peers.\n" +
        'With --summarizer llm a summary call is retried as the summarize activity retries it (3 attempts, 1 s and\n' +
        '2 s apart or the Retry-After); one that still fails rolls its compaction back, as the workflow does (an\n' +
        'emergency, overflow, commits with the extractive summary instead), and the replay goes on (after 3 in a\n' +
        'row it stops asking). Each is listed, and the run exits 1. A failure every call\n' +
        'would repeat (a bad key, an unknown model) stops the run at once.\n' +
        'A file that cannot be read or imported is left out (listed, and the run exits 2); the others are replayed.\n' +
        `Exit codes: 0 every invariant held, ${EVAL_VIOLATION_EXIT} an invariant broke (each is listed), 2 bad input, 1 failure.`,
    )
    .action(
      action(
        async (
          files: string[],
          opts: {
            window: string;
            summarizer: string;
            model?: string;
            summaryModel?: string;
            config?: string;
            peers: boolean;
            recall: boolean;
            json?: boolean;
            out?: string;
          },
        ) => {
          if (opts.summarizer !== 'extractive' && opts.summarizer !== 'llm') {
            throw new UsageError(
              `--summarizer must be extractive or llm (got ${JSON.stringify(opts.summarizer)})`,
            );
          }
          const refused: string[] = [];
          const rows = await evaluate({
            files,
            windows: parseWindows(opts.window),
            summarizer: opts.summarizer,
            model: opts.model ?? DEFAULT_MODEL,
            ...(opts.summaryModel !== undefined ? { summaryModel: opts.summaryModel } : {}),
            ...(opts.config !== undefined ? { configFile: opts.config } : {}),
            peers: opts.peers,
            recall: opts.recall,
            log: (line) => console.error(line),
            onRefused: (_file, reason) => refused.push(reason),
          });
          const violations = rows.flatMap((r) => r.violations.map((v) => `${r.session} @ ${r.window}: ${v}`));
          const failed = rows.reduce((n, r) => n + r.summaryFailures, 0);
          const rolledBack = rows.flatMap((r) => [
            ...r.compactionDetails
              .filter((j) => j.summaryFailure === 'failed')
              .map(
                (j) => `${r.session} @ ${r.window}: compaction #${j.seq} (${j.trigger}): ${j.reason ?? ''}`,
              ),
            ...(r.summariesNotAsked > 0
              ? [
                  `${r.session} @ ${r.window}: ${r.summariesNotAsked} later compaction(s) rolled back without asking ` +
                    `(the replay stopped after ${MAX_SUMMARY_FAILURES_IN_A_ROW} failures in a row)`,
                ]
              : []),
          ]);
          if (opts.json) printJson(evalJson(rows));
          else console.log(textTable(rows));
          if (opts.out) for (const file of writeEvalFiles(opts.out, rows)) console.error(`wrote ${file}`);
          if (rolledBack.length > 0) {
            console.error(
              `\n${failed} summary call(s) failed, their compactions rolled back (the context stayed as it was, as the workflow leaves it) or, an emergency's, committed with the extractive summary:`,
            );
            for (const line of rolledBack.slice(0, 50)) console.error(`  ${line}`);
          }
          if (refused.length > 0) {
            console.error(`\n${refused.length} file(s) left out, the others replayed:`);
            for (const reason of refused.slice(0, 50)) console.error(`  ${reason}`);
          }
          if (violations.length > 0) {
            console.error(`\n${violations.length} broken invariant(s):`);
            for (const v of violations.slice(0, 50)) console.error(`  ${v}`);
          }
          // An exit code, not process.exit: a piped stdout (a large --json) is written out first.
          if (violations.length > 0) process.exitCode = EVAL_VIOLATION_EXIT;
          else if (refused.length > 0) process.exitCode = 2;
          else if (rolledBack.length > 0) {
            console.error('every invariant held, but not every summary was written (exit 1)');
            process.exitCode = 1;
          } else if (!opts.json) console.error('every invariant held');
        },
      ),
    );
}
