/**
 * The client commands without Temporal: argument checks (exit 2 with one clear line), Update
 * failures as the user sees them, and the formatting of usage, compactions, status and chat lines.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/context/config';
import { ImportError } from '../../../src/importers';
import { cliError, exitCodeFor, intArgument, UsageError, workflowUiUrl } from '../../../src/cli/client';
import {
  ConversationExistsError,
  conversationErrorFrom,
  NotRespondingError,
  newConversationId,
  renderExport,
  RequestFailedError,
  TemporalUnreachableError,
} from '../../../src/client';
import { describeError, InfraError } from '../../../src/infra/errors';
import { parseChatLine } from '../../../src/cli/commands/chat';
import { parseExportFormat } from '../../../src/cli/commands/export';
import { parseSessionFormat } from '../../../src/cli/commands/import';
import { queuedMessage } from '../../../src/cli/commands/send';
import { connectLine } from '../../../src/cli/commands/up';
import {
  formatCompaction,
  formatPhase,
  formatSendResult,
  formatStatus,
  formatUsage,
} from '../../../src/cli/format';
import { buildStartInput, parseTools } from '../../../src/cli/start-options';
import { SAMPLE_SESSION } from '../../../src/cli/demo';
import {
  NO_REVIEW_PENDING,
  type CompactionBrief,
  type ConversationStatus,
} from '../../../workflows/definitions';
import { tempFiles, thrown } from '../../support/files';

const file = tempFiles('dc-cli-');
const noEnv = {};

const brief = (over: Partial<CompactionBrief> = {}): CompactionBrief => ({
  seq: 2,
  compactionId: 'c2',
  trigger: 'precheck',
  status: 'committed',
  round: 4,
  strategy: 'summary-2',
  tokensBefore: 3400,
  tokensAfter: 1190,
  savedRatio: 0.65,
  reason: null,
  ...over,
});

describe('formatting', () => {
  it.each([
    [41_200, 128_000, '41,200 / 128,000 · 32%'],
    [0, 4000, '0 / 4,000 · 0%'],
    [4000, 4000, '4,000 / 4,000 · 100%'],
    [10, 0, '10 / 0 · 0%'],
  ])('usage %d of %d is %s', (tokens, window, text) => {
    expect(formatUsage(tokens, window)).toBe(text);
  });

  it('a compaction: trigger, tokens before → after, saved %', () => {
    expect(formatCompaction(brief())).toBe(
      'compaction #2 (precheck, summary-2): 3,400 → 1,190 tokens, saved 65%',
    );
    expect(formatCompaction(brief({ status: 'rolled_back', reason: 'summary empty', strategy: null }))).toBe(
      'compaction #2 (precheck) rolled back: summary empty',
    );
    expect(formatCompaction(brief({ status: 'skipped', trigger: 'rounds', reason: 'cooldown' }))).toMatch(
      /^compaction #2 \(rounds, summary-2\) skipped: cooldown$/,
    );
  });

  it('a round: reply, usage, compactions; a shortened reply says where the rest is', () => {
    const lines = formatSendResult('conv-1', {
      round: 3,
      replyItemId: 'r',
      reply: 'Done.',
      replyTruncated: true,
      usage: null,
      contextTokens: 41_200,
      window: 128_000,
      compactions: [brief()],
    });
    expect(lines).toEqual([
      'Done.',
      '… (reply shortened; the whole text: durable-compaction export conv-1)',
      'tokens: 41,200 / 128,000 · 32%',
      'compaction #2 (precheck, summary-2): 3,400 → 1,190 tokens, saved 65%',
    ]);
  });

  it('a compaction that ran before the reply was written is printed before it', () => {
    const lines = formatSendResult('conv-1', {
      round: 3,
      replyItemId: 'r',
      reply: 'Done.',
      usage: null,
      contextTokens: 41_200,
      window: 128_000,
      compactions: [brief({ seq: 2 }), brief({ seq: 3, trigger: 'check' })],
      compactionsBeforeReply: 1,
    });
    expect(lines).toEqual([
      'compaction #2 (precheck, summary-2): 3,400 → 1,190 tokens, saved 65%',
      'Done.',
      'tokens: 41,200 / 128,000 · 32%',
      'compaction #3 (check, summary-2): 3,400 → 1,190 tokens, saved 65%',
    ]);
  });

  const status: ConversationStatus = {
    conversationId: 'conv-1',
    phase: 'awaiting_approval',
    rounds: 7,
    contextTokens: 3300,
    window: 4000,
    ratio: 0.825,
    itemCount: 15,
    activeVersion: 3,
    compactions: 1,
    lastCompaction: brief({ seq: 1 }),
    cooldownUntil: 10_000,
    cooldownActive: true,
    pausedReason: null,
    queued: 1,
    awaitingApproval: { trigger: 'precheck', tokens: 3300 },
    ended: false,
    runs: 1,
  };

  it('status names the phase, usage, compactions, cooldown, approval and queue', () => {
    const text = formatStatus(status, 4_000).join('\n');
    expect(text).toContain('conv-1 · awaiting_approval');
    expect(text).toContain('3,300 / 4,000 · 83% (15 items, version 3)');
    expect(text).toContain('last: compaction #1 (precheck, summary-2): 3,400 → 1,190 tokens');
    expect(text).toContain('automatic compaction resumes in 6 s');
    expect(text).toContain('a precheck compaction (3,300 tokens) awaits approval');
    expect(text).toContain('queued       1 message');
  });

  it.each([
    ['compacting', 'compacting…'],
    ['model', 'waiting for the model…'],
    ['tool', 'running tools…'],
    ['idle', null],
  ] as const)('phase %s reads %s', (phase, line) => {
    expect(formatPhase({ phase, awaitingApproval: null })).toBe(line);
  });

  it('a message sent while a compaction awaits approval is reported as queued, with how to decide', () => {
    expect(queuedMessage('conv-1', 'precheck')).toBe(
      'queued: a precheck compaction of conv-1 awaits approval; the message is answered once it is ' +
        'approved or rejected (`durable-compaction approve conv-1` or `reject conv-1`)',
    );
    expect(queuedMessage('conv-1', 'rounds', 'chat')).toMatch(/\(\/approve or \/reject\)$/);
    expect(queuedMessage('conv-1', 'manual', 'cli', 'review')).toBe(
      'queued: a manual compaction of conv-1 awaits review; the message is answered once it is ' +
        'approved or rejected (`durable-compaction review conv-1`, then `approve conv-1` or `reject conv-1`)',
    );
  });

  it("up's line for other shells: the embedded PostgreSQL's URL whole, an external one left out", () => {
    expect(
      connectLine({
        temporalAddress: '127.0.0.1:7233',
        uiUrl: 'http://localhost:8233',
        databaseUrl: 'postgres://postgres:durable-compaction@127.0.0.1:5433/durable_compaction',
      }),
    ).toBe(
      'export TEMPORAL_ADDRESS=127.0.0.1:7233 ' +
        'DATABASE_URL=postgres://postgres:durable-compaction@127.0.0.1:5433/durable_compaction ' +
        'TEMPORAL_UI_URL=http://localhost:8233',
    );
    expect(connectLine({ temporalAddress: 'temporal:7233', uiUrl: null, databaseUrl: null })).toBe(
      'export TEMPORAL_ADDRESS=temporal:7233',
    );
  });

  it('the Web UI link', () => {
    expect(workflowUiUrl({ namespace: 'default', uiBase: 'http://localhost:8233' }, 'conv 1')).toBe(
      'http://localhost:8233/namespaces/default/workflows/conv%201',
    );
  });
});

describe('arguments', () => {
  it.each(['0', '-3', '1.5', 'abc', '', '12x'])('%j is not a version', (value) => {
    expect(() => intArgument('--version', value)).toThrow(UsageError);
  });

  it('whole numbers pass', () => {
    expect(intArgument('--version', '12')).toBe(12);
  });

  it('generated ids are valid and distinct', () => {
    const a = newConversationId('conv', new Date('2025-01-02T03:04:05.678Z'));
    expect(a).toMatch(/^conv-20250102T030405Z-[0-9a-f]{6}$/);
    expect(newConversationId()).not.toBe(newConversationId());
  });

  it('tools: built-in names pass, unknown ones are refused unless allowed', () => {
    expect(parseTools('read_file, search_text,read_file')).toEqual(['read_file', 'search_text']);
    expect(thrown(() => parseTools('read_file,shell')).message).toMatch(
      /unknown tool "shell"; built-in tools: read_file/,
    );
    expect(parseTools('shell', true)).toEqual(['shell']);
    expect(() => parseTools('rm -rf/', true)).toThrow(/invalid tool name "-rf\/"/);
  });

  it.each([
    [{ system: 'a', systemFile: 'b' }, /--system or --system-file, not both/],
    [{ window: '12x' }, /--window must be a whole number/],
    [{ id: 'no/slash' }, /invalid conversation id "no\/slash"/],
    [{ workspace: '/nonexistent/dir' }, /--workspace \/nonexistent\/dir does not exist/],
    [
      { systemFile: '/nonexistent/prompt.txt' },
      /cannot read --system-file \/nonexistent\/prompt.txt \(ENOENT\)/,
    ],
    [{ system: '   ' }, /the system prompt is empty/],
  ])('start %j is refused', (flags, message) => {
    const err = thrown(() => buildStartInput(flags, noEnv));
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toMatch(message);
    expect(exitCodeFor(err)).toBe(2);
  });

  it('start: defaults, window, summary model', () => {
    const input = buildStartInput(
      { id: 'conv-a', window: '32000', summaryModel: 'mini', tools: 'remember' },
      noEnv,
    );
    expect(input).toMatchObject({
      conversationId: 'conv-a',
      systemPrompt: 'You are a helpful assistant.',
      tools: ['remember'],
      model: { provider: 'openai', model: 'gpt-4o', summaryModel: 'mini' },
      config: { maxContextTokens: 32000 },
    });
  });

  it('start --recorded: provider recorded, the recording path, its system prompt', () => {
    const input = buildStartInput({ recorded: SAMPLE_SESSION }, noEnv);
    expect(input.model).toMatchObject({ provider: 'recorded', recordingPath: SAMPLE_SESSION });
    expect(input.systemPrompt).not.toBe('You are a helpful assistant.');
  });

  it('start --recorded with a malformed session names the file and the line', () => {
    const bad = file('bad-record.jsonl', '{"role":"system","content":"s"}\n{"role":"user","content":3}\n');
    const err = thrown(() => buildStartInput({ recorded: bad }, noEnv));
    expect(exitCodeFor(err)).toBe(2);
    expect(err.message).toMatch(new RegExp(`cannot import --recorded .*bad-record.jsonl: line 2`));
  });

  it.each([
    [
      '--format',
      () => parseSessionFormat('csv'),
      /--format must be one of openai, anthropic, swe-agent, pi, claude-code, codex, openhands, gemini, opencode \(got "csv"\)/,
    ],
    ['--format', () => parseExportFormat('xml'), /--format must be json or jsonl/],
  ])('%s is checked', (_flag, fn, message) => {
    expect(thrown(fn).message).toMatch(message);
  });
});

describe('export and chat lines', () => {
  const request = {
    messages: [
      { role: 'system' as const, content: 's' },
      { role: 'user' as const, content: 'u' },
    ],
    tools: [],
  };
  it('json is a request body, jsonl a message per line', () => {
    expect(JSON.parse(renderExport(request, 'json'))).toEqual({ messages: request.messages });
    expect(
      renderExport(request, 'jsonl')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(request.messages);
  });

  it.each([
    ['hello', { kind: 'message', text: 'hello' }],
    ['  ', { kind: 'empty' }],
    ['/compact', { kind: 'compact' }],
    ['/compact keep the API design', { kind: 'compact', focus: 'keep the API design' }],
    ['/approve', { kind: 'approve' }],
    ['/REJECT', { kind: 'reject' }],
    ['/status', { kind: 'status' }],
    ['/quit', { kind: 'quit' }],
    ['/exit', { kind: 'quit' }],
    ['/nope', { kind: 'unknown', command: '/nope' }],
  ])('%j', (line, parsed) => {
    expect(parseChatLine(line)).toEqual(parsed);
  });
});

/** A client error as the CLI shows it: the client's mapping, then the CLI's. */
const shown = (err: unknown): Error => cliError(conversationErrorFrom(err, 'conv-1')) as Error;

