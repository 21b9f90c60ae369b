/**
 * The compaction policy on an OpenAI chat message array, without Temporal or a database: for agents
 * built on other frameworks, the way pi's `prepareCompaction` serves pi's.
 *
 * {@link planCompaction} decides, before any model call, what a compaction keeps, what it
 * summarizes and what the summarizer is asked; you send {@link ChatCompactionPlan.summaryRequest}
 * to your model (or take {@link ChatCompactionPlan.extractiveSummary}, written without one), then
 * {@link compactMessages} gives the compacted conversation to send from then on. It is the engine
 * the workflows run (`src/context/compaction-plan.ts`: carried state, selective prune, strategies,
 * full summary), so the conversation you get is the one a durable conversation would have.
 *
 * Pure module: no I/O, no clock.
 */
import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
  ChatCompletionSystemMessageParam,
  ChatCompletionUserMessageParam,
} from 'openai/resources/chat/completions';
import {
  finishCompaction,
  planCompaction as planItems,
  type CompactionPlan,
} from '../context/compaction-plan';
import { planExtractiveSummary, planSummaryRequest } from '../context/compaction-summary';
import { ConfigError, parseCompactionConfig, triggerTokens, type CompactionConfig } from '../context/config';
import { messageText, type ChatMessage, type ContextItem } from '../context/items';
import { buildSummaryItem } from '../context/post-compaction';
import { checkSummary, type SummaryFailureReason } from '../context/summary-result';
import type { Tokenizer } from '../context/tokenizer';
import { tokenCounterForModel } from '../tokens';
import { indicesOf, itemsOfMessages, messagesOfItems, type MessageItems } from './message-items';

/** The model whose tokenizer counts when neither `model` nor `tokenizer` is given (o200k_base). */
export const DEFAULT_TOKENIZER_MODEL = 'gpt-4o';

/** What {@link planCompaction} takes besides the messages. */
export interface ChatCompactionOptions {
  /** The model's context window in tokens (at least 256). */
  window: number;
  /**
   * Compaction settings: any key of {@link CompactionConfig} but `maxContextTokens` (that is
   * `window`); every other key has its documented default. Checked like the workflows' config:
   * an unknown key or an out-of-range value throws {@link ConfigError} naming it.
   */
  config?: Partial<Omit<CompactionConfig, 'maxContextTokens'>>;
  /** The tools your requests carry: their definitions count toward the window. Default none. */
  tools?: readonly ChatCompletionFunctionTool[];
  /**
   * The model the conversation is for: its encoding counts the tokens (`gpt-4*` and `gpt-3.5*`:
   * cl100k_base; anything else: o200k_base). Default {@link DEFAULT_TOKENIZER_MODEL}. Ignored
   * when `tokenizer` is given.
   */
  model?: string;
  /** Counts tokens instead of the model's encoding (e.g. your provider's tokenizer). */
  tokenizer?: Tokenizer;
  /** What the summary should keep above all (like `/compact <focus>`). Default none. */
  focus?: string;
}

/** The summarizer's call: send `messages` to a chat completion endpoint. */
export interface SummaryRequestMessages {
  /** The system prompt and one user message holding the transcript to summarize. */
  messages: [ChatCompletionSystemMessageParam, ChatCompletionUserMessageParam];
  /** Characters of the transcript before any cut. */
  inputChars: number;
  /**
   * Characters cut from the middle of a transcript over `summaryInputMaxChars` (0 when it fit):
   * the request keeps its head and tail.
   */
  droppedChars: number;
}

/**
 * What a compaction of the messages will do, decided before any model call. Message indices are
 * positions in the array given to {@link planCompaction}; every index is in exactly one of
 * `keep`, `summarize` and `replace`.
 */
