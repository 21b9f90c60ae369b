/**
 * Security settings at the edge (issue 8): which PostgreSQL URLs the worker accepts without TLS,
 * how a URL is shown in logs and errors, and the payload-encryption variables the compaction
 * configuration must not mistake for its own.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseDatabaseUrl, redactUrl } from '../../../src/infra/postgres';
import { compactionConfigFromEnv } from '../../../src/infra/config-sources';

describe('parseDatabaseUrl: a remote PostgreSQL needs TLS', () => {
  let saved: string | undefined;
  beforeEach(() => {
    saved = process.env.DC_ALLOW_INSECURE_DB;
    delete process.env.DC_ALLOW_INSECURE_DB;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.DC_ALLOW_INSECURE_DB;
    else process.env.DC_ALLOW_INSECURE_DB = saved;
  });

  it.each([
    'postgres://u:p@localhost:5432/db',
    'postgres://u:p@127.0.0.1/db',
    'postgres://u:p@[::1]:5432/db',
    'postgresql://u:p@localhost/db?host=/var/run/postgresql',
    'postgres://u:p@db.example.com/db?sslmode=require',
    'postgres://u:p@db.example.com/db?sslmode=verify-full',
    'postgres://u:p@db.example.com/db?sslmode=verify-ca',
    'postgres://u:p@db.example.com/db?sslmode=no-verify',
    'postgres://u:p@db.example.com/db?ssl=true',
  ])('accepts %s', (url) => {
    expect(parseDatabaseUrl(url).toString()).toBe(new URL(url).toString());
  });

  it.each([
    ['postgres://u:p@db.example.com/db', 'db.example.com'],
    ['postgres://u:p@10.0.0.5:5432/db', '10.0.0.5'],
    ['postgres://u:p@db.example.com/db?sslmode=disable', 'db.example.com'],
    ['postgres://u:p@db.example.com/db?sslmode=prefer', 'db.example.com'],
    ['postgres://u:p@db.example.com/db?sslmode=allow', 'db.example.com'],
    ['postgres://u:p@db.example.com/db?ssl=false', 'db.example.com'],
    // sslmode wins over ssl in pg: disable means plaintext.
    ['postgres://u:p@db.example.com/db?sslmode=disable&ssl=true', 'db.example.com'],
    // pg connects to the `host` parameter, not to the URL's host.
    ['postgres://u:p@localhost/db?host=db.example.com', 'db.example.com'],
  ])('refuses %s, naming %s and the way out', (url, host) => {
    expect(() => parseDatabaseUrl(url)).toThrow(
      `refusing to use the remote PostgreSQL at ${host} without TLS`,
    );
    try {
      parseDatabaseUrl(url);
    } catch (err) {
      expect((err as { userMessage: string }).userMessage).toMatch(
        /add \?sslmode=require \(or verify-full\) to DATABASE_URL, or set DC_ALLOW_INSECURE_DB=1/,
      );
      expect((err as Error).message).not.toContain(':p@');
    }
  });

  it('accepts plaintext to a remote host when told so explicitly', () => {
    const url = 'postgres://u:p@db.example.com/db';
    expect(parseDatabaseUrl(url, true).hostname).toBe('db.example.com');
    process.env.DC_ALLOW_INSECURE_DB = '1';
    expect(parseDatabaseUrl(url).hostname).toBe('db.example.com');
    // Only `1` opts out.
    process.env.DC_ALLOW_INSECURE_DB = 'true';
    expect(() => parseDatabaseUrl(url)).toThrow(/without TLS/);
  });
});

describe('redactUrl', () => {
  it.each([
    ['postgres://u:s3cret@h:5432/db', 'postgres://u:***@h:5432/db'],
    [
      'postgres://u:s3cret@h/db?password=s3cret&sslmode=require',
      'postgres://u:***@h/db?password=***&sslmode=require',
    ],
    ['postgres://u@h/db?sslpassword=s3cret', 'postgres://u@h/db?sslpassword=***'],
    ['postgres://u@h/db', 'postgres://u@h/db'],
    ['not a url s3cret', '(unparseable url)'],
  ])('%s → %s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
    expect(redactUrl(url)).not.toContain('s3cret');
  });
});

describe('payload-encryption variables beside the compaction configuration', () => {
  it('are not taken for unknown compaction settings (a typo still is)', () => {
    const env = {
      DC_PAYLOAD_KEY: 'AAAA',
      DC_PAYLOAD_OLD_KEYS: 'BBBB',
      DC_CODEC_ENDPOINT: 'http://127.0.0.1:8081',
      DC_ALLOW_INSECURE_DB: '1',
    };
    expect(compactionConfigFromEnv(env)).toEqual({});
    expect(() => compactionConfigFromEnv({ ...env, DC_PAYLOAD_KYE: 'x' })).toThrow(
      /DC_PAYLOAD_KYE: unknown compaction setting/,
    );
  });
});
