/**
 * The pieces of "one stack per data directory and per port" that need no servers: the lock file
 * (a live holder refuses, a dead one is taken over), what holds a port, the grace setting.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_SHUTDOWN_GRACE_MS, shutdownGraceFromEnv } from '../../../src/cli/commands/up';
import { bindPort, freePort, PortTaken, portInUse } from '../../../src/infra/postgres';
import {
  assertPortsFree,
  claimDataDir,
  lockFile,
  portHolder,
  processInfo,
} from '../../../src/infra/stack-lock';

const dir = mkdtempSync(join(tmpdir(), 'dc-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the data directory lock', () => {
  it('is refused while a live process holds it, naming it; taken over once that process is gone', async () => {
    const holder = spawn('sleep', ['30']);
    const pid = holder.pid as number;
    await new Promise((resolve) => setTimeout(resolve, 100));
    const command = processInfo(pid)?.command;
    expect(command).toBe('sleep 30');
    writeFileSync(lockFile(dir), JSON.stringify({ pid, command, startedAt: 'earlier' }));
    await expect(claimDataDir(dir, null, () => undefined)).rejects.toThrow(
      `the data directory ${dir} is in use by pid ${pid} (sleep 30), started earlier`,
    );
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.on('exit', resolve));
    const claim = await claimDataDir(dir, null, () => undefined);
    expect(JSON.parse(readFileSync(lockFile(dir), 'utf8')).pid).toBe(process.pid);
    claim.release();
    expect(() => readFileSync(lockFile(dir))).toThrow();
  });

  it('a reused pid running something else is not the holder', async () => {
    writeFileSync(
      lockFile(dir),
      JSON.stringify({ pid: process.ppid, command: 'node up --data-dir elsewhere', startedAt: 'x' }),
    );
    const claim = await claimDataDir(dir, null, () => undefined);
    expect(JSON.parse(readFileSync(lockFile(dir), 'utf8')).pid).toBe(process.pid);
    claim.release();
    expect(() => readFileSync(lockFile(dir))).toThrow();
  });
});

describe('ports', () => {
  it('names the process that listens on a port in use', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      expect(portHolder(port)?.pid).toBe(process.pid);
      await expect(
        assertPortsFree([{ port, what: 'Temporal', setting: 'TEMPORAL_PORT' }], portInUse),
      ).rejects.toThrow(`port ${port} (Temporal) is in use by pid ${process.pid} (`);
    } finally {
      server.close();
    }
    await assertPortsFree([{ port, what: 'Temporal', setting: 'TEMPORAL_PORT' }], portInUse);
  });
});

describe('DC_SHUTDOWN_GRACE', () => {
  it.each([
    [undefined, DEFAULT_SHUTDOWN_GRACE_MS],
    ['', DEFAULT_SHUTDOWN_GRACE_MS],
    ['3', 3_000],
    ['0.5', 500],
  ])('%j → %d ms', (value, ms) => expect(shutdownGraceFromEnv(value)).toBe(ms));

  it.each(['0', '-1', 'ten', 'Infinity', '7200'])('%j is refused naming the variable', (value) => {
    expect(() => shutdownGraceFromEnv(value)).toThrow(/DC_SHUTDOWN_GRACE must be a number of seconds/);
  });
});

describe('binding a port chosen for PostgreSQL', () => {
  /** A real bind, as the server does it: EADDRINUSE becomes PortTaken. */
  const listenOn = (port: number) =>
    new Promise<ReturnType<typeof createServer>>((resolveServer, reject) => {
      const server = createServer();
      server.once('error', (err: NodeJS.ErrnoException) =>
        reject(err.code === 'EADDRINUSE' ? new PortTaken(port, 'Address already in use') : err),
      );
      server.listen(port, '127.0.0.1', () => resolveServer(server));
    });

  it('chooses another port when the one it chose was taken before the bind, and never retries a fixed port', async () => {
    const squatter = await listenOn(0);
    const taken = (squatter.address() as { port: number }).port;
    const offered = [taken];
    const lines: string[] = [];
    const bound = await bindPort(
      undefined,
      listenOn,
      (line) => lines.push(line),
      4,
      async () => (offered.length > 0 ? (offered.shift() as number) : freePort()),
    );
    expect(bound.port).not.toBe(taken);
    expect(lines).toEqual([
      `port ${taken} was taken before PostgreSQL bound it (Address already in use); choosing another`,
    ]);
    bound.value.close();

    await expect(bindPort(taken, listenOn)).rejects.toThrow(
      `cannot start PostgreSQL: port ${taken} is taken`,
    );
    let tries = 0;
    await expect(
      bindPort(
        undefined,
        async (port) => {
          tries++;
          throw new PortTaken(port);
        },
        () => undefined,
        3,
      ),
    ).rejects.toThrow(/is in use/);
    expect(tries).toBe(3);
    await expect(bindPort(undefined, async () => Promise.reject(new Error('disk full')))).rejects.toThrow(
      'disk full',
    );
    squatter.close();
  });
});