export interface ChatCompactionPlan {
  window: number;
  /** The messages (and tools) now, in tokens. */
  tokensBefore: number;
  /** Where an automatic compaction fires: `triggerRatio` × window. */
  triggerTokens: number;
  /**
   * Whether the conversation is at or over `triggerTokens`, where a durable conversation compacts
   * by itself. A plan is made either way: under the target it halves the conversation, as a
   * compaction the user asks for (`/compact`) does.
   */
  due: boolean;
  /** What the compaction aims at: `targetRatio` × window, or half the conversation when already under it. */
  goalTokens: number;
  /**
   * The compacted conversation, the summary counted at its full budget (`summaryBudget`): what
   * {@link compactMessages} gives is at most this, give or take what it puts back.
   */
  tokensAfter: number;
  /**
   * Set when the goal cannot be reached even removing everything the policy may remove (the
   * system prompt, the task, pinned messages and the latest tool call always stay).
   */
  overTarget: boolean;
  /** Messages kept, in order: the system prompt, the original task, pinned content, the newest rounds. */
  keep: number[];
  /** Of `keep`, those kept shortened: a long tool result cut to a preview, long tool-call arguments cut. */
  shortened: number[];
  /** Messages the summary stands for (an earlier summary among them is merged into the new one). */
  summarize: number[];
  /** Messages an earlier compaction wrote that this one writes anew (artifact trail, open errors). */
  replace: number[];
  /** The messages of `summarize`, as given. */
  messagesToSummarize: ChatCompletionMessageParam[];
  /** The summarizer's call; null when nothing is summarized. */
  summaryRequest: SummaryRequestMessages | null;
  /** Tokens the summary message may have: a longer summary is cut to it. */
  summaryBudget: number;
  /**
   * A summary written without a model (seed 002's five sections filled from the transcript), within
   * the budget: the fallback when the summarizer fails. Null when nothing is summarized.
   */
  extractiveSummary: string | null;
  /** The policy's last step (`tool_blocks`, `sliding_window`, `full(keep 2)`, …), or null: none needed. */
  strategy: string | null;
}

/** The conversation after a compaction. */
export interface CompactedChat {
  /**
   * The messages to send from now on: the system prompt, the original task, pinned content and the
   * carried state (artifact trail, open errors) first, then the summary, then the kept messages.
   */
  messages: ChatCompletionMessageParam[];
  /** The tools given to {@link planCompaction}, merged by name. */
  tools: ChatCompletionFunctionTool[];
  /** Tokens of the compacted conversation (messages and tools, as {@link ChatCompactionPlan.tokensBefore} counts). */
  tokens: number;
  /**
   * Indices of the input messages it holds (some shortened). Besides the plan's `keep`, the newest
   * summarized messages come back whole when the summary leaves room for them.
   */
  keep: number[];
}

/** A summary that cannot stand for the conversation: nothing is replaced. */
export class SummaryError extends Error {
  override readonly name = 'SummaryError';
  constructor(
    readonly reason: SummaryFailureReason | 'summary_required',
    detail: string,
  ) {
    super(`the summary cannot be used (${reason}): ${detail}`);
  }
}

/** What {@link compactMessages} needs of a plan beyond its data. */
interface PlanState {
  input: MessageItems;
  tokenizer: Tokenizer;
  /** Plans again (a plan's working context is used up once compacted). */
  replan: () => CompactionPlan;
  engine: CompactionPlan | null;
}

const states = new WeakMap<ChatCompactionPlan, PlanState>();

/** The id of every compaction this module plans: new items' ids derive from it. */
const COMPACTION_ID = 'compaction';

function configOf(options: ChatCompactionOptions): CompactionConfig {
  const given = (options.config ?? {}) as Record<string, unknown>;
  if ('maxContextTokens' in given) {
    throw new ConfigError(['maxContextTokens: give the window as `window`, not in `config`']);
  }
  return parseCompactionConfig({ ...given, maxContextTokens: options.window });
}

/** The text of the summary request's message at `index` (a system prompt, then the transcript). */
function textAt(messages: readonly ChatMessage[], index: number): string {
  const message = messages[index];
  return message ? messageText(message) : '';
}

function sumTokens(items: readonly ContextItem[]): number {
  return items.reduce((n, item) => n + item.tokens, 0);
}

/**
 * Plans the compaction of an OpenAI chat conversation: what to keep, what to summarize, the summary
 * request, and the token counts before and after. Decides only: call {@link compactMessages} with
 * the summary to get the compacted conversation. The messages are not modified.
 *
 * @param messages the conversation as you send it (system, developer, user, assistant with
 *   `tool_calls`, tool)
 * @throws ConfigError when `window` or a `config` value is out of range or unknown
 * @throws ImportError naming the message that is not a chat message (`[3].role: …`)
 */
