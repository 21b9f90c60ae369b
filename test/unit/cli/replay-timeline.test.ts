/**
 * The compaction timeline read from recorded histories (test/histories), without a server.
 */
import { join } from 'node:path';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { HistoryFileError, readHistoryFile } from '../../../src/replay/histories';
import { compactionTimeline, formatTimeline } from '../../../src/replay/timeline';

const DIR = join(__dirname, '..', '..', 'histories');

describe('compactionTimeline', () => {
  it('a committed manual compaction: trigger, strategy, tokens, one summary attempt', () => {
    const [entry, ...rest] = compactionTimeline(readHistoryFile(join(DIR, 'committed-run1.json')).history);
    expect(rest).toEqual([]);
    expect(entry).toMatchObject({
      kind: 'compaction',
      seq: 1,
      trigger: 'manual',
      status: 'committed',
      attempts: 1,
    });
    if (entry?.kind !== 'compaction') throw new Error('not a compaction');
    expect(entry.workflowId).toMatch(/\/compaction-1$/);
    expect(entry.tokensAfter).toBeLessThan(entry.tokensBefore ?? 0);
  });

  // The current recording and two earlier ones: v1 (prune and commit still activities, empty
  // summary steps passed over in one activity) and v0 (an activity per step: there the first steps
  // ran and succeeded before one failed, so the line names a strategy).
  it.each([
    'rolled-back-cooldown-run1.json',
    'v1-rolled-back-cooldown-run1.json',
    'v0-rolled-back-cooldown-run1.json',
  ])(
    '%s: a rollback after three failed summary attempts, its cooldown timer and the skip it caused',
    (file) => {
      const timeline = compactionTimeline(readHistoryFile(join(DIR, file)).history);
      expect(timeline.map((e) => e.kind)).toEqual(['compaction', 'cooldown', 'skipped']);
      expect(timeline[0]).toMatchObject({
        status: 'rolled_back',
        attempts: 3,
        reason: expect.stringContaining('content_none'),
      });
      expect(timeline[1]).toMatchObject({ summary: expect.stringMatching(/cooldown 60s/), fired: false });
      expect(timeline[2]).toMatchObject({ summary: expect.stringMatching(/^skip rounds: cooldown/) });
      const lines = formatTimeline(timeline);
      expect(lines[0]).toMatch(
        /^#1 rounds \(round 2\): rolled_back( via [^,]+)?, \d+ → \d+ tokens, 3 summary attempt\(s\) — SUMMARY_INVALID: content_none/,
      );
    },
  );

  it('a run without compactions has an empty timeline', () => {
    expect(compactionTimeline(readHistoryFile(join(DIR, 'continue-as-new-run1.json')).history)).toEqual([]);
  });
});

describe('readHistoryFile', () => {
  it.each([
    ['not JSON', '{"events": [', /not a JSON history/],
    ['no events', '{"foo": 1}', /no "events" array/],
    [
      'events of the wrong shape',
      '{"events": [{"eventType": 12345678, "eventId": "x"}]}',
      /not a workflow history|events/,
    ],
  ])('refuses %s, naming the file', (_name, text, message) => {
    const path = join(mkdtempSync(join(tmpdir(), 'dc-history-')), 'bad.json');
    writeFileSync(path, text);
    expect(() => readHistoryFile(path)).toThrow(HistoryFileError);
    expect(() => readHistoryFile(path)).toThrow(message);
    expect(() => readHistoryFile(path)).toThrow(path);
  });
});
