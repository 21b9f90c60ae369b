/**
 * A vitest reporter (beside the default one, vitest.config.mts) that ends a run in which the
 * shared sessions were missing with one line: where they were looked for and how many tests that
 * skipped. The tests themselves skip through `needsSharedSessions` (sessions.ts).
 */
import type { Reporter, TestModule } from 'vitest/node';
import { missingSessions, SESSIONS_DIR, sessionsSkippedWarning } from './sessions';

export default class SharedSessionsReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests('skipped')) if (test.meta().sharedSessions) skipped++;
    }
    const warning = sessionsSkippedWarning(SESSIONS_DIR, missingSessions(SESSIONS_DIR), skipped);
    if (warning) console.warn(`\n${warning}\n`);
  }
}
