import { execFile, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { type Server, createServer } from 'node:net';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from './support/run.js';
import { scratchFolders } from './support/scratch.js';

// `agentproto code run` runs the bundle through the AIP-17 runner, as a workspace manifest:
// isolated in bubblewrap unless --no-isolation says otherwise. Real bubblewrap, real
// processes, a real TCP server.

const scratch = scratchFolders();
/** The real bin, run by a child node from the TypeScript source. */
const BIN = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const marker = () => randomBytes(6).toString('hex');

/** A workspace with tool.yaml: one inline `file` holding `content`, run as `runValue` (the file itself by default). */
async function tool(
  content: string,
  extra = '',
  file = 'tool.js',
  runValue = file,
): Promise<{ dir: string; manifest: string; store: string[] }> {
  const dir = await scratch();
  await writeFile(
    join(dir, 'tool.yaml'),
    `kind: tool\nname: hello\ncode:\n  sources:\n    - inline: { path: ${file}, content: ${JSON.stringify(content)} }\nrun: ${runValue}\n${extra}`,
  );
  return { dir, manifest: join(dir, 'tool.yaml'), store: ['--store', join(dir, 'cache')] };
}

interface RunJson {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  durationMs: number;
  reason: { kind: string; code?: number | null; signal?: string | null };
  engine: string;
  downgraded: boolean;
  isolated: boolean;
  enforcement: Record<string, string>;
}

const READ_CANARY = `const fs = require('fs');
try { console.log('READ ' + fs.readFileSync(process.env.CANARY, 'utf8')); }
catch (error) { console.log('denied ' + error.code); process.exit(3); }`;

describe('code run: isolated by default', () => {
  it('a bundle cannot read a canary in the home folder; with --no-isolation it can', async () => {
    const home = join(homedir(), `.agentproto-cli-canary-${marker()}`);
    const secret = `CANARY-${marker()}`;
    await mkdir(home, { recursive: true });
    try {
      await writeFile(join(home, 'secret.txt'), secret);
      const { manifest, store } = await tool(READ_CANARY);
      const args = ['code', 'run', manifest, '--env', `CANARY=${join(home, 'secret.txt')}`, ...store];
      const isolated = await run(args);
      expect(isolated.stdout).toBe('denied ENOENT\n');
      expect(isolated.stdout).not.toContain(secret);
      expect(isolated.code).toBe(1);
      expect(isolated.stderr).toBe('agentproto: code run: the program exited with status 3\n');

      const bare = await run([...args, '--no-isolation', '--json']);
      expect(bare.code, bare.stderr).toBe(0);
      const report = JSON.parse(bare.stdout) as RunJson;
      expect(report).toMatchObject({ stdout: `READ ${secret}\n`, isolated: false, engine: 'subprocess' });
      expect(report.enforcement).toEqual({ memory_mb: 'unenforced', timeout_ms: 'enforced', cpu_ms: 'uncapped' });
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it('--json keeps the old fields and adds reason, engine, downgraded and enforcement', async () => {
    const { manifest, store } = await tool('console.log("hi")');
    const outcome = await run(['code', 'run', manifest, ...store, '--json']);
    expect(outcome.code, outcome.stderr).toBe(0);
    const report = JSON.parse(outcome.stdout) as RunJson;
    expect(report).toMatchObject({
      exitCode: 0,
      signal: null,
      timedOut: false,
      stdout: 'hi\n',
      stderr: '',
      reason: { kind: 'exit', code: 0 },
      engine: 'subprocess',
      downgraded: false,
      isolated: true,
      enforcement: { memory_mb: 'per-process', timeout_ms: 'enforced', cpu_ms: 'uncapped' },
    });
    expect(report.durationMs).toBeGreaterThan(0);
  });

  it('a python run file runs isolated, the system python3 found in the sandbox', async () => {
    const { manifest, store } = await tool('import os\nprint(os.getcwd())\n', '', 'main.py', 'python3 main.py');
    const outcome = await run(['code', 'run', manifest, ...store, '--env', 'PATH=/usr/bin:/bin']);
    expect(outcome, outcome.stderr).toMatchObject({ code: 0, stdout: '/bundle\n' });
  });
});

describe('code run: no network unless --egress grants it', () => {
  let server: Server;
  let port: number;
  const greeting = `HELLO-${marker()}`;
  beforeAll(async () => {
    server = createServer((socket) => socket.end(greeting));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** A direct connection to the port, then a CONNECT through the proxy when the env names one. */
  const CLIENT = `
import { connect } from 'node:net';
const port = Number(process.env.PORT);
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

  it('the manifest asking for a host grants nothing by itself: one line says which host and the flag', async () => {
    const { manifest, store } = await tool(CLIENT, `network: { egress: ["127.0.0.1:${port}"] }\n`, 'client.mjs');
    const outcome = await run(['code', 'run', manifest, '--env', `PORT=${port}`, ...store]);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toMatch(/^direct: error E[A-Z]+\n$/);
    expect(outcome.stdout).not.toContain(greeting);
    expect(outcome.stderr).toBe(
      `note: the manifest asks for network access to 127.0.0.1:${port}; the run has no network but what you grant: --egress 127.0.0.1:${port}\n`,
    );
  });

  it('--egress HOST:PORT reaches that server through the proxy, and nothing directly', async () => {
    const { manifest, store } = await tool(CLIENT, `network: { egress: ["127.0.0.1:${port}"] }\n`, 'client.mjs');
    const outcome = await run([
      'code',
      'run',
      manifest,
      '--env',
      `PORT=${port}`,
      '--egress',
      `127.0.0.1:${port}`,
      ...store,
    ]);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stderr).toBe('');
    expect(outcome.stdout).toMatch(/^direct: error E[A-Z]+$/m);
    expect(outcome.stdout).toMatch(new RegExp(`^proxy: got HTTP/1.1 200 Connection Established +${greeting}`, 'm'));
  });

  it('--egress for another port is refused by the proxy', async () => {
    const { manifest, store } = await tool(CLIENT, '', 'client.mjs');
    const other = `127.0.0.1:${port === 65535 ? 1 : port + 1}`;
    const outcome = await run(['code', 'run', manifest, '--env', `PORT=${port}`, '--egress', other, ...store]);
    expect(outcome.stdout).toMatch(/^proxy: got HTTP\/1.1 403 Forbidden/m);
    expect(outcome.stdout).not.toContain(greeting);
  });

  it('--egress with --no-isolation is a wrong command line: nothing would hold the program to those hosts', async () => {
    const { manifest, store } = await tool(CLIENT, '', 'client.mjs');
    const outcome = await run(['code', 'run', manifest, '--egress', 'example.com', '--no-isolation', ...store]);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(/^agentproto: code run: --egress grants hosts to an isolated run/);
  });
});

describe('code run: limits and the typed reason', () => {
  it('timeout_ms: "timed out after N ms", reason timeout in --json', async () => {
    const { manifest, store } = await tool(
      'setTimeout(() => console.log("late"), 30000)',
      'runner: { limits: { timeout_ms: 500 } }\n',
    );
    const text = await run(['code', 'run', manifest, ...store]);
    expect(text.code).toBe(1);
    expect(text.stdout).toBe('');
    expect(text.stderr).toMatch(
      /^agentproto: code run: timed out after 500 ms\nhint: raise runner\.limits\.timeout_ms/,
    );
    const json = await run(['code', 'run', manifest, ...store, '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      reason: { kind: 'timeout' },
      timedOut: true,
      signal: 'SIGKILL',
      exitCode: null,
    });
  });

  it('memory_mb: "ran out of memory (memory_mb N)", reason memory in --json', async () => {
    const hog = 'const kept = []; for (;;) kept.push(Buffer.alloc(1 << 20, 1));';
    const { manifest, store } = await tool(hog, 'runner: { limits: { memory_mb: 96, timeout_ms: 60000 } }\n');
    const text = await run(['code', 'run', manifest, ...store]);
    expect(text.code).toBe(1);
    expect(text.stderr).toMatch(
      /^agentproto: code run: the program ran out of memory \(memory_mb 96\)\nhint: raise runner\.limits\.memory_mb/m,
    );
    const json = await run(['code', 'run', manifest, ...store, '--json']);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as RunJson;
    expect(report.reason.kind).toBe('memory');
    expect(report.enforcement.memory_mb).toBe('per-process');
  });

  it('cpu_ms: "used its CPU time (cpu_ms N)"', async () => {
    const { manifest, store } = await tool('for (;;) {}', 'runner: { limits: { cpu_ms: 1000, timeout_ms: 60000 } }\n');
    const json = await run(['code', 'run', manifest, ...store, '--json']);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as RunJson;
    expect(report.reason.kind).toBe('cpu');
    expect(report.enforcement.cpu_ms).toBe('per-process');
    expect(json.stderr).toMatch(/^agentproto: code run: the program used its CPU time \(cpu_ms 1000\)$/m);
  });

  it('a signal: "killed by SIGx"', async () => {
    const { manifest, store } = await tool('process.kill(process.pid, "SIGTERM"); setTimeout(() => {}, 5000)');
    const outcome = await run(['code', 'run', manifest, ...store]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toBe('agentproto: code run: the program was killed by SIGTERM\n');
  });
});

describe('code run: the runner block goes through defineRunner', () => {
  it('a bad runner block is refused with its pointer, before anything is bundled or run', async () => {
    // The missing local source would fail the bundling: the runner block is refused first.
    const { manifest, store } = await tool(
      'console.log("ran")',
      'runner: { engine: warp, limits: { timeout_ms: 1000 } }\n',
    );
    await writeFile(
      manifest,
      (await readFile(manifest, 'utf8')).replace('  sources:\n', '  sources:\n    - local: missing/\n'),
    );
    const outcome = await run(['code', 'run', manifest, ...store]);
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(/^agentproto: AIP17_RUNNER_INVALID: runner block invalid at \/runner\/engine: /);
    const json = await run(['code', 'run', manifest, ...store, '--json']);
    expect(JSON.parse(json.stdout).error).toMatchObject({
      code: 'AIP17_RUNNER_INVALID',
      message: expect.stringContaining('/runner/engine'),
    });
    // code check does not run the bundle; its own checks are unchanged.
    expect((await run(['code', 'check', manifest, ...store])).stderr).toContain('AIP26_SOURCE_UNRESOLVED');
  });

  it('engine: in-process from a workspace manifest runs as an isolated subprocess, with the warning on stderr', async () => {
    const { manifest, store } = await tool('console.log("ran")', 'runner: { engine: in-process }\n');
    const outcome = await run(['code', 'run', manifest, ...store, '--json']);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stderr).toBe(
      'warning: [runner] downgrading hello from engine=in-process → subprocess (origin=workspace cannot self-elevate)\n',
    );
    expect(JSON.parse(outcome.stdout)).toMatchObject({
      stdout: 'ran\n',
      engine: 'subprocess',
      downgraded: true,
      isolated: true,
    });
  });

  it('engine: sandbox runs on the local bubblewrap driver; another image is refused, naming the one there is', async () => {
    const { manifest, store } = await tool('console.log("boxed")', 'runner: { engine: sandbox }\n');
    const outcome = await run(['code', 'run', manifest, ...store, '--json']);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(JSON.parse(outcome.stdout)).toMatchObject({ stdout: 'boxed\n', engine: 'sandbox', downgraded: false });
    // The same block with --no-isolation is accepted, and runs as the bare subprocess it asked for.
    const bare = await run(['code', 'run', manifest, ...store, '--json', '--no-isolation']);
    expect(bare.code, bare.stderr).toBe(0);
    expect(JSON.parse(bare.stdout)).toMatchObject({ stdout: 'boxed\n', engine: 'subprocess', isolated: false });
    const other = await tool('console.log("boxed")', 'runner: { engine: sandbox, image: e2b-node }\n');
    const refused = await run(['code', 'run', other.manifest, ...other.store]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^agentproto: AIP17_IMAGE_UNKNOWN: .*e2b-node/);
    expect(refused.stderr).toContain('local-bubblewrap');
  });
});

describe('code run where bubblewrap cannot isolate', () => {
  const workspace = fileURLToPath(new URL('../../..', import.meta.url));

  const bwrap = (process.env.PATH ?? '/usr/bin:/bin')
    .split(delimiter)
    .map((folder) => join(folder, 'bwrap'))
    .find((path) => existsSync(path));

  /**
   * The real bin inside an outer bubblewrap, as account 1000 (not root, so the run's sandbox
   * runs as that account). With `refuse`, the outer user namespace forbids nested ones
   * (--disable-userns): the kernel itself refuses the run's sandbox (ENOSPC), as in some
   * containers. Without it, the same box runs the program: the refusal is what changes.
   */
  function inBox(dir: string, args: string[], refuse: boolean) {
    if (bwrap === undefined) throw new Error('these tests need bubblewrap (apt-get install bubblewrap)');
    const result = spawnSync(
      bwrap,
      [
        ...['--unshare-user', '--uid', '1000', '--gid', '1000', ...(refuse ? ['--disable-userns'] : [])],
        // /tmp is the box's own; the checkout (which may live under /tmp) and the test's folder are bound back.
        ...[
          '--dev-bind',
          '/',
          '/',
          '--tmpfs',
          '/tmp',
          '--ro-bind',
          workspace,
          workspace,
          '--ro-bind',
          dir,
          dir,
          '--chdir',
          workspace,
        ],
        '--',
        process.execPath,
        '--conditions=@agentproto/source',
        '--import',
        TSX,
        BIN,
        ...args,
      ],
      { encoding: 'utf8', timeout: 120_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' } },
    );
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  it('fails with SANDBOX_UNAVAILABLE, the reason and a hint naming --no-isolation and apt-get; never runs without', async () => {
    const { dir, manifest, store } = await tool('console.log("RAN")');
    // Account 1000 reads the manifest; the test's folder is root's own otherwise.
    await chmod(dir, 0o755);
    const outcome = inBox(dir, ['code', 'run', manifest, ...store], true);
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(
      /^agentproto: SANDBOX_UNAVAILABLE: bubblewrap cannot create namespaces on this machine .*ENOSPC/,
    );
    expect(outcome.stderr).toMatch(/^hint: .*--no-isolation/m);
    expect(outcome.stderr).not.toContain('RAN');
    const json = inBox(dir, ['code', 'run', manifest, ...store, '--json'], true);
    expect(json.code).toBe(1);
    const { error } = JSON.parse(json.stdout) as { error: { code: string; hint: string } };
    expect(error.code).toBe('SANDBOX_UNAVAILABLE');
    expect(error.hint).toContain('--no-isolation');
    // The control: the same box with nested user namespaces allowed runs the program isolated.
    const control = inBox(dir, ['code', 'run', manifest, ...store, '--json'], false);
    expect(control.code, control.stderr).toBe(0);
    expect(JSON.parse(control.stdout)).toMatchObject({ stdout: 'RAN\n', isolated: true });
    // Three CLI processes from source, one after another: a loaded machine takes over a minute.
  }, 240_000);

  it('the SANDBOX_UNAVAILABLE hint names the apt-get line when bubblewrap is missing', async () => {
    const { hintFor } = await import('../src/hints.js');
    const error = Object.assign(new Error('bubblewrap is not installed'), {
      code: 'SANDBOX_UNAVAILABLE',
      reason: 'bwrap-missing',
    });
    expect(hintFor(error, { group: 'code' })).toBe(
      'install what isolation needs: sudo apt-get install bubblewrap socat; or run without isolation with --no-isolation (the program then sees your files and network)',
    );
  });
});

describe('code run: Ctrl-C ends the run, not only the command', () => {
  it('SIGINT to agentproto ends every process of the run, removes its folder, and says so', async () => {
    // The program prints, then marks its start in its scratch folder (/tmp inside), which the
    // host can see: once the mark is there, the line is in the pipe (writes to a pipe are
    // synchronous), so the signal cannot come between the two.
    const { dir, manifest, store } = await tool(
      'console.log("started"); require("fs").writeFileSync("/tmp/started", ""); setInterval(() => {}, 1000)',
    );
    // The run folder goes under TMPDIR; nobody (the sandbox's account, as root) must traverse it.
    const temp = join(dir, 'temp');
    await mkdir(temp);
    for (const folder of [dir, temp]) await chmod(folder, 0o711);
    const child = spawn(
      process.execPath,
      ['--conditions=@agentproto/source', '--import', TSX, BIN, 'code', 'run', manifest, ...store],
      { env: { ...process.env, TMPDIR: temp }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const started = async () => {
        for (const name of await readdir(temp).catch(() => []))
          if (existsSync(join(temp, name, 'scratch', 'started'))) return true;
        return false;
      };
      while (!(await started())) {
        expect(child.exitCode, stderr).toBeNull();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      child.kill('SIGINT');
      expect(await exited).toBe(1);
      expect(stdout).toBe('started\n');
      expect(stderr).toBe('agentproto: code run: the run was stopped by SIGINT\n');
      // (tsx keeps its cache there too.)
      expect((await readdir(temp)).filter((name) => name.startsWith('agentproto-run-'))).toEqual([]);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('code run: a sandbox that cannot be set up', () => {
  it('as root, a runtime folder nobody can reach gets a hint naming where to install it and --no-isolation', async () => {
    const { hintFor } = await import('../src/hints.js');
    const detail = "bwrap: Can't find source path /root/.nvm/versions/node/v22.0.0: Permission denied";
    const error = Object.assign(new Error(`sandbox for "node" could not be set up: ${detail}`), {
      code: 'SANDBOX_SETUP_FAILED',
      program: 'node',
      detail,
    });
    expect(hintFor(error, { group: 'code' })).toMatch(/runs as nobody.*\/usr\/local.*--no-isolation$/);
    const other = Object.assign(new Error('sandbox for "node" could not be set up'), {
      code: 'SANDBOX_SETUP_FAILED',
      detail: 'the egress bridge did not come up',
    });
    expect(hintFor(other, { group: 'code' })).toBeUndefined();
  });
});

describe('code run: help and completion know the new flags', () => {
  it('help lists --egress and --no-isolation, and says what --no-isolation does not protect', async () => {
    const outcome = await run(['code', 'run', '--help']);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('--egress HOST[:PORT]');
    expect(outcome.stdout).toContain('--no-isolation');
    expect(outcome.stdout.replace(/\s+/g, ' ')).toContain('reads and writes whatever your user can');
  });

  it('bash completion offers them for code run', async () => {
    const dir = await scratch();
    const file = join(dir, 'agentproto.bash');
    await writeFile(file, (await run(['completion', 'bash'])).stdout);
    const words = ['agentproto', 'code', 'run', '--'];
    const { stdout } = await promisify(execFile)(
      'bash',
      [
        '-c',
        `source '${file}'; COMP_WORDS=(${words.join(' ')}); COMP_CWORD=3; _agentproto; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { encoding: 'utf8' },
    );
    expect(stdout.split('\n')).toEqual(expect.arrayContaining(['--egress', '--no-isolation']));
  });
});
