import { existsSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SandboxSetupError,
  SandboxSpecError,
  defaultRunAs,
  processesInNamespace,
  runIsolated,
  spawnIsolated,
} from '../src/index.js';
import { PATH, marker, testFolder, until } from './support.js';

const folder = testFolder('isolation');
let bundle: string;
let scratch: string;
const homeCanary = join(homedir(), `.agentproto-sandbox-canary-${marker()}`);
const tmpCanary = `/tmp/agentproto-sandbox-canary-${marker()}`;

beforeAll(() => {
  bundle = folder.readable('bundle');
  scratch = folder.writable('scratch');
  writeFileSync(join(bundle, 'main.txt'), 'bundle content\n', { mode: 0o644 });
  writeFileSync(homeCanary, 'home secret\n', { mode: 0o644 });
  writeFileSync(tmpCanary, 'tmp secret\n', { mode: 0o644 });
});

afterAll(() => {
  folder.remove();
  rmSync(homeCanary, { force: true });
  rmSync(tmpCanary, { force: true });
});

const sh = (script: string, extra: Partial<Parameters<typeof runIsolated>[0]> = {}) =>
  runIsolated({
    argv: ['/bin/sh', '-c', script],
    env: { PATH },
    mounts: [
      { source: bundle, target: '/app' },
      { source: scratch, target: '/scratch', writable: true },
    ],
    timeoutMs: 20_000,
    ...extra,
  });

describe('what a sandboxed command sees of the host', () => {
  it('the host files the command would look at first are there for the host (the checks below can fail)', () => {
    expect(readFileSync(homeCanary, 'utf8')).toBe('home secret\n');
    expect(existsSync('/etc/shadow')).toBe(true);
    expect(existsSync(tmpCanary)).toBe(true);
  });

  it.each([
    ['the home folder canary', homeCanary],
    ['/root', '/root'],
    ['/etc/shadow', '/etc/shadow'],
    ["the host's /tmp", tmpCanary],
    ["the test's temp folder", folder.root],
    ['/home', '/home'],
    ['/var', '/var'],
    ['/run', '/run'],
    ['/sys', '/sys'],
    ['/etc/ssh', '/etc/ssh'],
  ])('%s is not there', async (_, path) => {
    const result = await sh(`test -e '${path}' && echo present || echo absent`);
    expect(result.reason).toEqual({ kind: 'exit', code: 0 });
    expect(result.stdout.toString()).toBe('absent\n');
  });

  it('the bundle is there, read-only: a write fails and the host folder is unchanged', async () => {
    const result = await sh('cat /app/main.txt; echo x > /app/new.txt && echo wrote || echo refused');
    expect(result.stdout.toString()).toBe('bundle content\nrefused\n');
    expect(result.stderr.toString()).toMatch(/Read-only file system/);
    expect(existsSync(join(bundle, 'new.txt'))).toBe(false);
  });

  it('the system folders are read-only', async () => {
    const result = await sh(
      'touch /usr/x 2>/dev/null && echo wrote || echo refused; touch /etc/passwd 2>/dev/null && echo wrote || echo refused',
    );
    expect(result.stdout.toString()).toBe('refused\nrefused\n');
  });

  it('/ and /dev are read-only; /dev/shm is writable up to memoryMb (memory the rlimits do not count)', async () => {
    const result = await sh(
      'touch /x 2>/dev/null && echo wrote || echo refused; touch /dev/x 2>/dev/null && echo wrote || echo refused; ' +
        'head -c 6291456 /dev/zero > /dev/shm/a && echo wrote; head -c 4194304 /dev/zero > /dev/shm/b && echo wrote || echo full',
      { limits: { memoryMb: 8 } },
    );
    expect(result.stdout.toString()).toBe('refused\nrefused\nwrote\nfull\n');
    expect(result.stderr.toString()).toMatch(/No space left on device/);
  });

  it('a writable mount is writable, and what is written there is on the host', async () => {
    const result = await sh('echo hello > /scratch/out.txt && echo wrote');
    expect(result.stdout.toString()).toBe('wrote\n');
    expect(readFileSync(join(scratch, 'out.txt'), 'utf8')).toBe('hello\n');
  });

  it('the working folder is cwd', async () => {
    const result = await sh('pwd', { cwd: '/app' });
    expect(result.stdout.toString()).toBe('/app\n');
  });

  it('the environment is exactly the one given, plus PWD (bwrap sets it to the working folder)', async () => {
    const result = await runIsolated({
      argv: ['/usr/bin/env'],
      env: { PATH, ONE: 'first value', TWO: '' },
      cwd: '/usr',
    });
    expect(result.stdout.toString().split('\n').filter(Boolean).sort()).toEqual([
      'ONE=first value',
      `PATH=${PATH}`,
      'PWD=/usr',
      'TWO=',
    ]);
    const empty = await runIsolated({ argv: ['/usr/bin/env'] });
    expect(empty.stdout.toString()).toBe('PWD=/\n');
  });

  it('the command runs as the documented account (nobody on a root host) with no capabilities', async () => {
    const result = await sh('id -u; id -g; grep CapEff /proc/self/status');
    const { uid, gid } = defaultRunAs();
    if (process.getuid?.() === 0) expect(uid).toBe(65534);
    expect(result.stdout.toString()).toBe(`${uid}\n${gid}\nCapEff:\t0000000000000000\n`);
  });

  it('no descriptor of the host reaches the command: past stdin, stdout and stderr only /dev/null', async () => {
    const result = await runIsolated({
      argv: ['/usr/bin/find', '/proc/self/fd/', '-mindepth', '1', '-printf', '%f %l\\n'],
    });
    const open = result.stdout
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ') as [string, string]);
    expect(open.map(([fd]) => fd)).toEqual(expect.arrayContaining(['0', '1', '2']));
    // Past 2: /dev/null where the host had a descriptor open, and find's own handles (/, /proc/self/fd).
    const others = open.filter(([fd, target]) => Number(fd) > 2 && !/^(\/dev\/null|\/|\/proc\/\d+\/fd)$/.test(target));
    expect(others).toEqual([]);
  });

  it('its own hostname, only loopback, and its own PID namespace (the command is pid 2 under the sandbox init)', async () => {
    const result = await sh('hostname; cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "; echo $$');
    expect(result.stdout.toString()).toBe('sandbox\nlo\n2\n');
  });
});

