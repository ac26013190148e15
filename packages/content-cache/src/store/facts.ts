import { sha256Hex } from '../canonical-key.js';
import { RemoteFactMismatchError, StoreIOError } from '../errors.js';
import type { StoreCore } from './core.js';
import type { RemoteTier } from './remote-tier.js';

/** Marks a fact this store's callers learned themselves (see recall). */
const FACT_FROM = 'caller';

/** See ContentStore.remember. */
export async function rememberFact(
  core: StoreCore,
  remoteTier: RemoteTier | undefined,
  name: string,
  value: string,
): Promise<void> {
  if (typeof name !== 'string' || typeof value !== 'string')
    throw new TypeError('remember(name, value) takes two strings');
  await core.writeAtomically(
    core.layout.facts,
    core.layout.fact(sha256Hex(name)),
    `${JSON.stringify({ name, value, from: FACT_FROM })}\n`,
    'fact',
  );
  if (remoteTier)
    remoteTier.track(
      shareFact(remoteTier, name, value).catch((error: unknown) => remoteTier.warn('remember', name, error)),
    );
}

/**
 * Gives the remote a fact this store learned, unless it holds that value already. The
 * remote's value is never believed (any writer can put one there): one that differs is
 * reported as CACHE_REMOTE_FACT_MISMATCH and replaced with ours.
 */
async function shareFact(remoteTier: RemoteTier, name: string, value: string): Promise<void> {
  const theirs = await remoteTier.remote.recall(name);
  if (theirs === value) return;
  if (theirs !== undefined) remoteTier.warn('remember', name, new RemoteFactMismatchError(name, theirs, value));
  await remoteTier.remote.remember(name, value);
}

/** See ContentStore.recall: only this store's own files are read, never the remote. */
export async function recallFact(core: StoreCore, name: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await core.fs.readFile(core.layout.fact(sha256Hex(name)), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StoreIOError('read fact', core.layout.fact(sha256Hex(name)), error);
  }
  try {
    const record = JSON.parse(text) as { name?: unknown; value?: unknown; from?: unknown };
    // Earlier versions also kept facts recalled from the remote here, without a `from`:
    // those are misses, so nothing a registry once said is believed.
    return record.name === name && typeof record.value === 'string' && record.from === FACT_FROM
      ? record.value
      : undefined;
  } catch {
    return undefined;
  }
}
