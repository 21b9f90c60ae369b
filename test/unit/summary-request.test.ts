import { describe, expect, it } from 'vitest';
import { artifactTrail, formatArtifactTrail } from '../../src/context/artifact-trail';
import { parseCompactionConfig } from '../../src/context/config';
import { EXTRACTIVE_LABEL, extractiveSummary } from '../../src/context/extractive-summary';
import type { ContextItem } from '../../src/context/items';
import { SUMMARY_MESSAGE_PREFIX } from '../../src/context/post-compaction';
import {
  FOCUS_PREFIX,
  middleCutMarker,
  SUMMARIZER_SYSTEM_PROMPT,
  SUMMARY_PROMPT,
  UPDATE_SUMMARY_PROMPT,
} from '../../src/context/summary-prompt';
import {
  buildSummaryRequest,
  headTailCut,
  serializeSpan,
  type SummaryRequestInput,
} from '../../src/context/summary-request';
import { conversation, itemsFactory } from '../support/items-factory';

const DEFAULTS = parseCompactionConfig({});

function request(over: Partial<SummaryRequestInput> & Pick<SummaryRequestInput, 'items'>) {
  return buildSummaryRequest({
    toSummarize: over.items,
    previousSummaries: [],
    focus: null,
    gitDiffStat: null,
    config: DEFAULTS,
    ...over,
  });
}

const userContent = (r: ReturnType<typeof buildSummaryRequest>): string => String(r.messages[1]?.content);

describe('headTailCut (seed 000: head 20%, tail 30% of the limit)', () => {
  it.each([
    [200_000, 0],
    [199_999, 0],
    [200_001, 200_001 - 100_000],
    [1_000_000, 900_000],
  ])('%d characters → %d dropped', (length, dropped) => {
    const text =
      'h'.repeat(Math.min(length, 40_000)) +
      'm'.repeat(Math.max(0, length - 100_000)) +
      't'.repeat(Math.max(0, Math.min(60_000, length - 40_000)));
    expect(text.length).toBe(length);
    const cut = headTailCut(text, 200_000, 0.2, 0.3);
    expect(cut.droppedChars).toBe(dropped);
    if (dropped === 0) {
      expect(cut.text).toBe(text);
      return;
    }
    expect(cut.text).toBe(text.slice(0, 40_000) + middleCutMarker(dropped) + text.slice(length - 60_000));
    expect(cut.text.startsWith('h'.repeat(40_000))).toBe(true);
    expect(cut.text.endsWith('t'.repeat(60_000))).toBe(true);
    expect(cut.text).toContain(
      `[... ${dropped} characters of the middle of the conversation omitted to fit the summarizer ...]`,
    );
  });

  it('never cuts a surrogate pair in half', () => {
    const text = '😀'.repeat(100); // 200 UTF-16 units
    const cut = headTailCut(text, 11, 0.5, 0.5); // head 5, tail 5: both inside a pair
    const [head, tail] = cut.text.split(middleCutMarker(cut.droppedChars));
    expect(head).toBe('😀'.repeat(2));
    expect(tail).toBe('😀'.repeat(3));
    expect(cut.droppedChars).toBe(200 - 4 - 6);
  });
});

