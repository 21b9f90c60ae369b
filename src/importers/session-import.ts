/**
 * One entry point for any session file: detects the format and imports it. Pure.
 */
import type { SessionFormat } from '../context/items';
import { pairToolCalls } from '../context/tool-pairs';
import { defaultIdPrefix, type ImportedSession, type ImportOptions, type OpenAILayout } from './common';
import { ImportError } from './errors';
import {
  checkJsonDepth,
  describe,
  isRecord,
  jsonIndent,
  parseJson,
  parseJsonLines,
  withLineWarnings,
  type JsonLine,
} from './json';
import { importOpenAIChat, openAIFromLines, openAIFromValue } from './openai-chat-import';
import {
  anthropicFromLines,
  anthropicFromMarkdown,
  anthropicFromValue,
  importAnthropicMessages,
  isAnthropicMessages,
} from './anthropic-messages';
import { claudeCodeFromLines, importClaudeCodeSession } from './claude-code-import';
import { codexFromLines, importCodexRollout, RESPONSE_ITEM_TYPES, ROLLOUT_LINE_TYPES } from './codex-import';
import {
  geminiFromLines,
  geminiFromValue,
  importGeminiRecording,
  isGeminiLines,
  isGeminiRecording,
} from './gemini-cli';
import { isGeminiContents } from './gemini-contents';
import { isMiniSweAgentTrajectory } from './mini-swe-agent';
import { importOpenHandsTrajectory, isOpenHandsFile, openHandsFromValue } from './openhands-import';
import { importOpenCodeSession, isOpenCodeExport, openCodeFromValue } from './opencode';
import { importPiSession, piFromLines } from './pi-session-import';
import { importSweAgentTraj, sweAgentFromValue } from './swe-agent-import';
import { isTaskMarkdown } from './task-markdown';

export interface DetectedFormat {
  format: SessionFormat;
  /** For message lists: how the messages are laid out (`markdown`: a task Cline or Roo Code exported). */
  layout?: OpenAILayout | 'markdown';
}

type Parsed = { kind: 'value'; value: unknown } | { kind: 'lines'; lines: JsonLine[] } | { kind: 'markdown' };

function extension(fileName: string | undefined): string {
  const match = fileName ? /\.([^./\\]+)$/.exec(fileName) : null;
  return match ? (match[1] as string).toLowerCase() : '';
}

/** The text as one JSON value, or as JSONL when it is not one value (or the file is `.jsonl`). */
function parse(text: string, fileName: string | undefined): Parsed {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim().length === 0) throw new ImportError('the input is empty');
  if (isTaskMarkdown(body)) return { kind: 'markdown' };
  if (extension(fileName) === 'jsonl') return { kind: 'lines', lines: parseJsonLines(body) };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    const lines = body.split('\n').filter((line) => line.trim().length > 0);
    // Several lines that do not form one JSON value: JSONL (a bad line is reported with its number),
    // unless the first line opens a value written over many lines (no JSONL line is a bare '{').
    if (lines.length > 1 && !body.trimStart().startsWith('[') && lines[0]?.trim() !== '{')
      return { kind: 'lines', lines: parseJsonLines(body) };
    parseJson(body);
    throw err;
  }
  checkJsonDepth(value);
  return { kind: 'value', value };
}

/** A Claude Code line: a `user` or `assistant` event holding an API `message`. */
function isClaudeCodeLine(value: unknown): boolean {
  return isRecord(value) && (value.type === 'user' || value.type === 'assistant') && isRecord(value.message);
}

/** A Codex rollout line: `{ type, payload }` of a rollout line type. */
function isCodexLine(value: unknown): boolean {
  return (
    isRecord(value) &&
    typeof value.type === 'string' &&
    ROLLOUT_LINE_TYPES.has(value.type) &&
    'payload' in value
  );
}

/** An older Codex rollout: a header (`id`, `timestamp`, no `type`), then bare Responses API items. */
function isOlderCodex(lines: readonly JsonLine[]): boolean {
  const [head, next] = lines;
  return (
    isRecord(head?.value) &&
    head.value.type === undefined &&
    head.value.role === undefined &&
    typeof head.value.id === 'string' &&
    typeof head.value.timestamp === 'string' &&
    (next === undefined ||
      (isRecord(next.value) &&
        (typeof next.value.record_type === 'string' ||
          (typeof next.value.type === 'string' && RESPONSE_ITEM_TYPES.has(next.value.type)))))
  );
}

