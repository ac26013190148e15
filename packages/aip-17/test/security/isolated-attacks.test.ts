import { chmod, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeOutsideSecret } from '@agentproto/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRunner } from '../../src/index.js';
import type { RunOutcome } from '../../src/index.js';
import { PATH_ENV, alive, bundleOf, handleFor, leftIn, marker, removeWorkDirs, workDir } from '../engines/support.js';

afterEach(removeWorkDirs);

/** Runs `files` isolated (engine subprocess) from an untrusted origin; checks nothing of the run is left in its work folder. */
async function runIsolated(
  files: Record<string, string>,
  run: string | { exec: string[] },
  options: {
    limits?: { memory_mb?: number; timeout_ms?: number; cpu_ms?: number };
    env?: Record<string, string>;
    network?: { egress: string[] };
    maxProcesses?: number;
  } = {},
): Promise<RunOutcome> {
  const dir = await workDir();
  const runner = createRunner({
    workDir: dir,
    ...(options.maxProcesses ? { maxProcesses: options.maxProcesses } : {}),
  });
  const outcome = await runner.run({
    runner: handleFor({ limits: { timeout_ms: 20_000, ...options.limits } }, { run }),
    origin: 'workspace',
    bundle: await bundleOf(files),
    run,
    env: options.env ?? PATH_ENV,
    ...(options.network ? { network: options.network } : {}),
  });
  expect(await leftIn(dir)).toEqual([]);
  return outcome;
}

