import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEFAULT_TASK_QUEUE } from '../../../src/worker';
import { DEV_SERVER_DYNAMIC_CONFIG, SEARCH_ATTRIBUTE_KEYS } from '../../../src/infra/temporal';

const root = join(__dirname, '..', '..', '..');
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed YAML document, checked field by field
const compose: any = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'));
const services = compose.services as Record<
  string,
  { [k: string]: unknown; environment?: Record<string, string> }
>;

describe('docker-compose.yml', () => {
  it('has PostgreSQL, the Temporal server with schema setup, the UI and the worker', () => {
    expect(Object.keys(services).sort()).toEqual(
      ['postgres', 'temporal', 'temporal-schema', 'temporal-setup', 'temporal-ui', 'worker'].sort(),
    );
    expect(services.temporal?.image).toMatch(/^temporalio\/server:/);
    expect(services['temporal-schema']?.image).toMatch(/^temporalio\/admin-tools:/);
    expect(services['temporal-ui']?.image).toMatch(/^temporalio\/ui:/);
    for (const service of Object.values(services))
      expect(String(service.image ?? '')).not.toMatch(/auto-setup/);
  });

  it('points the worker and the UI at the Temporal service', () => {
    const port = String((services.temporal?.ports as string[])[0]).split(':')[1];
    expect(services.worker?.environment?.TEMPORAL_ADDRESS).toBe(`temporal:${port}`);
    expect(services['temporal-ui']?.environment?.TEMPORAL_ADDRESS).toBe(`temporal:${port}`);
    expect(services.worker?.environment?.TASK_QUEUE).toBe(DEFAULT_TASK_QUEUE);
  });

  it("gives the worker a DATABASE_URL matching the postgres service's credentials", () => {
    const pg = services.postgres?.environment ?? {};
    const url = new URL(services.worker?.environment?.DATABASE_URL ?? '');
    expect(url.hostname).toBe('postgres');
    expect(url.username).toBe(pg.POSTGRES_USER);
    expect(url.password).toBe(pg.POSTGRES_PASSWORD);
    expect(url.pathname).toBe(`/${pg.POSTGRES_DB}`);
  });

  it('lets workers scale: no container name, no host port', () => {
    expect(services.worker?.container_name).toBeUndefined();
    expect(services.worker?.ports).toBeUndefined();
    expect(services.worker?.build).toBe('.');
  });

  it('registers every search attribute the workflows set', () => {
    const command = String((services['temporal-setup']?.command as string[])[0]);
    for (const key of SEARCH_ATTRIBUTE_KEYS) expect(command).toContain(`--name ${key.name}`);
  });

  it('passes the LLM secrets to the worker only, from the environment', () => {
    expect(services.worker?.environment?.OPENAI_API_KEY).toBe('${OPENAI_API_KEY:-}');
    for (const [name, service] of Object.entries(services)) {
      if (name !== 'worker') expect(service.environment?.OPENAI_API_KEY).toBeUndefined();
    }
  });

  it('mounts files that exist', () => {
    for (const service of Object.values(services)) {
      for (const volume of (service.volumes as string[] | undefined) ?? []) {
        const source = volume.split(':')[0]!;
        if (source.startsWith('.')) expect(existsSync(join(root, source)), source).toBe(true);
      }
    }
  });

  it("gives the Temporal server the embedded dev server's dynamic configuration", () => {
    const path = services.temporal?.environment?.DYNAMIC_CONFIG_FILE_PATH;
    const mount = (services.temporal?.volumes as string[]).find((v) =>
      v.split(':')[1]?.endsWith(path ?? '?'),
    );
    expect(mount).toBeDefined();
    const dynamic = parse(readFileSync(join(root, mount!.split(':')[0]!), 'utf8')) as Record<
      string,
      { value: unknown }[]
    >;
    for (const setting of DEV_SERVER_DYNAMIC_CONFIG) {
      const [key, value] = setting.split('=');
      expect(String(dynamic[key!]?.[0]?.value)).toBe(value);
    }
  });

  it('runs the worker command the CLI has', () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    // Node runs the CLI itself, so `docker stop`'s SIGTERM reaches the worker (as up --cluster runs it).
    expect(dockerfile).toMatch(/CMD \["node", "--import", "tsx", "src\/cli\/main.ts", "worker"\]/);
  });
});
