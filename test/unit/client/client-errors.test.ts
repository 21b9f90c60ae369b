/**
 * The client's errors without Temporal: the one mapping from Temporal's and the store's failures
 * to the typed errors (class, type, badInput, message), the errors of a failed start, the checks a
 * message and a start input pass before anything is sent, and a server that cannot be reached.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure, RetryState } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  BadInputError,
  CompactionRejectedError,
  ConversationClient,
  ConversationEndedError,
  ConversationError,
  conversationErrorFrom,
  ConversationNotFoundError,
  DEFAULT_CONVERSATION_TASK_QUEUE,
  MAX_MESSAGE_BYTES,
  NoApprovalPendingError,
  NoReviewPendingError,
  RequestFailedError,
  startFailureError,
  TemporalUnreachableError,
  type ConversationClosing,
} from '../../../src/client';
import { checkMessageSize, checkMessageText } from '../../../src/client/message-checks';
import { checkedStartInput } from '../../../src/client/start';
import { CLIENT_FAILURE_TYPES } from '../../../src/failures';
import { StoreError } from '../../../src/store';
import { DEFAULT_TASK_QUEUE } from '../../../src/worker';
import { thrown } from '../../support/files';

const ID = 'conv-1';

/** An Update that failed with `cause`. */
const updateFailed = (cause: Error): WorkflowUpdateFailedError =>
  new WorkflowUpdateFailedError('Workflow Update failed', cause);
/** A validator's refusal: a plain Error arrives as an ApplicationFailure of type `Error`. */
const refusal = (message: string): WorkflowUpdateFailedError =>
  updateFailed(ApplicationFailure.create({ message, type: 'Error' }));
const failure = (type: string, message: string): ApplicationFailure =>
  ApplicationFailure.create({ message, type, nonRetryable: true });
/** `cause` as an activity of the conversation's reported it. */
const fromActivity = (cause: Error): ActivityFailure =>
  new ActivityFailure(
    'Activity task failed',
    'restoreVersion',
    '1',
    RetryState.NON_RETRYABLE_FAILURE,
    undefined,
    cause,
  );
/** `cause` as a compaction child reported it. */
const fromChild = (cause: Error): ChildWorkflowFailure =>
  new ChildWorkflowFailure(
    'default',
    { workflowId: `${ID}/compaction-1`, runId: 'r' },
    'compaction',
    RetryState.NON_RETRYABLE_FAILURE,
    cause,
  );

