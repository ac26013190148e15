import { readFile, readdir } from 'node:fs/promises';
import { inspect } from 'node:util';

export interface ProcWatch {
  /** Stops polling; resolves with what was seen. */
  stop(): Promise<{ hits: string[]; processes: string[]; scans: number }>;
}

/**
 * Polls /proc/<pid>/cmdline and /proc/<pid>/environ of every process, as fast as it can,
 * until stopped: any canary found is reported with the process's command line. Catches
 * what git starts by itself (git-remote-http, ssh), which no host wrapper sees.
 */
export function watchProc(canaries: readonly string[]): ProcWatch {
  const hits: string[] = [];
  const processes = new Set<string>();
  let scans = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
      await Promise.all(
        pids.map(async (pid) => {
          const [cmdline, environ] = await Promise.all([
            readFile(`/proc/${pid}/cmdline`).catch(() => Buffer.alloc(0)),
            readFile(`/proc/${pid}/environ`).catch(() => Buffer.alloc(0)),
          ]);
          const command = cmdline.toString('utf8').split('\0').join(' ').trim();
          if (command !== '') processes.add(command);
          for (const text of [cmdline.toString('utf8'), environ.toString('utf8')]) {
            for (const canary of canaries) if (text.includes(canary)) hits.push(`${pid}: ${command}`);
          }
        }),
      );
      scans += 1;
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { hits, processes: [...processes], scans };
    },
  };
}

/** Every way an error gets printed or logged, causes and hidden properties included. */
export function renderings(error: unknown): string[] {
  const texts = [inspect(error, { depth: Infinity, showHidden: true }), JSON.stringify(error) ?? ''];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 10; depth += 1) {
    texts.push(current.message, current.stack ?? '', String(current));
    current = current.cause;
  }
  return texts;
}
