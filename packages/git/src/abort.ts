import { GitAbortedError } from './errors.js';

/** Checked between steps: an aborted operation starts nothing new. */
export function throwIfAborted(signal: AbortSignal | undefined, operation: string): void {
  if (signal?.aborted) throw new GitAbortedError(operation, signal.reason);
}

/**
 * Settles with `promise`, or rejects with GitAbortedError as soon as `signal` fires.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined, operation: string): Promise<T> {
  return untilAborted(promise, signal).catch((error: unknown) => {
    throw signal?.aborted && error === signal.reason ? new GitAbortedError(operation, signal.reason) : error;
  });
}

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as it fires. The
 * losing promise gets a no-op handler, so its later rejection is not reported as unhandled.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => undefined);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Waits for `promise` to settle, at most `ms` milliseconds; never rejects. */
export async function settled(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([
    promise.then(
      () => undefined,
      () => undefined,
    ),
    timeout,
  ]);
  clearTimeout(timer);
}
