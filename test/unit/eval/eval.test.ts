/**
 * `eval` (src/eval): the shared sessions replayed at four windows keep every invariant — this is
 * the CI gate of DESIGN.md §5 — and the judging itself catches each kind of breakage when a
 * compaction is built wrong on purpose.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { finishCompaction } from '../../../src/context/compaction-plan';
import { planExtractiveSummary } from '../../../src/context/compaction-summary';
import { parseCompactionConfig, targetTokens } from '../../../src/context/config';
import type { ContextItem } from '../../../src/context/items';
import { evaluate, parseWindows, sessionFiles } from '../../../src/cli/commands/eval';
import { UsageError } from '../../../src/cli/client';
import { judgeCompaction, pathInText, touchedPaths } from '../../../src/eval/metrics';
import { markdownTable, textTable } from '../../../src/eval/report';
import { replaySession } from '../../../src/eval/replay';
import { createTokenCounter } from '../../../src/tokens';
import { conversation, itemsFactory, words } from '../../support/items-factory';
import { isSummaryRequest, startFakeOpenAI, step, type FakeOpenAI } from '../../support/fake-openai';
import { needsSharedSessions, SESSIONS_DIR, sharedSessionsAvailable } from '../../support/sessions';

const o200k = createTokenCounter({ encoding: 'o200k_base' });
/** Every session file of the shared directory (not only the ones named elsewhere). */
const files = sharedSessionsAvailable
  ? readdirSync(SESSIONS_DIR)
      .filter((name) => /\.(jsonl|traj|json)$/.test(name))
      .map((name) => resolve(SESSIONS_DIR, name))
  : [];

describe('eval on the shared sessions (the CI gate)', needsSharedSessions, () => {
  it('keeps every invariant at 8k, 16k, 32k and 64k', async () => {
    const rows = await evaluate({
      files,
      windows: [8000, 16000, 32000, 64000],
      summarizer: 'extractive',
      model: 'gpt-4o',
      peers: true,
    });
    expect(rows).toHaveLength(files.length * 4);
    expect(rows.flatMap((r) => r.violations.map((v) => `${r.session} @ ${r.window}: ${v}`))).toEqual([]);
    // Not vacuous: the large session compacts at every window, and what it checks is there.
    for (const row of rows.filter((r) => r.session === 'pi-large-session.jsonl')) {
      expect(row.compactions, `${row.window}`).toBeGreaterThan(0);
      expect(row.pathsChecked).toBeGreaterThan(0);
      expect(row.pathsMissing).toBe(0);
      expect(row.fillChecked).toBeGreaterThan(0);
      expect(row.filled).toBe(row.fillChecked);
      expect(row.after.median).toBeGreaterThan(0.35);
      expect(row.after.max).toBeLessThanOrEqual(0.5);
    }
    expect(textTable(rows)).toContain('pi-large-session.jsonl');
    expect(markdownTable(rows).split('\n')).toHaveLength(rows.length + 2);
    // Both peers ran beside every compaction (a peer that fails says why, and shows n/a).
    const compacted = rows.filter((r) => r.compactions > 0);
    expect(compacted.map((r) => `${r.session} @ ${r.window}: ${r.peers.piNote}`)).toEqual(
      compacted.map((r) => `${r.session} @ ${r.window}: `),
    );
    for (const row of compacted) {
      expect(row.peers.pi.median).toBeGreaterThan(0);
      expect(row.peers.trimMessages.median).toBeGreaterThanOrEqual(0);
    }
  });

  // A window where single messages weigh as much as the summary's room: pending calls of 1,400
  // tokens, results cut at every compaction, eight open errors in a 100-token budget.
  it('keeps every invariant at 4k too', async () => {
    const rows = await evaluate({
      files,
      windows: [4000],
      summarizer: 'extractive',
      model: 'gpt-4o',
      peers: false,
    });
    expect(rows.flatMap((r) => r.violations.map((v) => `${r.session} @ ${r.window}: ${v}`))).toEqual([]);
    const large = rows.find((r) => r.session === 'pi-large-session.jsonl');
    expect(large?.compactions).toBeGreaterThan(50);
    expect(large?.filled).toBe(large?.fillChecked);
    expect(large?.after.median).toBeGreaterThan(0.35);
  });
});