/**
 * A JSONL file's kind: chat messages have `role` (on the first line); Claude Code and Codex are
 * told by their lines' shapes (any line); an older Codex rollout by its header; pi entries have `type`.
 */
function linesFormat(lines: readonly JsonLine[]): DetectedFormat {
  const first = lines[0];
  if (!first) throw new ImportError('the input has no entries');
  if (isRecord(first.value) && typeof first.value.role === 'string') {
    return isAnthropicMessages(lines.map((l) => l.value))
      ? { format: 'anthropic', layout: 'jsonl' }
      : { format: 'openai', layout: 'jsonl' };
  }
  // An OpenHands evaluation's output.jsonl: a trajectory (`{ instance_id, history, … }`) a line.
  if (lines.every((l) => isOpenHandsFile(l.value))) {
    if (lines.length === 1) return { format: 'openhands' };
    throw new ImportError(
      `an OpenHands evaluation output of ${lines.length} trajectories, one a line: a session is one of them (give its line as a file of its own)`,
    );
  }
  if (isGeminiLines(lines)) return { format: 'gemini' };
  if (lines.some((l) => isClaudeCodeLine(l.value))) return { format: 'claude-code' };
  if (lines.some((l) => isCodexLine(l.value)) || isOlderCodex(lines)) return { format: 'codex' };
  if (isRecord(first.value) && typeof first.value.type === 'string') return { format: 'pi' };
  throw new ImportError(
    `expected a chat message (with "role"), a pi session entry, a Claude Code line or a Codex rollout line (with "type"), got ${describe(first.value)}`,
    { line: first.line },
  );
}

function valueFormat(value: unknown, fileName: string | undefined): DetectedFormat {
  if (extension(fileName) === 'traj') return { format: 'swe-agent' };
  // Before SWE-agent's `history` and OpenAI's bare list: OpenHands keeps its events in either.
  if (isOpenHandsFile(value)) return { format: 'openhands' };
  if (isGeminiRecording(value) || isGeminiContents(value)) return { format: 'gemini' };
  // Before OpenAI's `{ messages }`: an OpenCode export's messages are `{ info, parts }`.
  if (isOpenCodeExport(value)) return { format: 'opencode' };
  if ((isRecord(value) && Array.isArray(value.history)) || isMiniSweAgentTrajectory(value))
    return { format: 'swe-agent' };
  // Anthropic's Messages format before OpenAI's: its lists have the same outline.
  if (Array.isArray(value))
    return { format: isAnthropicMessages(value) ? 'anthropic' : 'openai', layout: 'array' };
  if (isRecord(value) && Array.isArray(value.messages))
    return { format: isAnthropicMessages(value.messages) ? 'anthropic' : 'openai', layout: 'object' };
  // A one-line JSONL file.
  if (isRecord(value) && typeof value.role === 'string')
    return { format: isAnthropicMessages([value]) ? 'anthropic' : 'openai', layout: 'jsonl' };
  if (isClaudeCodeLine(value)) return { format: 'claude-code' };
  if (isCodexLine(value)) return { format: 'codex' };
  if (isRecord(value) && typeof value.type === 'string') return { format: 'pi' };
  throw new ImportError(
    'not a session: expected an OpenAI chat list (an array, or an object with "messages"), ' +
      'a SWE-agent trajectory (an object with "history", or with "messages" and "trajectory_format" for mini-SWE-agent), a pi session (JSONL entries with "type"), ' +
      'a Claude Code session or a Codex rollout (JSONL), an OpenHands trajectory (a list of events), ' +
      'a Gemini CLI chat recording (an object with "sessionId", "projectHash" and "messages") or saved chat (Content with "role" and "parts"), ' +
      'an OpenCode export (an object with "info" and "messages" of "info" and "parts"), ' +
      `got ${describe(value)}`,
  );
}

/** Which format a session text is in (the file name's extension helps: `.traj`, `.jsonl`). */
export function detectSessionFormat(text: string, fileName?: string): DetectedFormat {
  const parsed = parse(text, fileName);
  if (parsed.kind === 'markdown') return { format: 'anthropic', layout: 'markdown' };
  return parsed.kind === 'lines' ? linesFormat(parsed.lines) : valueFormat(parsed.value, fileName);
}

/** The importer of each format, for a format given rather than detected. */
const IMPORTERS: Record<SessionFormat, (text: string, options: ImportOptions) => ImportedSession> = {
  openai: importOpenAIChat,
  anthropic: importAnthropicMessages,
  'swe-agent': importSweAgentTraj,
  pi: importPiSession,
  'claude-code': importClaudeCodeSession,
  codex: importCodexRollout,
  openhands: importOpenHandsTrajectory,
  gemini: importGeminiRecording,
  opencode: importOpenCodeSession,
};

