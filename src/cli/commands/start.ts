/**
 * `durable-compaction start`: starts an `agentConversation` workflow (workflow id = conversation
 * id) after checking every flag and the compaction configuration, waits until a worker has set it
 * up (a conversation that fails at once, e.g. on a tool the worker does not have, is reported with
 * its reason), and prints the id and the Web UI link.
 */
import type { Command } from 'commander';
import type { AgentConversationInput } from '../../../workflows/definitions';
import type { ConversationClient } from '../../client';
import { action, printJson, withConversations, workflowUiUrl, type ClientSettings } from '../client';
import { buildStartInput, DEFAULT_MODEL, type StartFlags } from '../start-options';

/** What `start` prints (with `--json`, as it is). */
export interface StartResult {
  conversationId: string;
  runId: string;
  taskQueue: string;
  uiUrl: string;
}

/**
 * Starts the conversation through the client and waits until a worker has set it up
 * (`ConversationClient.start`: an id already used is refused, except one that failed at start on
 * its input). `ready` is false when no worker did so in time (it starts when one comes).
 * @throws ConversationExistsError when the id is taken; BadInputError when it failed on its input
 */
export async function startConversation(
  conversations: ConversationClient,
  input: AgentConversationInput,
  options: { taskQueue: string; settings: Pick<ClientSettings, 'namespace' | 'uiBase'>; waitMs?: number },
): Promise<{ started: StartResult; ready: boolean }> {
  const { conversationId, runId, taskQueue, ready } = await conversations.start(input, {
    taskQueue: options.taskQueue,
    ...(options.waitMs !== undefined ? { waitMs: options.waitMs } : {}),
  });
  return {
    started: { conversationId, runId, taskQueue, uiUrl: workflowUiUrl(options.settings, conversationId) },
    ready,
  };
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
        const { started: result, ready } = await withConversations((conversations, settings) =>
          startConversation(conversations, input, { taskQueue, settings }),
        );
        if (!ready)
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
