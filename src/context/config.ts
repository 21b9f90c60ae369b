/**
 * The compaction configuration: one zod schema, one defaults object (STYLE.md §4).
 *
 * Every field says its default and the seed (or DESIGN.md section) it comes from. Values are
 * checked here, at the edge, with exact messages: a ratio of 1.2 or an unknown key is refused before
 * any model call. Sources, later wins: defaults → config file → environment → workflow start
 * arguments (reading the file and the environment is in `src/infra/config-sources.ts`; this module
 * is pure and runs inside workflows too, loaded once per worker thread and shared by every workflow:
 * it must hold no per-workflow state, see `preloadModules` in src/worker.ts).
 */
import { z } from 'zod';
import { ITEM_TYPES, type ItemType } from './items';

/** What a selective rule does with the items of one type (seed 002). */
export const RULE_STRATEGIES = ['drop', 'truncate', 'none'] as const;
export type RuleStrategy = (typeof RULE_STRATEGIES)[number];

const ratio = (what: string) =>
  z
    .number({ error: `${what} must be a number` })
    .gt(0, { error: `${what} must be greater than 0 and at most 1` })
    .lte(1, { error: `${what} must be greater than 0 and at most 1` });
const positiveInt = (what: string) =>
  z
    .number({ error: `${what} must be a number` })
    .int({ error: `${what} must be a whole number` })
    .min(1, { error: `${what} must be at least 1` });
const nonNegativeInt = (what: string) =>
  z
    .number({ error: `${what} must be a number` })
    .int({ error: `${what} must be a whole number` })
    .min(0, { error: `${what} must be 0 or more` });

const SelectiveRuleSchema = z.strictObject({
  strategy: z.enum(RULE_STRATEGIES, { error: `strategy must be one of ${RULE_STRATEGIES.join(', ')}` }),
  /** For `truncate`: how many of the most recent items (tool blocks, for TOOL_RESULT) to keep. */
  keepRecent: nonNegativeInt('keepRecent').optional(),
  /** Lower runs first (seed 002: "from the lowest priority up"). */
  priority: nonNegativeInt('priority'),
});
/** How a selective rule treats the items of one type. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- an interface, not an alias: the API reference lists its fields
export interface SelectiveRule extends z.infer<typeof SelectiveRuleSchema> {}

/**
 * Default per-type rules (seed 002 table, DESIGN.md §5). TOOL_RESULT counts tool blocks, so a
 * result never loses its call. USER/ASSISTANT messages inside the protected recent rounds are
 * never removed (seed 003).
 */
export const DEFAULT_SELECTIVE_RULES: Readonly<Partial<Record<ItemType, SelectiveRule>>> = {
  SKILL_PROMPT: { strategy: 'drop', priority: 1 },
  SKILL_METADATA: { strategy: 'drop', priority: 1 },
  TOOL_RESULT: { strategy: 'truncate', keepRecent: 3, priority: 2 },
  ASSISTANT_MESSAGE: { strategy: 'truncate', keepRecent: 5, priority: 3 },
  USER_MESSAGE: { strategy: 'truncate', keepRecent: 5, priority: 3 },
  SYSTEM_PROMPT: { strategy: 'none', priority: 9 },
  SUBAGENT_STRATEGY: { strategy: 'none', priority: 9 },
  COMPACTION_SUMMARY: { strategy: 'none', priority: 9 },
};

const rulesSchema = z.record(z.string(), SelectiveRuleSchema).superRefine((rules, ctx) => {
  for (const key of Object.keys(rules)) {
    if (!(ITEM_TYPES as readonly string[]).includes(key)) {
      ctx.addIssue({
        code: 'custom',
        message: `unknown item type "${key}" (one of ${ITEM_TYPES.join(', ')})`,
      });
    } else if (rules[key]?.strategy === 'truncate' && rules[key]?.keepRecent === undefined) {
      ctx.addIssue({ code: 'custom', message: `rule for ${key}: truncate needs keepRecent` });
    }
  }
  for (const fixed of ['SYSTEM_PROMPT', 'TOOL_DEFINITIONS', 'SUBAGENT_STRATEGY', 'COMPACTION_SUMMARY']) {
    if (rules[fixed] && rules[fixed]?.strategy !== 'none') {
      ctx.addIssue({ code: 'custom', message: `rule for ${fixed} must be "none": it is never compacted` });
    }
  }
});

