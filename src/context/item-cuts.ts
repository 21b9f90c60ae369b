/**
 * Cuts of single items (seed 003): a tool result, a message's text, the reasoning of a message that
 * calls tools, or tool-call arguments, cut to a preview of their first tokens (a tool result's: its
 * first tokens, `[…]` and its last lines) plus `[TRUNCATED original~N tokens; recall #handle]`. A
 * cut is decided on the stored counts and bounds (a {@link PlannedCut} says its tokens); its text
 * is written only when the context is read, so deciding costs no tokenizing. A cut form's id is
 * derived from the original's (or, cut again, the form's) and the preview's size, so planning again
 * gives the same ids. Each field of an item is cut once — a result's text again only to another
 * preview of the same original, and a message's text or a reply's reasoning again only where the
 * last resort must (`X~text200~text60`) — and a form with one field cut may have the other cut (a
 * reply's reasoning, then its arguments: `X~text200~cut200`).
 *
 * Pure module: the tokenizer is an argument.
 */
import type { CompactionConfig } from './config';
import { messageText, type AssistantMessageItem, type ContextItem } from './items';
import { framingTokens, framingTokensOf } from './item-facts';
import { handleOf } from './recall-handle';
import { countItemTokens, MESSAGE_OVERHEAD_TOKENS, TOOL_CALL_OVERHEAD_TOKENS } from './token-accounting';
import type { Tokenizer } from './tokenizer';
import type { PlannedCut } from './working-context';

/**
 * The shortest preview worth giving (a quarter of the seed's 200): of a removed message coming
 * back, of arguments where nothing longer fits.
 */
export const MIN_PREVIEW_TOKENS = 50;

/**
 * Seed 003's marker after a cut field; with the original's recall handle when given (issue 24):
 * `[TRUNCATED original~N tokens; recall #a1f3c2]`.
 */
export function truncationMarker(originalTokens: number, handle?: string): string {
  return `[TRUNCATED original~${originalTokens} tokens${handle ? `; recall ${handle}` : ''}]`;
}

/** Tokens a cut field adds beyond its preview: the line break and the marker, with room to spare. */
function markerTokens(): number {
  // "\n[TRUNCATED original~N tokens; recall #a1f3c2]" is at most 21 tokens in o200k_base and
  // cl100k_base for any N under 10^9 (the marker 12, the handle's hex digits up to 9; measured over
  // 20,000 handles); planning on the bound counts nothing (the written cut form is counted exactly).
  return MARKER_TOKENS_BOUND + 2;
}

/** Tokens of a line break and the marker at most (`markerTokens`). */
const MARKER_TOKENS_BOUND = 21;

/** A field's text cut to a preview of `previewTokens` tokens plus the marker naming the original's handle. */
function cutText(
  text: string,
  originalTokens: number,
  previewTokens: number,
  tokenizer: Tokenizer,
  originalId: string,
): string {
  return `${tokenizer.prefix(text, previewTokens)}\n${truncationMarker(originalTokens, handleOf(originalId))}`;
}

/** Where a tool output's preview leaves out its middle (between its first tokens and its last lines). */
export const ELISION_LINE = '\n[…]\n';
/** Tokens kept for {@link ELISION_LINE} and the second place a preview joins (a token each side). */
const ELISION_TOKENS = 5;
/** Share of a tool output's preview given to its last lines. */
const TAIL_SHARE = 0.25;
/** Characters read from a text's end per token looked for: more than a token ever takes in practice. */
const TAIL_CHARS_PER_TOKEN = 8;

/** Times the last lines are counted whole at most: the line counts summed can be off by a token or two. */
const TAIL_RECOUNTS = 4;

/**
 * The last whole lines of `text` in at most `maxTokens` tokens ('' when not even its last line
 * fits, or there is no line break to start from in a text longer than that). Reads no more than
 * the last `maxTokens * 8` characters, each line counted once (then the lines chosen are counted
 * whole, dropping a line at a time if their sum was short: linear).
 */