describe('the mapping from Temporal and the store', () => {
  it.each([
    [
      'no workflow',
      new WorkflowNotFoundError('workflow not found', ID, undefined),
      ConversationNotFoundError,
      { type: 'CONVERSATION_NOT_FOUND', badInput: true, message: `no conversation ${ID}` },
    ],
    [
      'the validator: ended',
      refusal('the conversation has ended'),
      ConversationEndedError,
      { type: 'CONVERSATION_ENDED', badInput: true, message: `conversation ${ID} has ended` },
    ],
    [
      'the validator: nothing awaits approval',
      refusal('no compaction is awaiting approval'),
      NoApprovalPendingError,
      { type: 'NO_APPROVAL_PENDING', badInput: true, message: 'no compaction is awaiting approval' },
    ],
    [
      'the validator: any other refusal',
      refusal('message is empty: send some text'),
      BadInputError,
      { type: 'BAD_INPUT', badInput: true, message: 'message is empty: send some text' },
    ],
    [
      'a version the store does not have, through the activity',
      updateFailed(fromActivity(failure('VERSION_NOT_FOUND', 'conversation c has no version 99'))),
      BadInputError,
      { type: 'VERSION_NOT_FOUND', badInput: true, message: 'conversation c has no version 99' },
    ],
    [
      'a conversation the store does not have, through the activity',
      updateFailed(fromActivity(failure('CONVERSATION_NOT_FOUND', 'conversation c does not exist'))),
      ConversationNotFoundError,
      { type: 'CONVERSATION_NOT_FOUND', badInput: true, message: 'conversation c does not exist' },
    ],
    [
      'a review no longer pending',
      updateFailed(failure('NO_REVIEW_PENDING', 'the review has been answered already')),
      NoReviewPendingError,
      {
        type: 'NO_REVIEW_PENDING',
        badInput: true,
        decidedMeanwhile: true,
        message: `no compaction of ${ID} awaits review any more: it was decided or timed out meanwhile`,
      },
    ],
    [
      'an edited summary refused',
      updateFailed(failure('SUMMARY_EDIT_REFUSED', 'the edit is over the budget; nothing changed')),
      BadInputError,
      {
        type: 'SUMMARY_EDIT_REFUSED',
        badInput: true,
        message: 'the edit is over the budget; nothing changed',
      },
    ],
    [
      'a compaction declined with onReject "fail"',
      updateFailed(failure('COMPACTION_REJECTED', 'the context needs compaction and it was declined')),
      CompactionRejectedError,
      {
        type: 'COMPACTION_REJECTED',
        badInput: false,
        message: 'Workflow Update failed: the context needs compaction and it was declined',
      },
    ],
    [
      "a model call's failure",
      updateFailed(failure('LLM_AUTH', 'the API key was refused')),
      RequestFailedError,
      { type: 'LLM_AUTH', badInput: false, message: 'Workflow Update failed: the API key was refused' },
    ],
    [
      "a compaction child's commit finding a version gone: the system's failure, not the caller's",
      updateFailed(
        ApplicationFailure.create({
          message: 'the compaction failed',
          type: 'COMPACTION_FAILED',
          cause: fromChild(failure('VERSION_NOT_FOUND', 'version 3 is gone')),
        }),
      ),
      RequestFailedError,
      { type: 'COMPACTION_FAILED', badInput: false, message: 'Workflow Update failed: version 3 is gone' },
    ],
    [
      'a failure type outside the vocabulary',
      updateFailed(failure('SOMETHING_NEW', 'what is this')),
      RequestFailedError,
      { type: 'UNEXPECTED', badInput: false, message: 'Workflow Update failed: what is this' },
    ],
    [
      "the store's refusal",
      new StoreError('VERSION_NOT_FOUND', 'conversation c has no version 4'),
      BadInputError,
      { type: 'VERSION_NOT_FOUND', badInput: true, message: 'conversation c has no version 4' },
    ],
    [
      "the store's refusal of an id",
      new StoreError('INVALID_CONVERSATION_ID', 'invalid conversation id "a b"'),
      BadInputError,
      { type: 'INVALID_CONVERSATION_ID', badInput: true, message: 'invalid conversation id "a b"' },
    ],
    [
      "the store's missing conversation",
      new StoreError('CONVERSATION_NOT_FOUND', 'conversation c does not exist'),
      ConversationNotFoundError,
      { type: 'CONVERSATION_NOT_FOUND', badInput: true },
    ],
  ])('%s', (_case, err, kind, fields) => {
    const mapped = conversationErrorFrom(err, ID);
    expect(mapped).toBeInstanceOf(kind);
    expect(mapped).toMatchObject({ conversationId: ID, ...fields });
    expect((mapped as Error).cause).toBe(err);
  });

  it('leaves alone what is not about the conversation, and what is mapped already', () => {
    const codec = new Error('message bodies travel by reference and this process has no store');
    expect(conversationErrorFrom(codec, ID)).toBe(codec);
    const typed = new ConversationNotFoundError(ID);
    expect(conversationErrorFrom(typed, ID)).toBe(typed);
  });

  it('every client kind is in the vocabulary, and every class extends ConversationError', () => {
    const errors: ConversationError[] = [
      new ConversationNotFoundError(ID),
      new ConversationEndedError(ID),
      new NoApprovalPendingError(ID),
      new NoReviewPendingError(ID),
      new BadInputError('BAD_INPUT', ID, 'x'),
      new CompactionRejectedError(ID, 'x'),
      new RequestFailedError('UNEXPECTED', ID, 'x'),
      new TemporalUnreachableError('h:1'),
    ];
    for (const err of errors) {
      expect(err).toBeInstanceOf(ConversationError);
      expect(err).toBeInstanceOf(Error);
      expect(err.name).toBe(err.constructor.name);
    }
    expect(CLIENT_FAILURE_TYPES).toEqual(
      expect.arrayContaining([
        'BAD_INPUT',
        'NO_APPROVAL_PENDING',
        'NOT_RESPONDING',
        'STORE_REQUIRED',
        'UNEXPECTED',
      ]),
    );
  });
});

