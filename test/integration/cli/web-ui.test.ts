/**
 * What a person sees in the Temporal Web UI, checked in a real browser (headless Chromium from
 * Debian, driven by playwright-core): the conversation, its compaction child with the prune,
 * summary and commit activities and their summaries, and the cooldown timer after a failure.
 * Screenshots go to test-output/web-ui/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSummaryRequest, step } from '../../support/fake-openai';
import { startConversationEnv, words, type ConversationEnv } from '../../support/conversation-env';
import { testTemporalUiUrl } from '../../support/harness';
import { compactionProgressQuery, reviewCompactionUpdate } from '../../../workflows/definitions';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const OUT = join(__dirname, '..', '..', '..', 'test-output', 'web-ui');

let env: ConversationEnv;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: npm test installs it (scripts/prepare-test.ts), or set CHROMIUM_PATH`,
    );
  }
  mkdirSync(OUT, { recursive: true });
  env = await startConversationEnv();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});
afterAll(async () => {
  await browser?.close();
  await env?.close();
});

/** Opens a workflow's page and waits until its text shows every expected string. */
async function openWorkflow(
  page: Page,
  workflowId: string,
  expected: string[],
  shot: string,
): Promise<string> {
  const ui = testTemporalUiUrl();
  if (!ui) throw new Error('the dev server was started without its UI');
  await page.goto(`${ui}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`, {
    waitUntil: 'domcontentloaded',
    timeout: 60_000,
  });
  let text = '';
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    text = await page.innerText('body');
    if (expected.every((e) => text.includes(e))) break;
    await page.waitForTimeout(500);
  }
  await page.screenshot({ path: join(OUT, `${shot}.png`), fullPage: true });
  return text;
}

/** Waits until the page's text shows every expected string; screenshots it. */
async function waitForText(page: Page, expected: string[], shot: string): Promise<string> {
  let text = '';
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    // Markdown (summaries, current details) is rendered in frames of its own.
    const texts = await Promise.all(page.frames().map((f) => f.innerText('body').catch(() => '')));
    text = texts.join('\n');
    if (expected.every((e) => text.includes(e))) break;
    await page.waitForTimeout(500);
  }
  await page.screenshot({ path: join(OUT, `${shot}.png`), fullPage: true });
  return text;
}

describe('the Web UI', () => {
  it('shows the conversation, its compaction child with activities and summaries, and the cooldown timer', async () => {
    env.llm.reset();
    const summaries = env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('summary for the UI'));
    env.llm.setDefault(step.text(words(1500, 'ui')));
    const conv = await env.startConversation({
      name: 'web-ui',
      searchAttributes: true,
      config: { maxContextTokens: 20_000, cooldownMs: 600_000 },
    });
    for (let i = 0; i < 3; i++) await conv.send(words(300, `w${i}x`));
    expect((await conv.compact()).status).toBe('committed');
    summaries.setDefault(step.contentNull());
    await conv.send('one more');
    expect((await conv.compact()).status).toBe('rolled_back');
    expect((await conv.status()).cooldownActive).toBe(true);

    const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
    const parent = await openWorkflow(
      page,
      conv.id,
      [conv.id, 'agentConversation', 'manual compaction #1', 'compaction cooldown'],
      'conversation',
    );
    expect(parent).toContain('agentConversation');
    // The children's static summaries (the context's size when each started, as its pre_compact
    // event has it) and the cooldown timer's summary on the timeline.
    const started = (await conv.events()).flatMap((e) => (e.type === 'pre_compact' ? [e] : []));
    expect(started.map((e) => e.seq)).toEqual([1, 2]);
    const headline = (e: { seq: number; tokens: number }) =>
      `manual compaction #${e.seq}: ${e.tokens.toLocaleString('en-US')} tokens (${Math.round((e.tokens / 20_000) * 100)}% of 20,000)`;
    for (const e of started) expect(parent).toContain(headline(e));
    expect(parent).toMatch(/compaction cooldown 600s after summary failure/);

    const childId = `${conv.id}/compaction-1`;
    const child = await openWorkflow(
      page,
      childId,
      ['selectivePrune', 'commitCompaction'],
      'compaction-child',
    );
    expect(child).toContain(headline(started[0]!));
    for (const activity of ['selectivePrune', 'summarize', 'commitCompaction'])
      expect(child).toContain(activity);
    expect(child).toMatch(/selective prune \(manual\)/);
    expect(child).toMatch(/commit v\d+/);
    await page.close();
  });

  it("shows a running compaction's current details: its phase, step and tokens", async () => {
    env.llm.reset();
    // A summary that takes long enough to look at the page while it runs.
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('slow summary', { delayMs: 10_000 }));
    const conv = await env.startConversation({ name: 'web-ui-live', config: { maxContextTokens: 20_000 } });
    for (let i = 0; i < 3; i++) await conv.send(words(300, `l${i}x`));
    const compacting = conv.compact();
    await conv.waitForStatus((s) => Boolean(s.compaction));
    const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
    await openWorkflow(page, `${conv.id}/compaction-1`, ['User Metadata'], 'compaction-running-page');
    // Current details are on the User Metadata tab.
    await page.getByText('User Metadata', { exact: true }).first().click();
    const text = await waitForText(page, ['manual compaction #1', 'summary ·'], 'compaction-running');
    // What the child's progress Query says, figure for figure (the summary takes 10 s: it stays put).
    const progress = await env.client.workflow
      .getHandle(`${conv.id}/compaction-1`)
      .query(compactionProgressQuery);
    expect(progress.phase).toBe('summary');
    const n = (x: number | null) => (x ?? NaN).toLocaleString('en-US');
    expect(text).toContain(
      `manual compaction #1 · summary · ${n(progress.tokensBefore)} → ${n(progress.tokensAfter)} tokens`,
    );
    expect(text).toContain(`Step: ${progress.step}`);
    await page.close();
    expect((await compacting).status).toBe('committed');
  }, 120_000);

  it("shows a summary awaiting review in the child's current details (reviewSummary)", async () => {
    env.llm.reset();
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('summary under review'));
    const conv = await env.startConversation({
      name: 'web-ui-review',
      config: { maxContextTokens: 20_000, reviewSummary: true },
    });
    for (let i = 0; i < 3; i++) await conv.send(words(300, `v${i}x`));
    const compacting = conv.compact();
    await conv.waitForStatus((s) => s.phase === 'awaiting_review');
    const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
    await openWorkflow(page, `${conv.id}/compaction-1`, ['User Metadata'], 'compaction-review-page');
    await page.getByText('User Metadata', { exact: true }).first().click();
    const text = await waitForText(
      page,
      ['manual compaction #1', 'Awaiting review', 'summary under review'],
      'compaction-review',
    );
    expect(text).toMatch(/manual compaction #1 · review · [\d,]+ → [\d,]+ tokens/);
    expect(text).toMatch(
      /Awaiting review until \S+ \(then: approve\): durable-compaction review\|approve\|reject web-ui-review-/,
    );
    expect(text).toMatch(/Proposed summary \([\d,]+ tokens of [\d,]+\): .*summary under review/);
    expect(text).toMatch(/Removes: \d+ items summarized/);
    await page.close();
    const child = env.client.workflow.getHandle(`${conv.id}/compaction-1`);
    await child.executeUpdate(reviewCompactionUpdate, { args: [{ decision: 'approve' }] });
    expect((await compacting).status).toBe('committed');
  }, 120_000);
});
