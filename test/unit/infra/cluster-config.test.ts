/**
 * What `up --cluster` generates (src/infra/cluster-config.ts) and how it keeps its processes
 * running (src/infra/supervisor.ts), without building or starting the Temporal server.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  clusterPorts,
  listPorts,
  MAX_CLUSTER_FRONTEND_PORT,
  serverConfig,
} from '../../../src/infra/cluster-config';
import { sqlEndpoint } from '../../../src/infra/cluster';
import { Supervised } from '../../../src/infra/supervisor';

const dir = mkdtempSync(join(tmpdir(), 'dc-supervisor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('cluster config', () => {
  it("lays the services out as Temporal's defaults, shifted to the frontend port", () => {
    expect(clusterPorts(7233)).toEqual({
      frontend: 7233,
      frontendHttp: 7243,
      history: 7234,
      matching: 7235,
      worker: 7239,
      membership: { frontend: 6933, history: 6934, matching: 6935, worker: 6939 },
    });
    const ports = listPorts(clusterPorts(21_000)).map((p) => p.port);
    expect(new Set(ports).size).toBe(9);
    // Membership ports live in a smallint column.
    expect(
      Math.max(...Object.values(clusterPorts(MAX_CLUSTER_FRONTEND_PORT).membership)),
    ).toBeLessThanOrEqual(32_767);
  });

  it('points both stores at the given PostgreSQL and the server at its shards and dynamic config', () => {
    const config = serverConfig({
      ports: clusterPorts(7233),
      sql: { host: '127.0.0.1', port: 5433, user: 'postgres', password: 'pw' },
      shards: 8,
      dynamicConfigPath: '/repo/docker/dynamicconfig.yaml',
    }) as {
      persistence: { numHistoryShards: number; datastores: Record<string, { sql: { connectAddr: string } }> };
      dynamicConfigClient: { filepath: string };
    };
    expect(config.persistence.numHistoryShards).toBe(8);
    expect(Object.values(config.persistence.datastores).map((d) => d.sql.connectAddr)).toEqual([
      '127.0.0.1:5433',
      '127.0.0.1:5433',
    ]);
    expect(config.dynamicConfigClient.filepath).toBe('/repo/docker/dynamicconfig.yaml');
  });

  it("reads the SQL tool's connection from a DATABASE_URL (percent-encoded credentials decoded)", () => {
    expect(sqlEndpoint('postgres://us%40er:p%2Fw@localhost:6543/durable_compaction')).toEqual({
      host: '127.0.0.1',
      port: 6543,
      user: 'us@er',
      password: 'p/w',
    });
    expect(sqlEndpoint('postgres://u:p@db.example.com/x').port).toBe(5432);
  });
});

describe('Supervised', () => {
  it('restarts a process that dies, and stops it for good on request', async () => {
    const pids: number[] = [];
    const lines: string[] = [];
    const sleeper = new Supervised({
      name: 'sleeper',
      command: process.execPath,
      args: ['-e', 'console.log("up"); setInterval(() => {}, 1000)'],
      env: process.env,
      logFile: join(dir, 'sleeper.log'),
      onStart: (pid) => pids.push(pid),
      log: (line) => lines.push(line),
    });
    sleeper.start();
    await sleeper.waitForOutput(/up/, 10_000);
    process.kill(pids[0]!, 'SIGKILL');
    const deadline = Date.now() + 10_000;
    while (pids.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(pids).toHaveLength(2);
    expect(sleeper.restarts).toBe(1);
    expect(lines[0]).toMatch(/sleeper \(pid \d+\) exited \(SIGKILL\); restarting in 0\.1 s/);
    await sleeper.waitForOutput(/up/, 10_000);
    await sleeper.stop(2_000);
    expect(sleeper.pid).toBeNull();
    await new Promise((r) => setTimeout(r, 1_000));
    expect(pids).toHaveLength(2);
    expect(readFileSync(join(dir, 'sleeper.log'), 'utf8')).toBe('up\nup\n');
  });
});
