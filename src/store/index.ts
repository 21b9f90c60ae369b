export * from './conversation-store';
export { assertConversationId, StoreError, type StoreErrorKind } from './errors';
export { prepared } from './sql';
export { rowToItem, itemColumns, StoredRowError } from './rows';
export * from './migrate';
