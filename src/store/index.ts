export * from './conversation-store';
export { rowToItem, itemColumns, StoredRowError } from './rows';
export * from './migrate';
