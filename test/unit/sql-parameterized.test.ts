/**
 * Every SQL statement is parameterized (issue 8, security): values travel as `$n` parameters,
 * never inside the SQL text. This scans the source for `query(...)` calls with the TypeScript
 * parser and fails on SQL built from strings at run time — a `+` concatenation, or a template
 * literal whose `${…}` is not one of the reviewed fragments below, each of which is made of code
 * constants only (column lists, `$n` placeholders), never of input.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..', '..');
const SCANNED = ['src', 'activities', 'workflows', 'scripts', 'bench'];

/** Interpolations reviewed by hand: `file: fragment` → why it is not input. */
const REVIEWED: Record<string, string> = {
  'src/store/conversation-store.ts: ITEM_COLUMNS': 'a constant column list',
  "src/store/conversation-store.ts: set.join(', ')":
    'column names from a fixed object literal, each `= $n` with the value as a parameter',
  "src/store/conversation-store.ts: forUpdate ? ' for update' : ''": 'one of two constant strings',
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules') return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

interface Finding {
  file: string;
  line: number;
  problem: string;
}

/** The SQL argument of every `<x>.query(sql, …)` call whose SQL is not a plain literal. */
function scan(file: string): { calls: number; findings: Finding[] } {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const rel = relative(ROOT, file);
  const findings: Finding[] = [];
  let calls = 0;
  const at = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'query' &&
      node.arguments.length > 0
    ) {
      const sql = node.arguments[0]!;
      const looksLikeSql =
        ts.isStringLiteralLike(sql) || ts.isTemplateExpression(sql) || ts.isBinaryExpression(sql);
      if (looksLikeSql) calls++;
      if (ts.isBinaryExpression(sql) && sql.operatorToken.kind === ts.SyntaxKind.PlusToken) {
        findings.push({ file: rel, line: at(sql), problem: 'SQL built with +' });
      }
      if (ts.isTemplateExpression(sql)) {
        for (const span of sql.templateSpans) {
          const fragment = span.expression.getText(source);
          if (!REVIEWED[`${rel}: ${fragment}`]) {
            findings.push({ file: rel, line: at(span), problem: `\${${fragment}} in SQL text` });
          }
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { calls, findings };
}

describe('SQL statements', () => {
  const files = SCANNED.flatMap((dir) => sourceFiles(join(ROOT, dir)));
  const results = files.map(scan);

  it('are all parameterized: no value is spliced into SQL text', () => {
    const calls = results.reduce((n, r) => n + r.calls, 0);
    // The scan sees the store's statements (a scan that finds nothing proves nothing).
    expect(calls).toBeGreaterThan(30);
    expect(results.flatMap((r) => r.findings)).toEqual([]);
  });

  it('catches a value spliced into SQL (the scan can fail)', () => {
    const probe = join(ROOT, 'test-output', 'sql-probe.ts');
    mkdirSync(join(ROOT, 'test-output'), { recursive: true });
    writeFileSync(
      probe,
      'export async function bad(pool: any, id: string) {\n' +
        "  await pool.query(`select * from items where id = '${id}'`);\n" +
        "  await pool.query('select * from items where id = ' + id);\n" +
        '}\n',
    );
    const { findings } = scan(probe);
    expect(findings.map((f) => f.problem)).toEqual(['${id} in SQL text', 'SQL built with +']);
  });
});
