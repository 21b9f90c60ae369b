/**
 * Activities for a workflow of your own that keeps its messages in our store (issue 26 item 4):
 * open a conversation, append OpenAI chat messages, read the active context back as a chat request,
 * and run the built-in `recall` tool. The compaction child (`compactConversation`) then compacts
 * that context like the agent conversation's. Thin adapters: the messages are checked at this
 * boundary (zod), counted with the model's encoding, and stored as items.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { z } from 'zod';
import { CLAIM } from '../src/claim';
import { hasPin } from '../src/context/agent-notes';
import { parseCompactionConfig, recallPageBudget } from '../src/context/config';
import { resultSource, withFacts, type ResultSource } from '../src/context/item-facts';
import type { ContextItem, ItemBase, ToolCall } from '../src/context/items';
import { lower } from '../src/context/lower';
import { checkedInput } from '../src/failures';
import { Recall } from '../src/recall';
import type { ActivityDeps } from './deps';
import { storeBoundary } from './failures';
import type {
  AppendStoredMessagesInput,
  AppendStoredMessagesResult,
  OpenStoredConversationInput,
  RecallStoredArchiveInput,
  RecallStoredArchiveResult,
  StoredCompactionStart,
  StoredContext,
  StoredConversationActivities,
  StoredMessage as StoredMessageType,
} from './stored-conversation-types';
import { runRecall } from './tools/recall';
import { ToolError } from './tools/registry';

const ToolCallSchema = z.object({
  id: z.string().min(1),
  type: z.literal('function').default('function'),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});

const ContentPartSchema = z.looseObject({ type: z.string() });

/**
 * A message a workflow may append: the OpenAI chat shape of a user message, an assistant message
 * (its tool calls included) or a tool result. Fields the item model does not keep (an SDK answer's
 * `refusal`, `annotations`, ...) are dropped; a system message belongs in the header (the system
 * prompt given at open).
 */
export const StoredMessage = z.discriminatedUnion('role', [
  z.object({
    role: z.literal('user'),
    content: z.union([z.string(), z.array(ContentPartSchema)]),
    name: z.string().optional(),
  }),
  z.object({
    role: z.literal('assistant'),
    content: z.string().nullable().default(null),
    tool_calls: z.array(ToolCallSchema).optional(),
    name: z.string().optional(),
  }),
  z.object({
    role: z.literal('tool'),
    tool_call_id: z.string().min(1),
    content: z.string(),
    name: z.string().optional(),
  }),
]);
export type StoredMessage = StoredMessageType;

const ToolDefinitionSchema = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** The value checked by `schema`, or a non-retryable `MESSAGE_INVALID` naming what is wrong. */
function checked<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues
    .map((issue) => `${[what, ...issue.path].join('.')}: ${issue.message}`)
    .join('; ');
  throw ApplicationFailure.nonRetryable(problems, 'MESSAGE_INVALID');
}

/**
 * Ids of the messages one call appends: the same on every attempt of the call (its workflow run and
 * activity id), so a retried append stores them once.
 */
function messageIds(count: number): string[] {
  let prefix: string | null = null;
  try {
    const { workflowExecution, activityId } = Context.current().info;
    if (workflowExecution) prefix = `${workflowExecution.runId}:${activityId}`;
  } catch {
    // called outside an activity
  }
  // Not called by a workflow: no retry to agree with.
  prefix ??= randomUUID();
  return Array.from({ length: count }, (_, i) => `${prefix}:${i}`);
}

function baseFields(id: string, round: number): ItemBase {
  return { id, round, isMeta: false, pinned: false, ephemeral: false, tokens: 0 };
}

