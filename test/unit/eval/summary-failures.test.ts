/**
 * `eval --summarizer llm` when the summary call fails. The workflow rolls such a compaction back
 * (an emergency one commits with the extractive summary instead) and goes on; eval stopped at the first one with one line and no table (an empty, whitespace or
 * untagged summary, a 500, a 429 or a dropped connection: `error: summary invalid: empty_summary:
 * the model returned empty content`, exit 1, on pi-large-session at 8k), retried a bad key three
 * times and sent a larger `max_tokens` than the activity. Made-up sessions.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { evaluate } from '../../../src/cli/commands/eval';
import type { CompactionPlan } from '../../../src/context/compaction-plan';
import { planExtractiveSummary } from '../../../src/context/compaction-summary';
import { parseCompactionConfig, targetTokens } from '../../../src/context/config';
import { messageText, type ContextItem } from '../../../src/context/items';
import { summaryHandlesBudget } from '../../../src/context/post-compaction';
import { judgeCompaction } from '../../../src/eval/metrics';
import {
  MAX_SUMMARY_FAILURES_IN_A_ROW,
  replaySession,
  SummarizerFatalError,
  type Summarizer,
} from '../../../src/eval/replay';
import { llmSummarizer, SUMMARY_RETRY_AFTER_MAX_MS } from '../../../src/eval/run';
import { LlmError } from '../../../src/llm';
import { createTokenCounter } from '../../../src/tokens';
import { isSummaryRequest, startFakeOpenAI, step, type FakeOpenAI } from '../../support/fake-openai';
import { conversation, itemsFactory, words } from '../../support/items-factory';

const o200k = createTokenCounter({ encoding: 'o200k_base' });
const config = parseCompactionConfig({ maxContextTokens: 3000, summarizer: 'llm' });

/** Rounds that read a file each and answer: compactions that summarize at 3,000 tokens. */
function session(rounds = 16): ContextItem[] {
  const f = itemsFactory(o200k);
  const items: ContextItem[] = [f.system('You are a coding agent.'), f.user('Fix the tax rounding.')];
  for (let i = 0; i < rounds; i++) {
    items.push(...f.block('read_file', { path: `src/m${i}.ts` }, words(300, `code${i}`)));
    items.push(f.assistant(`Module ${i} rounds per line.`));
    items.push(f.user(`Now look at module ${i + 1}.`));
  }
  return conversation(items);
}

const extractive: Summarizer = async (plan) => ({
  text: planExtractiveSummary(plan, o200k),
  summarizer: 'llm',
});

