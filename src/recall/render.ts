/**
 * Recall's results as the text the model reads (the tool's result) and people see (`recall`
 * without `--json`): one way of writing them, so both read the same.
 *
 * Pure module.
 */
import type { RecallHit, RecallPage, RecallSearch } from './recall';

const TYPE_WORDS: Record<string, string> = {
  USER_MESSAGE: 'user message',
  ASSISTANT_MESSAGE: 'assistant message',
  TOOL_RESULT: 'tool result',
  SYSTEM_PROMPT: 'system prompt',
  COMPACTION_SUMMARY: 'summary',
};

function describe(entry: Pick<RecallHit, 'type' | 'tool' | 'call' | 'round' | 'tokens'>): string {
  const kind = TYPE_WORDS[entry.type] ?? entry.type.toLowerCase().replaceAll('_', ' ');
  const what = entry.call ? `${kind} of ${entry.call}` : entry.tool ? `${kind} of ${entry.tool}` : kind;
  return `round ${entry.round} · ${what} · ${entry.tokens.toLocaleString('en-US')} tokens`;
}

/** A search's results: one entry per hit (handle, round, type, size, snippet), then how to read one. */
export function renderSearch(result: RecallSearch): string {
  if (result.hits.length === 0) {
    return `recall: no archived item matches ${JSON.stringify(result.query)}. Try other words: a file path, an identifier, an error's words, a command.`;
  }
  const lines = [
    `recall: ${result.hits.length} of ${result.total} archived item${result.total === 1 ? '' : 's'} matching ${JSON.stringify(result.query)}, best first`,
  ];
  for (const hit of result.hits) {
    lines.push(`${hit.handle} · ${describe(hit)}`, `  ${hit.snippet}`);
  }
  const first = result.hits[0] as RecallHit;
  lines.push(`Read one whole: recall({"handle": "${first.handle}"}).`);
  return lines.join('\n');
}

/** A page of an item: what it is, its text, and where the next page starts. */
export function renderPage(page: RecallPage): string {
  const range =
    page.offset === 0 && page.next === null
      ? `${page.totalChars.toLocaleString('en-US')} characters`
      : `characters ${page.offset.toLocaleString('en-US')}–${page.end.toLocaleString('en-US')} of ${page.totalChars.toLocaleString('en-US')}`;
  const where = page.archived ? '' : ' · in the context now';
  const head = `recall ${page.handle} · ${describe(page)}${where} · ${range}`;
  const next =
    page.next === null
      ? '[end of item]'
      : `[more: recall({"handle": "${page.handle}", "offset": ${page.next}})]`;
  return `${head}\n${page.text}\n${next}`;
}