/** A session of tool rounds touching files, big enough to compact at a 3,000-token window. */
function session(): ContextItem[] {
  const f = itemsFactory(o200k);
  const items: ContextItem[] = [f.system('You are a coding agent.'), f.user('Fix the tax rounding.')];
  for (let i = 0; i < 12; i++) {
    items.push(...f.block('read_file', { path: `src/m${i}.ts` }, words(300, `code${i}`)));
    items.push(f.assistant(`Module ${i} rounds per line.`));
    items.push(f.user(`Now look at module ${i + 1}.`));
  }
  return conversation(items);
}

describe('the judging catches what a wrong compaction does', () => {
  const config = parseCompactionConfig({ maxContextTokens: 3000, summarizer: 'extractive' });
  const summarize = async (plan: Parameters<typeof planExtractiveSummary>[0]) => ({
    text: planExtractiveSummary(plan, o200k),
    summarizer: 'extractive' as const,
  });

  it('a right compaction passes', async () => {
    const items = session();
    const replay = await replaySession({ items, config, tokenizer: o200k, summarize });
    expect(replay.compactions.length).toBeGreaterThan(0);
    const judged = replay.compactions.map((c) => judgeCompaction(c, items, targetTokens(config)));
    expect(judged.flatMap((j) => [...j.pathsMissing, ...j.headerLost, ...j.probesMissing])).toEqual([]);
    expect(judged.some((j) => j.overTarget || j.underFilled)).toBe(false);
    expect(replay.requests.every((r) => r.orphaned === 0 && r.tokens <= 3000)).toBe(true);
  });

  it('a compaction that drops the carried state and the latest tool block: paths missing, header lost, results orphaned', async () => {
    const items = session();
    const replay = await replaySession({
      items,
      config,
      tokenizer: o200k,
      summarize,
      // Builds the context, then throws away the carried state, the task and the last tool block.
      finish: (plan, summary) => {
        const out = finishCompaction(plan, summary);
        const lastCall = [...out]
          .reverse()
          .find((i) => i.type === 'ASSISTANT_MESSAGE' && i.message.tool_calls);
        return out.filter(
          (i) =>
            i.type !== 'ARTIFACT_TRAIL' && i !== lastCall && !(i.type === 'USER_MESSAGE' && i.round === 1),
        );
      },
    });
    const judged = replay.compactions.map((c) => judgeCompaction(c, items, targetTokens(config)));
    expect(judged.some((j) => j.pathsMissing.length > 0)).toBe(true);
    expect(judged.some((j) => j.headerLost.length > 0)).toBe(true);
    expect(replay.requests.some((r) => r.orphaned > 0)).toBe(true);
  });

  it('a result whose call the session never made (a transcript that starts mid-turn) is not counted as orphaned', async () => {
    const f = itemsFactory(o200k);
    const [call, result] = f.block('read_file', { path: 'a.py' }, 'x = 1');
    const items = conversation(
      f.result('call_from_another_file', 'output of a call made before this transcript'),
      f.user('Go on.'),
      call,
      result,
      f.assistant('Done.'),
    );
    const replay = await replaySession({ items, config, tokenizer: o200k, summarize });
    expect(replay.requests.map((r) => r.orphaned)).toStrictEqual([0, 0]);
    // (A result whose call the session made and a compaction lost is counted: the test above.)
  });

  it('a compaction that keeps too much or too little: over the target, under-filled', async () => {
    const items = session();
    const over = await replaySession({
      items,
      config,
      tokenizer: o200k,
      summarize,
      finish: (plan, summary) => [...finishCompaction(plan, summary), ...plan.toSummarize.slice(-2)],
    });
    const judgedOver = over.compactions.map((c) => judgeCompaction(c, items, targetTokens(config)));
    expect(judgedOver.some((j) => j.overTarget)).toBe(true);
    const under = await replaySession({
      items,
      config,
      tokenizer: o200k,
      summarize,
      finish: (plan, summary) => finishCompaction(plan, summary).filter((i) => i.type !== 'TOOL_RESULT'),
    });
    const judgedUnder = under.compactions.map((c) => judgeCompaction(c, items, targetTokens(config)));
    expect(judgedUnder.some((j) => j.underFilled === true)).toBe(true);
  });

  it('finds a path written whole, or as an entry of a line naming the directory it is written from', () => {
    const text =
      '[Artifact trail] Files this conversation touched, newest first\n- /w/p/src/new.ts (edited; round 9)\n' +
      'Also touched, older: (under /w/p/) src/a.ts, lib/b.ts, /tmp/c.md, old/ (3 files)\nlater src/z.ts';
    expect(pathInText('/w/p/src/new.ts', text)).toBe(true);
    expect(pathInText('/w/p/src/a.ts', text)).toBe(true);
    expect(pathInText('/w/p/lib/b.ts', text)).toBe(true);
    expect(pathInText('/tmp/c.md', text)).toBe(true);
    // A relative path the shell read, as the end of one written from the root.
    expect(pathInText('p/lib/b.ts', text)).toBe(true);
    expect(pathInText('q/lib/b.ts', text)).toBe(false);
    // Collapsed into a count, on another line, or under another root: not found.
    expect(pathInText('/w/p/old/x.ts', text)).toBe(false);
    expect(pathInText('/w/p/src/z.ts', text)).toBe(false);
    expect(pathInText('/v/p/src/a.ts', text)).toBe(false);
    // A root with spaces in it (a volume's name, a folder's).
    const spaced = "Also touched, older: (under /Volumes/Marc's SSD/app (2)/) src/a.ts, b.ts";
    expect(pathInText("/Volumes/Marc's SSD/app (2)/src/a.ts", spaced)).toBe(true);
    expect(pathInText("/Volumes/Marc's SSD/app (2)/b.ts", spaced)).toBe(true);
    // Names holding commas, even ', ' (a spreadsheet's export name), next to others.
    const commas =
      'Also touched, older: (under C:\\Users\\me\\) 概览(2025-09-28 ~ 2026-02-02,全部).xlsx, a, b.csv, c.md';
    expect(pathInText('C:\\Users\\me\\概览(2025-09-28 ~ 2026-02-02,全部).xlsx', commas)).toBe(true);
    expect(pathInText('C:\\Users\\me\\a, b.csv', commas)).toBe(true);
    expect(pathInText('C:\\Users\\me\\c.md', commas)).toBe(true);
    expect(pathInText('C:\\Users\\me\\b.csv, d.md', commas)).toBe(false);
    expect(pathInText('/w/p/a.ts', text)).toBe(false);
  });

  it('reads touched paths off the raw tool calls', () => {
    expect(touchedPaths(session())).toEqual(Array.from({ length: 12 }, (_, i) => `src/m${i}.ts`));
  });

  it('takes a file given with a line range as the file, and no glob as one', () => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.user('Read.'),
      f.block('read', { path: '/w/_t.py:424-440' }, 'a'),
      f.block('read', { path: 'logs/s.jsonl:1-5:raw' }, 'b'),
      f.block('view', { path: 'src/*.ts' }, 'c'),
      f.block('read', { path: 'Makefile:3' }, 'd'),
    );
    expect(touchedPaths(items)).toEqual(['/w/_t.py', 'logs/s.jsonl', 'Makefile:3']);
  });

  it("reads the files a shell prints or patches, whether its command is a string, Codex's argv list or its `cmd`", () => {
    const f = itemsFactory(o200k);
    const items = conversation(
      f.user('Look around.'),
      f.block('bash', { command: 'cat package.json | grep scripts' }, '{}'),
      f.block('Bash', { command: "sed -n '1,40p' src/a.ts" }, 'a'),
      f.block('shell', { command: ['bash', '-lc', 'nl -ba src/b.ts'] }, 'b'),
      f.block('search', { command: 'cat src/c.ts' }, 'c'),
      f.block('exec_command', { cmd: "nl -ba src/x.ts | sed -n '1,40p'", workdir: '/w' }, 'x'),
      f.block(
        'shell',
        {
          command: [
            'bash',
            '-lc',
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: src/d.ts\n+x\n*** End Patch\nEOF",
          ],
        },
        'Done!',
      ),
    );
    expect(touchedPaths(items)).toEqual(['package.json', 'src/a.ts', 'src/b.ts', 'src/x.ts', 'src/d.ts']);
    // A here-document's lines are data; a path is compared without its leading ./ or ../.
    const more = conversation(
      f.user('More.'),
      f.block(
        'bash',
        { command: "cat > run.sh <<'EOF'\ncat config/settings.yaml\nEOF\ncd pkg && cat ./src/e.ts" },
        '',
      ),
    );
    expect(touchedPaths(more)).toEqual(['src/e.ts', 'run.sh']);
    // Codex's shell_command.
    expect(
      touchedPaths(
        conversation(f.user('Read.'), f.block('shell_command', { command: 'cat docs/r.md' }, 'r')),
      ),
    ).toEqual(['docs/r.md']);
    // Two here-documents on one line: both bodies are data.
    const two = conversation(
      f.user('Two.'),
      f.block(
        'bash',
        { command: "cat > a.txt <<'A' && cat > b.txt <<'B'\nx\nA\ncat c.txt\nB\ncat d.txt" },
        '',
      ),
    );
    expect(touchedPaths(two)).toEqual(['d.txt', 'a.txt', 'b.txt']);
    // Files written by a redirection, edited by sed -i, written by a Python script by name.
    const written = conversation(
      f.user('Edit.'),
      f.block('bash', { command: "sed -i 's/a/b/' src/f.ts && npm test > out/test.log 2>&1 >/dev/null" }, ''),
      f.block('bash', { command: "python - <<'PY'\nopen('src/g.py', 'w').write('x')\nPY" }, ''),
      f.block('bash', { command: 'echo \'open("h.py", "w")\' | grep x' }, ''),
    );
    expect(touchedPaths(written)).toEqual(['out/test.log', 'src/f.ts', 'src/g.py']);
  });
});