describe('a replay whose summary fails', () => {
  it('rolls that compaction back, keeps the context, and goes on', async () => {
    let calls = 0;
    const summarize: Summarizer = async (plan) => {
      if (++calls === 1) throw new Error('summary invalid: empty_summary: the model returned empty content');
      return extractive(plan);
    };
    const items = session();
    const replay = await replaySession({ items, config, tokenizer: o200k, summarize });
    const failed = replay.compactions.filter((c) => c.status === 'rolled_back');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.reason).toBe(
      'summary failed: summary invalid: empty_summary: the model returned empty content',
    );
    expect(failed[0]?.after).toBe(failed[0]?.before);
    expect(failed[0]?.summaryFailure).toBe('failed');
    // Later compactions commit, and the replay measured every request.
    expect(replay.compactions.filter((c) => c.status === 'committed').length).toBeGreaterThan(1);
    expect(replay.requests.length).toBe(items.filter((i) => i.type === 'ASSISTANT_MESSAGE').length);
    const judged = replay.compactions.map((c) => judgeCompaction(c, items, targetTokens(config)));
    expect(judged.find((j) => j.status === 'rolled_back')).toMatchObject({
      headerLost: [],
      pathsMissing: [],
      overTarget: false,
      underFilled: null,
      reason: failed[0]?.reason,
    });
    // Automatic triggers cool down until the next model call: no second try at the same request.
    const next = replay.compactions[replay.compactions.indexOf(failed[0]!) + 1];
    expect(next?.atRequest).toBeGreaterThan(failed[0]?.atRequest ?? Infinity);
  });

  it(`stops asking after ${MAX_SUMMARY_FAILURES_IN_A_ROW} failures in a row, and still measures the rest`, async () => {
    let calls = 0;
    const summarize: Summarizer = async () => {
      calls++;
      throw new Error('LLM server error (HTTP 500): internal error (after 3 attempts)');
    };
    const items = session();
    const replay = await replaySession({ items, config, tokenizer: o200k, summarize });
    expect(calls).toBe(MAX_SUMMARY_FAILURES_IN_A_ROW);
    const failed = replay.compactions.filter((c) => c.status === 'rolled_back');
    expect(failed.length).toBeGreaterThan(MAX_SUMMARY_FAILURES_IN_A_ROW);
    expect(failed.filter((c) => c.summaryFailure === 'failed')).toHaveLength(MAX_SUMMARY_FAILURES_IN_A_ROW);
    expect(failed.at(-1)).toMatchObject({ summaryFailure: 'not_asked' });
    expect(failed.at(-1)?.reason).toMatch(/^summary not asked: the last 3 summaries failed/);
    expect(replay.requests.length).toBe(items.filter((i) => i.type === 'ASSISTANT_MESSAGE').length);
  });

  it('commits an emergency compaction with the extractive summary instead, as the workflow does', async () => {
    const summarize: Summarizer = async () => {
      throw new Error('LLM server error (HTTP 500): internal error (after 3 attempts)');
    };
    const items = session();
    const replay = await replaySession({ items, config, tokenizer: o200k, summarize });
    const stoodIn = replay.compactions.filter((c) => c.trigger === 'overflow' && c.status === 'committed');
    expect(stoodIn.length).toBeGreaterThan(0);
    for (const c of stoodIn) {
      expect(c.summaryFailure).not.toBeNull();
      expect(c.reason).toMatch(/; the extractive summary stood in \(an emergency\)$/);
      const summary = c.after.find((i) => i.type === 'COMPACTION_SUMMARY');
      expect(summary && messageText(summary.message)).toContain('(Extractive summary');
    }
    // Automatic compactions still roll back, and no request goes over the window.
    expect(replay.compactions.filter((c) => c.trigger !== 'overflow' && c.status === 'committed')).toEqual(
      [],
    );
    expect(replay.requests.filter((r) => r.tokens > config.maxContextTokens)).toEqual([]);
  });

  it('stops at once on a failure every call would repeat, naming the compaction', async () => {
    const summarize: Summarizer = async () => {
      throw new SummarizerFatalError('LLM authentication failed (HTTP 401): bad key (LLM_AUTH, not retried)');
    };
    await expect(replaySession({ items: session(), config, tokenizer: o200k, summarize })).rejects.toThrow(
      /^compaction #1 \(\w+\): LLM authentication failed \(HTTP 401\): bad key \(LLM_AUTH, not retried\)$/,
    );
  });
});

