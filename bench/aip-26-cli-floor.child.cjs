/**
 * A Node process that does only the work of bundling a folder: what `agentproto code bundle`
 * is measured against besides tar | pigz. It starts Node, lists `<root>/src` in GNU tar's
 * `--sort=name` order, writes a ustar header for each folder and file, reads each file (open,
 * fstat, read, close) into 1 MiB blocks, deflates them with defineCode's settings (level 6,
 * memLevel 9, independent blocks, four in flight on the thread pool), and writes the gzip to
 * `<out>` with its SHA-256, as the CLI does. It checks nothing: no path rules, no proof that
 * a file is inside the folder, no limits, no manifest, no partial file. So whatever the CLI
 * takes above it is the cost of its own code and checks; whatever this takes above
 * tar | pigz, Node's.
 *
 * Plain CommonJS run by `node` itself (no tsx, no ES module loader), as the CLI's bin is.
 * Usage: node aip-26-cli-floor.child.cjs <root> <out>
 */
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const zlib = require('node:zlib');

const [root, out] = process.argv.slice(2);
const BLOCK = 1 << 20;
const LANES = 4;

/** Paths under `rel` in GNU tar --sort=name order: each folder's names by their bytes, a folder before its subtree. */
function walk(rel, entries) {
  const names = fs.readdirSync(`${root}/${rel}`, { withFileTypes: true });
  names.sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
  for (const dirent of names) {
    const path = `${rel}/${dirent.name}`;
    if (dirent.isDirectory()) {
      entries.push({ path, folder: true });
      walk(path, entries);
    } else entries.push({ path, folder: false });
  }
  return entries;
}

/** A ustar header: name (prefix split past 100 bytes), mode, size, mtime 0, type, checksum. */
function header(name, folder, mode, size) {
  const h = Buffer.alloc(512);
  let prefix = '';
  if (name.length > 100) {
    const cut = name.lastIndexOf('/', 155);
    prefix = name.slice(0, cut);
    name = name.slice(cut + 1);
  }
  h.write(name, 0);
  h.write(`${mode.toString(8).padStart(7, '0')}\0`, 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  h.write('00000000000\0', 136);
  h.write('        ', 148);
  h.write(folder ? '5' : '0', 156);
  h.write('ustar\x0000', 257);
  h.write(prefix, 345);
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}

const fd = fs.openSync(out, 'w');
const hash = createHash('sha256');
let written = 0;
const write = (chunk) => {
  hash.update(chunk);
  written += fs.writeSync(fd, chunk, 0, chunk.length, written);
};

const idle = [];
for (let i = 0; i < LANES; i++)
  idle.push(
    zlib.createDeflateRaw({ level: 6, memLevel: 9, chunkSize: BLOCK + 64 * 1024, flush: zlib.constants.Z_SYNC_FLUSH }),
  );
const spare = [];
const pending = [];
let block = Buffer.allocUnsafe(BLOCK);
let used = 0;
let crc = 0;
let total = 0;

/** Sends the filled part of the block to a lane; the last one goes to a stream that finishes. */
function cut(last) {
  const data = block.subarray(0, used);
  const filled = block;
  crc = zlib.crc32(data, crc);
  total += used;
  const lane = last ? zlib.createDeflateRaw({ level: 6, memLevel: 9, chunkSize: BLOCK + 64 * 1024 }) : idle.pop();
  const chunks = [];
  const onData = (chunk) => chunks.push(chunk);
  lane.on('data', onData);
  pending.push(
    new Promise((resolve, reject) => {
      lane.once('error', reject);
      const done = () => {
        lane.off('data', onData);
        lane.off('error', reject);
        spare.push(filled);
        resolve({ chunks, lane, last });
      };
      if (last) {
        lane.write(data);
        lane.flush(zlib.constants.Z_FINISH, done);
      } else lane.write(data, done);
    }),
  );
  block = spare.pop() ?? Buffer.allocUnsafe(BLOCK);
  used = 0;
}

/** Writes the oldest block's output, then gives its lane back (its output buffer is written over from its start). */
async function writeOldest() {
  const { chunks, lane, last } = await pending.shift();
  for (const chunk of chunks) write(chunk);
  if (last) return lane.close();
  lane.reset();
  lane._outOffset = 0;
  idle.push(lane);
}

async function room() {
  if (used === BLOCK) {
    if (idle.length === 0) await writeOldest();
    cut(false);
  }
}

async function append(bytes) {
  for (let at = 0; at < bytes.length; ) {
    const n = bytes.copy(block, used, at);
    used += n;
    at += n;
    await room();
  }
}

async function main() {
  write(Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]));
  const entries = [{ path: 'src', folder: true }, ...walk('src', [])];
  for (const { path, folder } of entries) {
    if (folder) {
      await append(header(`${path}/`, true, 0o755, 0));
      continue;
    }
    const file = fs.openSync(`${root}/${path}`, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    const { size, mode } = fs.fstatSync(file);
    await append(header(path, false, mode & 0o111 ? 0o755 : 0o644, size));
    for (let at = 0; at < size; ) {
      const n = fs.readSync(file, block, used, Math.min(BLOCK - used, size - at), at);
      if (n === 0) throw new Error(`${path} shrank while it was read`);
      used += n;
      at += n;
      await room();
    }
    fs.closeSync(file);
    await append(Buffer.alloc((512 - (size % 512)) % 512));
  }
  await append(Buffer.alloc(1024));
  if (idle.length === 0) await writeOldest();
  cut(true);
  while (pending.length > 0) await writeOldest();
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(total >>> 0, 4);
  write(trailer);
  fs.closeSync(fd);
  process.stdout.write(`${hash.digest('hex')}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exitCode = 1;
});
