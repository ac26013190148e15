import { Worker } from 'node:worker_threads';

export interface ThreadBatchesOptions<Item> {
  /** The worker's code, plain JavaScript evaluated in the worker (the same from source and build). */
  source: string;
  /** Threads at most, each started on first need. */
  threads: number;
  /** Items at most in one message. */
  maxItems: number;
  /** What an item weighs (its bytes, say), and what one message may weigh at most. */
  weigh?: (item: Item) => number;
  maxWeight?: number;
  /** The message for a batch, and what it transfers. */
  message: (items: Item[]) => { value: unknown; transfer?: ArrayBuffer[] };
  /**
   * The results in a thread's answer (by default the answer is the results): an answer may
   * carry more, such as a buffer handed back to be used again.
   */
  results?: (answer: unknown) => unknown[];
  /** Called when every item has been answered and nothing waits. */
  idle?: () => void;
}

/**
 * Batches at most sent to one thread and not answered yet. Past them items wait, holding
 * only what the caller passed: a caller that starts ten thousand writes at once gets no
 * more than this many copied batches per thread in memory (two 2 MiB buffers a writer thread).
 */
const QUEUED_BATCHES = 2;

/** Nice levels a thread goes below the process it runs in (see LOWER_PRIORITY). */
const THREAD_NICE_STEP = 10;

/**
 * Prepended to every thread's code: on Linux the thread lowers its own priority by 10 nice
 * levels (to 19 at most; raising it again would need a privilege, and a host already
 * running niced keeps its threads below itself). The threads only ever do what the thread
 * feeding them hands over, and that thread must run as soon as an answer wakes it: at the
 * same priority, with the threads keeping every core busy, the scheduler let it wait, the
 * threads ran dry, and up to a quarter of the cores' time went idle while a fill waited
 * for its writes. Publishing 10,000 files (317 MiB) on tmpfs through the writer threads:
 * 455 ms at the same priority, 444 ms niced, 426 ms niced with batches of 8 (medians of
 * twelve rounds, side by side in one process; see file-writer.ts for the batches).
 * Elsewhere (no /proc/thread-self) it does nothing.
 */
const LOWER_PRIORITY = `try {
  const os = require('node:os');
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  os.setPriority(tid, Math.min(19, os.getPriority(tid) + ${THREAD_NICE_STEP}));
} catch {}
`;

interface Waiting<Item, Result> {
  item: Item;
  resolve: (result: Result | undefined) => void;
}

interface Thread<Result> {
  worker: Worker;
  /** The resolvers of each batch sent and not answered yet, oldest first. */
  sent: ((result: Result | undefined) => void)[][];
}

/**
 * Hands items to worker threads in batches, a message each way per batch: an item waits
 * until a thread is idle (or a turn of the event loop, whichever comes later), or until a
 * full batch waits and a thread has room for it (see QUEUED_BATCHES), so a stream of items
 * goes as a few large messages rather than one per item, and every thread stays fed.
 * The worker answers each message with an array of results in the order of its items,
 * `null` for one it could not do. An item resolves `undefined` when its thread failed (an
 * error, an exit) before answering. Idle threads do not keep the process alive, and every
 * thread runs below the priority of the process (see LOWER_PRIORITY).
 */
export class ThreadBatches<Item, Result> {
  private readonly threads: Thread<Result>[] = [];
  private waiting: Waiting<Item, Result>[] = [];
  private waitingWeight = 0;
  private flushScheduled = false;

  constructor(private readonly options: ThreadBatchesOptions<Item>) {}

  run(item: Item): Promise<Result | undefined> {
    return new Promise((resolve) => {
      this.waiting.push({ item, resolve });
      this.waitingWeight += this.options.weigh ? this.options.weigh(item) : 0;
      if (this.full()) {
        const thread = this.idleThread() ?? this.leastBusy();
        if (thread || this.threads.length === 0) this.send(thread);
      } else if (!this.flushScheduled && this.idleThread()) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private full(): boolean {
    const { maxItems, maxWeight } = this.options;
    return this.waiting.length >= maxItems || (maxWeight !== undefined && this.waitingWeight >= maxWeight);
  }

  /** Sends what waits to the idle threads, a batch each; with no thread at all (none would start), answers it. */
  private flush(): void {
    this.flushScheduled = false;
    // Nothing waiting, no thread asked for: a thread started for nothing would only idle.
    while (this.waiting.length > 0) {
      const thread = this.idleThread();
      if (!thread) break;
      this.send(thread);
    }
    while (this.waiting.length > 0 && this.threads.length === 0) this.send(undefined);
  }

  /** A thread with nothing to do: a started one, or a new one while there may be more. */
  private idleThread(): Thread<Result> | undefined {
    const idle = this.threads.find((thread) => thread.sent.length === 0);
    if (idle || this.threads.length >= this.options.threads) return idle;
    return this.start();
  }

  /** The thread with the fewest batches outstanding, if it has fewer than QUEUED_BATCHES. */
  private leastBusy(): Thread<Result> | undefined {
    let least: Thread<Result> | undefined;
    for (const thread of this.threads) if (!least || thread.sent.length < least.sent.length) least = thread;
    return least && least.sent.length < QUEUED_BATCHES ? least : undefined;
  }

  /** Sends the oldest waiting items, a batch's worth, to `thread`. */
  private send(thread: Thread<Result> | undefined): void {
    const { maxItems, maxWeight, weigh } = this.options;
    let count = 0;
    let weight = 0;
    while (count < this.waiting.length && count < maxItems && (maxWeight === undefined || weight < maxWeight)) {
      const { item } = this.waiting[count]!;
      count += 1;
      weight += weigh ? weigh(item) : 0;
    }
    const batch = this.waiting.splice(0, count);
    this.waitingWeight -= weight;
    if (!thread) {
      for (const { resolve } of batch) resolve(undefined);
      return;
    }
    try {
      const { value, transfer } = this.options.message(batch.map((waiting) => waiting.item));
      thread.worker.postMessage(value, transfer);
    } catch {
      for (const { resolve } of batch) resolve(undefined);
      return;
    }
    if (thread.sent.length === 0) thread.worker.ref();
    thread.sent.push(batch.map((waiting) => waiting.resolve));
  }

  private start(): Thread<Result> | undefined {
    let worker: Worker;
    try {
      worker = new Worker(LOWER_PRIORITY + this.options.source, { eval: true });
    } catch {
      return undefined;
    }
    const thread: Thread<Result> = { worker, sent: [] };
    worker.on('message', (answer: unknown) => {
      const results = (this.options.results ? this.options.results(answer) : answer) as (Result | null)[];
      const resolves = thread.sent.shift() ?? [];
      for (const [i, resolve] of resolves.entries()) resolve(results[i] ?? undefined);
      if (this.waiting.length > 0) this.send(thread);
      else if (thread.sent.length === 0) {
        worker.unref();
        if (this.threads.every((other) => other.sent.length === 0)) this.options.idle?.();
      }
    });
    const fail = () => {
      const at = this.threads.indexOf(thread);
      if (at === -1) return;
      this.threads.splice(at, 1);
      for (const resolves of thread.sent.splice(0)) for (const resolve of resolves) resolve(undefined);
      // What waited for this thread goes to another (started if need be).
      if (this.waiting.length > 0 && !this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    // Only once its listeners are on: adding a 'message' listener refs the worker's port
    // again, and a thread that never had work would keep the process alive.
    worker.unref();
    this.threads.push(thread);
    return thread;
  }
}