describe("eval's LLM summarizer retries as the summarize activity does", () => {
  /** The first plan a replay of `session()` summarizes. */
  async function firstPlan(): Promise<CompactionPlan> {
    let plan: CompactionPlan | undefined;
    await replaySession({
      items: session(),
      config,
      tokenizer: o200k,
      summarize: async (p) => {
        plan ??= p;
        return extractive(p);
      },
    });
    if (!plan) throw new Error('no compaction summarized');
    return plan;
  }

  function failing(errors: unknown[]) {
    const sent: number[] = [];
    const slept: number[] = [];
    const summarizer = llmSummarizer(
      config,
      async (_messages, maxTokens) => {
        sent.push(maxTokens);
        const error = errors[sent.length - 1];
        if (error !== undefined) throw error;
        return 'the summary';
      },
      { sleep: async (ms) => void slept.push(ms) },
    );
    return { summarizer, sent, slept };
  }

  it('asks for the summary budget less the recall handles’ line, as the activity does', async () => {
    const plan = await firstPlan();
    const { summarizer, sent } = failing([]);
    await expect(summarizer(plan)).resolves.toEqual({ text: 'the summary', summarizer: 'llm' });
    expect(sent).toEqual([plan.summaryBudget - summaryHandlesBudget(plan.summaryBudget)]);
    expect(sent[0]).toBeLessThan(plan.summaryBudget);
  });

  it('3 attempts 1 s and 2 s apart, then the failure with the attempts', async () => {
    const plan = await firstPlan();
    const invalid = new LlmError('SUMMARY_INVALID', 'summary invalid: empty_summary', true);
    const { summarizer, sent, slept } = failing([invalid, invalid, invalid]);
    await expect(summarizer(plan)).rejects.toThrow('summary invalid: empty_summary (after 3 attempts)');
    expect(sent).toHaveLength(3);
    expect(slept).toEqual([1000, 2000]);
  });

  it('waits the Retry-After of a 429 (at most a minute)', async () => {
    const plan = await firstPlan();
    const limited = (ms: number) =>
      new LlmError('LLM_RATE_LIMITED', 'LLM rate limited (HTTP 429)', true, { retryAfterMs: ms });
    const { summarizer, slept } = failing([limited(2500), limited(3_600_000)]);
    await expect(summarizer(plan)).resolves.toMatchObject({ text: 'the summary' });
    expect(slept).toEqual([2500, SUMMARY_RETRY_AFTER_MAX_MS]);
  });

  it('never retries a non-retryable failure: a bad key stops the replay, a context too long is this request’s', async () => {
    const plan = await firstPlan();
    const auth = failing([new LlmError('LLM_AUTH', 'LLM authentication failed (HTTP 401): bad key', false)]);
    const fatal = await auth.summarizer(plan).catch((e: unknown) => e);
    expect(fatal).toBeInstanceOf(SummarizerFatalError);
    expect((fatal as Error).message).toBe(
      'LLM authentication failed (HTTP 401): bad key (LLM_AUTH, not retried)',
    );
    expect(auth.sent).toHaveLength(1);

    const long = new LlmError('LLM_CONTEXT_LENGTH_EXCEEDED', 'LLM context length exceeded (HTTP 400)', false);
    const tooLong = failing([long]);
    await expect(tooLong.summarizer(plan)).rejects.toBe(long);
    expect(tooLong.sent).toHaveLength(1);
  });
});

/** A session in OpenAI chat format that compacts at 3,000 tokens. */
function chatSession(rounds = 12): string {
  const messages: unknown[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Find why the totals are off.' },
  ];
  for (let i = 0; i < rounds; i++) {
    const call = {
      id: `c${i}`,
      type: 'function',
      function: { name: 'read_file', arguments: `{"path":"src/m${i}.ts"}` },
    };
    messages.push({ role: 'assistant', content: `Reading module ${i}.`, tool_calls: [call] });
    messages.push({ role: 'tool', tool_call_id: `c${i}`, content: words(250, `line${i}`) });
    messages.push({ role: 'assistant', content: `Module ${i} rounds each line.` });
    messages.push({ role: 'user', content: `And module ${i + 1}?` });
  }
  return JSON.stringify({ messages });
}

