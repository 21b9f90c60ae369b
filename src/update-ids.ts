/**
 * Ids for the Updates our clients send. An Update's id is written into the workflow's history five
 * times (accepted: protocol instance, request message, update id; completed: update id), so the
 * SDK's default UUID costs about 180 bytes a round. Ids only need to be unique within one
 * workflow execution: 72 random bits, 12 characters, are plenty.
 */
import { randomBytes } from 'node:crypto';

export function newUpdateId(): string {
  return randomBytes(9).toString('base64url');
}
