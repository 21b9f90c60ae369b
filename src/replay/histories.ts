/**
 * Workflow histories as files, and replaying them against the current workflow code: how a
 * nondeterminism bug in a change is caught before it reaches running conversations.
 *
 * Files are the JSON of `temporal workflow show --output json` (or of the SDK's `historyToJSON`, the same
 * proto JSON); `replayHistories` runs them all through `Worker.runReplayHistories`.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { temporal } from '@temporalio/proto';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { PayloadCodec } from '@temporalio/common';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { payloadCodecsFor } from '../infra/codec';

type History = temporal.api.history.v1.IHistory;

/** A history file that cannot be read, naming the file and what is wrong. */
export class HistoryFileError extends Error {
  override readonly name = 'HistoryFileError';
}

/** Reads a history file; the workflow id is the file's name unless the file names it. */
export function readHistoryFile(path: string): { workflowId: string; history: History } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new HistoryFileError(`${path}: not a JSON history (${(err as Error).message})`);
  }
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    !Array.isArray((parsed as { events?: unknown }).events)
  ) {
    throw new HistoryFileError(
      `${path}: no "events" array (expected the output of temporal workflow show --output json)`,
    );
  }
  try {
    return { workflowId: basename(path, '.json'), history: historyFromJSON(parsed) };
  } catch (err) {
    throw new HistoryFileError(`${path}: not a workflow history (${(err as Error).message})`);
  }
}

/**
 * The codecs as a replay needs them: decoding only. What the replayed code encodes is compared by
 * command, never sent: nothing is stored, and a process without a store replays histories that
 * hold no reference.
 */
function decodeOnly(codecs: PayloadCodec[]): PayloadCodec[] {
  return codecs.map((codec) => ({
    encode: (payloads) => Promise.resolve(payloads),
    decode: (payloads) => codec.decode(payloads),
  }));
}

export interface ReplayOutcome {
  workflowId: string;
  /** The determinism (or other) error, or null when the replay matched. */
  error: string | null;
}

/**
 * Replays each history against the workflow code of `bundle`; one outcome per history. Payloads
 * sent by reference need the store they were written to, and encrypted ones the key:
 * `payloadCodecs` defaults to a claim check without a store (it says so when it meets a
 * reference) and DC_PAYLOAD_KEY's codec.
 */
export async function replayHistories(
  bundle: WorkflowBundle,
  histories: { workflowId: string; history: History }[],
  options: { payloadCodecs?: PayloadCodec[] } = {},
): Promise<ReplayOutcome[]> {
  const outcomes: ReplayOutcome[] = [];
  const results = Worker.runReplayHistories(
    {
      workflowBundle: bundle,
      dataConverter: { payloadCodecs: decodeOnly(options.payloadCodecs ?? payloadCodecsFor(null)) },
    },
    histories.map((h) => ({
      workflowId: h.workflowId,
      history: h.history as ReturnType<typeof historyFromJSON>,
    })),
  );
  for await (const result of results) {
    outcomes.push({
      workflowId: result.workflowId,
      error: result.error ? String(result.error.message ?? result.error) : null,
    });
  }
  return outcomes;
}
