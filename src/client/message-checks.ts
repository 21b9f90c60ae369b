/**
 * The checks a message passes before a client sends it: the ones the conversation would refuse it
 * with (empty, over `maxInputChars`) and the one a payload must pass to travel at all. Checked
 * first, a refused message is neither sent nor stored.
 */
import { BadInputError } from './errors';

/**
 * A message sent inline (DC_CLAIM_CHECK=off) travels in the Update's payload, which Temporal limits
 * to 2 MB (its blob size limit; larger ones fail the workflow task): refused above this, before
 * anything is sent. By reference (the default) only `maxInputChars` bounds it.
 */
export const MAX_MESSAGE_BYTES = 1_500_000;

/**
 * Refuses an empty message (nothing but white space).
 * @throws BadInputError `BAD_INPUT`
 */
export function checkMessageText(conversationId: string, text: unknown): asserts text is string {
  if (typeof text !== 'string' || text.trim() === '')
    throw new BadInputError('BAD_INPUT', conversationId, 'message is empty: send some text');
}

/**
 * Refuses a message the conversation would refuse (`maxInputChars`) or that could not travel.
 * @param maxInputChars - the conversation's limit (its status says it; absent in old runs)
 * @param byReference - whether the client's codecs send messages by reference
 * @throws BadInputError `BAD_INPUT`, naming the size and the limit
 */
export function checkMessageSize(
  conversationId: string,
  text: string,
  maxInputChars: number | undefined,
  byReference: boolean,
): void {
  if (maxInputChars !== undefined && text.length > maxInputChars)
    throw new BadInputError(
      'BAD_INPUT',
      conversationId,
      `message is too long: ${text.length} characters, the limit is ${maxInputChars} (maxInputChars)`,
    );
  if (byReference) return;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_MESSAGE_BYTES)
    throw new BadInputError(
      'BAD_INPUT',
      conversationId,
      `message is too long: ${bytes} bytes, the limit is ${MAX_MESSAGE_BYTES} (with DC_CLAIM_CHECK=off a message travels in a Temporal payload, at most 2 MB)`,
    );
}
