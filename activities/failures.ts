/**
 * Errors carry their kind (STYLE.md §7): store failures become ApplicationFailures with a stable
 * type and the right retryability at the activity boundary.
 */
import { ApplicationFailure } from '@temporalio/common';
import { StoreError, type StoreErrorKind } from '../src/store';
import { NON_RETRYABLE_STORE_FAILURE_TYPES } from '../src/failures';

/** Store failures that retrying cannot fix. */
const NON_RETRYABLE: ReadonlySet<StoreErrorKind> = new Set(NON_RETRYABLE_STORE_FAILURE_TYPES);

/** Runs `fn`, turning a StoreError into an ApplicationFailure of the same kind. */
export async function storeBoundary<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof StoreError) {
      throw ApplicationFailure.create({
        type: err.kind,
        message: err.message,
        nonRetryable: NON_RETRYABLE.has(err.kind),
      });
    }
    throw err;
  }
}
