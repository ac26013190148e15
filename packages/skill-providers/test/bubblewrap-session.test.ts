import { randomBytes } from 'node:crypto';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { processesInNamespace } from '@agentproto/sandbox';
import { type BubblewrapSandbox, bubblewrapSandbox } from '@agentproto/skill-providers';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from './support/temp.js';

// An entry's commands (those that name its private folder) go through one sandbox of the
// entry's own, started once: these tests hold that sandbox to what a sandbox per command
// promised, and attack the channel between it and the host.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ENV = { PATH: '/usr/bin:/bin', LANG: 'C' };
const SCRATCH = '/run/agentproto-session/scratch';
const CONTROL = '/run/agentproto-session/control';

async function sandboxIn(): Promise<{ sandbox: BubblewrapSandbox; privateRoot: string }> {
  const privateRoot = await tempDir();
  const sandbox = bubblewrapSandbox({ privateRoot });
  cleanups.push(() => sandbox.close());
  return { sandbox, privateRoot };
}

/** The PID namespace a command of `dir` ran in (`pid:[N]`, as the host names it). */
async function namespaceOf(sandbox: BubblewrapSandbox, dir: string | undefined): Promise<string> {
  const result = await sandbox.run(['readlink', '/proc/self/ns/pid'], { env: ENV, ...(dir ? { cwd: dir } : {}) });
  expect(result.code).toBe(0);
  return result.stdout.toString().trim();
}

function sh(sandbox: BubblewrapSandbox, dir: string, script: string, options: { signal?: AbortSignal } = {}) {
  return sandbox.run(['sh', '-c', script], { env: ENV, cwd: dir, ...options });
}

