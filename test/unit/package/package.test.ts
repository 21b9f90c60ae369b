/**
 * The package as a user installs it. `npm run build`'s script compiles once into a temporary
 * directory laid out like an installed package (package.json, bin/, dist/; its dependencies are
 * the repository's node_modules), required by name from an app beside it. Each `exports` entry
 * must be in dist/ with its type declarations and load in a fresh Node process, the workflows
 * entry must bundle, `files` must ship all of it and no source, and the bin must run the compiled
 * CLI (or say to build it).
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeModule, PACKAGE_ROOT, PACKAGE_VERSION } from '../../../src/package-paths';
import { needsSharedSessions, SESSIONS_DIR } from '../../support/sessions';

const root = resolve(__dirname, '../../..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  exports: Record<string, string | { types: string; default: string }>;
  files: string[];
  bin: Record<string, string>;
};

/** Each subpath of the `exports` map with its files (`./package.json` aside). */
const ENTRIES = Object.entries(manifest.exports).flatMap(([subpath, target]) =>
  typeof target === 'string' ? [] : [{ subpath, ...target }],
);

/** Names each entry must export: what a user of it reaches for first, and what only it has. */
const EXPECTED_EXPORTS: Record<string, string[]> = {
  '.': ['ConversationClient', 'ConversationNotFoundError', 'sendMessageUpdate', 'statusQuery'],
  './worker': ['createWorker', 'bundleWorkflows'],
  './workflows': ['agentConversation', 'compaction'],
  './workflows/stored-conversation': ['compactConversation', 'needsCompaction', 'storedConversation'],
  './context': ['planCompaction', 'compactMessages', 'parseCompactionConfig'],
};

const work = mkdtempSync(join(tmpdir(), 'dc-package-'));
/** The package, as npm installs it. */
const pkg = join(work, 'pkg');
/** An app that depends on it. */
const app = join(work, 'app');

function node(args: string[], cwd: string): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, args, { cwd, encoding: 'utf8', timeout: 60_000 });
}

/** Runs `code` (CommonJS) in a fresh Node process in the app; its stdout. */
function inApp(code: string): SpawnSyncReturns<string> {
  return node(['-e', code], app);
}