function lastLines(text: string, maxTokens: number, tokenizer: Tokenizer): string {
  if (maxTokens <= 0) return '';
  const from = Math.max(0, text.length - maxTokens * TAIL_CHARS_PER_TOKEN);
  // The text starts a line; a window into it starts at the first line break in it.
  let start = from === 0 ? 0 : text.indexOf('\n', from) + 1;
  if (from > 0 && start === 0) return '';
  // Newest line first: add lines while their counts fit.
  let tokens = 0;
  for (let end = text.length; end > start;) {
    // The line that ends at `end`, its line break with it (a line break at start-1 bounds it).
    // (lastIndexOf reads a negative start as 0: a first line is the text's start.)
    const lineStart = end < 2 ? 0 : text.lastIndexOf('\n', end - 2) + 1;
    tokens += tokenizer.countText(text.slice(lineStart, end));
    if (tokens > maxTokens) {
      start = end;
      break;
    }
    end = lineStart;
  }
  let tail = text.slice(start);
  for (let i = 0; tail.length > 0 && tokenizer.countText(tail) > maxTokens; i++) {
    if (i === TAIL_RECOUNTS) return '';
    const next = tail.indexOf('\n');
    tail = next === -1 ? '' : tail.slice(next + 1);
  }
  return tail.trim().length > 0 ? tail : '';
}

/**
 * A tool output cut to a preview of `previewTokens` tokens: its first tokens, then `[…]` and its
 * last lines in about a quarter of the preview (a command's outcome — the test summary, the error
 * it exited with — is at its end), then the marker. Seed 003 keeps the first tokens only; that is
 * kept where the last line alone is too long for the quarter. `text` may be an earlier preview of
 * the output (a cut form cut again): its ending is the part after its `[…]`, its head the part
 * before; one that has no `[…]` has no ending to keep. The preview stays within `previewTokens`
 * (and the margin {@link cutMargin} allows for the places it joins).
 */
function cutOutput(
  text: string,
  originalTokens: number,
  previewTokens: number,
  tokenizer: Tokenizer,
  originalId: string,
  recut: boolean,
): string {
  const elided = recut ? text.lastIndexOf(ELISION_LINE) : -1;
  if (recut && elided === -1) return cutText(text, originalTokens, previewTokens, tokenizer, originalId);
  const before = elided === -1 ? text : text.slice(0, elided);
  const ending = elided === -1 ? text : text.slice(elided + ELISION_LINE.length);
  const tail = lastLines(ending, Math.floor(previewTokens * TAIL_SHARE) - ELISION_TOKENS, tokenizer);
  if (tail === '') return cutText(before, originalTokens, previewTokens, tokenizer, originalId);
  const head = tokenizer.prefix(before, previewTokens - ELISION_TOKENS - tokenizer.countText(tail));
  // The two ends meet (an output barely over its preview): the first tokens alone.
  if (elided === -1 && head.length + tail.length >= text.length)
    return cutText(text, originalTokens, previewTokens, tokenizer, originalId);
  const marker = truncationMarker(originalTokens, handleOf(originalId));
  return `${head}${ELISION_LINE}${tail.replace(/\n+$/, '')}\n${marker}`;
}

