/**
 * The import boundaries (eslint.config.mjs) hold: a probe file that breaks one is reported by the
 * linter, and its allowed counterpart is not. Probes are written beside the code they stand for
 * (the rules match by folder) and removed afterwards.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ESLint } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(__dirname, '../../..');
const RULE = '@typescript-eslint/no-restricted-imports';

interface Probe {
  /** Where the probe is written, from the repository root. */
  path: string;
  code: string;
  /** Does the linter refuse it? */
  refused: boolean;
}

const probes: Record<string, Probe> = {
  'a workflow importing activity code': {
    path: 'workflows/zz-probe-activity-value.ts',
    code: "import { SUMMARY_PREVIEW_CHARS } from '../activities/compaction';\nexport const n = SUMMARY_PREVIEW_CHARS;\n",
    refused: true,
  },
  'a workflow importing activity types': {
    path: 'workflows/zz-probe-activity-type.ts',
    code: "import type { Totals } from '../activities/types';\nexport type T = Totals;\n",
    refused: false,
  },
  'an activity importing a workflow type': {
    path: 'activities/zz-probe-workflow.ts',
    code: "import type { Phase } from '../workflows/definitions';\nexport type P = Phase;\n",
    refused: true,
  },
  'the policy importing the store': {
    path: 'src/context/zz-probe-store.ts',
    code: "import type { ConversationStore } from '../store';\nexport type S = ConversationStore;\n",
    refused: true,
  },
  'the policy importing the failure vocabulary': {
    path: 'src/context/zz-probe-failures.ts',
    code: "import { LLM_FAILURE_TYPES } from '../failures';\nexport const f = LLM_FAILURE_TYPES;\n",
    refused: true,
  },
  'the policy importing token code': {
    path: 'src/context/zz-probe-tokens-value.ts',
    code: "import * as tokens from '../tokens';\nexport const t = tokens;\n",
    refused: true,
  },
  'the client importing the command line': {
    path: 'src/client/zz-probe-cli.ts',
    code: "import { UsageError } from '../cli/client';\nexport const u = UsageError;\n",
    refused: true,
  },
  'the client importing the workflow definitions': {
    path: 'src/client/zz-probe-definitions.ts',
    code: "import { statusQuery } from '../../workflows/definitions';\nexport const q = statusQuery;\n",
    refused: false,
  },
  'the policy importing its own modules': {
    path: 'src/context/zz-probe-own.ts',
    code: "import { parseCompactionConfig } from './config';\nexport const p = parseCompactionConfig;\n",
    refused: false,
  },
};

describe('import boundaries', () => {
  const results = new Map<string, ESLint.LintResult>();

  beforeAll(async () => {
    for (const probe of Object.values(probes)) writeFileSync(join(root, probe.path), probe.code);
    try {
      const eslint = new ESLint({ cwd: root });
      const linted = await eslint.lintFiles(Object.values(probes).map((p) => join(root, p.path)));
      for (const r of linted) results.set(r.filePath, r);
    } finally {
      for (const probe of Object.values(probes)) rmSync(join(root, probe.path), { force: true });
    }
  }, 120_000);

  afterAll(() => {
    for (const probe of Object.values(probes)) rmSync(join(root, probe.path), { force: true });
  });

  for (const [name, probe] of Object.entries(probes)) {
    it(`${probe.refused ? 'refuses' : 'allows'} ${name}`, () => {
      const result = results.get(join(root, probe.path));
      expect(result, `no lint result for ${probe.path}`).toBeDefined();
      const boundary = result?.messages.filter((m) => m.ruleId === RULE) ?? [];
      if (probe.refused) expect(boundary.map((m) => m.message).join('\n')).toMatch(/import/);
      else expect(boundary).toEqual([]);
      // A probe that does not parse would pass the boundary silently.
      expect(result?.messages.filter((m) => m.fatal)).toEqual([]);
    });
  }
});