beforeAll(() => {
  const build = node(
    [require.resolve('tsx/cli'), join(root, 'scripts/build.ts'), '--out-dir', join(pkg, 'dist')],
    root,
  );
  if (build.status !== 0) throw new Error(`the build failed:\n${build.stdout}\n${build.stderr}`);
  cpSync(join(root, 'package.json'), join(pkg, 'package.json'));
  cpSync(join(root, 'bin'), join(pkg, 'bin'), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(pkg, 'node_modules'));
  mkdirSync(join(app, 'node_modules'), { recursive: true });
  symlinkSync(pkg, join(app, 'node_modules', manifest.name));
}, 240_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the package', () => {
  it('has an entry per surface: the client, the worker, the workflows, the policy', () => {
    expect(ENTRIES.map((e) => e.subpath)).toStrictEqual([
      '.',
      './worker',
      './workflows',
      './workflows/stored-conversation',
      './context',
    ]);
    expect(manifest).not.toHaveProperty('private');
    expect(manifest.version).toMatch(/^0\.\d+\.\d+$/);
  });

  it.each(ENTRIES)('$subpath: compiled JavaScript and its type declarations are in dist/', (entry) => {
    expect(entry.default).toMatch(/^\.\/dist\/.+\.js$/);
    expect(entry.types).toBe(entry.default.replace(/\.js$/, '.d.ts'));
    expect(existsSync(join(pkg, entry.default))).toBe(true);
    expect(readFileSync(join(pkg, entry.types), 'utf8')).toMatch(/^export /m);
  });

  it('a TypeScript app type-checks against the declarations of every entry (Node 16 resolution)', () => {
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'node16',
          moduleResolution: 'node16',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
          typeRoots: [join(root, 'node_modules', '@types')],
        },
        files: ['consumer.ts'],
      }),
    );
    writeFileSync(
      join(app, 'consumer.ts'),
      `import { sendMessageUpdate, type AgentConversationInput } from '${manifest.name}';
       import { createWorker, type WorkerOptions } from '${manifest.name}/worker';
       import { agentConversation } from '${manifest.name}/workflows';
       import { compactMessages, planCompaction, type ChatCompactionPlan } from '${manifest.name}/context';
       const plan: ChatCompactionPlan = planCompaction([{ role: 'user', content: 'hi' }], { window: 1000 });
       export const tokens: number = plan.tokensBefore;
       // @ts-expect-error the window is required: the declarations are real types, not \`any\`
       planCompaction([], {});
       export const updateName: string = sendMessageUpdate.name;
       export { agentConversation, compactMessages, createWorker };
       export type { AgentConversationInput, WorkerOptions };
      `,
    );
    const check = node([require.resolve('typescript/bin/tsc'), '-p', join(app, 'tsconfig.json')], app);
    expect(check.stdout + check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it.each(ENTRIES)('$subpath: an app requires it by name in a fresh Node process', (entry) => {
    const name = `${manifest.name}${entry.subpath.slice(1)}`;
    const run = inApp(`process.stdout.write(JSON.stringify(Object.keys(require('${name}'))))`);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toStrictEqual(
      expect.arrayContaining(EXPECTED_EXPORTS[entry.subpath] ?? ['?']),
    );
  });

  it('an ES module imports the policy by name', () => {
    const run = node(
      [
        '--input-type=module',
        '-e',
        `import { planCompaction } from '${manifest.name}/context';
         const plan = planCompaction([{ role: 'user', content: 'hello' }], { window: 1000 });
         process.stdout.write(String(plan.tokensBefore));`,
      ],
      app,
    );
    expect(run.stderr).toBe('');
    expect(Number(run.stdout)).toBeGreaterThan(0);
  });

  it('the workflows entry bundles for a worker of your own, with the config preloaded', () => {
    const run = inApp(`
      const { bundleWorkflowCode } = require(require.resolve('@temporalio/worker', { paths: [${JSON.stringify(pkg)}] }));
      const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (m) => console.error(m) };
      bundleWorkflowCode({
        workflowsPath: require.resolve('${manifest.name}/workflows'),
        preloadModules: [${JSON.stringify(join(pkg, 'dist/src/context/config.js'))}],
        logger: quiet,
      }).then((bundle) => process.stdout.write(String(bundle.code.includes('agentConversation'))),
        (err) => { console.error(err); process.exit(1); });
    `);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('true');
  });

  it('compiled, the package names its own modules as .js files under dist/', () => {
    const run = inApp(`
      const paths = require(${JSON.stringify(join(pkg, 'dist/src/package-paths.js'))});
      process.stdout.write(JSON.stringify({ module: paths.codeModule('workflows', 'index'), root: paths.PACKAGE_ROOT, version: paths.PACKAGE_VERSION }));
    `);
    expect(run.stderr).toBe('');
    const paths = JSON.parse(run.stdout) as { module: string; root: string; version: string };
    expect(paths).toStrictEqual({
      module: join(pkg, 'dist/workflows/index.js'),
      root: pkg,
      version: manifest.version,
    });
  });

  // src/worker.ts names its workflows entry and preloaded module with `codeModule`
  // (src/package-paths.ts): `.js` under dist/.
  it('compiled, the worker bundles its own workflows entry', () => {
    const run = inApp(`
      const worker = require('${manifest.name}/worker');
      process.stdout.write(String(require('node:fs').existsSync(worker.WORKFLOWS_PATH)));
    `);
    expect(run.stdout).toBe('true');
  });

  it('ships dist/ and the bin, and no TypeScript source', () => {
    const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: pkg,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(pack.status).toBe(0);
    const files =
      (JSON.parse(pack.stdout) as { files: { path: string }[] }[])[0]?.files.map((f) => f.path) ?? [];
    const shipped = new Set(files);
    for (const entry of ENTRIES) {
      expect(shipped).toContain(entry.default.slice(2));
      expect(shipped).toContain(entry.types.slice(2));
    }
    for (const wanted of [
      ...Object.values(manifest.bin),
      'dist/package.json',
      'dist/src/cli/main.js',
      'dist/src/store/migrations/001_init.sql',
      'dist/samples/sample-session.json',
    ]) {
      expect(shipped).toContain(wanted);
    }
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toStrictEqual([]);
    expect(files.filter((f) => /^(test|bench|scripts|src|workflows|activities)\//.test(f))).toStrictEqual([]);
  });
});

describe('the bin', () => {
  it('runs the compiled CLI', () => {
    const run = node([join(pkg, manifest.bin['durable-compaction'] as string), '--help'], app);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Usage: durable-compaction \[options\] \[command\]/);
    expect(run.stdout).toContain('import');
  });

  // pi's compaction module is found from dist/src/eval as from src/eval: the first node_modules
  // up that holds it (here the repository's, as in a checkout built with `npm run build`).
  it('runs eval with pi beside it', needsSharedSessions, () => {
    const session = join(SESSIONS_DIR, 'swe-agent-marshmallow-1867.traj');
    const run = node(
      [
        join(pkg, manifest.bin['durable-compaction'] as string),
        'eval',
        session,
        '--window',
        '8000',
        '--json',
        '--no-recall',
      ],
      app,
    );
    expect(run.status).toBe(0);
    const [row] = JSON.parse(run.stdout.slice(run.stdout.indexOf('['))) as {
      compactions: number;
      peers: { pi: { median: number | null }; piNote: string };
    }[];
    expect(row?.compactions).toBeGreaterThan(0);
    expect(row?.peers.piNote).toBe('');
    expect(row?.peers.pi.median).toBeGreaterThan(0);
  });

  it('says to run npm run build when dist/ is missing', () => {
    const bare = join(work, 'unbuilt');
    cpSync(join(root, 'bin'), join(bare, 'bin'), { recursive: true });
    const run = node([join(bare, manifest.bin['durable-compaction'] as string), '--help'], bare);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('the compiled CLI is missing');
    expect(run.stderr).toContain('npm run build');
  });
});

describe('from source', () => {
  it('the package names its own modules as .ts files under the repository', () => {
    expect(codeModule('workflows', 'index')).toBe(join(root, 'workflows', 'index.ts'));
    expect(existsSync(codeModule('src', 'context', 'config'))).toBe(true);
    expect(PACKAGE_ROOT).toBe(root);
    expect(PACKAGE_VERSION).toBe(manifest.version);
  });
});
