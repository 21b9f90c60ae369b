/**
 * Activities of the agent conversation: thin adapters between the workflow (ids and counts) and
 * PostgreSQL, the LLM and the tools (bodies).
 */
import { finalFailure } from '../src/failures';
import { Context } from '@temporalio/activity';
import type { ContextItem, ToolResultItem } from '../src/context/items';
import { messageText } from '../src/context/items';
import { lower } from '../src/context/lower';
import { hasPin } from '../src/context/agent-notes';
import { resultSource, withFacts, type ResultSource } from '../src/context/item-facts';
import { decideCompaction } from '../src/context/compaction-decision';
import { chatCompletion, llmBoundary } from '../src/llm';
import { CLAIM } from '../src/claim';
import { storeBoundary } from './failures';
import { withHeartbeat } from './heartbeat';
import type { ActivityDeps } from './deps';
import { noteItem } from './notes';
import { ToolError, type ToolOutput } from './tools/registry';
import { runRecall } from './tools/recall';
import { Recall } from '../src/recall';
import type {
  AppendUserMessageInput,
  CallModelInput,
  CallModelResult,
  ConversationActivities,
  InitConversationInput,
  InitConversationResult,
  PrecheckInput,
  RecordSkippedInput,
  RestoreInput,
  RunToolInput,
  RunToolResult,
  Totals,
} from './types';

function baseFields(id: string, round: number) {
  return { id, round, isMeta: false, pinned: false, ephemeral: false, tokens: 0 };
}

/**
 * The reply as the workflow gets it: its first `chars` characters, nothing when there is no text;
 * marked as conversation text (by reference, see CLAIM).
 */
function preview(text: string, chars: number): Pick<CallModelResult, '$claim' | 'reply' | 'replyTruncated'> {
  if (text === '') return {};
  return text.length > chars
    ? { ...CLAIM, reply: text.slice(0, chars), replyTruncated: true }
    : { ...CLAIM, reply: text };
}

/** A call's result without a model answer (end of a recorded round, or a precheck that fires). */
function noAnswer(kind: 'turn_end' | 'precheck', totals: Totals): CallModelResult {
  return { kind, tokens: 0, usage: null, finishReason: null, toolCalls: [], totals };
}

/**
 * Whether a compaction would run on these totals before the model call: the workflow's own
 * decision. A trigger that would only be skipped (cooldown, loop guard) does not stop the call; the
 * workflow records the skip after it.
 */
function precheckFires(totals: Totals, precheck: PrecheckInput): boolean {
  const observation = {
    ...precheck,
    contextTokens: totals.tokens,
    itemCount: totals.itemCount,
    reportedTokens: null,
    markerSeen: false,
  };
  const decision = decideCompaction('before_model_call', observation);
  return decision !== null && decision.skip === null;
}