describe('subprocess engine, isolated: each attack of a bundle is stopped', () => {
  it('cannot read a canary in the host home nor /etc/shadow', async () => {
    const home = join(homedir(), `.aip17-canary-${marker()}`);
    await mkdir(home, { recursive: true });
    try {
      const secret = await writeOutsideSecret(home, ['secret.txt']);
      const script = [
        'for f in "$1" /etc/shadow; do',
        '  if cat "$f"; then echo "READ $f"; fi',
        'done',
        'ls -a "$(dirname "$1")" /root /home 2>&1 | head -20',
        'exit 0',
      ].join('\n');
      const outcome = await runIsolated(
        { 'attack.sh': script },
        { exec: ['bash', 'attack.sh', join(home, 'secret.txt')] },
      );
      const output = `${outcome.stdout}${outcome.stderr}`;
      expect(outcome.reason).toEqual({ kind: 'exit', code: 0 });
      expect(output).not.toContain('READ');
      expect(output).not.toContain(secret.canary.slice(0, 24));
      expect(output).not.toContain(secret.onlyName);
      expect(output).toContain('No such file or directory');
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it('cannot write outside its scratch folder: /bundle, /usr, /etc, the host temp folder', async () => {
    const hostTemp = join(tmpdir(), `aip17-escape-${marker()}`);
    const script = [
      'for f in /bundle/pwned /usr/pwned /etc/pwned /pwned; do',
      '  if echo pwned > "$f"; then echo "WROTE $f"; fi',
      'done',
      `mkdir -p ${hostTemp} && echo pwned > ${hostTemp}/pwned`,
      'echo scratch > /tmp/ok && cat /tmp/ok',
    ].join('\n');
    const outcome = await runIsolated({ 'attack.sh': script }, 'attack.sh');
    expect(outcome.reason).toEqual({ kind: 'exit', code: 0 });
    expect(outcome.stdout.toString()).not.toContain('WROTE');
    // The scratch folder is writable: the refusals above are not a broken sandbox.
    expect(outcome.stdout.toString()).toContain('scratch');
    // The host temp folder's path inside the sandbox is the scratch folder, not the host's.
    await expect(stat(hostTemp)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  describe('network', () => {
    let server: Server;
    let port: number;
    const greeting = `HELLO-${marker()}`;
    beforeAll(async () => {
      server = createServer((socket) => socket.end(greeting));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    /** Tries a direct connection to the port, then a CONNECT through the proxy when one is in the env. */
    const client = `
import { connect } from 'node:net';
const port = Number(process.argv[2]);
const attempt = (host, p, first) => new Promise((resolve) => {
  const socket = connect({ host, port: p });
  let data = '';
  socket.on('connect', () => { if (first) socket.write(first); });
  socket.on('data', (chunk) => { data += chunk; });
  socket.on('end', () => resolve('got ' + data.replace(/\\r\\n/g, ' ')));
  socket.on('error', (error) => resolve('error ' + error.code));
  setTimeout(() => { socket.destroy(); resolve('got ' + data.replace(/\\r\\n/g, ' ')); }, 3000);
});
console.log('direct:', await attempt('127.0.0.1', port));
if (process.env.HTTPS_PROXY) {
  const proxy = new URL(process.env.HTTPS_PROXY);
  console.log('proxy:', await attempt(proxy.hostname, Number(proxy.port), 'CONNECT 127.0.0.1:' + port + ' HTTP/1.1\\r\\nHost: 127.0.0.1:' + port + '\\r\\n\\r\\n'));
}
`;

    it('cannot connect to a loopback port it was not granted', async () => {
      const outcome = await runIsolated({ 'client.mjs': client }, { exec: ['node', 'client.mjs', String(port)] });
      const output = outcome.stdout.toString();
      expect(outcome.reason).toEqual({ kind: 'exit', code: 0 });
      expect(output).toMatch(/^direct: error E[A-Z]+/m);
      expect(output).not.toContain(greeting);
      expect(output).not.toContain('proxy:');
    });

    it('reaches a granted host:port through the egress proxy with CONNECT, and nothing directly', async () => {
      const outcome = await runIsolated(
        { 'client.mjs': client },
        { exec: ['node', 'client.mjs', String(port)] },
        { network: { egress: [`127.0.0.1:${port}`] } },
      );
      const output = outcome.stdout.toString();
      expect(outcome.reason).toEqual({ kind: 'exit', code: 0 });
      expect(output).toMatch(/^direct: error E[A-Z]+/m);
      expect(output).toMatch(new RegExp(`^proxy: got HTTP/1.1 200 Connection Established +${greeting}`, 'm'));
    });

    it('is refused by the proxy for a port other than the granted one', async () => {
      const outcome = await runIsolated(
        { 'client.mjs': client },
        { exec: ['node', 'client.mjs', String(port)] },
        { network: { egress: [`127.0.0.1:${port === 65535 ? 1 : port + 1}`] } },
      );
      const output = outcome.stdout.toString();
      expect(output).toMatch(/^proxy: got HTTP\/1.1 403 Forbidden/m);
      expect(output).not.toContain(greeting);
    });
  });

  it('a setsid double fork cannot outlive the timeout: reason timeout, and no process of the run is left', async () => {
    const mark = marker();
    const script = [
      `(setsid sh -c 'sleep ${mark} & exit 0' &)`,
      `(env -i /usr/bin/setsid /bin/sh -c 'exec /bin/sleep ${mark}' </dev/null >/dev/null 2>&1 &)`,
      `setsid sh -c "trap '' TERM HUP INT; exec sleep ${mark}" </dev/null >/dev/null 2>&1 &`,
      'sleep 0.3',
      `exec sleep ${mark}`,
    ].join('\n');
    const outcome = await runIsolated({ 'escape.sh': script }, 'escape.sh', { limits: { timeout_ms: 1500 } });
    expect(outcome.reason).toEqual({ kind: 'timeout' });
    expect(outcome.enforcement.timeout_ms).toBe('enforced');
    expect(alive(mark)).toEqual([]);
  });

  it('a fork bomb is held to maxProcesses, ended at the timeout, and leaves no process', async () => {
    const mark = marker();
    const outcome = await runIsolated({ [`bomb-${mark}.sh`]: 'bomb() { bomb & bomb; }\nbomb\n' }, `bomb-${mark}.sh`, {
      limits: { timeout_ms: 3000 },
      maxProcesses: 32,
    });
    expect(outcome.reason).toEqual({ kind: 'timeout' });
    // bash said the kernel refused its forks: the process cap held.
    expect(outcome.stderr.toString()).toContain('Resource temporarily unavailable');
    expect(alive(mark)).toEqual([]);
  });

  it('allocating past memory_mb ends with reason memory', async () => {
    const outcome = await runIsolated(
      { 'hog.mjs': 'const kept = []; for (;;) kept.push(Buffer.alloc(1 << 20, 1));\n' },
      'hog.mjs',
      { limits: { memory_mb: 96 } },
    );
    expect(outcome.reason).toMatchObject({ kind: 'memory' });
    expect(outcome.enforcement.memory_mb).toBe('per-process');
  });

  it('a busy loop past cpu_ms ends with reason cpu', async () => {
    const outcome = await runIsolated({ 'spin.mjs': 'for (;;) {}\n' }, 'spin.mjs', {
      limits: { cpu_ms: 1000, timeout_ms: 30_000 },
    });
    expect(outcome.reason).toMatchObject({ kind: 'cpu' });
    expect(outcome.enforcement.cpu_ms).toBe('per-process');
  });

  it('sees exactly the env the host passes (and PWD), nothing of the host process', async () => {
    process.env.AIP17_TEST_PROCESS_SECRET = `secret-${marker()}`;
    try {
      const outcome = await runIsolated({ 'x.sh': '' }, { exec: ['env'] }, { env: { ...PATH_ENV, GIVEN: 'yes' } });
      expect(outcome.reason).toEqual({ kind: 'exit', code: 0 });
      const names = outcome.stdout
        .toString()
        .trim()
        .split('\n')
        .map((line) => line.slice(0, line.indexOf('=')));
      // bubblewrap sets PWD to the working folder when it changes to it: the one variable not the host's.
      expect(names.sort()).toEqual(['GIVEN', 'PATH', 'PWD']);
      expect(outcome.stdout.toString()).toContain('PWD=/bundle\n');
      expect(outcome.stdout.toString()).not.toContain(process.env.AIP17_TEST_PROCESS_SECRET);
    } finally {
      delete process.env.AIP17_TEST_PROCESS_SECRET;
    }
  });

  it('cannot have a host folder shown to it by naming a program there: a path in run mounts nothing', async () => {
    // A host folder with a program in bin/ and a secret beside it: a manifest naming the
    // program by path must not get the folder (its "install folder") bound into the sandbox.
    const prefix = await mkdtemp(join('/var/tmp', 'aip17-named-'));
    try {
      await chmod(prefix, 0o755);
      await mkdir(join(prefix, 'bin'));
      await writeFile(join(prefix, 'bin', 'tool'), `#!/bin/sh\ncat ${join(prefix, 'secret')}\n`, { mode: 0o755 });
      await writeFile(join(prefix, 'secret'), 'NAMED-FOLDER-CANARY', { mode: 0o644 });
      const outcome = await runIsolated({ 'x.txt': 'x' }, { exec: [join(prefix, 'bin', 'tool')] }).then(
        (ran) => `${ran.stdout}${ran.stderr}`,
        (error: unknown) => `${(error as { code?: string }).code}: ${(error as Error).message}`,
      );
      expect(outcome).toMatch(/No such file|SANDBOX_SETUP_FAILED/);
      expect(outcome).not.toContain('NAMED-FOLDER-CANARY');
    } finally {
      await rm(prefix, { recursive: true, force: true });
    }
  });

  it('sees a runtime installed outside /usr through its install folder, read-only', async () => {
    // A node "installed" under /var/tmp (as nvm or /opt would): the run's PATH names only it.
    const prefix = await mkdtemp(join('/var/tmp', 'aip17-runtime-'));
    try {
      await chmod(prefix, 0o755);
      await mkdir(join(prefix, 'bin'));
      await symlink(process.execPath, join(prefix, 'bin', 'node'));
      const script = `import { writeFileSync } from 'node:fs';
let wrote = 'no';
try { writeFileSync(${JSON.stringify(join(prefix, 'pwned'))}, 'x'); wrote = 'yes'; } catch {}
console.log('ran wrote=' + wrote);`;
      const outcome = await runIsolated({ 'where.mjs': script }, 'where.mjs', { env: { PATH: join(prefix, 'bin') } });
      expect(outcome.reason).toEqual({ kind: 'exit', code: 0 });
      expect(outcome.stdout.toString()).toBe('ran wrote=no\n');
    } finally {
      await rm(prefix, { recursive: true, force: true });
    }
  });
});
