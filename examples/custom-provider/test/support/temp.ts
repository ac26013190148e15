import { tempDirs } from '@agentproto/testkit';
import { afterEach } from 'vitest';

const temp = tempDirs('agentproto-tarball-');
afterEach(() => temp.removeAll());

/** A fresh folder under the system temp folder, removed after the test. */
export const tempDir: (prefix?: string) => Promise<string> = temp.make;
