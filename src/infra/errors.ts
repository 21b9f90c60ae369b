import { innermostCause } from '../failures';

export { innermostCause };

/**
 * Failures of the infrastructure a user can fix (an unreachable server, a bad URL, a port in use):
 * one clear line saying what is wrong and what to do, no stack trace unless DEBUG is set.
 */
export class InfraError extends Error {
  constructor(
    message: string,
    /** What the user can do about it. */
    readonly hint?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'InfraError';
  }

  /** The one line printed for the user. */
  get userMessage(): string {
    return this.hint ? `${this.message} — ${this.hint}` : this.message;
  }
}

/** What to do when a payload is encrypted (`binary/encrypted`, src/infra/codec.ts) and this process has no key. */
const NO_KEY_HINT =
  'the conversation is encrypted: set DC_PAYLOAD_KEY (and DC_PAYLOAD_OLD_KEYS) to the key the workers use';

/**
 * The line printed for any error at an entry point. A wrapper's message ("Workflow Update
 * failed", "Failed to describe workflow") says what was being done; the innermost cause says why
 * (the server's status, the store's or the model's error, already redacted where it is made): both
 * are printed, the cause's first line after a colon, unless the message already holds it.
 */
export function describeError(err: unknown): string {
  let line = err instanceof InfraError ? err.userMessage : err instanceof Error ? err.message : String(err);
  const root = innermostCause(err);
  const reason = (root instanceof Error ? root.message : root === err ? '' : String(root))
    .split('\n')[0]
    ?.trim();
  if (root !== err && reason && !line.includes(reason)) {
    line =
      err instanceof InfraError && err.hint
        ? `${err.message}: ${reason} — ${err.hint}`
        : `${line}: ${reason}`;
  }
  return /Unknown encoding: binary\/encrypted/.test(line) ? `${line} — ${NO_KEY_HINT}` : line;
}

/**
 * Runs an entry point: prints one line and exits non-zero on failure (the stack only with DEBUG).
 */
export function runMain(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    console.error(`error: ${describeError(err)}`);
    if (process.env.DEBUG) console.error(err);
    process.exit(1);
  });
}