describe('answers to a review', () => {
  const failed = (type: string, message: string) =>
    new WorkflowUpdateFailedError('Workflow Update failed', ApplicationFailure.create({ message, type }));

  it('a review that ended meanwhile (decided, timed out) is bad input that says so', () => {
    const explained = shown(failed(NO_REVIEW_PENDING, 'the review has been answered already'));
    expect(explained).toBeInstanceOf(UsageError);
    expect(explained.message).toBe(
      'no compaction of conv-1 awaits review any more: it was decided or timed out meanwhile (`durable-compaction status conv-1`)',
    );
  });

  it('a refused edit says why; a validator refusal is bad input in its own words', () => {
    const refused = shown(failed('SUMMARY_EDIT_REFUSED', 'the edit is over the budget'));
    expect(refused).toBeInstanceOf(UsageError);
    expect(refused.message).toBe('the edit is over the budget');
    const other = shown(failed('Error', 'decision must be approve or reject'));
    expect(other).toBeInstanceOf(UsageError);
    expect(other.message).toBe('decision must be approve or reject');
  });
});

describe('Update failures', () => {
  it('a validator refusal is bad input', () => {
    const err = shown(
      new WorkflowUpdateFailedError(
        'Workflow Update failed',
        ApplicationFailure.create({ message: 'no compaction is awaiting approval', type: 'Error' }),
      ),
    );
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toBe('no compaction is awaiting approval');
  });

  it('a version that does not exist is bad input', () => {
    const cause = new ActivityFailure(
      'Activity task failed',
      'restoreVersion',
      '1',
      RetryState.NON_RETRYABLE_FAILURE,
      undefined,
      ApplicationFailure.create({
        message: 'conversation c has no version 99 to restore',
        type: 'VERSION_NOT_FOUND',
        nonRetryable: true,
      }),
    );
    const err = shown(new WorkflowUpdateFailedError('Workflow Update failed', cause));
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toBe('conversation c has no version 99 to restore');
  });

  it('a failed round is a runtime failure with its reason', () => {
    const err = shown(
      new WorkflowUpdateFailedError(
        'Workflow Update failed',
        ApplicationFailure.create({ message: 'model unreachable', type: 'ROUND_FAILED' }),
      ),
    );
    expect(exitCodeFor(err)).toBe(1);
    expect(err.message).toBe('Workflow Update failed: model unreachable');
  });

  it('import errors and config errors exit 2', () => {
    expect(exitCodeFor(new ImportError('bad', { line: 3 }))).toBe(2);
    expect(exitCodeFor(new ConfigError(['x']))).toBe(2);
    expect(exitCodeFor(new Error('boom'))).toBe(1);
  });
});

