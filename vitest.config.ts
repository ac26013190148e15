import { defineConfig } from 'vitest/config';
import { projects } from './vitest.workspace.ts';

export default defineConfig({
  test: {
    projects: [...projects],
    passWithNoTests: false,
    // CI also writes a JSON report, from which .ci/run prints one plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.vitest-report.json' }]] : ['default'],
  },
});