export function conversationActivities(deps: ActivityDeps): ConversationActivities {
  const { store, tokens, tools } = deps;
  const recall = new Recall(store.pool);

  const appendUser = (input: AppendUserMessageInput): Promise<Totals> => {
    const message = { role: 'user' as const, content: input.text };
    const item = counted(
      {
        ...baseFields(input.itemId, input.round),
        // `<Pin>…</Pin>` in the message pins it (seeds 001 and 002): never compacted.
        pinned: hasPin(message),
        type: 'USER_MESSAGE',
        message,
      },
      input.model,
    );
    return store.appendItems(input.conversationId, [item]);
  };

  /** The built-in recall tool with the conversation's settings (it reads the store, see tools/recall.ts). */
  const recallTool = (settings: NonNullable<RunToolInput['recall']>, model: string) => ({
    run: (args: Record<string, unknown>, ctx: { conversationId: string }) =>
      runRecall(recall, ctx.conversationId, args, settings, tokens.forModel(model)),
  });

  /** The item as stored: its tokens counted, its facts worked out (a result's with its tool's name). */
  const counted = <T extends ContextItem>(item: T, model: string, source?: ResultSource): T => {
    const counter = tokens.forModel(model);
    return withFacts({ ...item, tokens: counter.countItem(item) }, source, counter);
  };

  return {
    async initConversation(input: InitConversationInput): Promise<InitConversationResult> {
      // A name no tool of this worker has will not appear on a retry: fail the workflow at once.
      const unknownTools = input.tools.filter((name) => !tools.get(name));
      if (unknownTools.length > 0) {
        throw finalFailure(
          'TOOL_UNKNOWN',
          `unknown tool${unknownTools.length > 1 ? 's' : ''} ${unknownTools.map((n) => JSON.stringify(n)).join(', ')}: ` +
            `the worker's tools are ${tools.names().join(', ')}`,
        );
      }
      return storeBoundary(async () => {
        const header: ContextItem[] = [];
        if (input.systemPrompt.trim().length > 0) {
          header.push(
            counted(
              {
                ...baseFields(`${input.conversationId}:system`, 0),
                type: 'SYSTEM_PROMPT',
                message: { role: 'system', content: input.systemPrompt },
              },
              input.model,
            ),
          );
        }
        if (input.tools.length > 0) {
          header.push(
            counted(
              {
                ...baseFields(`${input.conversationId}:tools`, 0),
                type: 'TOOL_DEFINITIONS',
                tools: tools.definitions(input.tools),
              },
              input.model,
            ),
          );
        }
        const headerTokens = header.reduce((n, item) => n + item.tokens, 0);
        const window = input.maxContextTokens;
        // No compaction can make room for a header that fills the window: refuse before any write.
        if (window !== undefined && headerTokens > window && !(await store.exists(input.conversationId))) {
          throw finalFailure(
            'HEADER_EXCEEDS_WINDOW',
            `the header (system prompt and tool definitions) is ${headerTokens} tokens, over the context ` +
              `window of ${window} tokens (maxContextTokens): shorten the system prompt or the tools, or use a larger window`,
          );
        }
        const totals = await store.createConversation(input.conversationId, header);
        return { ...totals, rounds: await store.lastRound(input.conversationId) };
      });
    },

    async appendUserMessage(input: AppendUserMessageInput): Promise<Totals> {
      return storeBoundary(() => appendUser(input));
    },

    async callModel(input: CallModelInput): Promise<CallModelResult> {
      return withHeartbeat(() =>
        storeBoundary(async () => {
          // A retry after the answer was stored returns the stored answer instead of asking again.
          const [existing] = await store.getItemsIfPresent([input.itemId]);
          if (existing && existing.type === 'ASSISTANT_MESSAGE') {
            const text = messageText(existing.message);
            return {
              tokens: existing.tokens,
              usage: null,
              finishReason: null,
              toolCalls: (existing.message.tool_calls ?? []).map((c) => ({
                id: c.id,
                name: c.function.name,
              })),
              ...(text.includes(input.marker) ? { markerSeen: true as const } : {}),
              ...preview(text, input.replyPreviewChars),
              totals: await store.totals(input.conversationId),
            };
          }
          if (input.userMessage) {
            const totals = await appendUser({
              conversationId: input.conversationId,
              itemId: input.userMessage.itemId,
              text: input.userMessage.text,
              round: input.round,
              model: input.model.model,
            });
            if (input.precheck && precheckFires(totals, input.precheck)) {
              return noAnswer('precheck', totals);
            }
          }

          // Whether the request held ephemeral items (unknown for a recording: then look).
          let hadEphemeral = true;
          let answer: {
            message: import('../src/context/items').AssistantMessage;
            finishReason: string | null;
            usage: CallModelResult['usage'];
          } | null;
          if (input.model.provider === 'recorded') {
            const recording = await deps.recordings.load(input.model.recordingPath);
            const turn = recording.assistantTurn(input.round, input.step);
            answer = turn
              ? { message: turn, finishReason: turn.tool_calls?.length ? 'tool_calls' : 'stop', usage: null }
              : null;
          } else {
            const { items } = await store.getActiveContext(input.conversationId);
            hadEphemeral = items.some((i) => i.ephemeral);
            const request = lower(items);
            const completion = await llmBoundary(() =>
              chatCompletion(deps.llm(), {
                model: input.model.model,
                messages: request.messages,
                tools: request.tools.length > 0 ? request.tools : undefined,
                maxTokens: input.model.maxOutputTokens,
              }),
            );
            answer = {
              message: completion.message,
              finishReason: completion.finishReason,
              usage: completion.usage ?? null,
            };
          }
          if (!answer) return noAnswer('turn_end', await store.totals(input.conversationId));
          const item = counted(
            { ...baseFields(input.itemId, input.round), type: 'ASSISTANT_MESSAGE', message: answer.message },
            input.model.model,
          );
          const appended = await store.appendItems(input.conversationId, [item]);
          // Ephemeral items were for this call only (seed 002). Only this workflow appends to the
          // conversation, so a request without any leaves nothing to drop.
          const totals = hadEphemeral ? await store.dropEphemeral(input.conversationId) : appended;
          const text = messageText(answer.message);
          return {
            tokens: item.tokens,
            usage: answer.usage,
            finishReason: answer.finishReason,
            toolCalls: (answer.message.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name })),
            ...(text.includes(input.marker) ? { markerSeen: true as const } : {}),
            ...preview(text, input.replyPreviewChars),
            totals,
          };
        }),
      );
    },

    async runTool(input: RunToolInput): Promise<RunToolResult> {
      return withHeartbeat(() =>
        storeBoundary(async () => {
          const [done] = await store.getItemsIfPresent([input.resultItemId]);
          if (done) {
            return { tokens: done.tokens, totals: await store.totals(input.conversationId) };
          }
          const [call] = await store.getItems([input.callItemId]);
          const toolCall =
            call?.type === 'ASSISTANT_MESSAGE'
              ? call.message.tool_calls?.find((c) => c.id === input.toolCallId)
              : undefined;
          if (!toolCall) {
            throw finalFailure(
              'TOOL_CALL_NOT_FOUND',
              `tool call ${input.toolCallId} is not in item ${input.callItemId}`,
            );
          }
          let content: string;
          let isError = false;
          const notes: ContextItem[] = [];
          if (input.model.provider === 'recorded') {
            const recording = await deps.recordings.load(input.model.recordingPath);
            content =
              recording.toolResult(input.toolCallId) ??
              `(no recorded result for tool call ${input.toolCallId})`;
          } else {
            const tool = input.recall ? recallTool(input.recall, input.model.model) : tools.get(input.name);
            if (!tool) {
              content = `Error: unknown tool "${input.name}". Available tools: ${tools.names().join(', ')}`;
              isError = true;
            } else {
              let args: Record<string, unknown> = {};
              try {
                const parsed: unknown = toolCall.function.arguments.trim()
                  ? JSON.parse(toolCall.function.arguments)
                  : {};
                if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
                  throw new ToolError('arguments must be a JSON object');
                }
                args = parsed as Record<string, unknown>;
                const output: ToolOutput = await tool.run(args, {
                  conversationId: input.conversationId,
                  round: input.round,
                  workspace: input.workspace,
                  signal: Context.current().cancellationSignal,
                });
                content = output.content;
                isError = output.isError ?? false;
                for (const [i, note] of (output.notes ?? []).entries()) {
                  notes.push(
                    counted(noteItem(`${input.resultItemId}:note${i}`, input.round, note), input.model.model),
                  );
                }
              } catch (err) {
                if (err instanceof SyntaxError) {
                  content = `Error: the arguments are not valid JSON (${err.message})`;
                } else if (err instanceof ToolError) {
                  content = `Error: ${err.message}`;
                } else {
                  // Unexpected failures are retried by Temporal; the third one is reported to the model.
                  if (Context.current().info.attempt < 3) throw err;
                  content = `Error: the tool failed: ${(err as Error).message}`;
                }
                isError = true;
              }
            }
          }
          const result: ToolResultItem = counted(
            {
              ...baseFields(input.resultItemId, input.round),
              type: 'TOOL_RESULT',
              message: { role: 'tool', tool_call_id: input.toolCallId, content, name: input.name },
            },
            input.model.model,
            resultSource(toolCall, input.name),
          );
          const totals = await store.appendItems(input.conversationId, [result, ...notes]);
          return {
            tokens: result.tokens,
            ...(isError ? { isError: true as const } : {}),
            totals,
          };
        }),
      );
    },

    async recordSkippedCompaction(input: RecordSkippedInput): Promise<void> {
      await storeBoundary(() => store.recordSkippedCompaction({ ...input, id: input.compactionId }));
    },

    async restoreVersion(input: RestoreInput): Promise<Totals> {
      return storeBoundary(() => store.restore(input.conversationId, input.version, input.idemKey));
    },

    async endConversation(input: { conversationId: string }): Promise<void> {
      await storeBoundary(() => store.endConversation(input.conversationId));
    },
  };
}