/** A cut form's marker at the end of a text (with or without a handle); the original size it states. */
const MARKER_AT_END = /\n\[TRUNCATED original~(\d+) tokens(?:; recall #[0-9a-f]+)?\]$/;
/** Longer than any marker {@link truncationMarker} writes, with its line break. */
const MARKER_MAX_CHARS = 128;

/**
 * Where the marker a text ends with starts, and the original size it states; null when the text
 * ends with none. Only the text's end is read: arguments of 100,000 characters are checked at
 * every preview size a cut tries.
 */
function endMarker(text: string): { index: number; original: number } | null {
  const from = Math.max(0, text.length - MARKER_MAX_CHARS);
  const match = MARKER_AT_END.exec(from === 0 ? text : text.slice(from));
  return match ? { index: from + match.index, original: Number(match[1]) } : null;
}

/**
 * Tokens a cut form's count may exceed its plan by: the preview counted alone can split a token
 * or two differently from the whole text.
 */
function cutMargin(previewTokens: number): number {
  return 3 + Math.ceil(previewTokens / 500);
}

/**
 * The longest preview whose planned cut of a tool result takes at most `tokens` tokens (message
 * framing, marker and margin included); may be 0 or less when nothing fits.
 */
export function previewFitting(tokens: number): number {
  const fixed = MESSAGE_OVERHEAD_TOKENS + markerTokens();
  // The margin grows with the preview: take the one of the largest preview that could fit.
  return tokens - fixed - cutMargin(Math.max(0, tokens - fixed));
}

/**
 * The fewest tokens an item of a removed unit can come back in (`finishCompaction`): a tool
 * result's head of one token with its marker, a message's text cut to {@link MIN_PREVIEW_TOKENS};
 * for a message that calls tools, the less of its reasoning cut that short and its calls'
 * arguments cut that short; the item itself when it is no longer, or cannot be cut.
 */
export function smallestCutTokens(item: ContextItem, config: CompactionConfig, tokenizer: Tokenizer): number {
  const preview = planShortestPreview(
    item,
    config,
    tokenizer,
    item.type === 'TOOL_RESULT' ? 1 : MIN_PREVIEW_TOKENS,
  );
  let smallest = Math.min(item.tokens, preview?.tokens ?? item.tokens);
  if (item.type === 'ASSISTANT_MESSAGE' && (item.message.tool_calls?.length ?? 0) > 0) {
    const cut = planCut(item, config, tokenizer, MIN_PREVIEW_TOKENS, true);
    smallest = Math.min(smallest, cut?.tokens ?? item.tokens);
  }
  return smallest;
}

/**
 * The cut of an item whose tool arguments or result are over their threshold, decided on the
 * stored counts (the text is read only when the cut is written), or null: nothing over, or not
 * smaller. A result's cut form is cut again only to another preview of the same original (its
 * marker keeps the original's size), and arguments already cut are not cut again, so cutting is
 * idempotent.
 */
export function planCut(
  item: ContextItem,
  config: CompactionConfig,
  tokenizer: Tokenizer,
  previewTokens = config.previewTokens,
  /**
   * Cut what is under its threshold too: a result under `toolResultThreshold` (a removed block
   * coming back as a preview), the arguments of every call over the preview (a message whose
   * calls are each under `toolCallThreshold` and together over the room).
   */
  anySize = false,
): (PlannedCut & { calls: number; results: number }) | null {
  // Most items are not cut: they are turned away before anything is made for them.
  if (item.type === 'TOOL_RESULT') return planTextCut(item, config, tokenizer, previewTokens, anySize);
  if (item.type !== 'ASSISTANT_MESSAGE' || !item.message.tool_calls) return null;
  // The whole message (every call and the text) is under the threshold: no argument is over.
  if (!anySize && item.tokens <= config.toolCallThreshold) return null;
  return planArgumentsCut(item, config, tokenizer, previewTokens, anySize);
}

/** Whether {@link planCut} may cut the item at the seed's sizes: what it turns away first, at a glance. */
export function mayCut(item: ContextItem, config: CompactionConfig): boolean {
  if (item.type === 'TOOL_RESULT')
    return item.sourceId !== undefined || item.tokens - MESSAGE_OVERHEAD_TOKENS > config.toolResultThreshold;
  return item.type === 'ASSISTANT_MESSAGE' && item.tokens > config.toolCallThreshold;
}

/** Items whose whole text can be cut to a preview: a text (or text parts) and no name to pay for. */
type TextItem = Extract<ContextItem, { message: { content: unknown } }>;

function isTextItem(item: ContextItem): item is TextItem {
  if (item.type === 'TOOL_RESULT') return true;
  if (item.type === 'TOOL_DEFINITIONS' || item.type === 'COMPACTION_SUMMARY') return false;
  if (item.type === 'ASSISTANT_MESSAGE' && (item.message.tool_calls?.length ?? 0) > 0) return false;
  if ('name' in item.message && item.message.name) return false;
  const content = item.message.content;
  // A list of text parts reads as their text (a part of any other kind would be lost).
  return (
    typeof content === 'string' || (Array.isArray(content) && content.every((part) => part.type === 'text'))
  );
}

function planTextCut(
  item: TextItem,
  config: CompactionConfig,
  tokenizer: Tokenizer,
  previewTokens: number,
  anySize: boolean,
): (PlannedCut & { calls: number; results: number }) | null {
  const content = messageText(item.message);
  const recut = item.sourceId !== undefined ? endMarker(content) : null;
  if (item.sourceId !== undefined && !recut) return null;
  // The stored count is the content's plus the message framing (no name: see isTextItem).
  const original = recut ? recut.original : item.tokens - MESSAGE_OVERHEAD_TOKENS;
  if ((!anySize && original <= config.toolResultThreshold) || original <= previewTokens) return null;
  const tokens = MESSAGE_OVERHEAD_TOKENS + previewTokens + markerTokens() + cutMargin(previewTokens);
  if (tokens >= item.tokens) return null;
  const text = recut ? content.slice(0, recut.index) : content;
  const source = item.sourceId ?? item.id;
  const id = `${source}~cut${previewTokens}`;
  const write = (): ContextItem => {
    const next = {
      ...item,
      id,
      sourceId: source,
      message: {
        ...item.message,
        content:
          item.type === 'TOOL_RESULT'
            ? cutOutput(text, original, previewTokens, tokenizer, source, recut !== null)
            : cutText(text, original, previewTokens, tokenizer, source),
      },
    } as TextItem;
    return { ...next, tokens: countItemTokens(next, tokenizer) };
  };
  return { id, tokens, of: 'text', write, calls: 0, results: item.type === 'TOOL_RESULT' ? 1 : 0 };
}

/**
 * The longest preview of an item's text whose cut takes at most `tokens`, whatever the item's
 * size: a tool result, a message with a text, or the text of a message that calls tools (its
 * reasoning; the calls kept whole). A removed unit comes back this way as much as the room allows.
 * Null for anything else, when the preview would be under `minPreview` tokens, or when the cut is
 * not smaller. `again`: a reply's text cut before is cut again, to a shorter preview of the same
 * original (a result's or a message's always may be).
 */
export function planPreview(
  item: ContextItem,
  config: CompactionConfig,
  tokenizer: Tokenizer,
  tokens: number,
  minPreview: number,
  again = false,
): PlannedCut | null {
  if (item.type === 'ASSISTANT_MESSAGE' && (item.message.tool_calls?.length ?? 0) > 0) {
    const text = reasoningText(item, tokenizer, again);
    if (!text) return null;
    // What stays whole (framing, calls) is paid for before the preview.
    const preview = previewFitting(tokens - (item.tokens - text.tokens) + MESSAGE_OVERHEAD_TOKENS);
    return preview >= minPreview ? planReasoning(item, tokenizer, preview, again) : null;
  }
  const preview = previewFitting(tokens);
  return isTextItem(item) && preview >= minPreview
    ? planTextCut(item, config, tokenizer, preview, true)
    : null;
}

/**
 * The cut of an item's text (a message's, or the reasoning of a message that calls tools, its
 * calls whole) to a preview of `previewTokens`, a text cut before cut again; null when the text is
 * not longer, or the item has none to cut.
 */
export function planShortestPreview(
  item: ContextItem,
  config: CompactionConfig,
  tokenizer: Tokenizer,
  previewTokens: number,
): PlannedCut | null {
  if (item.type === 'ASSISTANT_MESSAGE' && (item.message.tool_calls?.length ?? 0) > 0)
    return planReasoning(item, tokenizer, previewTokens, true);
  return isTextItem(item) ? planTextCut(item, config, tokenizer, previewTokens, true) : null;
}

/**
 * The text of a message that calls tools (its reasoning): its tokens, the original's they stand
 * for, and the part a preview is taken from; null when there is none, or it was cut already (a
 * text is cut once, unless `again`: then to a shorter preview of the same original).
 */
function reasoningText(
  item: AssistantMessageItem,
  tokenizer: Tokenizer,
  again: boolean,
): { tokens: number; original: number; text: string } | null {
  const text = item.message.content;
  if (typeof text !== 'string' || text.length === 0) return null;
  const marker = endMarker(text);
  if (marker && !again) return null;
  let names = 0;
  for (const call of item.message.tool_calls ?? []) names += tokenizer.countText(call.function.name);
  const tokens = framingTokensOf(item, tokenizer) - names;
  return marker
    ? { tokens, original: marker.original, text: text.slice(0, marker.index) }
    : { tokens, original: tokens, text };
}

/**
 * A preview of `previewTokens` tokens of the text of an assistant message that calls tools (its
 * reasoning), its calls kept whole; null when the text is not longer, or was cut already (unless
 * `again`, see {@link planPreview}).
 */
export function planReasoning(
  item: AssistantMessageItem,
  tokenizer: Tokenizer,
  previewTokens: number,
  again = false,
): PlannedCut | null {
  const reasoning = reasoningText(item, tokenizer, again);
  if (!reasoning || reasoning.original <= previewTokens) return null;
  const { text, original } = reasoning;
  const tokens = item.tokens - reasoning.tokens + previewTokens + markerTokens() + cutMargin(previewTokens);
  if (tokens >= item.tokens) return null;
  // Not `~cut`: that names a cut of the arguments, which another compaction may plan.
  const source = item.sourceId ?? item.id;
  const id = `${item.id}~text${previewTokens}`;
  const write = (): ContextItem => {
    const content = cutText(text, original, previewTokens, tokenizer, source);
    const next: AssistantMessageItem = {
      ...item,
      id,
      sourceId: source,
      message: { ...item.message, content },
    };
    // Its framing (text and call names) is the cut text's now: a later cut of its arguments reads it.
    const withFraming: AssistantMessageItem = {
      ...next,
      facts: { ...item.facts, framingTokens: framingTokens(next, tokenizer) },
    };
    return { ...withFraming, tokens: countItemTokens(withFraming, tokenizer) };
  };
  return { id, tokens, of: 'text', write };
}

function planArgumentsCut(
  item: AssistantMessageItem,
  config: CompactionConfig,
  tokenizer: Tokenizer,
  previewTokens: number,
  anySize: boolean,
): (PlannedCut & { calls: number; results: number }) | null {
  const calls = item.message.tool_calls ?? [];
  // Arguments are cut once (a form whose reasoning alone was cut may have them cut).
  if (calls.some((call) => endMarker(call.function.arguments) !== null)) return null;
  // Each call's arguments' tokens: what the stored count leaves of one call, else as counted when
  // the item was stored (or now, for an item stored before that).
  const facts = item.facts?.calls;
  const framing =
    MESSAGE_OVERHEAD_TOKENS + framingTokensOf(item, tokenizer) + calls.length * TOOL_CALL_OVERHEAD_TOKENS;
  const originals =
    calls.length === 1
      ? [Math.max(0, item.tokens - framing)]
      : calls.map(
          (c, i) =>
            (facts?.length === calls.length ? facts[i]?.argumentTokens : undefined) ??
            tokenizer.countText(c.function.arguments),
        );
  const over = originals.map((n) => (anySize || n > config.toolCallThreshold) && n > previewTokens);
  const cutCount = over.filter(Boolean).length;
  if (cutCount === 0) return null;
  // Which calls are cut is part of the form: a cut of calls under the threshold is named apart.
  const under = over.some((cut, i) => cut && (originals[i] as number) <= config.toolCallThreshold);
  const tokens =
    item.tokens -
    originals.reduce(
      (n, original, i) =>
        over[i] ? n + original - previewTokens - markerTokens() - cutMargin(previewTokens) : n,
      0,
    );
  if (tokens >= item.tokens) return null;
  const source = item.sourceId ?? item.id;
  const id = `${item.id}~cut${under ? 'all' : ''}${previewTokens}`;
  const write = (): ContextItem => {
    const next: AssistantMessageItem = {
      ...item,
      id,
      sourceId: source,
      message: {
        ...item.message,
        tool_calls: calls.map((call, i) =>
          over[i]
            ? {
                ...call,
                function: {
                  ...call.function,
                  arguments: cutText(
                    call.function.arguments,
                    originals[i] as number,
                    previewTokens,
                    tokenizer,
                    source,
                  ),
                },
              }
            : call,
        ),
      },
    };
    return { ...next, tokens: countItemTokens(next, tokenizer) };
  };
  return { id, tokens, of: 'arguments', write, calls: cutCount, results: 0 };
}

/**
 * The cut of an item with the longest preview (at least `previewTokens`) that takes at most
 * `tokens`, or null when none is longer than the seed's preview (with `anySize`: when not even
 * the shortest preview, `minPreview`, fits).
 */
export function longestCut(
  item: ContextItem,
  config: CompactionConfig,
  tokenizer: Tokenizer,
  tokens: number,
  /** Cut the arguments of every call over the preview (see {@link planCut}); then the shortest preview also serves. */
  anySize = false,
  /** The shortest preview of arguments (`anySize` only): the seed's, or less where a removed block comes back. */
  minPreview = config.previewTokens,
): ReturnType<typeof planCut> {
  // A result's cut has one preview: its size follows from the tokens.
  if (item.type === 'TOOL_RESULT') return planCut(item, config, tokenizer, previewFitting(tokens));
  // Arguments: a cut's tokens grow with its preview (the calls over it share it); the longest that fits.
  const fits = (preview: number): ReturnType<typeof planCut> => {
    const cut = planCut(item, config, tokenizer, preview, anySize);
    return cut && cut.tokens <= tokens ? cut : null;
  };
  let low = anySize ? Math.min(minPreview, config.previewTokens) : config.previewTokens;
  let high = item.tokens;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (fits(mid)) low = mid;
    else high = mid - 1;
  }
  return low > config.previewTokens || anySize ? fits(low) : null;
}
