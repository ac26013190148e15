import { readFileSync, writeFileSync } from 'node:fs';

/**
 * This process's peak resident memory, in bytes, since its start or the last
 * `resetResidentPeak()`. On Linux it is the kernel's high-water mark of this process's own
 * pages (`VmHWM`). Node's `process.resourceUsage().maxRSS` (getrusage) is not: it also counts
 * the pages the parent had when it forked this process, so a vitest worker or a bench child
 * started by a large parent reports the parent's size as its own peak, and any growth below
 * it is invisible (a child of a parent holding 300 MiB: maxRSS 303 MiB, VmHWM 39 MiB).
 * Elsewhere, maxRSS.
 */
export function residentPeak(): number {
  const status = procStatus();
  const match = status === undefined ? null : /^VmHWM:\s+(\d+) kB$/m.exec(status);
  return match ? Number(match[1]) * 1024 : process.resourceUsage().maxRSS * 1024;
}

/**
 * Starts a new peak at the resident size of this moment (Linux: `/proc/self/clear_refs`), so
 * the next `residentPeak()` is of what runs after it. Returns false where that cannot be
 * done: there `residentPeak()` keeps counting from the start.
 */
export function resetResidentPeak(): boolean {
  if (process.platform !== 'linux') return false;
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

function procStatus(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return readFileSync('/proc/self/status', 'utf8');
  } catch {
    return undefined;
  }
}
