/**
 * `durable-compaction codec-server` as the Web UI uses it: the real command in its own process,
 * the Temporal codec protocol (POST /encode and /decode with `{payloads: [...]}`, base64 fields,
 * `x-namespace`), CORS for the UI's origin only, and clear refusals.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENCRYPTED_ENCODING } from '../../../src/infra/codec';
import { defaultCodecOrigins } from '../../../src/cli/commands/codec-server';
import { spawnCli } from '../../support/cli-process';

const UI = 'http://localhost:8233';

function start(args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const { child, output } = spawnCli(['codec-server', ...args], env);
  return { child, output: () => output.stdout + output.stderr };
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('close', (code) => resolve(code));
  });
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

describe('codec-server', () => {
  let server: ReturnType<typeof start>;
  let url = '';
  beforeAll(async () => {
    server = start(['--port', '0'], { DC_PAYLOAD_KEY: randomBytes(32).toString('base64') });
    const deadline = Date.now() + 60_000;
    while (!/codec server on (\S+)/.test(server.output()) && server.child.exitCode === null) {
      if (Date.now() > deadline) throw new Error(`codec-server did not start: ${server.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    url = /codec server on (\S+)/.exec(server.output())?.[1] ?? '';
  });
  afterAll(async () => {
    server?.child.kill('SIGTERM');
    if (server) await exited(server.child);
  });

  const post = (path: string, body: unknown, origin = UI) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin, 'x-namespace': 'default' },
      body: JSON.stringify(body),
    });

  it('encodes to binary/encrypted and decodes back, as the Web UI calls it', async () => {
    expect(server.output()).toContain(`for ${UI}, http://127.0.0.1:8233`);
    const plain = {
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: json('top secret'),
    };
    const encodedResponse = await post('/encode', { payloads: [plain] });
    expect(encodedResponse.status).toBe(200);
    expect(encodedResponse.headers.get('access-control-allow-origin')).toBe(UI);
    const encoded = (await encodedResponse.json()) as {
      payloads: { metadata: Record<string, string>; data: string }[];
    };
    const sealed = encoded.payloads[0]!;
    expect(Buffer.from(sealed.metadata.encoding!, 'base64').toString()).toBe(ENCRYPTED_ENCODING);
    expect(Buffer.from(sealed.metadata['encryption-key-id']!, 'base64').toString()).toMatch(/^[0-9a-f]{12}$/);
    expect(Buffer.from(sealed.data, 'base64').toString('latin1')).not.toContain('top secret');

    const decoded = (await (await post('/decode', { payloads: [sealed] })).json()) as {
      payloads: { metadata: Record<string, string>; data: string }[];
    };
    expect(decoded.payloads).toEqual([plain]);
    // The `temporal` CLI's `--codec-endpoint http://…/{namespace}` puts the namespace in the path.
    const cliStyle = await fetch(`${url}/default/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ payloads: [sealed] }),
    });
    expect(cliStyle.status).toBe(200);
    expect(((await cliStyle.json()) as { payloads: unknown[] }).payloads).toEqual([plain]);
  });

  it('answers the browser preflight for the UI origin (x-namespace allowed) and refuses other origins', async () => {
    const preflight = await fetch(`${url}/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: UI,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('x-namespace');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    const evil = await post('/decode', { payloads: [] }, 'http://evil.example');
    expect(evil.status).toBe(403);
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses altered ciphertext and malformed bodies with a clear 400', async () => {
    const encoded = (await (
      await post('/encode', { payloads: [{ metadata: {}, data: json('x') }] })
    ).json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
    const sealed = encoded.payloads[0]!;
    const data = Buffer.from(sealed.data, 'base64');
    data[data.length - 1] = data[data.length - 1]! ^ 1;
    const altered = await post('/decode', { payloads: [{ ...sealed, data: data.toString('base64') }] });
    expect(altered.status).toBe(400);
    expect(await altered.text()).toMatch(/failed authentication .*: it was altered/);
    const malformed = await post('/decode', { nope: true });
    expect(malformed.status).toBe(400);
    expect(await malformed.text()).toBe('the body must be {"payloads": [...]}');
    expect((await fetch(`${url}/other`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${url}/a/b/decode`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${url}/decode`)).status).toBe(404);
  });

  it('will not start with neither a store nor a key', async () => {
    const keyless = start(['--port', '0'], {});
    expect(await exited(keyless.child)).toBe(1);
    expect(keyless.output()).toMatch(
      /^error: neither DATABASE_URL nor DC_PAYLOAD_KEY is set — the codec server reads/,
    );
  });
});

describe('defaultCodecOrigins', () => {
  it.each([
    [{}, ['http://localhost:8233', 'http://127.0.0.1:8233']],
    [{ TEMPORAL_UI_URL: 'http://localhost:9000/' }, ['http://localhost:9000', 'http://127.0.0.1:9000']],
    [{ TEMPORAL_UI_URL: 'https://temporal.example.com/ui' }, ['https://temporal.example.com']],
  ])('%j → %j', (env, origins) => {
    expect(defaultCodecOrigins(env)).toEqual(origins);
  });
});
