/**
 * Where the compaction configuration comes from (DESIGN.md §7). Later wins:
 *
 *   defaults → config file → environment → explicit overrides (workflow start arguments)
 *
 * - The file is YAML with seed 004's `context_compaction:` block (other top-level keys are left to
 *   their owners), or, in a file without that block, the compaction keys at top level. Keys are
 *   snake_case as in the seed (`max_context_tokens`) or the schema's camelCase (`maxContextTokens`);
 *   seed 004's `summary_max_length` is `summaryMaxTokens`, and seed 001's names below are accepted
 *   too. The file is `sources.file`, else `DC_COMPACTION_CONFIG`. This is the one reader of such
 *   files (`start --config`, `up`, the worker's defaults): a problem names the file, the key and
 *   the value.
 * - The environment: seed 001's variables, lower- or upper-case — `sliding_window_size` (split into
 *   `slidingWindowAssistantMessages` = ⌈n/2⌉ and `slidingWindowUserToolMessages` = ⌊n/2⌋: 9 → 5 + 4),
 *   `importance_score_threshold`, `incremental_summary_chunk_size` (`incrementalChunkRounds`),
 *   `conversation_turn_threshold` (`roundsThreshold`) — and `DC_<KEY>` for every schema key
 *   (`DC_MAX_CONTEXT_TOKENS`, `DC_TRIGGER_RATIO`, `DC_SELECTIVE_RULES` as JSON, ...). A `DC_`
 *   variable wins over a seed 001 variable for the same key.
 *
 * Every value is checked where it comes from, and a problem names its file and key or its variable;
 * the merged result is then checked as a whole (`parseCompactionConfig`: targetRatio below
 * triggerRatio, ...). Problems are thrown together as one {@link ConfigError}.
 */
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import {
  compactionConfigFields,
  ConfigError,
  parseCompactionConfig,
  type CompactionConfig,
} from '../context/config';

/** The block of the YAML file that holds the compaction configuration (seed 004). */
export const CONFIG_FILE_BLOCK = 'context_compaction';
/** The variable naming the YAML file when no path is given. */
export const CONFIG_FILE_VARIABLE = 'DC_COMPACTION_CONFIG';
/** Prefix of the variables that set one schema key each (`DC_TRIGGER_RATIO`). */
export const ENV_PREFIX = 'DC_';

const FIELDS = compactionConfigFields();
type Key = keyof typeof FIELDS;
const KEYS = Object.keys(FIELDS) as Key[];

/** Names from the seeds that are not the schema key in snake_case. */
const ALIASES: Readonly<Record<string, Key | 'slidingWindowSize'>> = {
  summary_max_length: 'summaryMaxTokens', // seed 004
  sliding_window_size: 'slidingWindowSize', // seed 001, split in two
  incremental_summary_chunk_size: 'incrementalChunkRounds', // seed 001
  conversation_turn_threshold: 'roundsThreshold', // seed 001
  importance_score_threshold: 'importanceScoreThreshold', // seed 001
};

/** Seed 001's environment variables (also accepted upper-case). */
const SEED_VARIABLES = [
  'sliding_window_size',
  'importance_score_threshold',
  'incremental_summary_chunk_size',
  'conversation_turn_threshold',
] as const;

const snake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const BY_SNAKE = new Map<string, Key>(KEYS.map((key) => [snake(key), key]));

/** The schema key a file or variable name stands for, or undefined. */
function keyFor(name: string): Key | 'slidingWindowSize' | undefined {
  if ((KEYS as string[]).includes(name)) return name as Key;
  if (name === 'slidingWindowSize') return name;
  return ALIASES[name] ?? BY_SNAKE.get(name);
}

/** The values read from one source so far, and the problems found. */
interface Collected {
  values: Record<string, unknown>;
  problems: string[];
}

