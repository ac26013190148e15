// Holds one private folder while a test sweeps around it: `<privateRoot> <secret>`. Makes the
// folder through localSandbox, writes `<folder>/key`, prints the folder on stdout, then waits
// for a line on stdin; checks the key is still there, intact, removes the folder, prints `intact`.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { localSandbox } from '@agentproto/skill-providers';

const [privateRoot, secret] = process.argv.slice(2) as [string, string];
const sandbox = localSandbox({ privateRoot });
const dir = await sandbox.makePrivateDir();
await sandbox.writeFile(join(dir, 'key'), secret, { mode: 0o600 });
process.stdout.write(`${dir}\n`);
const lines = createInterface({ input: process.stdin });
for await (const _line of lines) break;
const text = await readFile(join(dir, 'key'), 'utf8').catch(() => '(gone)');
await sandbox.removePrivateDir(dir);
process.stdout.write(text === secret ? 'intact\n' : `damaged: ${text}\n`);
process.exit(0);
