#!/usr/bin/env node
// Prints the closing line of a test run, "N passed, N failed[, N skipped]", from vitest's
// JSON report, so CI states plainly how many tests ran. Exits 1 when the report is missing
// or counts no test at all.
import { readFileSync } from 'node:fs';

const path = process.argv[2] ?? '.vitest-report.json';
let report;
try {
  report = JSON.parse(readFileSync(path, 'utf8'));
} catch (error) {
  console.error(`test-summary: no report at ${path}: ${error.message}`);
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
const failed = report.numFailedTests ?? 0;
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
if (passed + failed === 0) process.exit(1);