describe('buildSummaryRequest', () => {
  it('cuts an input over 200,000 characters and says so', () => {
    const f = itemsFactory();
    const items = conversation(f.user('task'), f.assistant(`${'a'.repeat(150_000)}${'z'.repeat(150_000)}`));
    const r = request({ items });
    const transcript = serializeSpan(items);
    expect(r.inputChars).toBe(transcript.length);
    expect(r.droppedChars).toBe(transcript.length - 100_000);
    expect(userContent(r)).toContain(middleCutMarker(r.droppedChars));
    expect(userContent(r)).toContain(`<conversation>\n${transcript.slice(0, 40_000)}`);
    expect(userContent(r)).toContain(`${transcript.slice(-60_000)}\n</conversation>`);
  });

  it('a system prompt that forbids continuing the conversation, then one user message', () => {
    const f = itemsFactory();
    const r = request({ items: conversation(f.user('task'), f.assistant('answer')) });
    expect(r.messages).toHaveLength(2);
    expect(r.messages[0]).toStrictEqual({ role: 'system', content: SUMMARIZER_SYSTEM_PROMPT });
    expect(SUMMARIZER_SYSTEM_PROMPT).toContain('Do NOT continue the conversation');
    expect(r.messages[1]?.role).toBe('user');
    expect(r.droppedChars).toBe(0);
  });

  it('serializes a transcript; the last assistant message loses its tool calls', () => {
    const f = itemsFactory();
    const first = f.block('read_file', { path: 'src/a.ts' }, 'export const a = 1;');
    const last = f.calls([{ name: 'bash', args: { command: 'npm test' } }], 'Running the tests.');
    const items = conversation(f.user('task'), first, f.meta('<reminder>'), last);
    expect(serializeSpan(items)).toBe(
      [
        '[User]: task',
        '[Assistant tool call] read_file({"path":"src/a.ts"})',
        '[Tool result read_file]: export const a = 1;',
        '[System note]: <reminder>',
        '[Assistant]: Running the tests.',
      ].join('\n\n'),
    );
  });

  it('keeps the calls when their results follow in the span', () => {
    const f = itemsFactory();
    const items = conversation(f.user('task'), f.block('bash', { command: 'ls' }, 'a b'));
    expect(serializeSpan(items)).toContain('[Assistant tool call] bash({"command":"ls"})');
  });

  it('uses the structured prompt when there is no previous summary', () => {
    const f = itemsFactory();
    const content = userContent(request({ items: conversation(f.user('task'), f.assistant('x')) }));
    expect(content.endsWith(SUMMARY_PROMPT)).toBe(true);
    for (const section of [
      '1. Task Overview',
      '2. Current State',
      '3. Important Discoveries',
      '4. Next Steps',
      '5. Context to Preserve',
    ])
      expect(content).toContain(section);
    expect(content).toContain('<summary></summary>');
    expect(content).not.toContain('<previous-summary>');
  });

  it('uses the update prompt and merges the previous summaries (without their prefix)', () => {
    const f = itemsFactory();
    const old = f.summary(`${SUMMARY_MESSAGE_PREFIX}\nWe fixed the parser.`);
    const items = conversation(f.user('task'), old, f.assistant('new work'));
    const content = userContent(request({ items, toSummarize: items.slice(2), previousSummaries: [old] }));
    expect(content).toContain('<previous-summary>\nWe fixed the parser.\n</previous-summary>');
    expect(content).not.toContain(SUMMARY_MESSAGE_PREFIX);
    expect(content.endsWith(UPDATE_SUMMARY_PROMPT)).toBe(true);
    expect(content).not.toContain(SUMMARY_PROMPT);
  });

  it.each([
    ['focus text', '  the database migration  ', `${FOCUS_PREFIX}the database migration`],
    ['blank focus', '   ', null],
    ['no focus', null, null],
  ])('%s', (_, focus, expected) => {
    const f = itemsFactory();
    const content = userContent(request({ items: conversation(f.user('task')), focus }));
    if (expected) expect(content.endsWith(expected)).toBe(true);
    else expect(content).not.toContain(FOCUS_PREFIX);
  });

  it('preserves the original task, pinned content, memories, task list, artifact trail and git diff stat', () => {
    const f = itemsFactory();
    const items = conversation(
      f.system('sys'),
      f.user('Make the CLI accept --json', { id: 'task' }),
      f.user('<Pin>Never push to main</Pin>', { pinned: true }),
      ...Array.from({ length: 12 }, (_, i) => f.note('MEMORY', `memory ${i}`)),
      f.note('TASK_LIST', '- [x] parse flag\n- [ ] print json'),
      f.block('str_replace_editor', { path: 'src/cli.ts', command: 'str_replace' }, 'edited'),
      f.block('read_file', { path: 'README.md' }, 'docs'),
    );
    const content = userContent(
      request({ items, toSummarize: items.slice(-4), gitDiffStat: ' src/cli.ts | 4 ++--\n' }),
    );
    const preserved = /<preserved-context>\n([\s\S]*?)\n<\/preserved-context>/.exec(content)?.[1];
    expect(preserved).toBe(
      [
        'Original task:\nMake the CLI accept --json',
        'Pinned content:\n<Pin>Never push to main</Pin>',
        // The last 10 memories (seed 001), oldest first.
        `Recent memories:\n${Array.from({ length: 10 }, (_, i) => `- memory ${i + 2}`).join('\n')}`,
        'Task list:\n- [x] parse flag\n- [ ] print json',
        'Artifact trail:\nFiles modified: src/cli.ts\nFiles read: README.md\nCommands run: str_replace',
        'Workspace changes (git diff --stat):\nsrc/cli.ts | 4 ++--',
      ].join('\n\n'),
    );
    expect(content.indexOf('<preserved-context>')).toBeLessThan(content.indexOf('<conversation>'));
  });

  it('no preserved block when there is nothing to preserve', () => {
    const f = itemsFactory();
    const content = userContent(request({ items: [f.assistant('hello')] }));
    expect(content).not.toContain('<preserved-context>');
    expect(content.startsWith('<conversation>\n[Assistant]: hello\n</conversation>')).toBe(true);
  });
});

