/**
 * The context engine (DESIGN.md §5): the context model and every compaction policy, as pure
 * functions imported by both workflows and activities. No I/O, no clock, no randomness.
 */
export * from './items';
export * from './conversation-id';
export * from './segments';
export * from './tool-pairs';
export * from './tool-blocks';
export * from './tokenizer';
export * from './token-accounting';
export * from './lower';
export * from './config';
export * from './triggers';
export * from './compaction-decision';
export * from './selective-prune';
export * from './item-cuts';
export * from './task-type';
export * from './strategies';
export * from './post-compaction';
export * from './artifact-trail';
export * from './open-errors';
export * from './tool-facts';
export * from './item-facts';
export * from './agent-notes';
export * from './carried-state';
export * from './working-context';
export * from './compaction-plan';
export * from './compaction-summary';
export * from './summary-edit';
export * from './summary-prompt';
export * from './summary-request';
export * from './summary-result';
export * from './extractive-summary';
export * from './text-signals';
export * from './recall-handle';
export * from './recall-tool';
