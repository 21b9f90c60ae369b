/**
 * Recall (issue 24) on the real store, the real dev server and the fake LLM: search ranking on a
 * real shared session, paging a 1 MB item, isolation between conversations, the refusals the model
 * reads, the tool through the workflow after a compaction (the original text comes back), handles
 * that hold across compactions and continue-as-new, and the `recall` command.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importSession } from '../../../src/importers';
import type { ContextItem, ToolResultItem } from '../../../src/context/items';
import { handleOf, storedHandle } from '../../../src/context/recall-handle';
import { RECALL_TOOL_NAME } from '../../../src/context/recall-tool';
import { connectTemporal, type TemporalHandle } from '../../../src/infra/temporal';
import { Recall, RecallError } from '../../../src/recall';
import { ConversationStore } from '../../../src/store';
import { readableText } from '../../../src/store/search-document';
import { tokenCounterForModel } from '../../../src/tokens';
import { runCli } from '../../support/cli-process';
import { isSummaryRequest, step } from '../../support/fake-openai';
import { startConversationEnv, words, type ConversationEnv } from '../../support/conversation-env';
import { testDatabaseUrl, uniqueId } from '../../support/harness';
import { needsSharedSessions, readSession } from '../../support/sessions';

const o200k = tokenCounterForModel('gpt-4o');
let pool: Pool;
let store: ConversationStore;
let recall: Recall;

beforeAll(() => {
  pool = new Pool({ connectionString: testDatabaseUrl(), max: 4 });
  store = new ConversationStore(pool);
  recall = new Recall(pool);
});
afterAll(async () => {
  await pool.end();
});

/** Stores `items` as a conversation, then commits a compaction that keeps only `keep` of them. */
async function archived(id: string, items: ContextItem[], keep: (i: ContextItem) => boolean): Promise<void> {
  const header = items.filter((i) => i.round === 0);
  await store.createConversation(id, header);
  await store.appendItems(
    id,
    items.filter((i) => i.round !== 0),
  );
  const compactionId = `${id}/compaction-1`;
  const comp = await store.beginCompaction({
    id: compactionId,
    conversationId: id,
    seq: 1,
    trigger: 'manual',
  });
  await store.stageVersion({
    compactionId,
    idemKey: 'test',
    baseVersion: comp.baseVersion,
    newItems: [],
    memberIds: items.filter(keep).map((i) => i.id),
  });
  await store.commitCompaction(compactionId);
}

/** A real shared session as a conversation of its own (item ids are global: prefixed). */
function sessionItems(id: string, name: 'swe-agent-marshmallow-1867.traj'): ContextItem[] {
  const { items } = importSession(readSession(name), { fileName: name, tokenizer: o200k });
  return items.map((i) => ({ ...i, id: `${id}:${i.id}` }));
}

function toolResult(id: string, content: string, round: number, callId = `call-${id}`): ToolResultItem {
  return {
    id,
    type: 'TOOL_RESULT',
    message: { role: 'tool', tool_call_id: callId, content, name: 'bash' },
    tokens: o200k.countText(content) + 4,
    round,
    isMeta: false,
    pinned: false,
    ephemeral: false,
  };
}

function userItem(id: string, text: string, round: number): ContextItem {
  return {
    id,
    type: 'USER_MESSAGE',
    message: { role: 'user', content: text },
    tokens: o200k.countText(text) + 4,
    round,
    isMeta: false,
    pinned: false,
    ephemeral: false,
  };
}

