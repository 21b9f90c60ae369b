// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', 'test-output/**', 'bin/**'] },
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
    files: ['src/context/**/*.ts', 'src/importers/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'Policy code is deterministic.' },
        { object: 'Date', property: 'now', message: 'Time is an argument in policy code.' },
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
