// The body of a worker started by runBounded (bounded-worker.ts): loads TypeScript through
// tsx, imports the module under test, and runs one case at a time on request. Plain
// JavaScript, because a worker thread does not inherit the test runner's TypeScript loader.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const target = (await import(workerData.module))[workerData.exportName];
if (typeof target !== 'function')
  throw new TypeError(`${workerData.module} exports no function ${workerData.exportName}`);

parentPort.on('message', async ({ index, input }) => {
  const started = performance.now();
  try {
    const value = await target(input);
    parentPort.postMessage({ index, status: 'returned', value, ms: performance.now() - started });
  } catch (error) {
    const { name, message, code } = error ?? {};
    const cause = error?.cause;
    parentPort.postMessage({
      index,
      status: 'threw',
      // The first frames of the stack: an error without a code is a bug, and its frames say where.
      error: {
        name: String(name),
        message: String(message),
        code: code === undefined ? undefined : String(code),
        causeCode: cause?.code === undefined ? undefined : String(cause.code),
        stack: String(error?.stack ?? '')
          .split('\n')
          .slice(0, 6)
          .join('\n'),
      },
      ms: performance.now() - started,
    });
  }
});
parentPort.postMessage({ ready: true });
