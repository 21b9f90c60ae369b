/**
 * Starting a conversation (`ConversationClient.start`): what it takes and returns, the checks its
 * input passes before anything is sent (the conversation id's rule and the compaction
 * configuration's schema, the ones the workflow applies at its start), the id's reuse, and the
 * wait for a worker to set it up.
 */
import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ConfigError, parseCompactionConfig } from '../context/config';
import { checkConversationId, ConversationIdError } from '../context/conversation-id';
import { CLAIM, type AgentConversationInput } from '../../workflows/definitions';
import { awaitReady, CONVERSATION_WORKFLOW, failedOnItsInput } from './conversation-workflow';
import { BadInputError, ConversationExistsError } from './errors';

/** How long `start` waits, by default, for a worker to set the conversation up. */
export const START_WAIT_MS = 20_000;

/**
 * A conversation to start: the workflow's input (see {@link AgentConversationInput}: system
 * prompt, tools, model, compaction config, …), its id optional.
 */
export interface StartInput extends Omit<AgentConversationInput, 'conversationId' | 'carried' | '$claim'> {
  /** The conversation id (= workflow id). Default: a fresh one, `conv-<UTC time>-<6 hex digits>`. */
  conversationId?: string;
}

/** How `start` starts. */
export interface StartOptions {
  /** The workers' task queue. Default: the client's. */
  taskQueue?: string;
  /**
   * How long to wait, in ms, for a worker to set the conversation up (so that a conversation that
   * fails on its input is reported as a {@link BadInputError}). Default {@link START_WAIT_MS}; 0
   * looks once.
   */
  waitMs?: number;
}

/** A started conversation. */
export interface StartedConversation {
  /** Its id (= workflow id): given, or generated. */
  conversationId: string;
  /** The run id of its first workflow run. */
  runId: string;
  /** The task queue it runs on. */
  taskQueue: string;
  /**
   * A worker has set it up. False when none did within `waitMs`: it starts when one polls the
   * task queue.
   */
  ready: boolean;
}

/** A fresh conversation id: `<prefix>-<UTC time>-<6 hex digits>`, valid as a workflow and store id. */
export function newConversationId(prefix = 'conv', now: Date = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${prefix}-${stamp}-${randomBytes(3).toString('hex')}`;
}

/**
 * The workflow's input for `input`, with its id (given or generated), checked as the workflow
 * will check it at its start.
 * @throws BadInputError `INVALID_CONVERSATION_ID` or `CONFIG_INVALID`, naming what is wrong
 */
export function checkedStartInput(input: StartInput): AgentConversationInput {
  const conversationId = input.conversationId ?? newConversationId();
  try {
    checkConversationId(conversationId);
    parseCompactionConfig(input.config ?? {});
  } catch (err) {
    if (!(err instanceof ConfigError || err instanceof ConversationIdError)) throw err;
    // The types the workflow fails with on the same input (src/failures.ts, asInputFailure).
    const type = err instanceof ConfigError ? 'CONFIG_INVALID' : 'INVALID_CONVERSATION_ID';
    throw new BadInputError(type, conversationId, err.message, { cause: err });
  }
  return { ...input, conversationId };
}

/**
 * Starts conversation `input` on `options.taskQueue` and waits (`waitMs`) until a worker has set it
 * up. An id already used is refused — a conversation's history in the store belongs to one
 * workflow — except one whose first run failed on its input: it wrote nothing, so it starts again.
 * @throws BadInputError, ConversationExistsError, RequestFailedError as `ConversationClient.start`
 */
export async function startConversation(
  client: Client,
  input: StartInput,
  options: StartOptions & { taskQueue: string },
): Promise<StartedConversation> {
  const checked = checkedStartInput(input);
  const id = checked.conversationId;
  const { taskQueue } = options;
  const start = (workflowIdReusePolicy: 'REJECT_DUPLICATE' | 'ALLOW_DUPLICATE_FAILED_ONLY') =>
    client.workflow.start(CONVERSATION_WORKFLOW, {
      workflowId: id,
      taskQueue,
      // The system prompt is text: by reference (see CLAIM).
      args: [{ ...CLAIM, ...checked }],
      workflowIdReusePolicy,
      staticSummary: `conversation ${id} (${checked.model.model})`,
    });
  let handle: Awaited<ReturnType<typeof start>>;
  try {
    handle = await start('REJECT_DUPLICATE').catch(async (err: unknown) => {
      if (err instanceof WorkflowExecutionAlreadyStartedError && (await failedOnItsInput(client, id)))
        return start('ALLOW_DUPLICATE_FAILED_ONLY');
      throw err;
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      throw new ConversationExistsError(id, { cause: err });
    throw err;
  }
  const ready = await awaitReady(client, id, options.waitMs ?? START_WAIT_MS);
  return { conversationId: id, runId: handle.firstExecutionRunId, taskQueue, ready };
}