export function storedConversationActivities(deps: ActivityDeps): StoredConversationActivities {
  const { store, tokens } = deps;
  const recall = new Recall(store.pool);

  /** The item as stored: its tokens counted, its facts worked out (a result's with its tool's name). */
  const counted = <T extends ContextItem>(item: T, model: string, source?: ResultSource): T => {
    const counter = tokens.forModel(model);
    return withFacts({ ...item, tokens: counter.countItem(item) }, source, counter);
  };

  /** The calls of the active context's assistant messages, by call id (the latest of an id wins). */
  const contextCalls = async (conversationId: string): Promise<Map<string, ToolCall>> => {
    const { items } = await store.getActiveContext(conversationId);
    const calls = new Map<string, ToolCall>();
    for (const item of items) {
      if (item.type === 'ASSISTANT_MESSAGE')
        for (const call of item.message.tool_calls ?? []) calls.set(call.id, call);
    }
    return calls;
  };

  return {
    async openStoredConversation(input: OpenStoredConversationInput) {
      const conversationId = input.conversationId;
      const tools = checked(z.array(ToolDefinitionSchema), input.tools ?? [], 'tools');
      return storeBoundary(async () => {
        const header: ContextItem[] = [];
        const systemPrompt = input.systemPrompt ?? '';
        if (systemPrompt.trim().length > 0) {
          header.push(
            counted(
              {
                ...baseFields(`${conversationId}:system`, 0),
                type: 'SYSTEM_PROMPT',
                message: { role: 'system', content: systemPrompt },
              },
              input.model,
            ),
          );
        }
        if (tools.length > 0) {
          header.push(
            counted(
              { ...baseFields(`${conversationId}:tools`, 0), type: 'TOOL_DEFINITIONS', tools },
              input.model,
            ),
          );
        }
        const { version, tokens, itemCount } = await store.createConversation(conversationId, header);
        return { version, tokens, itemCount };
      });
    },

    async appendStoredMessages(input: AppendStoredMessagesInput): Promise<AppendStoredMessagesResult> {
      const system = Array.isArray(input.messages)
        ? (input.messages as unknown[]).findIndex((m) =>
            ['system', 'developer'].includes((m as { role?: unknown } | null)?.role as string),
          )
        : -1;
      if (system >= 0) {
        throw ApplicationFailure.nonRetryable(
          `messages.${system}: a system message is part of the header: give it as openStoredConversation's systemPrompt`,
          'MESSAGE_INVALID',
        );
      }
      const messages = checked(z.array(StoredMessage), input.messages, 'messages');
      const ids = messageIds(messages.length);
      return storeBoundary(async () => {
        let round = await store.lastRound(input.conversationId);
        const batchCalls = new Map<string, ToolCall>();
        // Read only when a result answers a call made before this append.
        let earlierCalls: Map<string, ToolCall> | undefined;
        const items: ContextItem[] = [];
        for (const [i, message] of messages.entries()) {
          const id = ids[i] as string;
          switch (message.role) {
            case 'user':
              // A round starts at each user message.
              round += 1;
              items.push(
                counted(
                  { ...baseFields(id, round), pinned: hasPin(message), type: 'USER_MESSAGE', message },
                  input.model,
                ),
              );
              break;
            case 'assistant':
              for (const call of message.tool_calls ?? []) batchCalls.set(call.id, call);
              items.push(
                counted({ ...baseFields(id, round), type: 'ASSISTANT_MESSAGE', message }, input.model),
              );
              break;
            case 'tool': {
              const call =
                batchCalls.get(message.tool_call_id) ??
                (earlierCalls ??= await contextCalls(input.conversationId)).get(message.tool_call_id);
              if (!call) {
                throw ApplicationFailure.nonRetryable(
                  `messages.${i}: the tool result answers call ${JSON.stringify(message.tool_call_id)}, which no ` +
                    'message before it in this append or in the context holds: append the assistant message with the call first',
                  'TOOL_CALL_NOT_FOUND',
                );
              }
              items.push(
                counted(
                  { ...baseFields(id, round), type: 'TOOL_RESULT', message },
                  input.model,
                  resultSource(call, message.name ?? call.function.name),
                ),
              );
              break;
            }
          }
        }
        const totals = await store.appendItems(input.conversationId, items);
        return {
          version: totals.version,
          tokens: totals.tokens,
          itemCount: totals.itemCount,
          itemIds: ids,
          round: await store.lastRound(input.conversationId),
        };
      });
    },

    async readStoredContext(input: { conversationId: string }): Promise<StoredContext> {
      return storeBoundary(async () => {
        const { version, items } = await store.getActiveContext(input.conversationId);
        const request = lower(items);
        return {
          // The messages are conversation text: by reference (see CLAIM).
          ...CLAIM,
          version,
          tokens: items.reduce((n, item) => n + item.tokens, 0),
          itemCount: items.length,
          messages: request.messages,
          tools: request.tools,
        };
      });
    },

    async prepareStoredCompaction(input: { conversationId: string }): Promise<StoredCompactionStart> {
      return storeBoundary(async () => {
        const { version, tokens, itemCount } = await store.totals(input.conversationId);
        return {
          seq: await store.nextCompactionSeq(input.conversationId),
          round: await store.lastRound(input.conversationId),
          version,
          tokens,
          itemCount,
        };
      });
    },

    async recallStoredArchive(input: RecallStoredArchiveInput): Promise<RecallStoredArchiveResult> {
      const config = checkedInput(() => parseCompactionConfig(input.config ?? {}));
      const settings = { pageTokens: recallPageBudget(config), searchLimit: config.recallSearchLimit };
      let content: string;
      try {
        const parsed: unknown = input.arguments.trim() ? JSON.parse(input.arguments) : {};
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
          throw new ToolError('arguments must be a JSON object');
        }
        const output = await storeBoundary(() =>
          runRecall(
            recall,
            input.conversationId,
            parsed as Record<string, unknown>,
            settings,
            tokens.forModel(input.model),
          ),
        );
        content = output.content;
      } catch (err) {
        if (err instanceof SyntaxError) content = `Error: the arguments are not valid JSON (${err.message})`;
        else if (err instanceof ToolError) content = `Error: ${err.message}`;
        else throw err;
        return { ...CLAIM, content, isError: true };
      }
      return { ...CLAIM, content };
    },
  };
}