describe('eval --summarizer llm against a summarizer that fails', () => {
  let llm: FakeOpenAI;
  const dir = mkdtempSync(join(tmpdir(), 'dc-eval-fail-'));
  const file = join(dir, 'session.json');
  writeFileSync(file, chatSession());
  const cli = join(__dirname, '..', '..', '..', 'src', 'cli', 'main.ts');
  /** The CLI from source, asynchronously (the fake server answers from this process). */
  const run = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      const child = spawn(process.execPath, ['--import', 'tsx', cli, 'eval', ...args], {
        env: { ...process.env, OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-eval-fail-0000', ...env },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => done({ code, stdout, stderr }));
    });
  beforeAll(async () => {
    llm = await startFakeOpenAI();
  });
  afterAll(async () => {
    await llm.close();
  });
  beforeEach(() => llm.reset());
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('an empty summary every time: the rows still come back, each failed compaction rolled back', async () => {
    vi.stubEnv('OPENAI_API_KEY', 'sk-eval-fail-0000');
    vi.stubEnv('OPENAI_BASE_URL', llm.url);
    llm.when((r) => isSummaryRequest(r)).setDefault(step.emptyContent());
    const rows = await evaluate({
      files: [file],
      windows: [3000, 6000],
      summarizer: 'llm',
      model: 'gpt-4o',
      peers: false,
      sleep: async () => undefined,
    });
    expect(rows).toHaveLength(2);
    expect(rows[0]?.summaryFailures).toBe(MAX_SUMMARY_FAILURES_IN_A_ROW);
    expect(rows[0]?.summariesNotAsked).toBeGreaterThan(0);
    expect(rows[0]?.compactionDetails.find((j) => j.status === 'rolled_back')?.reason).toBe(
      'summary failed: summary invalid: empty_summary: the model returned empty content (after 3 attempts)',
    );
    // Three attempts for each of the first three compactions of each replay that summarize, no more.
    expect(llm.chatRequests().filter((r) => isSummaryRequest(r)).length).toBeLessThanOrEqual(2 * 3 * 3);
  });

  it('prints the table and the rolled-back compactions, and exits 1', async () => {
    // Not retried (non-retryable), so no backoff: the first summary request only.
    llm.when((r) => isSummaryRequest(r)).script(step.contextLengthExceeded());
    llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('Modules 0 to 5 read.'));
    const r = await run([file, '--window', '3000', '--summarizer', 'llm', '--no-peers', '--no-recall']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^session\s+window\s+comp\./);
    expect(r.stderr).toMatch(
      /\n1 summary call\(s\) failed, their compactions rolled back \(the context stayed as it was, as the workflow leaves it\) or, an emergency's, committed with the extractive summary:\n {2}session\.json @ 3000: compaction #\d+ \(\w+\): summary failed: LLM context length exceeded \(HTTP 400\)/,
    );
    expect(r.stderr).toContain('every invariant held, but not every summary was written (exit 1)');
  }, 60_000);

  it('LLM_TIMEOUT_MS bounds each summary call, as it bounds the worker’s (a server that hangs)', async () => {
    llm.when((r) => isSummaryRequest(r)).script(step.hang());
    llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('Modules 0 to 5 read.'));
    const r = await run(['--window', '3000', '--summarizer', 'llm', '--no-peers', '--no-recall', file], {
      LLM_TIMEOUT_MS: '300',
    });
    expect(r.stderr).toContain(
      '  summary call failed (attempt 1 of 3), retrying in 1000 ms: LLM request timed out (no response within 300 ms)',
    );
    expect(r.code).toBe(0);
    const bad = await run([file, '--summarizer', 'llm'], { LLM_TIMEOUT_MS: 'soon' });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe('error: LLM_TIMEOUT_MS must be a whole number ≥ 1 (got "soon")');
  }, 30_000);

  it('a bad key: one request, one line naming the replay and the compaction, exit 1', async () => {
    llm.when((r) => isSummaryRequest(r)).setDefault(step.authError({ echoKey: false }));
    const r = await run([file, '--window', '3000', '--summarizer', 'llm', '--no-peers', '--no-recall']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(
      /^error: eval session\.json @ 3000: compaction #\d+ \(\w+\): LLM authentication failed \(HTTP 401\): Incorrect API key provided\. \(LLM_AUTH, not retried\)$/,
    );
    expect(llm.chatRequests().filter((q) => isSummaryRequest(q))).toHaveLength(1);
  }, 60_000);
});