/** A value as a problem quotes it: JSON (a number as written, `.nan` as NaN), cut to 60 characters. */
function shown(value: unknown): string {
  const text = typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * Checks one value against its field's schema; the problem names where the value came from and,
 * with `quote`, the value itself (`(got 1.2)`: a file's values are not in front of the reader).
 */
function checkField(key: Key, value: unknown, where: string, problems: string[], quote = false): void {
  const result = FIELDS[key].safeParse(value);
  if (result.success) return;
  for (const issue of result.error.issues) {
    const path = issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : '';
    const message =
      issue.code === 'unrecognized_keys' ? `unknown key(s) ${issue.keys.join(', ')}` : issue.message;
    problems.push(`${where}: ${path}${message}${quote ? ` (got ${shown(value)})` : ''}`);
  }
}

/** Sets a key (splitting `sliding_window_size`) after checking its value; `quote` as in {@link checkField}. */
function setField(
  out: Collected,
  key: Key | 'slidingWindowSize',
  value: unknown,
  where: string,
  quote = false,
): void {
  if (key === 'slidingWindowSize') {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      out.problems.push(
        `${where}: sliding_window_size must be a whole number, 0 or more${quote ? ` (got ${shown(value)})` : ''}`,
      );
      return;
    }
    out.values.slidingWindowAssistantMessages = Math.ceil(value / 2);
    out.values.slidingWindowUserToolMessages = Math.floor(value / 2);
    return;
  }
  const before = out.problems.length;
  checkField(key, value, where, out.problems, quote);
  if (out.problems.length === before) out.values[key] = value;
}

/** Rule objects may use `keep_recent` for `keepRecent`. */
function camelRules(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([type, rule]) => [
      type,
      typeof rule === 'object' && rule !== null && !Array.isArray(rule)
        ? Object.fromEntries(
            Object.entries(rule as Record<string, unknown>).map(([k, v]) => [
              k === 'keep_recent' ? 'keepRecent' : k,
              v,
            ]),
          )
        : rule,
    ]),
  );
}

/**
 * The compaction settings of a YAML file as a partial configuration (camelCase keys): its
 * `context_compaction:` block, or, in a file without one, its top-level keys. An empty file sets
 * nothing.
 * @throws ConfigError naming the file, key and value of every problem: unreadable file, bad YAML,
 *   not a mapping, unknown keys, values of the wrong type or out of range
 */
