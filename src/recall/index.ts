/** Recall (issue 24): the agent and people search and read what compactions archived. */
export * from './recall';
export * from './render';
export {
  MAX_QUERY_CHARS,
  MAX_SEARCH_LIMIT,
  RecallError,
  type RecallErrorKind,
} from '../store/archive-search';
