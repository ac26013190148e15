import { execFileSync } from 'node:child_process';
import { createCipheriv, createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';

/** Median of a list of numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export async function time(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

/**
 * The children's user + system time, in ms, from output that ends with what the shell's
 * `times` printed: its last line ("0m0.600s 0m0.370s") is the CPU of every child the shell
 * waited for.
 */
export function childrenCpuMs(times: string): number {
  const line = times.trim().split('\n').at(-1) ?? '';
  const seconds = [...line.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  if (seconds.length !== 2) throw new Error(`unexpected output of times: ${JSON.stringify(times)}`);
  return (seconds[0]! + seconds[1]!) * 1000;
}

/**
 * Writes every dirty page to disk (`sync`), outside any timing: each timed write then starts
 * with none left by the one before, whose writeback would otherwise land in its time.
 */
export function flushPageCache(): void {
  execFileSync('sync');
}

/** xorshift32: a fast, deterministic stream of 32-bit numbers, good enough for sizes and bytes. */
export function xorshift(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state;
  };
}

/** A deterministic tree of `count` files with sizes in [minBytes, maxBytes], nested two levels deep. */
export function syntheticTree(count: number, minBytes: number, maxBytes: number, seed = 1): Map<string, Buffer> {
  const next = xorshift(seed);
  const files = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    const size = minBytes + (next() % (maxBytes - minBytes + 1));
    const data = Buffer.allocUnsafe(size);
    for (let j = 0; j + 4 <= size; j += 4) data.writeUInt32LE(next(), j);
    const path = `d${String(i % 20).padStart(2, '0')}/e${String(Math.floor(i / 20) % 25).padStart(2, '0')}/f${String(i).padStart(5, '0')}.bin`;
    files.set(path, data);
  }
  return files;
}

/**
 * Source-like files under `src/`: words from a small vocabulary with some random tokens,
 * `minKiB` to `minKiB` + 18 KiB each, in 40 folders (the workspace the bundling and
 * extraction benches share).
 */
export function sourceLikeFiles(count: number, seed = 3, minKiB = 1): Map<string, Buffer> {
  const next = xorshift(seed);
  const words =
    'const let function return import export from await async class extends new this if else for while of in true false null undefined string number object'.split(
      ' ',
    );
  const files = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    const size = minKiB * 1024 + (next() % (18 * 1024));
    const parts: string[] = [];
    let length = 0;
    while (length < size) {
      const word = next() % 7 === 0 ? next().toString(36) : words[next() % words.length]!;
      parts.push(word);
      length += word.length + 1;
    }
    files.set(
      `src/m${String(i % 40).padStart(2, '0')}/f${String(i).padStart(5, '0')}.ts`,
      Buffer.from(parts.join(' ').slice(0, size)),
    );
  }
  return files;
}

/** Writes `files` under `root` one after another: the tree a bench case reads. Returns its size in bytes. */
export async function writeFiles(root: string, files: Map<string, Buffer>): Promise<number> {
  let bytes = 0;
  for (const [path, data] of files) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), data);
    bytes += data.length;
  }
  return bytes;
}

/**
 * A plain writer into `root`: each folder made once (on first use), then the file. The same
 * pattern as the content store's fill writer, minus hashing and publication, so a
 * comparison of the two measures what the store adds.
 */
function plainWriter(root: string): (path: string, data: Buffer) => Promise<void> {
  const folders = new Map<string, Promise<unknown>>();
  return async (path, data) => {
    const abs = join(root, path);
    const folder = dirname(abs);
    let made = folders.get(folder);
    if (!made) {
      made = mkdir(folder, { recursive: true });
      folders.set(folder, made);
    }
    await made;
    await writeFile(abs, data);
  };
}

/** Writes a tree into `root` the plain way, 32 writes in flight. */
export function writeTree(root: string, files: Map<string, Buffer>): Promise<void> {
  return writeAll(files, plainWriter(root));
}

/** Calls `write` for every file, 32 in flight. */
export async function writeAll(
  files: Map<string, Buffer>,
  write: (path: string, data: Buffer) => Promise<void>,
): Promise<void> {
  const entries = [...files];
  let next = 0;
  const worker = async () => {
    while (next < entries.length) {
      const [path, data] = entries[next++]!;
      await write(path, data);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

export function report(name: string, ours: number, baseline: number, unit: string, target: string): void {
  const ratio = ours / baseline;
  console.log(
    `${name}: ours ${ours.toFixed(2)} ${unit}, baseline ${baseline.toFixed(2)} ${unit}, ratio ${ratio.toFixed(3)} (target ${target})`,
  );
}

/**
 * Text-like content of `size` bytes: base64 lines of an AES-CTR keystream under a key made
 * from `label` (deterministic, fast, and about as compressible as prose-heavy source:
 * ~75% under zlib). `head` starts the content (a SKILL.md frontmatter, say).
 */
export function textContent(label: string, id: number, size: number, head = ''): Buffer {
  const key = createHash('sha256').update(label).digest().subarray(0, 16);
  const iv = Buffer.alloc(16);
  iv.writeUInt32BE(id >>> 0, 0);
  const random = createCipheriv('aes-128-ctr', key, iv).update(Buffer.alloc(Math.ceil((size * 3) / 4)));
  const body = random.toString('base64').replace(/(.{76})/g, '$1\n');
  return Buffer.from((head + body).slice(0, size), 'utf8');
}
