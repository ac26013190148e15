import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdir, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface LinkSwapper {
  /** Stops the racing process; resolves with how many exchanges it made. */
  stop(): Promise<number>;
}

/**
 * The racer a folder's owner runs against a reader: a separate process that exchanges two
 * names atomically (`renameat2(RENAME_EXCHANGE)`), as fast as it can, until stopped. Give
 * it a real folder and a link to a folder elsewhere: at every instant the folder's name
 * is one or the other, which is what defeats "check the path, then open it by name".
 * A small C program (compiled once per machine with `cc`; some hundred thousand exchanges a
 * second, so the name flips between any two system calls of the reader). It stops by
 * itself after `maxSeconds`, so a test that dies cannot leave it running.
 */
export async function startLinkSwapper(
  a: string,
  b: string,
  options: { maxSeconds?: number } = {},
): Promise<LinkSwapper> {
  const binary = await swapperBinary();
  const child = spawn(binary, [a, b, String(options.maxSeconds ?? 60)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve(code));
  });
  // Wait until it runs, so the caller's reads really race it.
  await new Promise<void>((resolve, reject) => {
    const poll = setInterval(() => {
      if (stdout.includes('ready\n')) {
        clearInterval(poll);
        resolve();
      }
    }, 5);
    exited.then(
      (code) => {
        clearInterval(poll);
        reject(new Error(`the link swapper exited (${code}) before it started: ${stderr}`));
      },
      (error: unknown) => {
        clearInterval(poll);
        reject(error);
      },
    );
  });
  return {
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      if (code !== 0) throw new Error(`the link swapper failed (${code}): ${stderr}`);
      return Number(stdout.split('\n')[1]);
    },
  };
}

const SOURCE = String.raw`
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE 2
#endif
static volatile sig_atomic_t stop = 0;
static void on_term(int sig) { (void)sig; stop = 1; }
static int exchange(const char *a, const char *b) { return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE); }
int main(int argc, char **argv) {
  if (argc != 4) return 64;
  signal(SIGTERM, on_term);
  time_t deadline = time(NULL) + (time_t)atof(argv[3]) + 1;
  long count = 0;
  printf("ready\n");
  fflush(stdout);
  while (!stop && time(NULL) < deadline) {
    for (int i = 0; i < 1000; i++) {
      if (exchange(argv[1], argv[2]) != 0) { perror("renameat2"); return 2; }
      count++;
    }
  }
  /* An even count leaves both names where they started. */
  if (count % 2) { exchange(argv[1], argv[2]); count++; }
  printf("%ld\n", count);
  return 0;
}
`;

let compiled: Promise<string> | undefined;
/** The racer's binary, built once per machine and source (an atomic rename publishes it). */
function swapperBinary(): Promise<string> {
  compiled ??= (async () => {
    const dir = join(tmpdir(), 'agentproto-testkit-bin');
    const binary = join(dir, `link-swapper-${createHash('sha256').update(SOURCE).digest('hex').slice(0, 16)}`);
    if (
      await access(binary).then(
        () => true,
        () => false,
      )
    )
      return binary;
    await mkdir(dir, { recursive: true });
    const unique = `${binary}.${process.pid}.${Date.now()}`;
    await writeFile(`${unique}.c`, SOURCE);
    await promisify(execFile)('cc', ['-O2', '-o', unique, `${unique}.c`]);
    await rename(unique, binary);
    return binary;
  })();
  return compiled;
}