describe('search and read on the store', needsSharedSessions, () => {
  const id = uniqueId('recall-swe');
  let items: ContextItem[];
  beforeAll(async () => {
    items = sessionItems(id, 'swe-agent-marshmallow-1867.traj');
    // Everything but the system prompt and the task is archived.
    await archived(id, items, (i) => i.round === 0 || i.type === 'USER_MESSAGE');
  });

  const hitTexts = async (query: string, limit = 3): Promise<string[]> => {
    const found = await recall.search(id, query, limit);
    const byHandle = new Map(items.map((i) => [handleOf(i.id), i]));
    return found.hits.map((h) => readableText(byHandle.get(h.handle) as ContextItem));
  };

  it.each([
    // A file's lines are found by its path: the `open` result that shows them.
    ['src/marshmallow/fields.py', 'return int(value.total_seconds() / base_unit.total_seconds())'],
    // An identifier, written as the model would.
    ['TimeDelta precision', 'precision'],
    // A command finds its output.
    ['python reproduce.py', '344'],
  ])('%s → a top-3 result holds %j', async (query, expected) => {
    const texts = await hitTexts(query);
    expect(texts.length).toBeGreaterThan(0);
    expect(texts.some((t) => t.includes(expected))).toBe(true);
  });

  it('returns handles, rounds, types, the call of a result, and only archived items', async () => {
    const found = await recall.search(id, 'src/marshmallow/fields.py', 5);
    expect(found.total).toBeGreaterThan(5);
    const result = found.hits.find((h) => h.type === 'TOOL_RESULT' && h.call?.startsWith('open '));
    expect(result).toMatchObject({ round: 1, type: 'TOOL_RESULT' });
    expect(result?.call).toContain('src/marshmallow/fields.py');
    expect(result?.handle).toMatch(/^#[0-9a-f]{6}$/);
    // The task is in the context: never a search result, though it names the file.
    const task = items.find((i) => i.type === 'USER_MESSAGE');
    for (const query of ['TimeDelta serialization precision', 'marshmallow']) {
      const hits = (await recall.search(id, query, 20)).hits;
      expect(hits.map((h) => h.handle)).not.toContain(handleOf(task?.id ?? ''));
    }
  });

  it('the store computes the same handle digits as the context (SQL sha256 = TypeScript)', async () => {
    const rows = await pool.query<{ id: string; handle: string }>(
      'select id, handle from items where conversation_id = $1',
      [id],
    );
    expect(rows.rows.length).toBe(items.length);
    for (const row of rows.rows) expect(row.handle).toBe(storedHandle(row.id));
    const odd = uniqueId('recall-odd');
    const oddIds = [`${odd}:é€😀`, `${odd}:\\'"`, `${odd}:\ud800`];
    await store.createConversation(
      odd,
      oddIds.map((i, n) => userItem(i, `x${n}`, 0)),
    );
    const oddRows = await pool.query<{ id: string; handle: string }>(
      'select id, handle from items where conversation_id = $1',
      [odd],
    );
    for (const row of oddRows.rows) expect(row.handle).toBe(storedHandle(row.id));
  });

  it('an item stored before migration 003 (no search vector) is indexed the first time it is searched', async () => {
    const old = uniqueId('recall-old');
    await archived(
      old,
      [
        userItem(`${old}:task`, 'task', 0),
        userItem(`${old}:u1`, 'the flux capacitor needs 1.21 gigawatts', 1),
      ],
      (i) => i.round === 0,
    );
    await pool.query('update items set search = null where conversation_id = $1', [old]);
    const found = await recall.search(old, 'flux capacitor', 3);
    expect(found.hits.map((h) => h.handle)).toEqual([handleOf(`${old}:u1`)]);
  });
});

describe('paging, isolation and refusals', () => {
  it('pages a 1 MB item within the page budget, and the pages make the original', async () => {
    const id = uniqueId('recall-big');
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i}: value_${i * 7} ok`);
    let content = lines.join('\n');
    content += `\n${'z'.repeat(1_048_576 - content.length - 1)}`;
    expect(content.length).toBe(1_048_576);
    await archived(
      id,
      [userItem(`${id}:task`, 'task', 0), toolResult(`${id}:big`, content, 1)],
      (i) => i.round === 0,
    );
    const handle = handleOf(`${id}:big`);
    // Found by a line near its start.
    expect((await recall.search(id, 'value_70', 3)).hits[0]?.handle).toBe(handle);
    const pageTokens = 20_000;
    let offset: number | null = 0;
    let text = '';
    let pages = 0;
    const started = Date.now();
    while (offset !== null) {
      const page = await recall.read(id, handle, offset, pageTokens, o200k);
      expect(o200k.countText(page.text)).toBeLessThanOrEqual(pageTokens);
      expect(page.offset).toBe(offset);
      expect(page.totalChars).toBe(content.length);
      text += page.text;
      offset = page.next;
      pages++;
    }
    expect(text).toBe(content);
    expect(pages).toBeGreaterThan(10);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("a conversation recalls only its own items: another's handle is not found", async () => {
    const a = uniqueId('recall-a');
    const b = uniqueId('recall-b');
    await archived(
      a,
      [userItem(`${a}:t`, 't', 0), userItem(`${a}:s`, 'secret pelican plan', 1)],
      (i) => i.round === 0,
    );
    await archived(
      b,
      [userItem(`${b}:t`, 't', 0), userItem(`${b}:s`, 'public heron plan', 1)],
      (i) => i.round === 0,
    );
    const handleA = handleOf(`${a}:s`);
    expect((await recall.read(a, handleA, 0, 100, o200k)).text).toBe('secret pelican plan');
    await expect(recall.read(b, handleA, 0, 100, o200k)).rejects.toMatchObject({
      kind: 'HANDLE_NOT_FOUND',
      message: `handle ${handleA} was not found in this conversation: use a handle from the context or from a recall search`,
    });
    expect((await recall.search(b, 'pelican', 5)).hits).toEqual([]);
    expect((await recall.search(b, 'plan', 5)).hits.map((h) => h.handle)).toEqual([handleOf(`${b}:s`)]);
  });

  it.each([
    ['', 'query is empty: give words to search for (a file path, an error message, a command)'],
    ['   ', 'query is empty: give words to search for (a file path, an error message, a command)'],
    [
      'x'.repeat(501),
      "query is 501 characters, the limit is 500: search for a few distinctive words (a path, an identifier, an error's words)",
    ],
    ['?? !!', 'query "?? !!" has no word to search for (only punctuation or very common words)'],
  ])('refuses the query %j with a message the model can act on', async (query, message) => {
    const err = await recall.search(uniqueId('none'), query, 5).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RecallError);
    expect(err).toMatchObject({ kind: 'BAD_QUERY', message });
  });

  it('refuses a malformed handle', async () => {
    await expect(recall.read(uniqueId('none'), 'zz-top', 0, 100, o200k)).rejects.toMatchObject({
      kind: 'BAD_HANDLE',
    });
  });
});

/** A workspace whose src/tax.ts has a line only the end of the file holds. */
function taxWorkspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dc-recall-'));
  mkdirSync(join(dir, 'src'));
  const filler = Array.from({ length: 60 }, (_, i) => `// rate table entry ${i}: bracket ${i * 13}`).join(
    '\n',
  );
  writeFileSync(
    join(dir, 'src', 'tax.ts'),
    `${filler}\nexport function applyTax(amount: number): number {\n  return amount * 1.2; // VAT-7731\n}\n`,
  );
  return dir;
}

const lastToolMessages = (env: ConversationEnv): string[] =>
  (env.llm.chatRequests().at(-1)?.body.messages ?? [])
    .filter((m) => m.role === 'tool')
    .map((m) => String(m.content));

const offered = (env: ConversationEnv, index: number): boolean =>
  (
    env.llm
      .chatRequests()
      .filter((r) => !isSummaryRequest(r))
      .at(index)?.body.tools ?? []
  ).some((t) => (t as { function?: { name?: string } }).function?.name === RECALL_TOOL_NAME);

describe('the recall tool through the workflow', () => {
  let env: ConversationEnv;
  let workspace: string;
  beforeAll(async () => {
    env = await startConversationEnv();
    workspace = taxWorkspace();
  });
  afterAll(async () => {
    await env?.close();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('after a compaction the model calls recall and gets the original text back', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text(words(1400, 'reply')));
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('what happened'));
    const conv = await env.startConversation({
      tools: ['read_file'],
      workspace,
      config: { maxContextTokens: 8000, summarizer: 'extractive' },
    });
    env.llm.script(
      step.toolCalls([{ id: 'call_tax', name: 'read_file', arguments: { path: 'src/tax.ts' } }]),
      step.text('I read it.'),
    );
    await conv.send('read src/tax.ts');
    expect(offered(env, -1)).toBe(false);
    for (let i = 0; i < 3; i++) await conv.send(words(1400, `bulk${i}w`));
    expect(await conv.compact()).toMatchObject({ status: 'committed' });

    const archive = await conv.archive();
    const read = archive.find((i) => i.type === 'TOOL_RESULT' && i.message.tool_call_id === 'call_tax');
    const handle = handleOf(read?.id ?? '');
    const context = await conv.activeContext();
    const contextText = context.items.map(readableText).join('\n');
    expect(contextText).not.toContain('VAT-7731');
    // The compaction names the handle of what it removed or cut, where the model reads how to get
    // it back: a cut's marker, the summary's line of originals, or the artifact trail's file line.
    expect(contextText).toContain(handle);
    expect(contextText).toMatch(
      new RegExp(
        `; recall ${handle}\\]|^Originals \\(recall by handle.*${handle} r\\d+ read_file|^- src/tax\\.ts \\(.*, ${handle}\\)$`,
        'm',
      ),
    );

    env.llm.script(
      step.toolCalls([
        { id: 'call_r1', name: RECALL_TOOL_NAME, arguments: { query: 'src/tax.ts applyTax' } },
      ]),
      step.toolCalls([{ id: 'call_r2', name: RECALL_TOOL_NAME, arguments: { handle, offset: 0 } }]),
      step.toolCalls([{ id: 'call_r3', name: RECALL_TOOL_NAME, arguments: { query: '' } }]),
      step.text('The VAT code is VAT-7731.'),
    );
    const reply = await conv.send('what was the VAT code in the tax file?');
    expect(reply.reply).toBe('The VAT code is VAT-7731.');
    // Offered from the compaction on, in the request's tool list.
    expect(offered(env, -1)).toBe(true);
    const [search, page, refused] = lastToolMessages(env).slice(-3);
    expect(search).toContain(handle);
    expect(search).toContain('read_file');
    expect(page).toContain(`recall ${handle}`);
    expect(page).toContain('return amount * 1.2; // VAT-7731');
    expect(refused).toBe(
      'Error: query is empty: give words to search for (a file path, an error message, a command)',
    );
    // The results are ordinary tool results: stored, counted, in the context.
    const after = await conv.activeContext();
    const recalls = after.items.filter(
      (i) => i.type === 'TOOL_RESULT' && i.message.name === RECALL_TOOL_NAME,
    );
    expect(recalls).toHaveLength(3);
    for (const r of recalls) expect(r.tokens).toBeGreaterThan(0);
  });
});

describe('handles across compactions and continue-as-new', () => {
  let temporal: TemporalHandle;
  let env: ConversationEnv;
  beforeAll(async () => {
    temporal = await connectTemporal({
      ui: false,
      extraArgs: ['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=60'],
    });
    env = await startConversationEnv({ temporalAddress: temporal.address });
  });
  afterAll(async () => {
    await env?.close();
    await temporal?.shutdown();
  });

  it('a handle from the first compaction reads the same item after later compactions and runs', async () => {
    env.llm.reset();
    env.llm.setDefault(step.text(words(600, 'reply')));
    const conv = await env.startConversation({
      config: { maxContextTokens: 4000, summarizer: 'extractive' },
    });
    await conv.send('the launch code is ORCHID-5521, remember where it was said');
    const first = (await conv.archive()).find((i) => i.type === 'USER_MESSAGE');
    const handle = handleOf(first?.id ?? '');
    let rounds = 1;
    while (rounds < 40) {
      await conv.send(words(1400, `r${rounds}w`));
      rounds++;
      const status = await conv.status();
      if (status.runs > 1 && status.compactions >= 2) break;
    }
    const status = await conv.status();
    expect(status.runs).toBeGreaterThan(1);
    expect(status.compactions).toBeGreaterThanOrEqual(2);
    env.llm.script(
      step.toolCalls([{ id: 'call_h', name: RECALL_TOOL_NAME, arguments: { handle } }]),
      step.text('ORCHID-5521'),
    );
    await conv.send('what was the launch code?');
    const page = lastToolMessages(env).at(-1) ?? '';
    expect(page).toContain(`recall ${handle}`);
    expect(page).toContain('the launch code is ORCHID-5521');
  });
});

describe('the recall command', () => {
  const id = uniqueId('recall-cli');
  const env = (): Record<string, string> => ({ DATABASE_URL: testDatabaseUrl() });
  beforeAll(async () => {
    await archived(
      id,
      [
        userItem(`${id}:t`, 'task', 0),
        toolResult(`${id}:r`, 'Error: ENOENT: no such file or directory, open src/tax.ts', 1),
      ],
      (i) => i.round === 0,
    );
  });

  it('prints what the tool returns: a search, a page, and both as JSON', async () => {
    const handle = handleOf(`${id}:r`);
    const [search, page, json, missing] = await Promise.all([
      runCli(['recall', id, 'ENOENT src/tax.ts'], env()),
      runCli(['recall', id, '--handle', handle], env()),
      runCli(['recall', id, 'ENOENT', '--json'], env()),
      runCli(['recall', id, '--handle', '#00000000'], env()),
    ]);
    expect(search).toMatchObject({ code: 0 });
    expect(search.stdout).toContain(`${handle} · round 1 · tool result of bash`);
    expect(page).toMatchObject({ code: 0 });
    expect(page.stdout).toContain('Error: ENOENT: no such file or directory, open src/tax.ts');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      total: 1,
      hits: [{ handle, round: 1, type: 'TOOL_RESULT' }],
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('handle #00000000 was not found in this conversation');
  });
});
