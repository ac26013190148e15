// Uses every kind of thread the store starts, then returns: the process must exit by itself
// (thread-batches.test.ts starts it and waits for its exit).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileHasher } from '../../src/file-hasher.js';
import { fileWriter } from '../../src/file-writer.js';
import { ThreadBatches } from '../../src/thread-batches.js';

const dir = mkdtempSync(join(tmpdir(), 'agentproto-threads-'));
writeFileSync(join(dir, 'a'), 'a');
writeFileSync(join(dir, 'b'), 'bb');
const threads = new ThreadBatches<number, number>({
  source: `require('node:worker_threads').parentPort.on('message', (items) => require('node:worker_threads').parentPort.postMessage(items));`,
  threads: 3,
  maxItems: 4,
  message: (items) => ({ value: items }),
});
const answers = await Promise.all([
  fileHasher.hash(join(dir, 'a'), 1),
  fileHasher.hash(join(dir, 'b'), 2),
  fileWriter.write(join(dir, 'c'), Buffer.from('ccc'), 0o644),
  fileWriter.write(join(dir, 'd'), Buffer.from('dddd'), 0o644),
  threads.run(1),
  threads.run(2),
]);
rmSync(dir, { recursive: true, force: true });
console.log(answers.every((answer) => answer !== undefined) ? 'answered' : 'unanswered');