// Not exported: the workflow bundle preloads this module once per worker thread and freezes what it
// exports (src/worker.ts), and a frozen zod schema cannot parse (it defines its methods lazily).
const CompactionConfigSchema = z
  .strictObject({
    /** Compact at all (seed 004 `enabled`). Manual and overflow compactions run even when false. Default true. */
    enabled: z.boolean({ error: 'enabled must be true or false' }).default(true),
    /** The model's context window in tokens (seed 004 `max_context_tokens`). Default 80,000. */
    maxContextTokens: z
      .number({ error: 'maxContextTokens must be a number' })
      .int({ error: 'maxContextTokens must be a whole number' })
      .min(256, { error: 'maxContextTokens must be at least 256' })
      .default(80_000),
    /**
     * Precheck and check fire at this share of the window (seed 004 `trigger_ratio` 0.8; seed 002
     * threshold 80%). Seed 001's "remaining < 25%" (0.75) and seed 000's 90% are the same knob.
     */
    triggerRatio: ratio('triggerRatio').default(0.8),
    /** After compaction the context is at most this share of the window (DESIGN.md §5). Default 0.5. */
    targetRatio: ratio('targetRatio').default(0.5),
    /** Rounds kept verbatim by the full summary, the last resort (seed 004 `keep_recent_rounds`). Default 2. */
    keepRecentRounds: nonNegativeInt('keepRecentRounds').default(2),
    /** Real user rounds since the last compaction that trigger one (seed 001 `conversation_turn_threshold`). Default 200. */
    roundsThreshold: positiveInt('roundsThreshold').default(200),
    /** Items in the active context that trigger a compaction (seed 000 MAX_TURNS). Default 700. */
    eventsThreshold: positiveInt('eventsThreshold').default(700),
    /** Text in the model's output that asks for a compaction (seed 001). Default `!!!SUMMARY!!!`. */
    marker: z.string().min(1, { error: 'marker must not be empty' }).default('!!!SUMMARY!!!'),
    /**
     * Ask before an automatic compaction (seed 004 `require_confirmation`). Default false: the seed
     * defaults to true for an interactive assistant; an unattended agent would stall (DESIGN.md §3
     * makes it optional).
     */
    requireConfirmation: z.boolean({ error: 'requireConfirmation must be true or false' }).default(false),
    /** How long to wait for approval. Default 5 minutes. */
    confirmationTimeoutMs: positiveInt('confirmationTimeoutMs').default(300_000),
    /** What a timed-out confirmation means. Default `approve`. */
    confirmationDefault: z
      .enum(['approve', 'reject'], { error: 'confirmationDefault must be approve or reject' })
      .default('approve'),
    /**
     * After a rejection (seed 004 case 2): drop the oldest rounds, go on uncompacted, or fail the
     * round. Default `drop_oldest`. `continue` goes on uncompacted while the next request fits the
     * window; a request over it is never sent, so the emergency compaction runs first (as after the
     * model refuses a request as too long).
     */
    onReject: z
      .enum(['drop_oldest', 'continue', 'fail'], { error: 'onReject must be drop_oldest, continue or fail' })
      .default('drop_oldest'),
    /**
     * Stop every compaction that writes a summary after the summary, before commit, until a person
     * approves it (optionally with an edited summary) or rejects it (issue 23; seed 004's optional
     * confirmation, asked with the result in hand). A rejection rolls the compaction back, then an
     * automatic one applies `onReject`. Default false: an unattended agent would stall.
     */
    reviewSummary: z.boolean({ error: 'reviewSummary must be true or false' }).default(false),
    /** How long a summary waits for review; then `reviewDefault` applies. Default 1 hour. */
    reviewTimeoutMs: positiveInt('reviewTimeoutMs').default(3_600_000),
    /** What a review that timed out means. Default `approve` (as `confirmationDefault`). */
    reviewDefault: z
      .enum(['approve', 'reject'], { error: 'reviewDefault must be approve or reject' })
      .default('approve'),
    /** Who writes summaries: an LLM, or the extractive summarizer (no model call). Default `llm`. */
    summarizer: z
      .enum(['llm', 'extractive'], { error: 'summarizer must be llm or extractive' })
      .default('llm'),
    /**
     * Budget of one summary in tokens; a longer one is cut (seed 004 `summary_max_length`, 1000,
     * there in characters: too small for the five sections of seed 002's prompt, so tokens here).
     * Never more than the target (`summaryTokenBudget`).
     */
    summaryMaxTokens: positiveInt('summaryMaxTokens').default(1000),
    /**
     * The summary gets at most this share of the room the header and carried state leave under the
     * target (and never more than `summaryMaxTokens`), so header + carried state + summary + kept
     * items fit the target at every window (DESIGN.md §5). Default 0.3.
     */
    summaryRoomRatio: ratio('summaryRoomRatio').default(0.3),
    /**
     * The carried state a compaction writes into the header (artifact trail, open errors, git diff
     * stat) takes at most this share of the target (DESIGN.md §5). Default 0.2.
     */
    carriedStateRatio: ratio('carriedStateRatio').default(0.2),
    /**
     * The carried state may grow past `carriedStateRatio` only as far as it must to keep every
     * touched file's path and every open error's text written whole (a session that touched 60
     * files under a long absolute root, at an 8k window), up to this share of what the rest of the
     * header leaves under the target; past it the oldest directories collapse into counts and the
     * oldest errors go. Never less than `carriedStateRatio`. Default 0.4.
     */
    carriedStateMaxRatio: ratio('carriedStateMaxRatio').default(0.4),
    /** Summary input over this many characters is cut to its head and tail (seed 000 MAX_SAFE_CHARS). Default 200,000. */
    summaryInputMaxChars: positiveInt('summaryInputMaxChars').default(200_000),
    /** Share of `summaryInputMaxChars` kept from the head of an oversized input (seed 000). Default 0.2. */
    summaryInputHeadRatio: ratio('summaryInputHeadRatio').default(0.2),
    /** Share of `summaryInputMaxChars` kept from the tail of an oversized input (seed 000). Default 0.3. */
    summaryInputTailRatio: ratio('summaryInputTailRatio').default(0.3),
    /** Cooldown after a compaction rolled back because the summary failed (seed 003). Default 8,000 ms. */
    cooldownMs: nonNegativeInt('cooldownMs').default(8_000),
    /** Stream the per-phase meta events to clients (seed 003 `emit_compaction_meta_events`). Default false. */
    emitCompactionMetaEvents: z
      .boolean({ error: 'emitCompactionMetaEvents must be true or false' })
      .default(false),
    /** Longest user message accepted by `sendMessage`, in characters. Default 200,000. */
    maxInputChars: positiveInt('maxInputChars').default(200_000),

    // ---- selective prune (seeds 002 and 003) ----
    /** Per-type rules, merged over {@link DEFAULT_SELECTIVE_RULES}. */
    selectiveRules: rulesSchema.default({}),
    /**
     * Tool blocks that always stay; older ones are dropped whole, oldest first, only while the context
     * is over the target (seed 003 `tool_blocks_keep_recent`, a minimum here). Default 5.
     */
    toolBlocksKeepRecent: nonNegativeInt('toolBlocksKeepRecent').default(5),
    /** Tool-call arguments over this many tokens are cut (seed 003 `tool_call_threshold`). Default 500. */
    toolCallThreshold: positiveInt('toolCallThreshold').default(500),
    /** Tool results over this many tokens are cut (seed 003 `tool_result_threshold`). Default 600. */
    toolResultThreshold: positiveInt('toolResultThreshold').default(600),
    /** Tokens kept of a cut field (seed 003 `preview_tokens`). Default 200. */
    previewTokens: positiveInt('previewTokens').default(200),
    /** The newest rounds whose user/assistant messages the prune never removes (seed 003 `dialogue_rounds_keep_min`). Default 12. */
    protectedRounds: nonNegativeInt('protectedRounds').default(12),

    // ---- summary strategies (seed 001) ----
    /** Sliding window: user and tool messages kept (seed 001: 4 of `sliding_window_size` 9). */
    slidingWindowUserToolMessages: nonNegativeInt('slidingWindowUserToolMessages').default(4),
    /** Sliding window: assistant messages kept (seed 001: 5 of `sliding_window_size` 9). */
    slidingWindowAssistantMessages: nonNegativeInt('slidingWindowAssistantMessages').default(5),
    /** Importance scoring keeps items scoring at least this (seed 001 `importance_score_threshold`). Default 3.0. */
    importanceScoreThreshold: z
      .number({ error: 'importanceScoreThreshold must be a number' })
      .min(0, { error: 'importanceScoreThreshold must be 0 or more' })
      .default(3.0),
    /** Importance scoring and key events also keep this many of the most recent other items (seed 001). Default 5. */
    strategyKeepRecentOthers: nonNegativeInt('strategyKeepRecentOthers').default(5),
    /** Incremental summary: rounds per chunk (seed 001 `incremental_summary_chunk_size`). Default 20. */
    incrementalChunkRounds: positiveInt('incrementalChunkRounds').default(20),

    // ---- loop guard (DESIGN.md §3) ----
    /**
     * Pause automatic compaction after this many compactions without progress (saved under
     * `loopGuardMinSavedRatio`, or ended over the target) within `loopGuardWithinRounds` rounds; a
     * healthy compaction never counts. Default 5.
     */
    loopGuardMaxCompactions: positiveInt('loopGuardMaxCompactions').default(5),
    /** The window of the count above, in rounds. Default 2. */
    loopGuardWithinRounds: positiveInt('loopGuardWithinRounds').default(2),
    /** Pause automatic compaction at once when one saves less than this share of its tokens. Default 0.1. */
    loopGuardMinSavedRatio: z
      .number({ error: 'loopGuardMinSavedRatio must be a number' })
      .min(0, { error: 'loopGuardMinSavedRatio must be between 0 and 1' })
      .max(1, { error: 'loopGuardMinSavedRatio must be between 0 and 1' })
      .default(0.1),
    /**
     * Rounds a loop-guard pause lasts; then automatic compaction is armed again (a manual or
     * overflow compaction that commits lifts it at once). Default 10.
     */
    loopGuardPauseRounds: positiveInt('loopGuardPauseRounds').default(10),

    // ---- recall (issue 24) ----
    /**
     * Offer the built-in `recall` tool once a compaction has archived items: a committed compaction
     * adds its definition to the header, so the model can search what was compacted away and read
     * it back. Default true.
     */
    recall: z.boolean({ error: 'recall must be true or false' }).default(true),
    /**
     * Tokens of one page of `recall({ handle })`: a longer item is read a page at a time (`offset`).
     * Never more than a quarter of the target (`recallPageBudget`), so one page cannot fill the
     * context a compaction just made room in. Default 2,000.
     */
    recallPageTokens: positiveInt('recallPageTokens').default(2000),
    /** Results of a `recall({ query })` that gives no `limit` (a `limit` is capped at 20). Default 5. */
    recallSearchLimit: positiveInt('recallSearchLimit')
      .max(20, { error: 'recallSearchLimit must be at most 20' })
      .default(5),
  })
  .superRefine((c, ctx) => {
    // Cross-field checks compare only values that passed their own checks (zod runs this even when
    // a field failed): a triggerRatio of -1 is reported once, not again as "below targetRatio".
    const isRatio = (v: unknown): v is number => typeof v === 'number' && v > 0 && v <= 1;
    const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1;
    if (isRatio(c.targetRatio) && isRatio(c.triggerRatio) && c.targetRatio >= c.triggerRatio) {
      ctx.addIssue({
        code: 'custom',
        path: ['targetRatio'],
        message: `targetRatio (${c.targetRatio}) must be below triggerRatio (${c.triggerRatio}), or every compaction would fire again at once`,
      });
    }
    if (
      isRatio(c.summaryInputHeadRatio) &&
      isRatio(c.summaryInputTailRatio) &&
      c.summaryInputHeadRatio + c.summaryInputTailRatio > 1
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['summaryInputHeadRatio'],
        message: 'summaryInputHeadRatio + summaryInputTailRatio must be at most 1',
      });
    }
    if (
      isCount(c.previewTokens) &&
      isCount(c.toolCallThreshold) &&
      isCount(c.toolResultThreshold) &&
      c.previewTokens >= Math.min(c.toolCallThreshold, c.toolResultThreshold)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['previewTokens'],
        message: 'previewTokens must be below toolCallThreshold and toolResultThreshold',
      });
    }
  });

