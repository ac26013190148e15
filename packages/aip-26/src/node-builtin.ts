import { createRequire } from 'node:module';

/*
 * Node built-ins this package needs only for some of its work, loaded on first use instead
 * of with the package: child_process (with net, dgram and their bindings) and worker_threads
 * cost ~4-7 ms of a process's start, and only running a bundle or extracting into a folder
 * uses them. `agentproto code bundle` pays every such millisecond before its first block
 * can go to compression.
 */
const load = createRequire(import.meta.url);

export function childProcess(): typeof import('node:child_process') {
  return load('node:child_process') as typeof import('node:child_process');
}

export function workerThreads(): typeof import('node:worker_threads') {
  return load('node:worker_threads') as typeof import('node:worker_threads');
}
