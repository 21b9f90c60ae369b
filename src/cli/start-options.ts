/**
 * From `start`'s flags to the workflow's input, checked before anything starts: the id, the
 * system prompt, the tools, the workspace, the recorded session, and the compaction configuration
 * (defaults → config file → environment → --window), validated whole by `parseCompactionConfig`.
 * Every problem is a {@link UsageError}, a `ConfigError` or an `ImportError`: exit 2, nothing started.
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, parseCompactionConfig } from '../context/config';
import { checkConversationId as checkId, ConversationIdError } from '../context/conversation-id';
import { ImportError, importSession } from '../importers';
import { messageText } from '../context/items';
import {
  CONFIG_FILE_VARIABLE,
  compactionConfigFromEnv,
  readCompactionConfigFile,
} from '../infra/config-sources';
import { tokenCounterForModel } from '../tokens';
import { BUILTIN_TOOLS } from '../../activities/tools/builtin';
import type { AgentConversationInput } from '../../workflows/definitions';
import { newConversationId } from '../client/start';
import { intArgument, UsageError } from './client';

/** The system prompt when neither --system nor --system-file (nor a recording's) gives one. */
export const DEFAULT_SYSTEM_PROMPT = 'You are a helpful assistant.';
/** The agent model when --model is not given. */
export const DEFAULT_MODEL = 'gpt-4o';

/** `start`'s flags as commander hands them over (numbers still text). */
export interface StartFlags {
  id?: string;
  system?: string;
  systemFile?: string;
  model?: string;
  summaryModel?: string;
  /** The context window in tokens (config.maxContextTokens). */
  window?: string | number;
  workspace?: string;
  /** A YAML file: a `context_compaction:` block, or the keys at top level (`readCompactionConfigFile`). */
  config?: string;
  /** Comma-separated tool names. */
  tools?: string | string[];
  /** Accept tool names that are not built in (registered on the worker). */
  allowUnknownTools?: boolean;
  /** A session file played back as the model (provider `recorded`). */
  recorded?: string;
}

/** Checks a conversation id against the rule every part of the project applies (`src/context/conversation-id.ts`). */
export function checkConversationId(id: string): string {
  try {
    return checkId(id);
  } catch (err) {
    if (err instanceof ConversationIdError) throw new UsageError(err.message);
    throw err;
  }
}

/** The tool names of `--tools a,b c` (commas or spaces), checked against the built-in tools. */
export function parseTools(value: string | string[] | undefined, allowUnknown = false): string[] {
  if (value === undefined) return [];
  const names = (Array.isArray(value) ? value : [value])
    .flatMap((v) => v.split(/[\s,]+/))
    .filter((name) => name.length > 0);
  const known = BUILTIN_TOOLS.map((t) => t.name);
  for (const name of names) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name))
      throw new UsageError(`invalid tool name ${JSON.stringify(name)}: use letters, digits, '_' or '-'`);
    if (!allowUnknown && !known.includes(name)) {
      throw new UsageError(
        `unknown tool ${JSON.stringify(name)}; built-in tools: ${known.join(', ')} ` +
          '(add --allow-unknown-tools for tools registered on the worker)',
      );
    }
  }
  return [...new Set(names)];
}

/**
 * The configuration the workflow is started with: the values set by the config file (`file`, else
 * DC_COMPACTION_CONFIG), the environment (DC_<KEY>, seed 001's names) and `window`, later wins.
 * Returns only what was set (the workflow fills the defaults), after validating the whole.
 * @throws ConfigError naming every problem
 */
export function resolveStartConfig(options: {
  file?: string;
  window?: number;
  env?: Readonly<Record<string, string | undefined>>;
}): Record<string, unknown> {
  const env = options.env ?? process.env;
  const file = options.file ?? env[CONFIG_FILE_VARIABLE];
  const problems: string[] = [];
  const collect = (read: () => Record<string, unknown>): Record<string, unknown> => {
    try {
      return read();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
      return {};
    }
  };
  const fromFile = file ? collect(() => readCompactionConfigFile(file)) : {};
  const fromEnv = collect(() => compactionConfigFromEnv(env));
  if (problems.length > 0) throw new ConfigError(problems);
  const merged = {
    ...fromFile,
    ...fromEnv,
    ...(options.window !== undefined ? { maxContextTokens: options.window } : {}),
  };
  parseCompactionConfig(merged);
  return merged;
}

function readText(flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read ${flag} ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
}

/** The system prompt of a recorded session, after checking the file imports cleanly. */
function recordingSystemPrompt(path: string, model: string): string | null {
  const text = readText('--recorded', path);
  let session;
  try {
    session = importSession(text, { fileName: path, tokenizer: tokenCounterForModel(model) });
  } catch (err) {
    if (err instanceof ImportError) throw new UsageError(`cannot import --recorded ${path}: ${err.message}`);
    throw err;
  }
  const system = session.items.find((item) => item.type === 'SYSTEM_PROMPT');
  return system && system.type === 'SYSTEM_PROMPT' ? messageText(system.message) : null;
}

/**
 * The workflow input for `start`'s flags.
 * @throws UsageError, ConfigError or ImportError (the recorded session) — nothing has started
 */
export function buildStartInput(
  flags: StartFlags,
  env: Readonly<Record<string, string | undefined>> = process.env,
): AgentConversationInput {
  const conversationId = checkConversationId(flags.id ?? newConversationId());
  if (flags.system !== undefined && flags.systemFile !== undefined)
    throw new UsageError('give --system or --system-file, not both');
  const model = flags.model ?? DEFAULT_MODEL;
  if (model.trim() === '') throw new UsageError('--model must not be empty');
  const window = flags.window === undefined ? undefined : intArgument('--window', String(flags.window), 1);
  const tools = parseTools(flags.tools, flags.allowUnknownTools);
  let workspace: string | undefined;
  if (flags.workspace !== undefined) {
    workspace = resolve(flags.workspace);
    let isDir = false;
    try {
      isDir = statSync(workspace).isDirectory();
    } catch {
      throw new UsageError(`--workspace ${flags.workspace} does not exist`);
    }
    if (!isDir) throw new UsageError(`--workspace ${flags.workspace} is not a directory`);
  }
  const recordingPath = flags.recorded === undefined ? undefined : resolve(flags.recorded);
  const recordedPrompt = recordingPath ? recordingSystemPrompt(recordingPath, model) : null;
  let systemPrompt = flags.system ?? recordedPrompt ?? DEFAULT_SYSTEM_PROMPT;
  if (flags.systemFile !== undefined) systemPrompt = readText('--system-file', flags.systemFile);
  if (systemPrompt.trim() === '') throw new UsageError('the system prompt is empty');
  const config = resolveStartConfig({ file: flags.config, window, env });
  return {
    conversationId,
    systemPrompt,
    tools,
    ...(workspace ? { workspace } : {}),
    model: {
      provider: recordingPath ? 'recorded' : 'openai',
      model,
      ...(flags.summaryModel ? { summaryModel: flags.summaryModel } : {}),
      ...(recordingPath ? { recordingPath } : {}),
    },
    config,
  };
}
