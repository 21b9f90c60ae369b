/**
 * The compaction policy alone, without Temporal or a database: plan the compaction of an OpenAI
 * chat conversation, send the summary request to your model, and get the compacted conversation.
 *
 * ```ts
 * import OpenAI from 'openai';
 * import { compactMessages, planCompaction } from 'durable-compaction/context';
 *
 * const plan = planCompaction(messages, { window: 128_000 });
 * if (plan.summaryRequest) {
 *   const reply = await new OpenAI().chat.completions.create({
 *     model: 'gpt-4o-mini',
 *     messages: plan.summaryRequest.messages,
 *   });
 *   messages = compactMessages(plan, reply.choices[0]?.message.content ?? plan.extractiveSummary).messages;
 * }
 * ```
 *
 * @module durable-compaction/context
 */

// ---- Planning and applying a compaction of OpenAI chat messages ----
export {
  compactMessages,
  DEFAULT_TOKENIZER_MODEL,
  planCompaction,
  SummaryError,
  type ChatCompactionOptions,
  type ChatCompactionPlan,
  type CompactedChat,
  type SummaryRequestMessages,
} from './chat-compaction/chat-plan';

// ---- Settings: one schema, every default documented ----
export {
  ConfigError,
  DEFAULT_COMPACTION_CONFIG,
  DEFAULT_SELECTIVE_RULES,
  parseCompactionConfig,
  RULE_STRATEGIES,
  type CompactionConfig,
  type RuleStrategy,
  type SelectiveRule,
} from './context/config';
/** The kinds of context item a selective rule names. */
export { ITEM_TYPES, type ItemType } from './context/items';

// ---- Token counting: the model's encoding, or a tokenizer of your own ----
export type { Tokenizer, TruncateResult } from './context/tokenizer';
export { ENCODING_NAMES, encodingForModel, type EncodingName } from './tokens';

// ---- Errors of the input ----
export { ImportError } from './importers/errors';
