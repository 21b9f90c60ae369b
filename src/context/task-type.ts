/**
 * Task-type detection (seed 001's adaptive compression): what kind of work the conversation is,
 * from its tool calls and message shapes, and the strategy chain each kind uses.
 *
 * Pure module.
 */
import type { ContextItem } from './items';

export const TASK_TYPES = ['code', 'analysis', 'conversation', 'mixed', 'unknown'] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export const STRATEGIES = ['sliding_window', 'importance', 'key_events', 'incremental', 'full'] as const;
export type StrategyName = (typeof STRATEGIES)[number];

/** Tools that change or run things: the signature of a code task (seed 001: "code-related tool calls"). */
const CODE_TOOL =
  /(write|edit|patch|replace|create|insert|bash|shell|exec|run|command|terminal|test|compile|build|git|apply|str_replace|delete|move|rename)/i;
/** Tools that look things up: the signature of an analysis task. */
const ANALYSIS_TOOL =
  /(read|view|open|cat|search|grep|find|glob|list|ls|fetch|browse|web|query|sql|analy|inspect|lookup|get|download|http)/i;

/** The category of one tool name. */
export function toolCategory(name: string): 'code' | 'analysis' | 'other' {
  if (CODE_TOOL.test(name)) return 'code';
  if (ANALYSIS_TOOL.test(name)) return 'analysis';
  return 'other';
}

/**
 * The task type, by the shares of tool calls:
 * - no tool calls: `conversation` when users and the assistant talk, else `unknown`;
 * - `mixed` when tools of other kinds make up 30% or more besides code or analysis tools;
 * - `code` when calls that change or run things are at least 20% of the calls;
 * - `analysis` when look-up calls are at least half;
 * - otherwise `unknown`.
 */
export function detectTaskType(items: readonly ContextItem[]): TaskType {
  let code = 0;
  let analysis = 0;
  let other = 0;
  let dialogue = 0;
  // A session calls a handful of tools many times: each name is categorized once.
  const categories = new Map<string, ReturnType<typeof toolCategory>>();
  for (const item of items) {
    if (item.type === 'USER_MESSAGE' || item.type === 'ASSISTANT_MESSAGE') dialogue++;
    if (item.type !== 'ASSISTANT_MESSAGE') continue;
    for (const call of item.message.tool_calls ?? []) {
      const name = call.function.name;
      let category = categories.get(name);
      if (category === undefined) {
        category = toolCategory(name);
        categories.set(name, category);
      }
      if (category === 'code') code++;
      else if (category === 'analysis') analysis++;
      else other++;
    }
  }
  const total = code + analysis + other;
  if (total === 0) return dialogue >= 2 ? 'conversation' : 'unknown';
  if (other / total >= 0.3 && (code + analysis) / total >= 0.3) return 'mixed';
  if (code / total >= 0.2) return 'code';
  if (analysis / total >= 0.5) return 'analysis';
  return 'unknown';
}

/**
 * The adaptive chain of each task type (seed 001, sliding window first; DESIGN.md §5). The full
 * summary, the last resort, follows every chain (the workflow adds it).
 */
export function strategyChain(taskType: TaskType): StrategyName[] {
  switch (taskType) {
    case 'code':
      return ['sliding_window', 'key_events', 'incremental'];
    case 'mixed':
      return ['sliding_window', 'incremental', 'importance'];
    case 'analysis':
    case 'conversation':
    case 'unknown':
      return ['sliding_window', 'importance', 'incremental'];
  }
}

/**
 * The fixed fallback order of seed 001 when the adaptive chain fails: sliding window first, then
 * importance scoring, key events and incremental summary.
 */
export const FALLBACK_CHAIN: readonly StrategyName[] = [
  'sliding_window',
  'importance',
  'key_events',
  'incremental',
];

/** The adaptive chain followed by the strategies of the fallback order it does not already have. */
export function fullStrategyChain(taskType: TaskType): StrategyName[] {
  const chain = strategyChain(taskType);
  return [...chain, ...FALLBACK_CHAIN.filter((s) => !chain.includes(s))];
}
