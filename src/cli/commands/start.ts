/**
 * `durable-compaction start`: starts an `agentConversation` workflow (workflow id = conversation
 * id) after checking every flag and the compaction configuration, waits until a worker has set it
 * up (a conversation that fails at once, e.g. on a tool the worker does not have, is reported with
 * its reason), and prints the id and the Web UI link.
 */
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Command } from 'commander';
import { CLAIM, statusQuery, type AgentConversationInput } from '../../../workflows/definitions';
import {
  action,
  CONVERSATION_WORKFLOW,
  printJson,
  UsageError,
  withClient,
  workflowFailure,
  workflowUiUrl,
  type ClientSettings,
} from '../client';
import { buildStartInput, DEFAULT_MODEL, type StartFlags } from '../start-options';
import { BAD_START_INPUT_FAILURE_TYPES } from '../../failures';

export interface StartResult {
  conversationId: string;
  runId: string;
  taskQueue: string;
  uiUrl: string;
}

/** Failure types of a workflow that fails at start because of what it was started with: exit 2. */
const BAD_START_INPUT: ReadonlySet<string> = new Set(BAD_START_INPUT_FAILURE_TYPES);

/**
 * Starts the conversation. An id already used (running or ended) is refused: a conversation's
 * history in the store belongs to one workflow. The exception is a conversation that failed at
 * start on its input (an unknown tool, a header over the window, a bad configuration): it wrote
 * nothing to the store, so the id can be started again, with the input corrected.
 * @throws UsageError when the id is taken
 */
export async function startConversation(
  client: Client,
  input: AgentConversationInput,
  options: { taskQueue: string; settings: Pick<ClientSettings, 'namespace' | 'uiBase'> },
): Promise<StartResult> {
  const id = input.conversationId;
  const start = (workflowIdReusePolicy: 'REJECT_DUPLICATE' | 'ALLOW_DUPLICATE_FAILED_ONLY') =>
    client.workflow.start(CONVERSATION_WORKFLOW, {
      workflowId: id,
      taskQueue: options.taskQueue,
      // The system prompt is text: by reference (see CLAIM).
      args: [{ ...CLAIM, ...input }],
      workflowIdReusePolicy,
      staticSummary: `conversation ${id} (${input.model.model})`,
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
      throw new UsageError(`conversation ${id} already exists: choose another --id`);
    throw err;
  }
  return {
    conversationId: id,
    runId: handle.firstExecutionRunId,
    taskQueue: options.taskQueue,
    uiUrl: workflowUiUrl(options.settings, id),
  };
}

/**
 * Whether the id's workflow failed at start on its input, and so wrote nothing to the store: its
 * first run failed with one of BAD_START_INPUT (a later run has a stored conversation behind it).
 */
async function failedOnItsInput(client: Client, id: string): Promise<boolean> {
  const { status, runId, raw } = await client.workflow.getHandle(id).describe();
  if (status.name !== 'FAILED' || raw.workflowExecutionInfo?.firstRunId !== runId) return false;
  const failure = await workflowFailure(client, id);
  return BAD_START_INPUT.has(failure?.type ?? '');
}

/** How long `start` waits for a worker to set the conversation up before it says it is pending. */
export const START_WAIT_MS = 20_000;

/**
 * Waits until a worker has set the conversation up (its phase leaves `starting`). Resolves
 * `'pending'` when no worker did so within `timeoutMs` (the conversation starts when one comes).
 * @throws UsageError when the workflow failed on its input (an unknown tool, a header over the
 *   window); an Error for any other failure
 */
export async function awaitStarted(
  client: Client,
  id: string,
  timeoutMs = START_WAIT_MS,
): Promise<'ready' | 'pending'> {
  const handle = client.workflow.getHandle(id);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING') {
      const failure = await workflowFailure(client, id);
      if (!failure) return 'ready';
      const message = `conversation ${id} failed to start: ${failure.message}`;
      throw BAD_START_INPUT.has(failure.type ?? '') ? new UsageError(message) : new Error(message);
    }
    try {
      // Without a worker the query would wait for one: ask for a short answer.
      const current = await client.withDeadline(Math.min(deadline, Date.now() + 2000), () =>
        handle.query(statusQuery),
      );
      if (current.phase !== 'starting') return 'ready';
    } catch {
      // no worker yet, or the workflow is between tasks: look again
    }
    if (Date.now() >= deadline) return 'pending';
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export function registerStart(program: Command): void {
  program
    .command('start')
    .description('start a conversation (an agentConversation workflow); prints its id and Web UI link')
    .option('--id <id>', 'conversation id (= workflow id); default: a generated one')
    .option('--system <text>', 'system prompt')
    .option('--system-file <path>', 'read the system prompt from a file')
    .option('--model <name>', `agent model (default ${DEFAULT_MODEL})`)
    .option('--summary-model <name>', 'summarizer model (default: the agent model)')
    .option('--window <tokens>', 'context window in tokens (config maxContextTokens)')
    .option('--workspace <dir>', 'workspace directory for the file tools (as the worker sees it)')
    .option(
      '--config <file>',
      'compaction config (YAML: a context_compaction: block or top-level keys; default $DC_COMPACTION_CONFIG)',
    )
    .option('--tools <names>', 'tools the agent may call, comma-separated (e.g. read_file,search_text)')
    .option('--allow-unknown-tools', 'accept tool names that are registered on the worker, not built in')
    .option('--recorded <session>', 'play back a session file as the model (OpenAI chat, .traj, pi JSONL)')
    .option('--task-queue <name>', 'task queue of the workers (default $TASK_QUEUE or durable-compaction)')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      '\nEnvironment: TEMPORAL_ADDRESS (localhost:7233), TEMPORAL_NAMESPACE (default), TEMPORAL_UI_URL,\n' +
        'DC_COMPACTION_CONFIG and DC_<KEY> compaction settings.\nExit codes: 0 started, 1 failure, 2 bad input ' +
        '(nothing started; a tool the worker does not have fails the conversation at once, with exit 2 too).',
    )
    .action(
      action(async (opts: StartFlags & { taskQueue?: string; json?: boolean }) => {
        const input = buildStartInput(opts);
        const taskQueue = opts.taskQueue ?? process.env.TASK_QUEUE ?? (await defaultTaskQueue());
        const { result, readiness } = await withClient(async (client, settings) => {
          const started = await startConversation(client, input, { taskQueue, settings });
          return { result: started, readiness: await awaitStarted(client, started.conversationId) };
        });
        if (readiness === 'pending')
          console.error(
            `no worker has picked up ${result.conversationId} yet: is one running on task queue "${taskQueue}"? ` +
              '(`durable-compaction worker` or `up`)',
          );
        if (opts.json) printJson(result);
        else {
          console.log(result.conversationId);
          console.log(`  Web UI: ${result.uiUrl}`);
          console.log(`  send:   durable-compaction send ${result.conversationId} "…"`);
        }
      }),
    );
}

/** DEFAULT_TASK_QUEUE of the worker, loaded only when needed (the worker module is heavy). */
async function defaultTaskQueue(): Promise<string> {
  const { DEFAULT_TASK_QUEUE } = await import('../../worker');
  return DEFAULT_TASK_QUEUE;
}
