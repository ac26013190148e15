/**
 * One side's wait for the other: `wait()` gives a promise that the next `wake()` resolves
 * (the same one to every caller until then); a `wake()` with no wait does nothing.
 *
 * One class for every wait of the bundle writer and its compressor, rather than a resolve
 * function kept by each: V8 compiles a caller of a function against the functions that
 * one calls, and each wait has its own resolve function. Called for all of them from one
 * place, that call meets many in the first bundle already, and what was compiled for it
 * holds in the next. The ordered writer's `add`, which wakes the writer, had kept a resolve
 * function of the first bundle's, and threw its code away at the second bundle's first
 * wake, then compiled it again (2,000 files: 30-80 ms of compile, on one of two cores).
 */
export class Waiter {
  private promise: Promise<void> | undefined;
  private resolve: (() => void) | undefined;

  /** Whether a wait is on: `wait()` was called since the last `wake()`. */
  get waiting(): boolean {
    return this.promise !== undefined;
  }

  wait(): Promise<void> {
    this.promise ??= new Promise<void>((resolve) => (this.resolve = resolve));
    return this.promise;
  }

  wake(): void {
    const resolve = this.resolve;
    this.promise = undefined;
    this.resolve = undefined;
    resolve?.();
  }
}
