import { describe, expect, it } from 'vitest';
import { Waiter } from '../src/tar/waiter.js';

describe('Waiter: the waits of the bundle writer and its compressor', () => {
  it('gives every caller the same wait until the next wake, which ends it; a wake with no wait does nothing', async () => {
    const waiter = new Waiter();
    waiter.wake();
    expect(waiter.waiting).toBe(false);

    const first = waiter.wait();
    const second = waiter.wait();
    expect(second).toBe(first);
    expect(waiter.waiting).toBe(true);
    let ended = false;
    void first.then(() => (ended = true));
    await Promise.resolve();
    expect(ended).toBe(false);

    waiter.wake();
    expect(waiter.waiting).toBe(false);
    await first;
    expect(ended).toBe(true);

    // A new wait after a wake is another one, pending until the next wake.
    const third = waiter.wait();
    expect(third).not.toBe(first);
    let thirdEnded = false;
    void third.then(() => (thirdEnded = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(thirdEnded).toBe(false);
    waiter.wake();
    await third;
    expect(thirdEnded).toBe(true);
  });
});
