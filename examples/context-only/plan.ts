/**
 * The compaction policy without Temporal: plan a compaction of an OpenAI chat message array, send
 * the summary request to any chat completion endpoint (here: the extractive summary the plan
 * carries, so this runs offline), and apply the summary.
 *
 *   npx tsx plan.ts
 */
import { compactMessages, planCompaction } from 'durable-compaction/context';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';

const messages: ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are a coding agent. Keep answers short.' },
];
for (let i = 0; i < 12; i++) {
  messages.push({ role: 'user', content: `Step ${i}: read src/module-${i}.ts and fix the failing test.` });
  messages.push({
    role: 'assistant',
    content: null,
    tool_calls: [
      {
        id: `call_${i}`,
        type: 'function',
        function: { name: 'read_file', arguments: JSON.stringify({ path: `src/module-${i}.ts` }) },
      },
    ],
  });
  messages.push({
    role: 'tool',
    tool_call_id: `call_${i}`,
    content: `export function f${i}() {\n${'  return compute();\n'.repeat(60)}}\n`,
  });
  messages.push({ role: 'assistant', content: `Fixed module ${i}: the test passes now.` });
}

const plan = planCompaction(messages, { window: 4_000, model: 'gpt-4o' });
console.log(
  `due: ${plan.due}, ${plan.tokensBefore} tokens before, ${plan.tokensAfter} after (goal ${plan.goalTokens})`,
);
console.log(
  `keep ${plan.keep.length} messages, summarize ${plan.summarize.length}, strategy ${plan.strategy}`,
);
console.log(
  `summary request: ${plan.summaryRequest?.messages.length ?? 0} messages for a chat completion call`,
);

// A real agent sends plan.summaryRequest.messages to its model; the extractive summary is the fallback.
const summary = plan.extractiveSummary ?? '';
const compacted = compactMessages(plan, summary);
console.log(`compacted: ${compacted.messages.length} messages, ${compacted.tokens} tokens`);