describe('what a sandboxed command cannot do', () => {
  it('make a user namespace of its own (the kernel surface it would open stays closed)', async () => {
    const result = await runIsolated({ argv: ['/usr/bin/unshare', '--user', '/bin/true'], env: { PATH } });
    expect(result.reason).toEqual({ kind: 'exit', code: 1 });
    expect(result.stderr.toString()).toMatch(/unshare failed/);
  });

  it("reach the host's abstract Unix sockets (its network namespace is its own)", async () => {
    const { createServer } = await import('node:net');
    const name = `agentproto-sandbox-${marker()}`;
    let connections = 0;
    const server = createServer(() => connections++);
    await new Promise<void>((resolve) => server.listen(`\0${name}`, resolve));
    try {
      const result = await runIsolated({
        argv: ['/usr/bin/socat', '-u', 'OPEN:/dev/null', `ABSTRACT-CONNECT:${name}`],
        env: { PATH },
      });
      expect(result.reason).not.toEqual({ kind: 'exit', code: 0 });
      expect(result.stderr.toString()).toMatch(/Connection refused/);
      expect(connections).toBe(0);
    } finally {
      server.close();
    }
  });
});

describe('secrets in the environment', () => {
  it('never appear on a command line, and bwrap runs with an empty environment (LD_PRELOAD cannot act on it)', async () => {
    const canary = `canary-${marker()}`;
    const child = spawnIsolated({
      argv: ['/bin/sleep', '30'],
      env: { PATH, SECRET_TOKEN: canary, LD_PRELOAD: `/nonexistent-${canary}.so` },
      timeoutMs: 20_000,
    });
    const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'latin1');
    const inSandbox = () => sandboxProcesses(child.pid);
    expect(await until(() => inSandbox().some((pid) => commandLine(pid).startsWith('/bin/sleep')), 10_000)).toBe(true);
    const pids = [child.pid, ...inSandbox()];
    for (const pid of pids) expect(commandLine(pid)).not.toContain(canary);
    expect(readFileSync(`/proc/${child.pid}/environ`, 'latin1')).toBe('');
    // The check can fail: the sleep itself has the canary in its environment.
    const sleep = pids.find((pid) => commandLine(pid).startsWith('/bin/sleep'));
    expect(readFileSync(`/proc/${sleep}/environ`, 'latin1')).toContain(`SECRET_TOKEN=${canary}`);
    child.kill();
    await child.exited;
  });
});