/** The validated configuration, every field present. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- an interface, not an alias: the API reference lists its fields
export interface CompactionConfig extends z.infer<typeof CompactionConfigSchema> {}

/** The schema of each field, by key: the config sources check one value at a time. */
export function compactionConfigFields(): typeof CompactionConfigSchema.shape {
  return CompactionConfigSchema.shape;
}

/** Every default in one place (STYLE.md §4). */
export const DEFAULT_COMPACTION_CONFIG: CompactionConfig = CompactionConfigSchema.parse({});

/** A configuration that is not valid, with every problem named by its field. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid compaction config: ${problems.join('; ')}`);
  }
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const known = Object.keys(CompactionConfigSchema.shape).join(', ');
    const where = path ? ` in ${path}` : '';
    return (
      `unknown key${issue.keys.length > 1 ? 's' : ''}${where}: ${issue.keys.join(', ')}` +
      (path ? '' : ` (known keys: ${known})`)
    );
  }
  return path ? `${path}: ${issue.message}` : issue.message;
}

/**
 * Validates a partial configuration and fills the defaults. Throws {@link ConfigError} naming
 * every bad field (unknown keys, wrong types, out-of-range values). Pure.
 */
export function parseCompactionConfig(raw: unknown): CompactionConfig {
  const result = CompactionConfigSchema.safeParse(raw ?? {});
  if (!result.success) throw new ConfigError(result.error.issues.map(describeIssue));
  return result.data;
}

