/**
 * Every workflow of the project; the worker bundles this file once. As the package's
 * `durable-compaction/workflows` entry, it is the `workflowsPath` a worker of your own bundles
 * (`require.resolve('durable-compaction/workflows')`), or the module your workflows file re-exports.
 *
 * @module durable-compaction/workflows
 */
export { agentConversation } from './agent-conversation';
export { compaction } from './compaction';
export { smokeWorkflow } from './smoke';