describe('bubblewrapSandbox: one sandbox per entry', () => {
  it("runs an entry's commands in one sandbox of its own, another entry's in another, anything else alone; removing the folder ends it", async () => {
    const { sandbox, privateRoot } = await sandboxIn();
    const a = await sandbox.makePrivateDir();
    const b = await sandbox.makePrivateDir();
    const first = await namespaceOf(sandbox, a);
    expect(first).toMatch(/^pid:\[\d+\]$/);
    expect(await namespaceOf(sandbox, a)).toBe(first);
    const other = await namespaceOf(sandbox, b);
    expect(other).not.toBe(first);
    // Naming no private folder: a sandbox of its own, gone when it returns.
    const alone = await namespaceOf(sandbox, undefined);
    expect([first, other]).not.toContain(alone);
    expect(processesInNamespace(alone)).toEqual([]);

    expect(processesInNamespace(first).length).toBeGreaterThan(0);
    await sandbox.removePrivateDir(a);
    expect(processesInNamespace(first)).toEqual([]);
    expect(processesInNamespace(other).length).toBeGreaterThan(0);
    await sandbox.removePrivateDir(b);
    expect(processesInNamespace(other)).toEqual([]);
    // The sessions' own folders went with them.
    expect((await readdir(privateRoot)).filter((name) => !name.startsWith('.'))).toEqual([]);
  });

  it('gives each command exactly its environment, its standard input, and its output, error and status apart', async () => {
    const { sandbox } = await sandboxIn();
    const dir = await sandbox.makePrivateDir();
    const env = { PATH: '/usr/bin:/bin', QUOTED: 'it\'s $HOME `x` \\ "y"', LINES: 'one\ntwo' };
    const printed = await sandbox.run(['env', '-0'], { env, cwd: dir });
    expect(printed.code).toBe(0);
    const seen = printed.stdout.toString().split('\0').filter(Boolean).sort();
    expect(seen).toEqual([...Object.entries(env).map(([k, v]) => `${k}=${v}`), `PWD=${dir}`].sort());

    const input = randomBytes(3 * 1024 * 1024 + 17);
    const echoed = await sandbox.run(['sh', '-c', 'cat; printf "to stderr" >&2; exit 3'], {
      env: ENV,
      cwd: dir,
      stdin: input,
    });
    expect(echoed.code).toBe(3);
    expect(echoed.stdout.equals(input)).toBe(true);
    expect(echoed.stderr.toString()).toBe('to stderr');

    const killed = await sh(sandbox, dir, 'kill -KILL $$');
    expect(killed.code).toBe(128 + 9);
    // A command's arguments are its own, quotes and all; a later command sees no trace of it.
    const args = ["a'b", '$(id)', ' spaced ', ''];
    const listed = await sandbox.run(['printf', '[%s]', ...args], { env: ENV, cwd: dir });
    expect(listed.stdout.toString()).toBe(args.map((arg) => `[${arg}]`).join(''));
  });

  it('refuses a program or a working folder it cannot start with SANDBOX_SETUP_FAILED, and the next command runs', async () => {
    const { sandbox } = await sandboxIn();
    const dir = await sandbox.makePrivateDir();
    const before = await namespaceOf(sandbox, dir);
    await expect(sandbox.run(['no-such-program-here'], { env: ENV, cwd: dir })).rejects.toMatchObject({
      code: 'SANDBOX_SETUP_FAILED',
    });
    await expect(sandbox.run(['/etc/passwd'], { env: ENV, cwd: dir })).rejects.toMatchObject({
      code: 'SANDBOX_SETUP_FAILED',
    });
    await expect(sandbox.run(['true'], { env: ENV, cwd: join(dir, 'missing') })).rejects.toMatchObject({
      code: 'SANDBOX_SETUP_FAILED',
    });
    expect(await namespaceOf(sandbox, dir)).toBe(before);
  });

  it('an aborted command ends its sandbox, every process of it, at once; the entry goes on in a new one', async () => {
    const { sandbox } = await sandboxIn();
    const dir = await sandbox.makePrivateDir();
    const before = await namespaceOf(sandbox, dir);
    const controller = new AbortController();
    const reason = new Error('stop now');
    const started = Date.now();
    setTimeout(() => controller.abort(reason), 300);
    // A child in a session of its own, a grandchild detached from both: none of them survives.
    const running = sh(sandbox, dir, 'setsid sh -c "sleep 60 & sleep 60" & sleep 60', { signal: controller.signal });
    await expect(running).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(processesInNamespace(before)).toEqual([]);
    const after = await namespaceOf(sandbox, dir);
    expect(after).not.toBe(before);
    await expect(sh(sandbox, dir, 'echo fine')).resolves.toMatchObject({ code: 0 });
  });

  it('never reads through what a command puts at its output files: a link to a host file, a FIFO or a folder ends the sandbox, not the host', async () => {
    const { sandbox } = await sandboxIn();
    const dir = await sandbox.makePrivateDir();
    const canaryDir = await tempDir();
    const canary = join(canaryDir, 'canary');
    const secret = `canary-${randomBytes(16).toString('hex')}`;
    await writeFile(canary, secret);
    const linked = await sh(sandbox, dir, `for f in ${SCRATCH}/*; do rm -f "$f"; ln -s ${canary} "$f"; done; echo out`);
    expect(linked.code).toBe(128 + 9);
    expect(linked.stderr.toString()).toContain('the sandbox ended before the command did');
    expect(`${linked.stdout}${linked.stderr}`).not.toContain(secret);

    const started = Date.now();
    const fifo = await sh(sandbox, dir, `for f in ${SCRATCH}/*; do rm -f "$f"; mkfifo "$f"; done; echo out`);
    expect(fifo.code).toBe(128 + 9);
    expect(Date.now() - started).toBeLessThan(5000);
    const folder = await sh(sandbox, dir, `for f in ${SCRATCH}/*; do rm -f "$f"; mkdir "$f"; done; echo out`);
    expect(folder.code).toBe(128 + 9);
    await expect(sh(sandbox, dir, 'echo fine')).resolves.toMatchObject({ code: 0, stdout: Buffer.from('fine\n') });
  });

  it("cannot write the host's next command, and a record it forges on the channel ends the sandbox instead of passing", async () => {
    const { sandbox } = await sandboxIn();
    const dir = await sandbox.makePrivateDir();
    const tried = await sh(
      sandbox,
      dir,
      `for n in $(seq 1 50); do echo 'echo pwned' > ${CONTROL}/$n.sh 2>/dev/null && echo wrote; done; ls ${CONTROL} >/dev/null && echo listed`,
    );
    expect(tried.stdout.toString()).toBe('listed\n');
    await expect(sh(sandbox, dir, 'echo mine')).resolves.toMatchObject({ code: 0, stdout: Buffer.from('mine\n') });

    // The supervisor's standard output is the channel. Its /proc/<pid>/fd/1 cannot be opened
    // (a socket), but pidfd_getfd(2) takes a copy where the kernel lets a process of the same
    // account trace its parent (perl-base is in every Debian). A record it forges there ends
    // the sandbox; it is never read as a result.
    const perl = [
      'my $p = syscall(434, getppid(), 0);',
      'my $fd = $p < 0 ? -1 : syscall(438, $p, 1, 0);',
      'if ($fd < 0) { print "refused\\n"; exit 0 }',
      'open(my $fh, ">&=", $fd) or die; syswrite($fh, "done 99999 0\\n"); sleep 5; print "late\\n";',
    ].join(' ');
    const forged = await sandbox.run(['perl', '-e', perl], { env: ENV, cwd: dir });
    if (forged.stdout.toString() !== 'refused\n') {
      expect(forged.code).toBe(128 + 9);
      expect(forged.stderr.toString()).toContain('the sandbox ended before the command did');
      expect(forged.stdout.toString()).not.toContain('late');
    }
    await expect(sh(sandbox, dir, 'echo after')).resolves.toMatchObject({ code: 0, stdout: Buffer.from('after\n') });
  });
});