/** The rule of each item type: the defaults with the configured ones over them. */
export function selectiveRules(config: CompactionConfig): Partial<Record<ItemType, SelectiveRule>> {
  return {
    ...DEFAULT_SELECTIVE_RULES,
    ...(config.selectiveRules as Partial<Record<ItemType, SelectiveRule>>),
  };
}

/** The precheck/check threshold in tokens: fires at `tokens >= triggerTokens`. */
export function triggerTokens(config: CompactionConfig): number {
  // Rounded up so 79.9% never fires and 80% always does, whatever the float error of ratio × window.
  return Math.ceil(config.triggerRatio * config.maxContextTokens - 1e-9);
}

/** The size a compaction aims for, in tokens. */
export function targetTokens(config: CompactionConfig): number {
  return Math.floor(config.targetRatio * config.maxContextTokens);
}

/**
 * The most tokens a summary may have: `summaryMaxTokens`, but never more than the target, so that
 * a summary longer than the window (asked for by a large `summaryMaxTokens`) is cut to fit.
 */
export function summaryTokenBudget(config: CompactionConfig): number {
  return Math.min(config.summaryMaxTokens, targetTokens(config));
}

/**
 * Tokens of one page of `recall({ handle })`: `recallPageTokens`, but never more than a quarter of
 * the target (at least 50), whatever the window.
 */
export function recallPageBudget(config: CompactionConfig): number {
  return Math.max(50, Math.min(config.recallPageTokens, Math.floor(targetTokens(config) / 4)));
}
