/**
 * One topology, two ways to run it (issue 27): docker-compose.yml (never run here: no Docker
 * engine) must describe what `up --cluster` runs and the cluster tests attack. Same server
 * version, history shards, databases, schema steps, dynamic config file, worker command.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  DEFAULT_HISTORY_SHARDS,
  DYNAMIC_CONFIG_FILE,
  SCHEMA_STEPS,
  SQL_PLUGIN,
  TEMPORAL_DATABASES,
  WORKER_COMMAND,
  serverConfig,
  clusterPorts,
  sqlToolEnv,
} from '../../../src/infra/cluster-config';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../../../src/infra/temporal';
import { imageTag, TEMPORAL_SERVER_VERSION, TEMPORAL_UI_VERSION } from '../../../src/infra/temporal-server';
import { DEFAULT_TASK_QUEUE } from '../../../src/worker';

const ROOT = join(__dirname, '..', '..', '..');

interface Service {
  image?: string;
  build?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  command?: string[] | string;
  entrypoint?: string[];
  restart?: string;
}

const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, Service>;
};
const service = (name: string): Service => {
  const s = compose.services[name];
  if (!s) throw new Error(`docker-compose.yml has no service ${name}`);
  return s;
};
const tagOf = (image: string | undefined): string => image?.slice(image.lastIndexOf(':') + 1) ?? '';

describe('docker-compose.yml against up --cluster', () => {
  it('runs the server version up --cluster builds, and admin-tools and the UI of the same releases', () => {
    expect(service('temporal').image).toBe(`temporalio/server:${imageTag(TEMPORAL_SERVER_VERSION)}`);
    // admin-tools tags carry the server release first: 1.29.1-tctl-…-cli-….
    expect(tagOf(service('temporal-schema').image).split('-')[0]).toBe(imageTag(TEMPORAL_SERVER_VERSION));
    expect(tagOf(service('temporal-setup').image).split('-')[0]).toBe(imageTag(TEMPORAL_SERVER_VERSION));
    expect(service('temporal-ui').image).toBe(`temporalio/ui:${imageTag(TEMPORAL_UI_VERSION)}`);
  });

  it('gives the server the same history shards, SQL plugin and databases', () => {
    const env = service('temporal').environment ?? {};
    expect(env.NUM_HISTORY_SHARDS).toBe(String(DEFAULT_HISTORY_SHARDS));
    expect(env.DB).toBe(SQL_PLUGIN);
    expect(env.DBNAME).toBe(TEMPORAL_DATABASES.default);
    expect(env.VISIBILITY_DBNAME).toBe(TEMPORAL_DATABASES.visibility);
    const generated = serverConfig({
      ports: clusterPorts(7233),
      sql: { host: 'h', port: 5432, user: 'u', password: 'p' },
      shards: DEFAULT_HISTORY_SHARDS,
      dynamicConfigPath: '/x',
    }) as {
      persistence: { numHistoryShards: number; datastores: Record<string, { sql: Record<string, unknown> }> };
    };
    expect(generated.persistence.numHistoryShards).toBe(DEFAULT_HISTORY_SHARDS);
    expect(
      Object.values(generated.persistence.datastores).map((d) => [d.sql.pluginName, d.sql.databaseName]),
    ).toEqual([
      [SQL_PLUGIN, TEMPORAL_DATABASES.default],
      [SQL_PLUGIN, TEMPORAL_DATABASES.visibility],
    ]);
    // The init script creates the same two databases.
    const init = readFileSync(join(ROOT, 'docker', 'postgres-init.sql'), 'utf8');
    for (const db of Object.values(TEMPORAL_DATABASES))
      expect(init).toMatch(new RegExp(`create database ${db}\\b`));
  });

  it('mounts the dynamic config file up --cluster points its server at', () => {
    const temporal = service('temporal');
    const path = temporal.environment?.DYNAMIC_CONFIG_FILE_PATH ?? '';
    const mount = (temporal.volumes ?? []).find((v) => v.split(':')[1]?.endsWith(path));
    expect(mount?.split(':')[0]).toBe(`./${DYNAMIC_CONFIG_FILE}`);
  });

  it('the dynamic config file holds what the embedded dev server sets', () => {
    const file = parse(readFileSync(join(ROOT, DYNAMIC_CONFIG_FILE), 'utf8')) as Record<
      string,
      { value: unknown }[]
    >;
    const values = Object.entries(file).map(([key, list]) => `${key}=${String(list[0]?.value)}`);
    expect(values.sort()).toEqual([...DEV_SERVER_DYNAMIC_CONFIG].sort());
  });

  it('sets up and updates the schemas with the same temporal-sql-tool steps and connection variables', () => {
    const schema = service('temporal-schema');
    const script = Array.isArray(schema.command) ? schema.command.join(' ') : (schema.command ?? '');
    const steps = script
      .split('&&')
      .map((part) => part.trim().split(/\s+/))
      .map(([tool, ...args]) => {
        expect(tool).toBe('temporal-sql-tool');
        return args;
      });
    expect(steps).toEqual(SCHEMA_STEPS);
    const env = schema.environment ?? {};
    expect(Object.keys(env).sort()).toEqual(
      Object.keys(sqlToolEnv({ host: 'h', port: 1, user: 'u', password: 'p' })).sort(),
    );
    expect(env.SQL_PLUGIN).toBe(SQL_PLUGIN);
  });

  it('runs the workers with the command up --cluster starts them with, on the same task queue', () => {
    const worker = service('worker');
    expect(worker.build).toBe('.');
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))?.[1];
    expect(JSON.parse(cmd ?? '[]')).toEqual(WORKER_COMMAND);
    expect(worker.environment?.TASK_QUEUE).toBe(DEFAULT_TASK_QUEUE);
    expect(Object.keys(worker.environment ?? {})).toEqual(
      expect.arrayContaining(['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'DATABASE_URL']),
    );
    // Restarted when they die, as up --cluster's supervisor restarts them; the server too.
    expect(worker.restart).toBe('unless-stopped');
    expect(service('temporal').restart).toBe('unless-stopped');
  });
});