describe('the eval command’s input', () => {
  it.each([
    ['8000,16000', [8000, 16000]],
    [' 4096 ', [4096]],
  ])('--window %j → %j', (value, windows) => {
    expect(parseWindows(value)).toEqual(windows);
  });

  it.each(['8k', '100', '8000,', '-1', '1.5'])('--window %j is refused with a clear message', (value) => {
    expect(() => parseWindows(value)).toThrow(UsageError);
    expect(() => parseWindows(value)).toThrow(/--window takes whole numbers of tokens ≥ 256/);
  });

  it('names a file that cannot be read, and one that holds no session', async () => {
    const base = { windows: [8000], summarizer: 'extractive' as const, model: 'gpt-4o', peers: false };
    await expect(evaluate({ ...base, files: ['/nonexistent/session.jsonl'] })).rejects.toThrow(
      /cannot read \/nonexistent\/session\.jsonl/,
    );
    await expect(evaluate({ ...base, files: [] })).rejects.toThrow(/name at least one session file/);
  });

  it('reads a directory as every session file under it, named by its path there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dc-eval-dir-'));
    mkdirSync(join(dir, '2025', '09'), { recursive: true });
    mkdirSync(join(dir, '.hidden'));
    mkdirSync(join(dir, 'node_modules'));
    writeFileSync(join(dir, '2025', '09', 'b.json'), chatSession(2));
    writeFileSync(
      join(dir, 'a.jsonl'),
      chatSession(1)
        .replace(/^\{"messages":\[|\]\}$/g, '')
        .replace(/\},\{"role"/g, '}\n{"role"'),
    );
    writeFileSync(join(dir, 'notes.md'), '# not a session');
    // A task Cline exported as Markdown is one.
    writeFileSync(
      join(dir, 'cline_task.md'),
      '**User:**\n\n<task>\nRead a.ts\n</task>\n\n---\n\n**Assistant:**\n\n<read_file>\n<path>a.ts</path>\n</read_file>\n\n',
    );
    writeFileSync(join(dir, '.hidden', 'c.json'), chatSession(1));
    writeFileSync(join(dir, 'node_modules', 'd.json'), '{}');
    expect(sessionFiles([dir, '/elsewhere/x.traj'])).toEqual([
      { path: join(dir, '2025', '09', 'b.json'), name: join('2025', '09', 'b.json') },
      { path: join(dir, 'a.jsonl'), name: 'a.jsonl' },
      { path: join(dir, 'cline_task.md'), name: 'cline_task.md' },
      { path: '/elsewhere/x.traj', name: 'x.traj' },
    ]);
    const base = { windows: [8000], summarizer: 'extractive' as const, model: 'gpt-4o', peers: false };
    const rows = await evaluate({ ...base, files: [dir] });
    expect(rows.map((r) => [r.session, r.requests])).toEqual([
      [join('2025', '09', 'b.json'), 4],
      ['a.jsonl', 2],
      ['cline_task.md', 1],
    ]);
    const empty = mkdtempSync(join(tmpdir(), 'dc-eval-empty-'));
    writeFileSync(join(empty, 'notes.md'), '# not a session');
    await expect(evaluate({ ...base, files: [empty] })).rejects.toThrow(
      `${empty} holds no session file (.jsonl, .json, .traj or a task exported as .md)`,
    );
  });
});

