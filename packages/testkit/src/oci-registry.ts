import { spawn, type ChildProcess } from 'node:child_process';
import { access, mkdir, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { tempDir } from './temp-dir.js';

export interface OciRegistryOptions {
  /** Path of the CNCF distribution binary; default `docker-registry` (Debian) or `registry` on PATH. */
  binary?: string;
  /** Extra top-level YAML for the registry's configuration (an `auth:` block, say). */
  extraConfig?: string;
  /** Where blobs and manifests live; default a fresh temp folder removed by `close`. */
  storageDir?: string;
}

export interface OciRegistry {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** `127.0.0.1:PORT`, the registry part of an artifact reference. */
  host: string;
  port: number;
  /** Filesystem storage root (`docker/registry/v2/...` below it). */
  storageDir: string;
  /** The file holding a blob's bytes, to tamper with it on disk. */
  blobPath(digest: string): string;
  /** What the registry has logged so far. */
  log(): string;
  /** Stops the registry (SIGTERM; SIGKILL after 5 s). Storage stays until `close`. */
  stop(): Promise<void>;
  /** Starts it again on the same port and storage, after `stop`. */
  restart(): Promise<void>;
  /** Stops it and removes its temp folder. */
  close(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 15_000;
const LOG_LIMIT = 256 * 1024;

/**
 * A real CNCF distribution registry (Debian's `docker-registry` package) on a free
 * 127.0.0.1 port, with filesystem storage and a configuration of its own in a temp folder;
 * /etc/docker/registry is never read. Deletes are enabled so tests can remove content.
 */
export async function startOciRegistry(options: OciRegistryOptions = {}): Promise<OciRegistry> {
  const binary = options.binary ?? (await findRegistryBinary());
  const dir = await tempDir('testkit-registry-');
  const storageDir = options.storageDir ?? join(dir.path, 'storage');
  await mkdir(storageDir, { recursive: true });
  const port = await freePort();
  const configPath = join(dir.path, 'config.yml');
  await writeFile(
    configPath,
    [
      'version: 0.1',
      'log:',
      '  level: info',
      '  accesslog:',
      '    disabled: true',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${JSON.stringify(storageDir)}`,
      '  delete:',
      '    enabled: true',
      '  cache:',
      // No in-memory blob descriptor cache: a test that edits storage on disk sees its edit served.
      '    blobdescriptor: ""',
      'http:',
      `  addr: 127.0.0.1:${port}`,
      '  secret: testkit-only-secret',
      options.extraConfig ?? '',
      '',
    ].join('\n'),
  );
  let output = '';
  let child: ChildProcess | undefined;
  const url = `http://127.0.0.1:${port}`;

  const launch = async () => {
    const started = spawn(binary, ['serve', configPath], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    const append = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-LOG_LIMIT);
    };
    started.stdout!.on('data', append);
    started.stderr!.on('data', append);
    child = started;
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    for (;;) {
      if (started.exitCode !== null) throw new Error(`the registry exited with ${started.exitCode}:\n${output}`);
      if ((await probe(url)) !== undefined) return;
      if (Date.now() > deadline) {
        started.kill('SIGKILL');
        throw new Error(`the registry did not answer within ${STARTUP_TIMEOUT_MS} ms:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('close', resolve));
    running.kill('SIGTERM');
    const timer = setTimeout(() => running.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };

  try {
    await launch();
  } catch (error) {
    await stop();
    await dir.cleanup();
    throw error;
  }

  return {
    url,
    host: `127.0.0.1:${port}`,
    port,
    storageDir,
    blobPath(digest: string) {
      const hex = digest.replace(/^sha256:/, '');
      return join(storageDir, 'docker/registry/v2/blobs/sha256', hex.slice(0, 2), hex, 'data');
    },
    log: () => output,
    stop,
    restart: launch,
    async close() {
      await stop();
      await dir.cleanup();
    },
  };
}

/** The status of GET /v2/, or undefined when nothing answers yet. */
function probe(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = httpRequest(`${url}/v2/`, { timeout: 1_000 }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', () => resolve(undefined));
    req.on('timeout', () => {
      req.destroy();
      resolve(undefined);
    });
    req.end();
  });
}

async function findRegistryBinary(): Promise<string> {
  const folders = (process.env.PATH ?? '').split(':').filter(Boolean).concat(['/usr/bin', '/usr/local/bin']);
  for (const name of ['docker-registry', 'registry']) {
    for (const folder of folders) {
      try {
        await access(join(folder, name));
        return join(folder, name);
      } catch {
        // next
      }
    }
  }
  throw new Error('no CNCF distribution registry found: install it with `sudo apt-get install -y docker-registry`');
}
