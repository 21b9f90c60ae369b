/** Every workflow of the project; the worker bundles this file once. */
export { agentConversation } from './agent-conversation';
export { compaction } from './compaction';
export { smokeWorkflow } from './smoke';
