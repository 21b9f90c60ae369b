import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The CLI from source, as `npm run cli` runs it (the bin runs the compiled one: test/unit/package).
const cli = join(__dirname, '..', '..', '..', 'src', 'cli', 'main.ts');
let busy: Server;
let busyPort = 0;

beforeAll(async () => {
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  const address = busy.address();
  busyPort = typeof address === 'object' && address ? address.port : 0;
});
afterAll(() => {
  busy.close();
});

function run(
  args: string[],
  env: Record<string, string>,
): { code: number | null; stderr: string; stdout: string } {
  const clean = { ...process.env };
  for (const key of ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'DEBUG', 'OPENAI_API_KEY', 'OPENAI_BASE_URL'])
    delete clean[key];
  const r = spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], {
    env: { ...clean, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stderr: r.stderr, stdout: r.stdout };
}

describe('bad infrastructure settings end with one clear line and a non-zero exit', () => {
  it.each([
    [
      'a malformed TEMPORAL_ADDRESS',
      { TEMPORAL_ADDRESS: 'http://localhost:7233' },
      /TEMPORAL_ADDRESS "http:\/\/localhost:7233" is not host:port/,
    ],
    ['a malformed DATABASE_URL', { DATABASE_URL: 'not a url' }, /DATABASE_URL is not a valid URL/],
    [
      'a DATABASE_URL with another scheme',
      { DATABASE_URL: 'mysql://u:p@localhost/db' },
      /scheme mysql: instead of postgres:/,
    ],
    [
      'a remote PostgreSQL without TLS',
      { DATABASE_URL: 'postgres://u:secretpw@db.example.com:5432/db' },
      /refusing to use the remote PostgreSQL at db.example.com without TLS/,
    ],
    [
      'an unreachable TEMPORAL_ADDRESS',
      { TEMPORAL_ADDRESS: '127.0.0.1:1' },
      /cannot reach the Temporal server at 127.0.0.1:1/,
    ],
    [
      'no workflow task slot',
      { DC_WORKER_WORKFLOW_TASKS: '0' },
      /DC_WORKER_WORKFLOW_TASKS must be a whole number from 1 to 10000 \(got "0"\)/,
    ],
    [
      'activity slots that are not a number',
      { DC_WORKER_ACTIVITIES: 'many' },
      /DC_WORKER_ACTIVITIES must be a whole number from 1 to 10000 \(got "many"\)/,
    ],
  ])('worker with %s', (_case, env, message) => {
    const r = run(['worker'], env);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: /);
    expect(lines[0]).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr).not.toContain('secretpw');
  });

  it.each([
    [
      'DC_ALLOW_INSECURE_DB=1',
      { DATABASE_URL: 'postgres://u:secretpw@db.invalid:5432/db', DC_ALLOW_INSECURE_DB: '1' },
    ],
    ['sslmode=require', { DATABASE_URL: 'postgres://u:secretpw@db.invalid:5432/db?sslmode=require' }],
  ])('a remote PostgreSQL is accepted with %s (the worker gets past the check)', (_case, env) => {
    const r = run(['worker'], { ...env, TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/without TLS/);
    // pg warns about sslmode=require's meaning before it connects; the connection is what fails
    // (no such host), with the URL named without its password.
    expect(r.stderr).toMatch(
      /^error: cannot connect to PostgreSQL at postgres:\/\/u:\*\*\*@db\.invalid:5432\/db/m,
    );
    expect(r.stderr).not.toContain('secretpw');
  });

  it('an unreachable DATABASE_URL names it without the password', () => {
    const r = run(['up', '--no-demo'], {
      DATABASE_URL: 'postgres://u:secretpw@127.0.0.1:1/db',
      TEMPORAL_ADDRESS: '127.0.0.1:1',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot connect to PostgreSQL at postgres:\/\/u:\*\*\*@127.0.0.1:1\/db/);
    expect(r.stderr).not.toContain('secretpw');
  });

  it('a data directory that cannot be written', () => {
    const r = run(['up', '--no-demo', '--data-dir', '/etc/hostname/data'], {});
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^error: cannot write the data directory \/etc\/hostname\/data/);
  });

  it('a PostgreSQL port in use', () => {
    const r = run(['up', '--no-demo', '--data-dir', '/tmp/dc-cli-errors'], { DC_PG_PORT: String(busyPort) });
    expect(r.code).toBe(1);
    // Named with what holds it (this test's process), before anything started.
    expect(r.stderr.trim()).toMatch(
      new RegExp(
        `port ${busyPort} \\(PostgreSQL\\) is in use by pid ${process.pid} \\(.*; choose another with DC_PG_PORT`,
      ),
    );
  });

  it('DEBUG adds the stack trace', () => {
    const r = run(['worker'], { DATABASE_URL: 'not a url', DEBUG: '1' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\n\s+at /);
  });
});
