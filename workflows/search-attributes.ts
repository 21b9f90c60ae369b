/**
 * The search attributes the conversation keeps current (DESIGN.md §4), so the Web UI and
 * `temporal workflow list --query` can find conversations by them. They are registered on the
 * namespace at start (src/infra).
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const CONVERSATION_SEARCH_ATTRIBUTES = {
  conversationId: defineSearchAttributeKey('ConversationId', SearchAttributeType.KEYWORD),
  contextTokens: defineSearchAttributeKey('ContextTokens', SearchAttributeType.INT),
  compactionCount: defineSearchAttributeKey('CompactionCount', SearchAttributeType.INT),
  lastCompactionStatus: defineSearchAttributeKey('LastCompactionStatus', SearchAttributeType.KEYWORD),
} as const;
