export * from './conversation-store';
export { rowToItem, itemColumns, StoredRowError } from './rows';