export function planCompaction(
  messages: readonly ChatCompletionMessageParam[],
  options: ChatCompactionOptions,
): ChatCompactionPlan {
  const config = configOf(options);
  const tokenizer = options.tokenizer ?? tokenCounterForModel(options.model ?? DEFAULT_TOKENIZER_MODEL);
  const input = itemsOfMessages(messages, options.tools, tokenizer);
  const replan = (): CompactionPlan =>
    planItems({
      items: input.items,
      config,
      tokenizer,
      trigger: 'manual',
      compactionId: COMPACTION_ID,
      // The messages returned are what the caller sends next: they fit the window.
      sentNext: true,
    });
  const engine = replan();
  const { work } = engine;

  const kept = [
    ...work.header,
    ...(work.removedAny ? [] : work.summaries),
    ...work.units.filter((unit) => !unit.removed).flatMap((unit) => unit.originals),
  ];
  const cut = work.units.flatMap((unit) =>
    unit.removed ? [] : unit.originals.filter((_, i) => unit.cuts[i] !== undefined),
  );
  const keep = indicesOf(kept, input.indexOf);
  const summarize = indicesOf([...engine.previousSummaries, ...engine.toSummarize], input.indexOf);
  const placed = new Set([...keep, ...summarize]);
  // Once anything is removed, a summary stands for it (and replaces the earlier ones).
  const summarized = work.removedAny;
  const request = summarized ? planSummaryRequest(engine, config, options.focus) : null;

  const plan: ChatCompactionPlan = {
    window: config.maxContextTokens,
    tokensBefore: engine.tokensBefore,
    triggerTokens: triggerTokens(config),
    due: engine.tokensBefore >= triggerTokens(config),
    goalTokens: engine.goalTokens,
    tokensAfter: work.total(),
    overTarget: engine.overTarget,
    keep,
    shortened: indicesOf(cut, input.indexOf),
    summarize,
    replace: messages.map((_, i) => i).filter((i) => !placed.has(i)),
    messagesToSummarize: summarize.map((i) => messages[i] as ChatCompletionMessageParam),
    summaryRequest: request && {
      messages: [
        { role: 'system', content: textAt(request.messages, 0) },
        { role: 'user', content: textAt(request.messages, 1) },
      ],
      inputChars: request.inputChars,
      droppedChars: request.droppedChars,
    },
    summaryBudget: engine.summaryBudget,
    extractiveSummary: summarized ? planExtractiveSummary(engine, tokenizer) : null,
    strategy: engine.strategy,
  };
  states.set(plan, { input, tokenizer, replan, engine });
  return plan;
}

/**
 * The conversation compacted as `plan` decided, with `summary` standing for what it summarizes:
 * the summarizer's answer (the last `<summary>…</summary>` block of it, or all of it without one),
 * or the plan's `extractiveSummary`. A summary over the budget is cut to it. When the summary is
 * shorter than its budget, the newest summarized messages that fit come back whole (as a durable
 * conversation's compaction does). A compaction that would not make the conversation smaller is
 * not made: the messages come back as they were. May be called again with another summary.
 *
 * @param plan what {@link planCompaction} returned (not a copy)
 * @param summary the summary's text; may be null only when the plan summarizes nothing
 * @throws SummaryError when the summary is empty, or missing while the plan summarizes something:
 *   nothing is replaced
 */
export function compactMessages(plan: ChatCompactionPlan, summary: string | null): CompactedChat {
  const state = states.get(plan);
  if (!state) throw new TypeError('compactMessages takes the plan planCompaction returned, not a copy');
  const engine = state.engine ?? state.replan();

  let summaryItem = null;
  if (engine.work.removedAny) {
    if (summary === null) {
      throw new SummaryError('summary_required', 'the plan summarizes messages: give their summary');
    }
    const checked = checkSummary({ content: summary }, { requireTags: false });
    if (checked.type === 'invalid') throw new SummaryError(checked.reason, checked.detail);
    summaryItem = buildSummaryItem({
      text: checked.summary,
      id: `${COMPACTION_ID}:summary`,
      summarizer: 'llm',
      budgetTokens: engine.summaryBudget,
      // No line of recall handles: nothing here archives the originals to recall them from.
      summarized: [],
      tokenizer: state.tokenizer,
    });
  }
  // Finishing uses the plan's working context up: a later call plans again.
  state.engine = null;
  let items = finishCompaction(engine, summaryItem);
  // As the workflows do: a compaction that does not make the conversation smaller is not made.
  if (sumTokens(items) >= plan.tokensBefore) items = state.input.items;
  return {
    ...messagesOfItems(items),
    tokens: sumTokens(items),
    keep: indicesOf(items, state.input.indexOf),
  };
}
