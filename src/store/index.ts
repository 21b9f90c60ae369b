export * from './conversation-store';
export {
  assertConversationId,
  MalformedRowError,
  StoreError,
  StoredRowError,
  type StoreErrorKind,
} from './errors';
export { prepared } from './sql';
export { rowToItem, itemColumns } from './rows';
export * from './migrate';
