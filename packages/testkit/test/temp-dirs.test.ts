import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { tempDirs } from '@agentproto/testkit';

it('makes a fresh folder per call under the system temp folder, named by the prefix, and removes them all at once', async () => {
  const temp = tempDirs('testkit-dirs-');
  const first = await temp.make();
  const second = await temp.make('testkit-other-');
  expect(first).not.toBe(second);
  expect(dirname(first)).toBe(tmpdir());
  expect(basename(first).startsWith('testkit-dirs-')).toBe(true);
  expect(basename(second).startsWith('testkit-other-')).toBe(true);
  await writeFile(join(first, 'file'), 'x');
  await temp.removeAll();
  expect(existsSync(first)).toBe(false);
  expect(existsSync(second)).toBe(false);
  // The next set starts empty: removing again is harmless.
  const third = await temp.make();
  await temp.removeAll();
  await temp.removeAll();
  expect(existsSync(third)).toBe(false);
});
