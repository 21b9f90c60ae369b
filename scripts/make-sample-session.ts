/**
 * Writes samples/sample-session.json: a coding-agent session written for this project (OpenAI chat
 * format), played back by `npm start` when no LLM endpoint is configured. It is long enough to
 * compact several times with a small window: 24 rounds, each reading, searching or editing files
 * of an imaginary `invoice-service` and reporting back.
 *
 *   npx tsx scripts/make-sample-session.ts
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

type Msg =
  | { role: 'system' | 'user'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    }
  | { role: 'tool'; tool_call_id: string; content: string };

const files = [
  'src/invoice.ts',
  'src/tax.ts',
  'src/currency.ts',
  'src/pdf/render.ts',
  'src/api/routes.ts',
  'src/db/repository.ts',
  'test/invoice.test.ts',
  'test/tax.test.ts',
];

function fakeSource(path: string, lines: number): string {
  const out: string[] = [`// ${path}`];
  for (let i = 1; i <= lines; i++) {
    out.push(
      i % 7 === 0
        ? `export function step${i}(amount: number, rate: number): number { return Math.round(amount * rate * 100) / 100; }`
        : `  const value${i} = compute${i % 5}(input.items[${i % 3}], options.currency ?? 'EUR'); // line ${i}`,
    );
  }
  return out.join('\n');
}

const tasks: { ask: string; tool: string; path: string; answer: string }[] = [
  {
    ask: 'The invoice totals are off by a cent for some EUR invoices. Can you find out why?',
    tool: 'read_file',
    path: 'src/invoice.ts',
    answer: 'The total is rounded per line and then summed, so rounding errors accumulate.',
  },
  {
    ask: 'Where is the tax computed?',
    tool: 'read_file',
    path: 'src/tax.ts',
    answer: 'In src/tax.ts, `applyTax` multiplies each line by the rate and rounds each result.',
  },
  {
    ask: 'Check how currency conversion rounds.',
    tool: 'read_file',
    path: 'src/currency.ts',
    answer: "Conversion uses banker's rounding, unlike tax, which rounds half up.",
  },
  {
    ask: 'Search for every place that calls Math.round.',
    tool: 'search_text',
    path: 'Math.round',
    answer: 'Math.round appears in tax.ts, invoice.ts and pdf/render.ts.',
  },
  {
    ask: 'Run through the invoice tests and tell me what they cover.',
    tool: 'read_file',
    path: 'test/invoice.test.ts',
    answer: 'They cover single-line invoices only; no test sums many rounded lines.',
  },
  {
    ask: 'Write a failing test for a 3-line invoice at 19% VAT.',
    tool: 'write_file',
    path: 'test/invoice.test.ts',
    answer: 'Added `sums rounded lines exactly`, which expects 35.70 and currently gets 35.71.',
  },
  {
    ask: 'Now fix the rounding: round once, at the total.',
    tool: 'write_file',
    path: 'src/invoice.ts',
    answer: 'invoice.ts now keeps cents as integers and rounds once at the end.',
  },
  {
    ask: 'Does the PDF renderer still show per-line amounts correctly?',
    tool: 'read_file',
    path: 'src/pdf/render.ts',
    answer: 'It formats each line itself, so the lines still display rounded values; totals match now.',
  },
  {
    ask: 'Remember that we agreed to keep integer cents everywhere.',
    tool: 'remember',
    path: 'Money is integer cents end to end; round only for display.',
    answer: 'Noted: integer cents end to end.',
  },
  {
    ask: 'Update the tax module to integer cents as well.',
    tool: 'write_file',
    path: 'src/tax.ts',
    answer: 'tax.ts now takes and returns integer cents.',
  },
  {
    ask: 'Check the API routes for places that parse amounts.',
    tool: 'read_file',
    path: 'src/api/routes.ts',
    answer: 'routes.ts parses amounts with parseFloat; I will convert them to cents at the edge.',
  },
  {
    ask: 'Convert the API edge to cents.',
    tool: 'write_file',
    path: 'src/api/routes.ts',
    answer: 'Amounts are parsed into integer cents in routes.ts, rejecting more than two decimals.',
  },
  {
    ask: 'What does the repository store?',
    tool: 'read_file',
    path: 'src/db/repository.ts',
    answer: 'It stores amounts as numeric(12,2); reading them back needs conversion to cents.',
  },
  {
    ask: 'Make the repository return cents.',
    tool: 'write_file',
    path: 'src/db/repository.ts',
    answer: 'repository.ts converts numeric strings to integer cents without floating point.',
  },
  {
    ask: 'List the test directory.',
    tool: 'list_directory',
    path: 'test',
    answer: 'test/ has invoice.test.ts and tax.test.ts.',
  },
  {
    ask: 'Extend the tax tests for half-up rounding at 0.5 cent.',
    tool: 'write_file',
    path: 'test/tax.test.ts',
    answer: 'Added cases for 0.5, 1.5 and 2.5 cents, all rounding half up.',
  },
  {
    ask: 'Pin this: releases need a changelog entry for money changes.',
    tool: 'pin',
    path: 'Every change to money handling needs a CHANGELOG entry.',
    answer: 'Pinned.',
  },
  {
    ask: 'Track the remaining work as tasks.',
    tool: 'update_tasks',
    path: 'tasks',
    answer: 'Task list updated: PDF totals, changelog, migration note.',
  },
  {
    ask: 'Search for parseFloat anywhere else.',
    tool: 'search_text',
    path: 'parseFloat',
    answer: 'Only src/currency.ts still uses parseFloat, for exchange rates, which is fine.',
  },
  {
    ask: 'Re-read invoice.ts to double-check the fix.',
    tool: 'read_file',
    path: 'src/invoice.ts',
    answer: 'The fix holds: a single Math.round at the total, integer cents elsewhere.',
  },
  {
    ask: 'Write the changelog entry.',
    tool: 'write_file',
    path: 'CHANGELOG.md',
    answer: 'CHANGELOG.md now explains the rounding fix and the switch to integer cents.',
  },
  {
    ask: 'Anything left in the PDF renderer?',
    tool: 'read_file',
    path: 'src/pdf/render.ts',
    answer: 'The renderer formats cents with Intl.NumberFormat; no change needed.',
  },
  {
    ask: 'Summarize what changed for the pull request.',
    tool: 'list_directory',
    path: 'src',
    answer:
      'Integer cents end to end, rounding once at totals, cents at the API edge and in the repository, new tests, changelog.',
  },
  {
    ask: 'Thanks. What would you check next?',
    tool: 'search_text',
    path: 'TODO',
    answer: 'Next I would check the exchange-rate cache expiry, flagged by a TODO in currency.ts.',
  },
];

const messages: Msg[] = [
  {
    role: 'system',
    content:
      'You are a careful coding agent working in the invoice-service repository. Use the tools to read, search and edit files. Explain what you find before you change anything.',
  },
];

tasks.forEach((task, i) => {
  const id = `call_${String(i + 1).padStart(3, '0')}`;
  const args =
    task.tool === 'search_text'
      ? { pattern: task.path }
      : task.tool === 'write_file'
        ? { path: task.path, content: fakeSource(task.path, 30) }
        : task.tool === 'remember'
          ? { note: task.path }
          : task.tool === 'pin'
            ? { text: task.path }
            : task.tool === 'update_tasks'
              ? {
                  tasks: [
                    { title: 'PDF totals', status: 'done' },
                    { title: 'Changelog entry', status: 'pending' },
                    { title: 'Migration note', status: 'pending' },
                  ],
                }
              : { path: task.path };
  const result =
    task.tool === 'read_file'
      ? fakeSource(task.path, 60 + (i % 4) * 20)
      : task.tool === 'search_text'
        ? files.map((f, j) => `${f}:${10 + j * 7}: ${task.path}(value * rate)`).join('\n')
        : task.tool === 'list_directory'
          ? files.filter((f) => f.startsWith(task.path)).join('\n') || 'CHANGELOG.md\nsrc/\ntest/'
          : 'ok';
  messages.push({ role: 'user', content: task.ask });
  messages.push({
    role: 'assistant',
    content: `Let me look at ${task.path}.`,
    tool_calls: [{ id, type: 'function', function: { name: task.tool, arguments: JSON.stringify(args) } }],
  });
  messages.push({ role: 'tool', tool_call_id: id, content: result });
  messages.push({ role: 'assistant', content: task.answer });
});

const out = join(__dirname, '..', 'samples', 'sample-session.json');
writeFileSync(out, JSON.stringify({ messages }, null, 2) + '\n');
console.log(`wrote ${out}: ${messages.length} messages, ${tasks.length} rounds`);