/** A session in OpenAI chat format: rounds that read a file each (enough to compact at 3,000 tokens). */
function chatSession(rounds: number, tail: unknown[] = []): string {
  const messages: unknown[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Find why the totals are off.' },
  ];
  for (let i = 0; i < rounds; i++) {
    messages.push({
      role: 'assistant',
      content: `Reading module ${i}.`,
      tool_calls: [
        {
          id: `c${i}`,
          type: 'function',
          function: { name: 'read_file', arguments: JSON.stringify({ path: `src/m${i}.ts` }) },
        },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: `c${i}`, content: words(250, `line${i}`) });
    messages.push({ role: 'assistant', content: `Module ${i} rounds each line.` });
    messages.push({ role: 'user', content: `And module ${i + 1}?` });
  }
  messages.push(...tail);
  return JSON.stringify({ messages });
}

describe('eval with an LLM summarizer', () => {
  let llm: FakeOpenAI;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
  });
  afterAll(async () => {
    await llm.close();
  });
  beforeEach(() => {
    vi.stubEnv('OPENAI_API_KEY', 'sk-eval-test-0000');
    vi.stubEnv('OPENAI_BASE_URL', llm.url);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('sends the plan’s summary request to the summary model, once per compaction that summarizes', async () => {
    llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('What was read so far: modules 0 to 9.'));
    const file = join(mkdtempSync(join(tmpdir(), 'dc-eval-')), 'session.json');
    writeFileSync(file, chatSession(12));
    const [row] = await evaluate({
      files: [file],
      windows: [3000],
      summarizer: 'llm',
      model: 'gpt-4o',
      summaryModel: 'fake-summarizer',
      peers: false,
    });
    expect(row?.compactions).toBeGreaterThan(0);
    expect(row?.violations).toEqual([]);
    const summaries = llm.chatRequests().filter((r) => isSummaryRequest(r));
    expect(summaries.length).toBeGreaterThan(0);
    expect(summaries.length).toBeLessThanOrEqual(row?.compactions ?? 0);
    expect(new Set(summaries.map((r) => r.body.model))).toEqual(new Set(['fake-summarizer']));
    // The request carries the carried state: the files the session read are named in it.
    expect(JSON.stringify(summaries.at(-1)?.body.messages)).toContain('[Artifact trail]');
  });

  it('without an endpoint, refuses --summarizer llm before replaying anything', async () => {
    vi.stubEnv('OPENAI_BASE_URL', undefined);
    vi.stubEnv('OPENAI_API_KEY', undefined);
    const file = join(mkdtempSync(join(tmpdir(), 'dc-eval-')), 'session.json');
    writeFileSync(file, chatSession(12));
    await expect(
      evaluate({
        files: [file],
        windows: [8000],
        summarizer: 'llm',
        model: 'gpt-4o',
        peers: false,
      }),
    ).rejects.toThrow(/--summarizer llm needs OPENAI_API_KEY and\/or OPENAI_BASE_URL/);
  });
});

