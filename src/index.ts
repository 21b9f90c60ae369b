/**
 * The client side of durable-compaction: what a program needs to start agent conversations and talk
 * to them through Temporal. The worker that runs them is `durable-compaction/worker`, the workflows
 * a worker bundles are `durable-compaction/workflows`, and the compaction policy alone, without
 * Temporal, is `durable-compaction/context`.
 *
 * @module durable-compaction
 */

// ---- The typed client: ConversationClient, what its methods take and return, its errors ----
export * from './client';

// ---- The workflows' messages: inputs, results, events, and their Update, Query and Signal definitions ----
export * from '../workflows/definitions';

// ---- Settings from the environment, as the CLI reads them ----
export { clientCodecs, clientSettings, workflowUiUrl, type ClientSettings } from './cli/client';
/** A failure to reach Temporal or PostgreSQL, with a hint saying what to do. */
export { InfraError } from './infra/errors';
