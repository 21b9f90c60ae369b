import { describe, expect, it } from 'vitest';
import { DEV_SERVER_START_ATTEMPTS, retryingSlowStart } from '../../../src/infra/temporal';

const slow = () =>
  new Error(
    "Failed to start ephemeral server: ephemeral server at 127.0.0.1:35567 did not start within 5s. Make sure another download isn't stuck",
  );

describe('starting the dev server again when it was only slow to answer', () => {
  it('tries again after the SDK gave up waiting, and returns the server that answered', async () => {
    const lines: string[] = [];
    let calls = 0;
    const started = await retryingSlowStart(
      async () => {
        calls++;
        if (calls < DEV_SERVER_START_ATTEMPTS) throw slow();
        return 'server';
      },
      (line) => lines.push(line),
    );
    expect(started).toBe('server');
    expect(calls).toBe(DEV_SERVER_START_ATTEMPTS);
    expect(lines).toHaveLength(DEV_SERVER_START_ATTEMPTS - 1);
    expect(lines[0]).toMatch(/starting it again \(attempt 2 of 3\)/);
  });

  it('gives up after the last attempt with the SDK error', async () => {
    let calls = 0;
    await expect(
      retryingSlowStart(
        async () => {
          calls++;
          throw slow();
        },
        () => {},
      ),
    ).rejects.toThrow(/did not start within 5s/);
    expect(calls).toBe(DEV_SERVER_START_ATTEMPTS);
  });

  it('does not retry any other failure', async () => {
    let calls = 0;
    await expect(
      retryingSlowStart(
        async () => {
          calls++;
          throw new Error('listen tcp 127.0.0.1:7233: bind: address already in use');
        },
        () => {},
      ),
    ).rejects.toThrow(/address already in use/);
    expect(calls).toBe(1);
  });
});
