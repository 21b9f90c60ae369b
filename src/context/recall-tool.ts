/**
 * The built-in `recall` tool as the model sees it (issue 24), and where it joins the context: a
 * committed compaction's header gets a TOOL_DEFINITIONS item holding it (the request's tool list
 * merges every such item), so the tool is offered from the first compaction on and stays offered
 * across later compactions and continue-as-new, which keep header items.
 *
 * Pure module.
 */
import { gitDiffStatItemId } from './carried-state';
import { planCompaction, type CompactionPlan } from './compaction-plan';
import { targetTokens } from './config';
import type { ContextItem, ToolDefinition, ToolDefinitionsItem } from './items';
import { countItemTokens } from './token-accounting';
import type { Tokenizer } from './tokenizer';

/** The tool's name (while `recall` is on, a call of that name goes to the built-in tool, not to a worker's own tool of that name). */
export const RECALL_TOOL_NAME = 'recall';

/** What the model is told the tool does (a named constant: it is a prompt). */
export const RECALL_TOOL_DESCRIPTION =
  'Read back, verbatim, what compactions removed from this conversation. {"query": "..."} searches it ' +
  '(paths, identifiers, error messages, commands); {"handle": "#a1f3c2"} reads one item, "offset" continues ' +
  'it. Handles appear in the summary, in [TRUNCATED ...] markers and in the artifact trail.';

export const RECALL_TOOL_DEFINITION: ToolDefinition = {
  type: 'function',
  function: {
    name: RECALL_TOOL_NAME,
    description: RECALL_TOOL_DESCRIPTION,
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string' },
        limit: { type: 'integer' },
        handle: { type: 'string' },
        offset: { type: 'integer' },
      },
    },
  },
};

/**
 * The largest share of the target the tool's definition may take: in a smaller window it would
 * crowd out the conversation itself, so it is not offered there (a 4,000-token window and under,
 * at the default target).
 */
export const RECALL_TOOL_MAX_SHARE = 0.05;

/** The id of a conversation's recall tool item (one per conversation: item ids are global). */
export function recallToolsItemId(conversationId: string): string {
  return `${conversationId}:tools:recall`;
}

/** Whether the items hold the recall tool's definition. */
export function offersRecall(items: readonly ContextItem[]): boolean {
  return items.some(
    (i) => i.type === 'TOOL_DEFINITIONS' && i.tools.some((t) => t.function.name === RECALL_TOOL_NAME),
  );
}

/**
 * The items with the recall tool's definition in the header, after its leading system prompt and
 * tool list: unchanged when it is there already, or when it would take more than
 * {@link RECALL_TOOL_MAX_SHARE} of `targetTokens`. The new item is counted, so a plan made from
 * these items budgets for it.
 */
export function withRecallTool(
  items: readonly ContextItem[],
  conversationId: string,
  tokenizer: Tokenizer,
  targetTokens: number,
): ContextItem[] {
  if (offersRecall(items)) return [...items];
  const draft: ToolDefinitionsItem = {
    id: recallToolsItemId(conversationId),
    type: 'TOOL_DEFINITIONS',
    tools: [RECALL_TOOL_DEFINITION],
    tokens: 0,
    round: 0,
    isMeta: false,
    pinned: false,
    ephemeral: false,
  };
  const item = { ...draft, tokens: countItemTokens(draft, tokenizer) };
  if (item.tokens > RECALL_TOOL_MAX_SHARE * targetTokens) return [...items];
  let at = 0;
  while (at < items.length && (items[at]?.type === 'SYSTEM_PROMPT' || items[at]?.type === 'TOOL_DEFINITIONS'))
    at++;
  return [...items.slice(0, at), item, ...items.slice(at)];
}

/**
 * `planCompaction` of a context that offers the recall tool once this compaction commits: planned
 * with the tool's definition in the header (its tokens in the budget), unless the conversation
 * offers it already, the window is too small for it, or the plan would then leave the context no
 * smaller than it is (a compaction of little pays for nothing; a later one offers the tool). Pure
 * and deterministic, so the prune and summarize activities and `eval` plan the same.
 */
export function planOfferingRecall(
  input: Parameters<typeof planCompaction>[0],
  conversationId: string,
): CompactionPlan {
  const offered = withRecallTool(input.items, conversationId, input.tokenizer, targetTokens(input.config));
  if (offered.length === input.items.length) return planCompaction(input);
  const plan = planCompaction({ ...input, items: offered });
  // As the workflow measures it: the stored context, without this compaction's own git diff stat.
  const stat = gitDiffStatItemId(input.compactionId);
  const before = input.items.reduce((n, i) => (i.id === stat ? n : n + i.tokens), 0);
  // The compacted context is at most the goal once filled back toward it (`finishCompaction`).
  const after = Math.max(
    plan.steps.at(-1)?.tokensAfter ?? before,
    plan.toSummarize.length > 0 ? plan.goalTokens : 0,
  );
  return after < before ? plan : planCompaction(input);
}
