/**
 * `eval --summarizer llm`'s summary call is the summarize activity's: the same `max_tokens`.
 * Made-up session.
 */
import { describe, expect, it } from 'vitest';
import type { CompactionPlan } from '../../../src/context/compaction-plan';
import { planExtractiveSummary } from '../../../src/context/compaction-summary';
import { parseCompactionConfig } from '../../../src/context/config';
import type { ContextItem } from '../../../src/context/items';
import { summaryHandlesBudget } from '../../../src/context/post-compaction';
import { replaySession, type Summarizer } from '../../../src/eval/replay';
import { llmSummarizer } from '../../../src/eval/run';
import { createTokenCounter } from '../../../src/tokens';
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

describe("eval's LLM summarizer asks as the summarize activity does", () => {
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

  it('asks for the summary budget less the recall handles’ line, as the activity does', async () => {
    const plan = await firstPlan();
    const sent: number[] = [];
    const summarizer = llmSummarizer(config, async (_messages, maxTokens) => {
      sent.push(maxTokens);
      return 'the summary';
    });
    await expect(summarizer(plan)).resolves.toEqual({ text: 'the summary', summarizer: 'llm' });
    expect(sent).toEqual([plan.summaryBudget - summaryHandlesBudget(plan.summaryBudget)]);
    expect(sent[0]).toBeLessThan(plan.summaryBudget);
  });
});