/** Live processes of the PID namespace of the sandbox held by bwrap `pid` (its init is bwrap's child). */
function sandboxProcesses(pid: number): number[] {
  try {
    const init = readFileSync(`/proc/${pid}/task/${pid}/children`, 'latin1').trim().split(/\s+/)[0];
    return init ? processesInNamespace(readlinkSync(`/proc/${init}/ns/pid`)) : [];
  } catch {
    return [];
  }
}

describe('what cannot be honoured is a typed error, never an exit status', () => {
  it('a mount bwrap refuses rejects with SandboxSetupError naming the path, and the command never runs', async () => {
    writeFileSync(join(bundle, 'file.txt'), 'x');
    const run = runIsolated({
      argv: ['/bin/sh', '-c', `echo ran > /scratch/ran-${process.pid}`],
      mounts: [
        { source: join(bundle, 'file.txt'), target: '/app' },
        { source: scratch, target: '/app/inside', writable: true },
      ],
    });
    const error = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SandboxSetupError);
    expect(error).toMatchObject({ code: 'SANDBOX_SETUP_FAILED', program: '/bin/sh' });
    expect((error as SandboxSetupError).detail).toMatch(/^bwrap: .*\/app\/inside/);
    expect(existsSync(join(scratch, `ran-${process.pid}`))).toBe(false);
  });

  it('a program that is not in the sandbox rejects with SandboxSetupError', async () => {
    await expect(runIsolated({ argv: ['/opt/not-here/tool'] })).rejects.toMatchObject({
      code: 'SANDBOX_SETUP_FAILED',
      detail: expect.stringMatching(/execvp \/opt\/not-here\/tool/),
    });
  });

  it('a command that exits 1 after writing "bwrap: " to stderr is an exit, not a setup error', async () => {
    const result = await sh("echo 'bwrap: pretend' >&2; exit 1");
    expect(result.reason).toEqual({ kind: 'exit', code: 1 });
  });

  it.each([
    [{ mounts: [{ source: 'relative', target: '/x' }] }, 'mounts[0].source'],
    [{ mounts: [{ source: '/nonexistent-source-folder', target: '/x' }] }, 'mounts[0].source'],
    [{ mounts: [{ source: '/usr', target: 'x' }] }, 'mounts[0].target'],
    [{ mounts: [{ source: '/usr', target: '/' }] }, 'mounts[0].target'],
    [{ mounts: [{ source: '/usr', target: '/run/agentproto-egress' }] }, 'mounts[0].target'],
    [{ cwd: 'app' }, 'cwd'],
    [{ argv: [] }, 'argv'],
    [{ env: { 'A=B': 'x' } }, 'env'],
    [{ limits: { memoryMb: Number.NaN } }, 'limits.memoryMb'],
    [{ limits: { cpuMs: -1 } }, 'limits.cpuMs'],
    [{ limits: { maxProcesses: 0 } }, 'limits.maxProcesses'],
    [{ limits: { maxProcesses: 10 }, runAs: { uid: 0, gid: 0 } }, 'runAs'],
    [{ timeoutMs: Number.NaN }, 'timeoutMs'],
  ])('%o is a SandboxSpecError naming %s', (spec, field) => {
    let error: unknown;
    try {
      spawnIsolated({ argv: ['/bin/true'], ...spec } as Parameters<typeof spawnIsolated>[0]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SandboxSpecError);
    expect(error).toMatchObject({ code: 'SANDBOX_SPEC_INVALID', field });
  });

  it('an environment value never appears in a SandboxSpecError', () => {
    let error: unknown;
    try {
      spawnIsolated({ argv: ['/bin/true'], env: { 'BAD=NAME': 'secret-value-123' } });
    } catch (e) {
      error = e;
    }
    expect(String((error as Error).message)).not.toContain('secret-value-123');
    expect(JSON.stringify(error)).not.toContain('secret-value-123');
  });
});