describe('artifactTrail', () => {
  it('sorts paths into read and modified by the tool, and keeps commands, once each', () => {
    const f = itemsFactory();
    const items: ContextItem[] = [
      ...f.block('read_file', { path: 'a.ts' }, ''),
      ...f.block('read_file', { file_path: 'a.ts' }, ''),
      ...f.block('write_file', { filePath: 'b.ts', content: 'x' }, ''),
      ...f.block('bash', { command: 'npm test' }, ''),
      ...f.block('bash', 'not json', ''),
    ];
    expect(artifactTrail(items)).toStrictEqual({
      read: ['a.ts'],
      modified: ['b.ts'],
      commands: ['npm test'],
    });
    expect(formatArtifactTrail(artifactTrail(items))).toBe(
      'Files modified: b.ts\nFiles read: a.ts\nCommands run: npm test',
    );
    expect(formatArtifactTrail({ read: [], modified: [], commands: [] })).toBe('');
  });
});

describe('extractiveSummary', () => {
  function session() {
    const f = itemsFactory();
    return conversation(
      f.system('sys'),
      f.user('Fix the date parsing bug', { id: 'task' }),
      f.user('<Pin>Use UTC everywhere</Pin>', { pinned: true }),
      f.block('read_file', { path: 'src/dates.ts' }, 'export function parse() {}'),
      f.block('bash', { command: 'npm test' }, 'Error: expected 2024-01-01, got 2023-12-31'),
      f.block('str_replace_editor', { path: 'src/dates.ts', command: 'str_replace' }, 'edited'),
      f.assistant('The timezone bug is fixed. Next, I will add a regression test for leap years.'),
      f.user('also check the CLI'),
      f.block('bash', { command: 'node cli.js' }, 'TypeError: cannot read properties of undefined'),
      f.assistant('Let me look at cli.js to find the cause.'),
    );
  }

  it('has its label and the five sections, in order', () => {
    const items = session();
    const text = extractiveSummary(items, items.slice(3));
    expect(text.split('\n')[0]).toBe(EXTRACTIVE_LABEL);
    const positions = [
      '## 1. Task Overview',
      '## 2. Current State',
      '## 3. Important Discoveries',
      '## 4. Next Steps',
      '## 5. Context to Preserve',
    ].map((h) => text.indexOf(h));
    expect(positions.every((p) => p > 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toStrictEqual(positions);
  });

  it('names the task, the files, the commands, the errors and the last next step', () => {
    const items = session();
    const text = extractiveSummary(items, items.slice(3));
    expect(text).toContain('## 1. Task Overview\nFix the date parsing bug');
    expect(text).toContain('Requests in this span:\n- also check the CLI');
    expect(text).toContain('Files modified:\n- src/dates.ts');
    expect(text).toContain('Files read:\n- src/dates.ts');
    expect(text).toContain('Commands run:\n- npm test\n- str_replace\n- node cli.js');
    expect(text).toContain('- Error: expected 2024-01-01, got 2023-12-31 (later reported fixed)');
    expect(text).toContain('- TypeError: cannot read properties of undefined (not seen fixed in this span)');
    expect(text).toContain('## 4. Next Steps\nLet me look at cli.js to find the cause.');
    expect(text).toContain('## 5. Context to Preserve\n- <Pin>Use UTC everywhere</Pin>');
    expect(text).toMatch(/This span held 11 messages with 4 tool calls\./);
  });

  it('says when nothing was recorded, and carries earlier summaries over', () => {
    const f = itemsFactory();
    const items = conversation(
      f.summary(`${SUMMARY_MESSAGE_PREFIX}\n${EXTRACTIVE_LABEL}\nearlier facts`),
      f.assistant('ok'),
    );
    const text = extractiveSummary(items, items.slice(1));
    expect(text).toContain('(no original task recorded)');
    expect(text).toContain('Files modified:\n- none recorded');
    expect(text).toContain('Errors seen:\n- none');
    expect(text).toContain('(no next step stated in this span)');
    expect(text).toContain('- no pinned content');
    expect(text.endsWith('Earlier summary:\nearlier facts')).toBe(true);
    expect(text.split(EXTRACTIVE_LABEL)).toHaveLength(2);
  });
});