export function readCompactionConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError([
      `${path}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    ]);
  }
  return compactionConfigFromYaml(text, path);
}

const isMapping = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Like {@link readCompactionConfigFile}, from the text of the file (`path` names it in messages). */
export function compactionConfigFromYaml(text: string, path: string): Record<string, unknown> {
  const doc = parseDocument(text);
  const [firstError] = doc.errors;
  if (firstError) {
    throw new ConfigError([`${path}: not valid YAML: ${firstError.message.split('\n')[0] ?? ''}`]);
  }
  const top: unknown = doc.toJS();
  if (top === null || top === undefined) return {};
  if (!isMapping(top)) {
    throw new ConfigError([
      `${path}: expected a mapping of compaction keys (or a ${CONFIG_FILE_BLOCK}: block)`,
    ]);
  }
  let settings: Record<string, unknown> = top;
  let prefix = '';
  if (CONFIG_FILE_BLOCK in top) {
    const block = top[CONFIG_FILE_BLOCK];
    if (block === null || block === undefined) return {};
    if (!isMapping(block)) {
      throw new ConfigError([`${path}: ${CONFIG_FILE_BLOCK} must be a mapping of keys to values`]);
    }
    settings = block;
    prefix = `${CONFIG_FILE_BLOCK}.`;
  }
  const out: Collected = { values: {}, problems: [] };
  for (const [name, value] of Object.entries(settings)) {
    const where = `${path}: ${prefix}${name}`;
    const key = keyFor(name);
    if (key === undefined) out.problems.push(`${where}: unknown key`);
    else setField(out, key, key === 'selectiveRules' ? camelRules(value) : value, where, true);
  }
  if (out.problems.length > 0) throw new ConfigError(out.problems);
  return out.values;
}

/** `DC_` variables of other parts of the project (`src/cli`, `src/infra`): not compaction keys. */
const OTHER_DC_VARIABLES = new Set([
  'DC_DATA_DIR',
  'DC_PG_PORT',
  'DC_SHUTDOWN_GRACE',
  'DC_ALLOW_INSECURE_DB',
  // payload encryption (src/infra/codec.ts)
  'DC_PAYLOAD_KEY',
  'DC_PAYLOAD_OLD_KEYS',
  'DC_CODEC_ENDPOINT',
  // message bodies by reference (src/infra/claim-check.ts)
  'DC_CLAIM_CHECK',
  'DC_CLAIM_CHECK_BYTES',
]);

/** A number as a variable holds one: decimal, with optional sign, fraction and exponent (`Number` alone would take `0x10`). */
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

const name = (key: Key | 'slidingWindowSize'): string =>
  key === 'slidingWindowSize' ? 'sliding_window_size' : key;

/** A variable's text as the type its field wants; the field's check then judges the value. */
function fromText(key: Key | 'slidingWindowSize', text: string, where: string, problems: string[]): unknown {
  const trimmed = text.trim();
  if (key === 'selectiveRules') {
    try {
      return camelRules(JSON.parse(trimmed) as unknown);
    } catch {
      problems.push(`${where}: selectiveRules must be JSON (an object of item type → rule)`);
      return undefined;
    }
  }
  const sample = key === 'slidingWindowSize' ? 0 : FIELDS[key].parse(undefined);
  if (typeof sample === 'number') {
    const n = DECIMAL.test(trimmed) ? Number(trimmed) : Number.NaN;
    if (Number.isNaN(n)) {
      problems.push(`${where}: ${name(key)} must be a number, got "${text}"`);
      return undefined;
    }
    return n;
  }
  if (typeof sample === 'boolean') {
    if (TRUE.has(trimmed.toLowerCase())) return true;
    if (FALSE.has(trimmed.toLowerCase())) return false;
    problems.push(`${where}: ${name(key)} must be true or false, got "${text}"`);
    return undefined;
  }
  return text;
}

/**
 * The configuration set by environment variables, as a partial configuration (camelCase keys).
 * Other variables are ignored, except `DC_` ones that name no key and belong to no other part of
 * the project ({@link OTHER_DC_VARIABLES}): a typo such as `DC_TRIGER_RATIO` is refused.
 * @throws ConfigError naming the variable of every problem
 */
export function compactionConfigFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, unknown> {
  const out: Collected = { values: {}, problems: [] };
  const apply = (variable: string, key: Key | 'slidingWindowSize'): void => {
    const text = env[variable];
    if (text === undefined) return;
    const where = variable;
    const before = out.problems.length;
    const value = fromText(key, text, where, out.problems);
    if (out.problems.length === before) setField(out, key, value, where);
  };
  // Seed 001's names first, so a DC_ variable for the same key wins.
  for (const name of SEED_VARIABLES) {
    const key = keyFor(name);
    if (!key) continue;
    if (env[name] !== undefined) apply(name, key);
    else if (env[name.toUpperCase()] !== undefined) apply(name.toUpperCase(), key);
  }
  for (const variable of Object.keys(env).sort()) {
    if (!variable.startsWith(ENV_PREFIX) || variable === CONFIG_FILE_VARIABLE) continue;
    const key = BY_SNAKE.get(variable.slice(ENV_PREFIX.length).toLowerCase());
    if (key) apply(variable, key);
    else if (!OTHER_DC_VARIABLES.has(variable)) out.problems.push(`${variable}: unknown compaction setting`);
  }
  if (out.problems.length > 0) throw new ConfigError(out.problems);
  return out.values;
}

export interface ConfigSources {
  /** The YAML file; default `env.DC_COMPACTION_CONFIG`; null: no file even when that is set. */
  file?: string | null;
  /** The environment; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Explicit values (workflow start arguments, CLI flags), camelCase; they win over everything. */
  overrides?: Record<string, unknown>;
}

/**
 * The configuration: defaults → file → environment → overrides, validated as a whole.
 * @throws ConfigError naming the file key or variable of every problem
 */
export function loadCompactionConfig(sources: ConfigSources = {}): CompactionConfig {
  const env = sources.env ?? process.env;
  const file = sources.file === undefined ? (env[CONFIG_FILE_VARIABLE] ?? null) : sources.file;
  const problems: string[] = [];
  const collect = (read: () => Record<string, unknown>): Record<string, unknown> => {
    try {
      return read();
    } catch (err) {
      if (err instanceof ConfigError) {
        problems.push(...err.problems);
        return {};
      }
      throw err;
    }
  };
  const fromFile = file ? collect(() => readCompactionConfigFile(file)) : {};
  const fromEnv = collect(() => compactionConfigFromEnv(env));
  const overrides = collect(() => {
    const out: Collected = { values: {}, problems: [] };
    for (const [name, value] of Object.entries(sources.overrides ?? {})) {
      if (value === undefined) continue;
      if ((KEYS as string[]).includes(name)) setField(out, name as Key, value, `override ${name}`);
      else out.problems.push(`override ${name}: unknown key`);
    }
    if (out.problems.length > 0) throw new ConfigError(out.problems);
    return out.values;
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return parseCompactionConfig({ ...fromFile, ...fromEnv, ...overrides });
}