describe("the client's errors as the CLI shows them", () => {
  it('an id taken names the flag to change (exit 2)', () => {
    const err = cliError(new ConversationExistsError('conv-1'));
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toBe('conversation conv-1 already exists: choose another --id');
  });

  it('no worker, no server: one line with what to do (exit 1)', () => {
    const quiet = cliError(new NotRespondingError('conv-1', 'status', 'deadline exceeded'));
    expect(quiet).toBeInstanceOf(InfraError);
    expect(exitCodeFor(quiet)).toBe(1);
    expect(describeError(quiet)).toBe(
      'conversation conv-1 did not answer the status query (deadline exceeded) — ' +
        'is a worker running on its task queue? start one with `durable-compaction worker` or `up`',
    );
    const away = cliError(new TemporalUnreachableError('127.0.0.1:1', { cause: new Error('refused') }));
    expect(describeError(away)).toBe(
      'cannot reach the Temporal server at 127.0.0.1:1 (refused) — start it with `durable-compaction up`, or set TEMPORAL_ADDRESS',
    );
  });

  it("the system's failures are shown as they are (exit 1)", () => {
    const failed = new RequestFailedError(
      'LLM_AUTH',
      'conv-1',
      'Workflow Update failed: the key was refused',
    );
    expect(cliError(failed)).toBe(failed);
    expect(exitCodeFor(failed)).toBe(1);
  });
});
