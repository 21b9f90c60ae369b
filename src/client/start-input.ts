/**
 * What `ConversationClient.start` takes and returns, and the checks it runs on its input before
 * anything is sent: the conversation id's rule and the compaction configuration's schema, the ones
 * the workflow applies at its start.
 */
import { randomBytes } from 'node:crypto';
import { ConfigError, parseCompactionConfig } from '../context/config';
import { checkConversationId, ConversationIdError } from '../context/conversation-id';
import type { AgentConversationInput } from '../../workflows/definitions';
import { BadInputError } from './errors';

/** The workflow type every conversation runs. */
export const CONVERSATION_WORKFLOW = 'agentConversation';

/**
 * The task queue a client starts conversations on when it is given none: the workers' default
 * (`DEFAULT_TASK_QUEUE` of src/worker.ts, which a test keeps equal to this).
 */
export const DEFAULT_CONVERSATION_TASK_QUEUE = 'durable-compaction';

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
