/**
 * A SWE-agent trajectory in the function-calling layout may carry its demonstration as chat entries
 * (`is_demo`: user and assistant messages before the task). The demonstration's assistant messages
 * were sent to the model as part of its first prompt; the replay counted each as a model call, so it
 * compacted the demonstration before the task had even arrived (a real trajectory: 14 such calls,
 * its first compaction at 27 % of the target). Made-up trajectory.
 */
import { describe, expect, it } from 'vitest';
import { planExtractiveSummary } from '../../../src/context/compaction-summary';
import { parseCompactionConfig } from '../../../src/context/config';
import { replaySession } from '../../../src/eval/replay';
import { importSession } from '../../../src/importers';
import { createTokenCounter } from '../../../src/tokens';
import { words } from '../../support/items-factory';

const o200k = createTokenCounter({ encoding: 'o200k_base' });
const demo = (role: string, content: string) => ({ role, content, agent: 'main', is_demo: true });
const call = (id: string, command: string) => ({
  role: 'assistant',
  content: 'Next step.',
  agent: 'main',
  tool_calls: [{ id, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } }],
});
const result = (id: string, content: string) => ({
  role: 'tool',
  content,
  agent: 'main',
  tool_call_ids: [id],
});

const HISTORY = [
  { role: 'system', content: 'You solve issues.', agent: 'main' },
  demo('user', `Demonstration. The issue: ${words(200, 'demo')}`),
  demo('assistant', 'I list the files.\n```\nls\n```'),
  demo('user', words(400, 'listing')),
  demo('assistant', 'I open the file.\n```\nopen a.py\n```'),
  demo('user', words(400, 'source')),
  demo('assistant', 'Done.\n```\nsubmit\n```'),
  { role: 'user', content: 'Now the real issue: fix b.py.', agent: 'main' },
  call('c1', 'cat b.py'),
  result('c1', words(300, 'code')),
  call('c2', 'python b.py'),
  result('c2', 'ok'),
];

describe('replaying a trajectory whose demonstration is written as a chat', () => {
  it('counts only the agent’s own assistant messages as model calls', async () => {
    const text = JSON.stringify({ trajectory: [], history: HISTORY, info: {} });
    const { items } = importSession(text, { tokenizer: o200k, fileName: 'd.traj' });
    expect(items.filter((i) => i.type === 'ASSISTANT_MESSAGE' && i.isMeta)).toHaveLength(3);
    const config = parseCompactionConfig({ maxContextTokens: 64000, summarizer: 'extractive' });
    const replay = await replaySession({
      items,
      config,
      tokenizer: o200k,
      summarize: async (plan) => ({ text: planExtractiveSummary(plan, o200k), summarizer: 'extractive' }),
    });
    // Two calls (c1, c2) and the request after the last result.
    expect(replay.requests).toHaveLength(3);
    // The first request holds the whole prompt: system, demonstration and task.
    const demoTokens = items.slice(0, 8).reduce((n, i) => n + i.tokens, 0);
    expect(replay.requests[0]?.tokens).toBe(demoTokens);
  });
});
