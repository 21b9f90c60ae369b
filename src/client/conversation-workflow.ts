/**
 * What the Temporal server says about a conversation's workflow, for the client: whether it is a
 * conversation and runs, why it failed, whether a worker has set it up, and a Query that gives up
 * when no worker answers. Each takes the Temporal client and the conversation id.
 */
import {
  WorkflowFailedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { BAD_START_INPUT_FAILURE_TYPES, causeChain, innermostCause, type FailureType } from '../failures';
import { statusQuery } from '../../workflows/definitions';
import type { ConversationDescription } from './client-types';
import { ConversationNotFoundError, NotRespondingError, type WorkflowFailure } from './errors';
import { conversationErrorFrom, startFailureError } from './error-mapping';

/** The workflow type every conversation runs. */
export const CONVERSATION_WORKFLOW = 'agentConversation';

/**
 * The task queue a client starts conversations on when it is given none: the workers' default
 * (`DEFAULT_TASK_QUEUE` of src/worker.ts, which a test keeps equal to this).
 */
export const DEFAULT_CONVERSATION_TASK_QUEUE = 'durable-compaction';

/** How long a Query may take by default: a worker answers in milliseconds, none never does. */
export const QUERY_DEADLINE_MS = 15_000;

/**
 * Where the conversation's workflow is, from the server alone.
 * @throws ConversationNotFoundError when there is no workflow `id`, or it is not a conversation
 */
export async function describeConversation(client: Client, id: string): Promise<ConversationDescription> {
  try {
    const description = await client.workflow.getHandle(id).describe();
    if (description.type !== CONVERSATION_WORKFLOW)
      throw new ConversationNotFoundError(id, {
        message: `no conversation ${id} (workflow ${id} is a ${description.type})`,
      });
    const workflowStatus = description.status.name;
    return { conversationId: id, workflowStatus, running: workflowStatus === 'RUNNING' };
  } catch (err) {
    throw conversationErrorFrom(err, id);
  }
}

/** Why the closed workflow `id` failed; null when it did not fail (completed, or still running). */
export async function workflowFailure(client: Client, id: string): Promise<WorkflowFailure | null> {
  try {
    await client.workflow.getHandle(id).result();
    return null;
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) return null;
    const application = causeChain(err.cause)
      .filter((failure): failure is ApplicationFailure => failure instanceof ApplicationFailure)
      .pop();
    const root = application ?? innermostCause(err);
    const message = root instanceof Error ? root.message : err.message;
    return { message: message.split('\n')[0] ?? message, type: application?.type ?? null };
  }
}

/**
 * Whether the id's workflow failed at start on its input, and so wrote nothing to the store: its
 * first run failed with one of BAD_START_INPUT_FAILURE_TYPES (a later run has a stored conversation).
 */
export async function failedOnItsInput(client: Client, id: string): Promise<boolean> {
  const { status, runId, raw } = await client.workflow.getHandle(id).describe();
  if (status.name !== 'FAILED' || raw.workflowExecutionInfo?.firstRunId !== runId) return false;
  const failure = await workflowFailure(client, id);
  return BAD_START_INPUT_FAILURE_TYPES.includes(failure?.type as FailureType);
}

/**
 * Waits until a worker has set the conversation up (its phase leaves `starting`); false when none
 * did within `timeoutMs`.
 * @throws the {@link startFailureError} of a conversation that failed at start
 */
export async function awaitReady(client: Client, id: string, timeoutMs: number): Promise<boolean> {
  const handle = client.workflow.getHandle(id);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING') {
      const failure = await workflowFailure(client, id);
      if (!failure) return true;
      throw startFailureError(id, failure);
    }
    try {
      // Without a worker the query would wait for one: ask for a short answer.
      const current = await client.withDeadline(Math.min(deadline, Date.now() + 2000), () =>
        handle.query(statusQuery),
      );
      if (current.phase !== 'starting') return true;
    } catch {
      // no worker yet, or the workflow is between tasks: look again
    }
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Asks the conversation a Query (`query.name`, for the error), giving up after `query.timeoutMs`.
 * @throws ConversationNotFoundError when there is no workflow `id`
 * @throws NotRespondingError when it did not answer (no worker polls its task queue)
 */
export async function queryConversation<T>(
  client: Client,
  id: string,
  query: { name: string; timeoutMs: number },
  ask: (handle: WorkflowHandle) => Promise<T>,
): Promise<T> {
  try {
    return await client.withDeadline(Date.now() + query.timeoutMs, () => ask(client.workflow.getHandle(id)));
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new ConversationNotFoundError(id, { cause: err });
    const root = innermostCause(err);
    const reason = (root instanceof Error ? root.message : String(root)).split('\n')[0] ?? '';
    throw new NotRespondingError(id, query.name, reason, { cause: err });
  }
}
