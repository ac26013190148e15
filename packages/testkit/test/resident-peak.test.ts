import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { resetResidentPeak, residentPeak, tempDirs } from '@agentproto/testkit';

const MiB = 1024 * 1024;
const temp = tempDirs('testkit-peak-');
afterAll(() => temp.removeAll());

it.runIf(process.platform === 'linux')('a fresh peak counts what is made resident after it, and only that', () => {
  expect(resetResidentPeak()).toBe(true);
  const before = residentPeak();
  expect(Math.abs(before - process.memoryUsage().rss)).toBeLessThan(16 * MiB);
  const held = Buffer.alloc(128 * MiB, 1); // filled: every page resident
  expect(residentPeak() - before).toBeGreaterThanOrEqual(120 * MiB);
  expect(held[held.length - 1]).toBe(1);
});

it.runIf(process.platform === 'linux')(
  "a child of a large parent sees its own peak, where getrusage's maxRSS reports the parent's size",
  async () => {
    const dir = await temp.make();
    const child = join(dir, 'child.mts');
    const module = fileURLToPath(new URL('../src/resident-peak.ts', import.meta.url));
    await writeFile(
      child,
      `import { residentPeak } from ${JSON.stringify(module)};\nconsole.log(JSON.stringify({ peak: residentPeak(), maxRss: process.resourceUsage().maxRSS * 1024 }));\n`,
    );
    // The parent holds 384 MiB when it starts the child.
    const parent = `const held = Buffer.alloc(384 * 2 ** 20, 1); const out = require('node:child_process').execFileSync(process.execPath, ['--import', 'tsx', ${JSON.stringify(child)}], { encoding: 'utf8' }); process.stdout.write(out + (held.length > 0 ? '' : '?'));`;
    const out = execFileSync(process.execPath, ['-e', parent], { encoding: 'utf8' });
    const { peak, maxRss } = JSON.parse(out) as { peak: number; maxRss: number };
    expect(maxRss).toBeGreaterThan(384 * MiB);
    expect(peak).toBeLessThan(256 * MiB);
  },
);
