import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';

/**
 * A temporary folder holding a plugin root (`plugin/`) and a sibling folder outside it
 * (`outside/secret.txt`), so a link can be pointed out of the root at something that exists.
 */
export interface PluginSandbox {
  base: string;
  root: string;
  outside: string;
  file(rel: string, content?: string | Uint8Array): string;
  dir(rel: string): string;
  link(rel: string, target: string): string;
  fifo(rel: string): string;
  socket(rel: string): Promise<string>;
  remove(): Promise<void>;
}

/** A sandbox maker for one test file: every sandbox it makes is removed after each test. */
export function sandboxesRemovedAfterEach(): () => PluginSandbox {
  const boxes: PluginSandbox[] = [];
  afterEach(async () => {
    await Promise.all(boxes.splice(0).map((box) => box.remove()));
  });
  return () => {
    const box = pluginSandbox();
    boxes.push(box);
    return box;
  };
}

export function pluginSandbox(): PluginSandbox {
  const base = mkdtempSync(join(tmpdir(), 'ap-read-'));
  const root = join(base, 'plugin');
  const outside = join(base, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'outside');
  const servers: Server[] = [];
  const at = (rel: string): string => {
    const abs = join(root, rel);
    mkdirSync(dirname(abs), { recursive: true });
    return abs;
  };
  return {
    base,
    root,
    outside,
    file: (rel, content = rel) => {
      const abs = at(rel);
      writeFileSync(abs, content);
      return abs;
    },
    dir: (rel) => {
      const abs = join(root, rel);
      mkdirSync(abs, { recursive: true });
      return abs;
    },
    link: (rel, target) => {
      const abs = at(rel);
      symlinkSync(target, abs);
      return abs;
    },
    fifo: (rel) => {
      const abs = at(rel);
      execFileSync('mkfifo', [abs]);
      return abs;
    },
    socket: (rel) => {
      const abs = at(rel);
      const server = createServer();
      servers.push(server);
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(abs, () => resolve(abs));
      });
    },
    remove: async () => {
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      rmSync(base, { recursive: true, force: true });
    },
  };
}
