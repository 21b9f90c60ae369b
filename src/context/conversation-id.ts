/**
 * What a conversation id may be. The one rule, checked by everything that creates a conversation:
 * the CLI (`start`, `import`), the workflow at its start and the store before its first write.
 *
 * Pure module: imported by workflows too.
 */

/**
 * 1–128 characters of letters, digits, `.`, `_`, `:` or `-`, starting with a letter or digit: an id
 * that can appear in a workflow id, a log line, a file name and a URL without escaping trouble
 * (no quotes, spaces, slashes, control characters or SQL metacharacters).
 */
export const CONVERSATION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** A conversation id that breaks {@link CONVERSATION_ID_PATTERN}; the message quotes it and says the rule. */
export class ConversationIdError extends Error {
  override readonly name = 'ConversationIdError';
  constructor(readonly id: string) {
    super(
      `invalid conversation id ${JSON.stringify(id.slice(0, 140))}${id.length > 140 ? '…' : ''}: ` +
        `use 1–128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit`,
    );
  }
}

/**
 * Returns `id` when it is a valid conversation id (a string matching {@link CONVERSATION_ID_PATTERN}).
 * @throws ConversationIdError quoting the id and the rule
 */
export function checkConversationId(id: unknown): string {
  if (typeof id !== 'string' || !CONVERSATION_ID_PATTERN.test(id)) throw new ConversationIdError(String(id));
  return id;
}