describe('an ended conversation says how it closed', () => {
  it.each<[Partial<ConversationClosing>, string]>([
    [{}, `conversation ${ID} has ended`],
    [{ workflowStatus: 'COMPLETED' }, `conversation ${ID} has ended`],
    [
      { workflowStatus: 'FAILED', failure: { message: 'unknown tool "x"', type: 'TOOL_UNKNOWN' } },
      `conversation ${ID} has ended: it failed (unknown tool "x")`,
    ],
    [{ workflowStatus: 'FAILED' }, `conversation ${ID} has ended: it failed`],
    [{ workflowStatus: 'TERMINATED' }, `conversation ${ID} has ended (its workflow is terminated)`],
    [{ workflowStatus: 'TIMED_OUT' }, `conversation ${ID} has ended (its workflow is timed_out)`],
  ])('%o', (closing, message) => {
    const err = new ConversationEndedError(ID, closing);
    expect(err.message).toBe(message);
    expect(err.workflowStatus).toBe(closing.workflowStatus ?? null);
  });
});

describe('a start that failed', () => {
  it.each([
    ['TOOL_UNKNOWN', BadInputError, true],
    ['HEADER_EXCEEDS_WINDOW', BadInputError, true],
    ['CONFIG_INVALID', BadInputError, true],
    ['INTERNAL', RequestFailedError, false],
    [null, RequestFailedError, false],
  ] as const)('with %s: %s', (type, kind, badInput) => {
    const err = startFailureError(ID, { message: 'why', type });
    expect(err).toBeInstanceOf(kind);
    expect(err).toMatchObject({
      type: type ?? 'UNEXPECTED',
      badInput,
      message: `conversation ${ID} failed to start: why`,
    });
  });
});

describe('checks before anything is sent', () => {
  it.each(['', '   ', '\n\t'])('%j is an empty message', (text) => {
    const err = thrown(() => checkMessageText(ID, text));
    expect(err).toBeInstanceOf(BadInputError);
    expect(err.message).toBe('message is empty: send some text');
  });

  it.each([
    // [characters, maxInputChars, by reference, refused with]
    [10, 10, true, null],
    [11, 10, true, 'message is too long: 11 characters, the limit is 10 (maxInputChars)'],
    [MAX_MESSAGE_BYTES + 1, undefined, true, null],
    [MAX_MESSAGE_BYTES, undefined, false, null],
    [
      MAX_MESSAGE_BYTES + 1,
      undefined,
      false,
      `message is too long: ${MAX_MESSAGE_BYTES + 1} bytes, the limit is ${MAX_MESSAGE_BYTES} (with DC_CLAIM_CHECK=off a message travels in a Temporal payload, at most 2 MB)`,
    ],
  ])('%d characters, limit %s, by reference %s', (length, limit, byReference, message) => {
    const check = () => checkMessageSize(ID, 'x'.repeat(length), limit, byReference);
    if (message === null) expect(check).not.toThrow();
    else expect(thrown(check)).toMatchObject({ type: 'BAD_INPUT', message });
  });

  it('a start input gets an id when it has none, and is checked as the workflow checks it', () => {
    const model = { provider: 'openai' as const, model: 'm' };
    expect(checkedStartInput({ model }).conversationId).toMatch(/^conv-\d{8}T\d{6}Z-[0-9a-f]{6}$/);
    expect(checkedStartInput({ model, conversationId: 'mine' })).toMatchObject({
      conversationId: 'mine',
      model,
    });
    const config = thrown(() => checkedStartInput({ model, config: { triggerRatio: 1.2 } }));
    expect(config).toMatchObject({ type: 'CONFIG_INVALID', badInput: true });
    expect(config.message).toBe(
      'invalid compaction config: triggerRatio: triggerRatio must be greater than 0 and at most 1',
    );
    expect(thrown(() => checkedStartInput({ model, conversationId: 'a b' }))).toMatchObject({
      type: 'INVALID_CONVERSATION_ID',
      conversationId: 'a b',
    });
  });
});

describe('connecting', () => {
  it("the client's default task queue is the workers'", () => {
    expect(DEFAULT_CONVERSATION_TASK_QUEUE).toBe(DEFAULT_TASK_QUEUE);
  });

  it('a server that cannot be reached is a TemporalUnreachableError naming the address', async () => {
    const err = await ConversationClient.connect({ address: '127.0.0.1:1' }).then(
      () => new Error('connected'),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TemporalUnreachableError);
    expect(err).toMatchObject({ type: 'TEMPORAL_UNREACHABLE', address: '127.0.0.1:1', badInput: false });
    expect((err as Error).message).toMatch(/^cannot reach the Temporal server at 127\.0\.0\.1:1 \(/);
  });
});
