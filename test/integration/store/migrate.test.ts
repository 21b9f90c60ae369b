import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { migrate } from '../../../src/store/migrate';
import { testDatabaseUrl } from '../../support/harness';

const dbName = `dc_migrate_${randomUUID().slice(0, 8)}`;
const pools: pg.Pool[] = [];

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  const admin = new pg.Client({ connectionString: testDatabaseUrl() });
  await admin.connect();
  await admin.query(`drop database if exists ${dbName}`);
  await admin.end();
});

it('applies the migrations once, in a transaction each, even from two workers at once', async () => {
  const admin = new pg.Client({ connectionString: testDatabaseUrl() });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  await admin.end();
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${dbName}`;
  const a = new pg.Pool({ connectionString: url.toString(), max: 2 });
  const b = new pg.Pool({ connectionString: url.toString(), max: 2 });
  pools.push(a, b);
  const [ra, rb] = await Promise.all([migrate(a), migrate(b)]);
  const applied = [...ra.applied, ...rb.applied].sort();
  const all = ['001_init.sql', '002_payload_bodies.sql', '003_recall.sql'];
  // Each applied once, by one of the two; the other found it applied.
  expect(applied).toEqual(all);
  expect([...ra.alreadyApplied, ...rb.alreadyApplied].sort()).toEqual(all);
  const again = await migrate(a);
  expect(again).toEqual({ applied: [], alreadyApplied: all });
  const tables = await a.query<{ table_name: string }>(
    "select table_name from information_schema.tables where table_schema = 'public' order by table_name",
  );
  expect(tables.rows.map((r) => r.table_name)).toEqual(
    expect.arrayContaining([
      'compactions',
      'context_version_items',
      'context_versions',
      'conversations',
      'items',
      'payload_bodies',
    ]),
  );
});