describe('the eval command as a user runs it', () => {
  // The CLI from source, as `npm run cli` runs it (the bin runs the compiled one: test/unit/package).
  const cli = join(__dirname, '..', '..', '..', 'src', 'cli', 'main.ts');
  const dir = mkdtempSync(join(tmpdir(), 'dc-eval-cli-'));
  const run = (args: string[]) => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', cli, 'eval', ...args], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  it('prints the table, writes JSON, Markdown and SVG, and exits 0 when every invariant held', () => {
    const file = join(dir, 'ok.json');
    writeFileSync(file, chatSession(12));
    const out = join(dir, 'out');
    const r = run([file, '--window', '3000,6000', '--no-peers', '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^session\s+window\s+comp\./);
    expect(r.stdout).toContain('ok.json');
    expect(r.stderr).toContain('every invariant held');
    const json = JSON.parse(readFileSync(join(out, 'eval.json'), 'utf8')) as { window: number }[];
    expect(json.map((row) => row.window)).toEqual([3000, 6000]);
    expect(readFileSync(join(out, 'eval.svg'), 'utf8')).toMatch(/^<svg /);
    expect(readFileSync(join(out, 'eval.md'), 'utf8')).toContain('| ok.json | 3k |');
  });

  it('exits 4 and names the broken invariant (a system prompt larger than the window)', () => {
    const file = join(dir, 'broken.json');
    // No compaction can take a system prompt out: every request after it is over the window.
    const session = JSON.parse(chatSession(2)) as { messages: { role: string; content: string }[] };
    (session.messages[0] as { content: string }).content = words(5000, 'rule');
    writeFileSync(file, JSON.stringify(session));
    const r = run([file, '--window', '3000', '--no-peers', '--json']);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(
      /broken invariant\(s\):\n {2}broken\.json @ 3000: \d+ request\(s\) over the window/,
    );
    expect(JSON.parse(r.stdout)).toHaveLength(1);
  });

  it('leaves out a file it cannot read, replays the others, lists it and exits 2', () => {
    const good = join(dir, 'good.json');
    writeFileSync(good, chatSession(12));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"messages": [');
    const r = run([bad, good, join(dir, 'missing.jsonl'), '--window', '3000', '--no-peers']);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('good.json');
    expect(r.stdout).not.toContain('bad.json');
    expect(r.stderr).toContain('2 file(s) left out, the others replayed:');
    expect(r.stderr).toContain(`cannot import ${bad}: `);
    expect(r.stderr).toContain(`cannot read ${join(dir, 'missing.jsonl')} (ENOENT)`);
    // Every file refused: the run is.
    const none = run([bad, join(dir, 'missing.jsonl')]);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('no file could be read:');
  });

  it('exits 2 with one line for bad input', () => {
    const r = run(['/nonexistent.jsonl']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('error: cannot read /nonexistent.jsonl (ENOENT)');
    const file = join(dir, 'bad-flag.json');
    writeFileSync(file, chatSession(12));
    expect(run([file, '--summarizer', 'magic']).stderr.trim()).toBe(
      'error: --summarizer must be extractive or llm (got "magic")',
    );
  });
});
