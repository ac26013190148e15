import { Worker } from 'node:worker_threads';

/** How one case ended. `out-of-memory` and `timed-out` mean the worker had to die: the case broke its bound. */
export type BoundedOutcome =
  | { name: string; status: 'returned'; value: unknown; ms: number }
  | {
      name: string;
      status: 'threw';
      error: { name: string; message: string; code?: string; causeCode?: string; stack: string };
      ms: number;
    }
  | { name: string; status: 'out-of-memory'; ms: number }
  | { name: string; status: 'timed-out'; ms: number }
  | { name: string; status: 'crashed'; message: string; ms: number };

export interface RunBoundedOptions<I> {
  /** A module (path or file: URL) exporting `exportName(input)`, sync or async. TypeScript is fine. */
  module: string | URL;
  exportName: string;
  cases: readonly { name: string; input: I }[];
  /** The worker's old-generation heap, per case at most (the worker is replaced after a death). Default 256. */
  maxOldGenerationSizeMb?: number;
  /** Wall time per case. Default 15 s. */
  timeoutMs?: number;
}

/**
 * Runs each case in a worker thread with a bounded heap and a time limit, one after the
 * other, so a case that exhausts memory kills only the worker (V8 aborts the heap of that
 * isolate, not the process) and is reported as `out-of-memory` instead of taking the test
 * runner down; a case past its time is `timed-out` and its worker is terminated. The next
 * case gets a fresh worker after either. Inputs and results cross by structured clone.
 */
export async function runBounded<I>(options: RunBoundedOptions<I>): Promise<BoundedOutcome[]> {
  const outcomes: BoundedOutcome[] = [];
  const module = options.module instanceof URL ? options.module.href : new URL(options.module, 'file:///').href;
  let worker: { thread: Worker; ready: Promise<void> } | undefined;
  const start = () => {
    const thread = new Worker(new URL('./bounded-worker-entry.mjs', import.meta.url), {
      workerData: { module, exportName: options.exportName },
      execArgv: ['--conditions=@agentproto/source'],
      resourceLimits: { maxOldGenerationSizeMb: options.maxOldGenerationSizeMb ?? 256 },
    });
    const ready = new Promise<void>((resolve, reject) => {
      const onMessage = (message: { ready?: boolean }) => {
        if (message.ready !== true) return;
        thread.off('message', onMessage);
        thread.off('error', reject);
        resolve();
      };
      thread.on('message', onMessage);
      thread.once('error', reject);
    });
    return { thread, ready };
  };
  try {
    for (const [index, { name, input }] of options.cases.entries()) {
      worker ??= start();
      await worker.ready;
      const { thread } = worker;
      const began = performance.now();
      const outcome = await new Promise<BoundedOutcome>((resolve) => {
        const timer = setTimeout(() => {
          done();
          resolve({ name, status: 'timed-out', ms: performance.now() - began });
        }, options.timeoutMs ?? 15_000);
        const onMessage = (message: {
          index: number;
          status: 'returned' | 'threw';
          value?: unknown;
          error?: never;
          ms: number;
        }) => {
          if (message.index !== index) return;
          done();
          resolve(
            message.status === 'returned'
              ? { name, status: 'returned', value: message.value, ms: message.ms }
              : { name, status: 'threw', error: message.error!, ms: message.ms },
          );
        };
        const onError = (error: Error & { code?: string }) => {
          done();
          const ms = performance.now() - began;
          resolve(
            error.code === 'ERR_WORKER_OUT_OF_MEMORY'
              ? { name, status: 'out-of-memory', ms }
              : { name, status: 'crashed', message: error.message, ms },
          );
        };
        const onExit = (code: number) => {
          done();
          resolve({
            name,
            status: 'crashed',
            message: `the worker exited with ${code}`,
            ms: performance.now() - began,
          });
        };
        const done = () => {
          clearTimeout(timer);
          thread.off('message', onMessage);
          thread.off('error', onError);
          thread.off('exit', onExit);
        };
        thread.on('message', onMessage);
        thread.on('error', onError);
        thread.on('exit', onExit);
        thread.postMessage({ index, input });
      });
      outcomes.push(outcome);
      if (outcome.status !== 'returned' && outcome.status !== 'threw') {
        await thread.terminate();
        worker = undefined;
      }
    }
  } finally {
    await worker?.thread.terminate();
  }
  return outcomes;
}
