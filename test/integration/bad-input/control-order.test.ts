/**
 * Requests that arrive while a compaction runs (issue 22): `restore` and then `end` during a manual
 * compaction wait their turn, in the order asked. Before, `end` let the waiting restore run in the
 * middle of the compaction, which then rolled back with BASE_VERSION_CHANGED.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactUpdate, endUpdate, restoreUpdate } from '../../../workflows/definitions';
import { isSummaryRequest, step } from '../../support/fake-openai';
import { startConversationEnv, waitFor, words, type ConversationEnv } from '../../support/conversation-env';

let env: ConversationEnv;
beforeAll(async () => {
  env = await startConversationEnv();
});
afterAll(async () => {
  await env?.close();
});

describe('restore and end during a compaction', () => {
  it('queue behind it in order: the compaction commits, then the restore, then the end', async () => {
    env.llm.reset();
    const conv = await env.startConversation({ config: { maxContextTokens: 20_000 } });
    for (let i = 0; i < 3; i++) await conv.send(words(300, `c${i}w`));
    const before = await conv.status();
    // The summary takes 3 s: long enough for restore and end to arrive while it runs.
    env.llm.when((r) => isSummaryRequest(r)).setDefault(step.summary('the talk so far', { delayMs: 3_000 }));
    const compacting = conv.handle.executeUpdate(compactUpdate, { args: [{}] });
    await waitFor(
      () => Promise.resolve(env.llm.chatRequests().filter((r) => isSummaryRequest(r)).length),
      (n) => n > 0,
      30_000,
      'the summary call',
    );
    const restoring = conv.handle.executeUpdate(restoreUpdate, { args: [{ version: before.activeVersion }] });
    // Let the restore reach the workflow first.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const ending = conv.handle.executeUpdate(endUpdate, { args: [] });
    const brief = await compacting;
    expect(brief.status).toBe('committed');
    const restored = await restoring;
    await ending;
    // In the workflow's order (the clients may hear the answers in any order): the compaction
    // committed, then the restore made the content before it active again as a new version, then
    // the conversation ended with that version active.
    expect(restored.version).toBe(before.activeVersion);
    expect(restored.activeVersion).toBeGreaterThan(before.activeVersion);
    expect(restored.tokens).toBe(before.contextTokens);
    const records = await conv.compactions();
    expect(records.map((r) => r.status)).toEqual(['committed']);
    const events = (await conv.events()).map((e) => e.type);
    expect(events.indexOf('restored')).toBeGreaterThan(events.lastIndexOf('context_compacted'));
    expect(events).not.toContain('compaction_rolled_back');
    expect((await conv.activeContext()).version).toBe(restored.activeVersion);
    await expect(conv.handle.executeUpdate(restoreUpdate, { args: [{ version: 1 }] })).rejects.toThrow();
  });
});
