// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  {
    ignores: [
      'examples/**',
      'node_modules/**',
      '.data/**',
      'test-output/**',
      'bin/**',
      'dist/**',
      'docs/api/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no I/O libraries.
    // src/context is imported by workflows, so it obeys the same rule; src/importers is pure too
    // (text in, items out: the caller reads and writes the files).
    files: ['workflows/**/*.ts', 'src/context/**/*.ts', 'src/importers/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.map((name) => ({ name, message: 'Workflow code must not use Node built-ins.' })),
            { name: 'pg', message: 'Workflow code must not do I/O; use an activity.' },
            { name: 'openai', message: 'Workflow code must not do I/O; use an activity.' },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'process', message: 'Workflow code must not read the process environment.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'Use uuid4() or deterministic inputs.' },
      ],
    },
  },
  {
    // Policy code is pure: time is an argument (workflows may read the SDK's deterministic clock).
    // src/chat-compaction is the policy on OpenAI messages, for use without Temporal.
    files: ['src/context/**/*.ts', 'src/importers/**/*.ts', 'src/chat-compaction/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'Policy code is deterministic.' },
        { object: 'Date', property: 'now', message: 'Time is an argument in policy code.' },
      ],
    },
  },
  // ---- imports run downhill (DESIGN.md §1): workflows → activities (types) → src; policy alone ----
  {
    // Workflows call activities through proxies: their types only, never their code.
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)activities(/|$)',
              allowTypeImports: true,
              message:
                'Workflows import activities as types only (`import type`): activity code runs on workers.',
            },
          ],
        },
      ],
    },
  },
  {
    // Activities are called by workflows; they never call back up.
    files: ['activities/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)workflows(/|$)',
              message:
                'Activities never import workflows/: what both need lives in src/ (or activities/types.ts).',
            },
          ],
        },
      ],
    },
  },
  {
    // The client is a library's: the CLI is built on it, never the other way round.
    files: ['src/client/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)cli(/|$)',
              message: 'src/client never imports src/cli: the command line is built on the client.',
            },
          ],
        },
      ],
    },
  },
  // The policy is the bottom room: it imports nothing of the project outside src/context (token
  // types excepted), so it can be read, tested and reused alone. One block per folder depth, since
  // the rule sees the import's text: `../` leaves src/context from its top, `../../` from a folder.
  ...['', '../'].map((up, depth) => ({
    files: [`src/context/${'*/'.repeat(depth)}*.ts`],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(\\.\\./){${depth + 1},}(?!tokens/)`,
              message: 'src/context imports nothing outside src/context (token types excepted).',
            },
            {
              regex: `^(\\.\\./){${depth + 1}}tokens/`,
              allowTypeImports: true,
              message: 'src/context imports src/tokens as types only.',
            },
          ],
        },
      ],
    },
  })),
  {
    files: ['**/*.mjs', '**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