/** A JSONL session of the format its lines show. */
function fromLines(lines: readonly JsonLine[], text: string, options: ImportOptions): ImportedSession {
  const { format } = linesFormat(lines);
  const prefix = options.idPrefix ?? defaultIdPrefix(format, text);
  switch (format) {
    case 'pi':
      return piFromLines(lines, options, prefix);
    case 'claude-code':
      return claudeCodeFromLines(lines, options, prefix);
    case 'codex':
      return codexFromLines(lines, options, prefix);
    case 'anthropic':
      return anthropicFromLines(lines, options, prefix);
    case 'gemini':
      return geminiFromLines(lines, options, prefix);
    case 'openhands':
      return openHandsFromValue((lines[0] as JsonLine).value, options, prefix, jsonIndent(text));
    default:
      return openAIFromLines(lines, options, prefix);
  }
}

/**
 * Imports a session of any supported kind: an OpenAI chat list (array, `{ messages }`, JSONL), a
 * list in Anthropic's Messages format (the same layouts, or a Cline or Roo Code task exported as
 * Markdown), a SWE-agent trajectory, a pi session, a Claude Code session, a Codex rollout, an
 * OpenHands trajectory, what Gemini CLI keeps a chat in or an OpenCode export. The format is detected from the content
 * (and the file name's extension when given), unless `format` names it: then that format's
 * importer reads the text (`importOpenAIChat`, `importAnthropicMessages`, `importSweAgentTraj`,
 * `importPiSession`, `importClaudeCodeSession`, `importCodexRollout`, `importOpenHandsTrajectory`,
 * `importGeminiRecording`, `importOpenCodeSession`) and `fileName` is not used. Tool results that
 * answer no call before them are kept (and written back) but never sent to the model: a warning
 * says how many.
 * @throws ImportError naming the line (JSONL) or field of malformed input
 */
export function importSession(
  text: string,
  options: ImportOptions & { fileName?: string; format?: SessionFormat },
): ImportedSession {
  const session = importAny(text, options);
  const orphans = pairToolCalls(session.items).orphanResults.length;
  if (orphans === 0) return session;
  const warning =
    `${orphans} tool result${orphans === 1 ? '' : 's'} answer${orphans === 1 ? 's' : ''} no call before ` +
    `${orphans === 1 ? 'it' : 'them'}: kept and written back, never sent to the model (a request holds no result without its call)`;
  return { ...session, warnings: [...(session.warnings ?? []), warning] };
}

/** {@link importSession}, before its check of the results' calls. */
function importAny(
  text: string,
  options: ImportOptions & { fileName?: string; format?: SessionFormat },
): ImportedSession {
  if (options.format !== undefined) return IMPORTERS[options.format](text, options);
  const parsed = parse(text, options.fileName);
  if (parsed.kind === 'markdown')
    return anthropicFromMarkdown(text, options, options.idPrefix ?? defaultIdPrefix('anthropic', text));
  if (parsed.kind === 'lines') {
    return withLineWarnings(fromLines(parsed.lines, text, options), parsed.lines);
  }
  const { format, layout } = valueFormat(parsed.value, options.fileName);
  const prefix = options.idPrefix ?? defaultIdPrefix(format, text);
  switch (format) {
    case 'swe-agent':
      return sweAgentFromValue(parsed.value, options, prefix);
    case 'pi':
      return piFromLines([{ line: 1, value: parsed.value }], options, prefix);
    case 'claude-code':
      return claudeCodeFromLines([{ line: 1, value: parsed.value }], options, prefix);
    case 'codex':
      return codexFromLines([{ line: 1, value: parsed.value }], options, prefix);
    case 'openhands':
      return openHandsFromValue(parsed.value, options, prefix, jsonIndent(text));
    case 'gemini':
      return geminiFromValue(parsed.value, options, prefix, jsonIndent(text));
    case 'opencode':
      return openCodeFromValue(parsed.value, options, prefix, jsonIndent(text));
    case 'anthropic':
      return layout === 'jsonl'
        ? anthropicFromLines([{ line: 1, value: parsed.value }], options, prefix)
        : anthropicFromValue(parsed.value, options, prefix);
    case 'openai':
      return layout === 'jsonl'
        ? openAIFromLines([{ line: 1, value: parsed.value }], options, prefix)
        : openAIFromValue(parsed.value, options, prefix);
  }
}
