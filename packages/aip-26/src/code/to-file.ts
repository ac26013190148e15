import { randomBytes } from 'node:crypto';
import { closeSync, ftruncateSync, openSync, renameSync, unlinkSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { type BundleSink, fileSink } from '../tar/write-bundle.js';
import { type BundleReport, type BundleTarget, type DefineCodeOptions, defineCodeInto } from './define-code.js';
import { BundleWriteError } from './errors.js';

/**
 * `defineCodeWithReport`, the bundle written to the file `path` instead of returned: each
 * block goes to the file as soon as it is compressed, so the bundle is never held in memory,
 * and the file appears whole or not at all. The bytes are a temporary file's, created next
 * to `path` (`.<name>.<random>.partial`, exclusively: never a file or link already there)
 * and renamed onto `path` after the last byte; any failure (a refused source, a limit, the
 * signal, a full disk) removes it and leaves `path` as it was. `path` is replaced, not
 * written through: a link there is replaced by the file, never followed. The file is not
 * flushed to the disk (as `tar` and `gzip` do not): a host that must find it after a power
 * loss syncs it. The report is the one `defineCodeWithReport` gives, with the file's SHA-256.
 *
 * @example
 * ```ts
 * import { defineCodeToFile } from '@agentproto/aip-26';
 *
 * const report = await defineCodeToFile(
 *   { code: manifest.code, run: manifest.run, workspaceRoot: '/srv/workspaces/acme' },
 *   '/srv/bundles/acme.tar.gz',
 * );
 * console.log(report.sha256, report.compressedBytes);
 * ```
 *
 * @throws {BundleWriteError} `AIP26_BUNDLE_WRITE`: the file could not be created, written or
 *   renamed onto `path` (`step`, `errno`).
 * @throws What `defineCodeWithReport` throws, for the same reasons.
 */
export async function defineCodeToFile(args: DefineCodeOptions, path: string): Promise<BundleReport> {
  const target = resolve(path);
  const file = new PartialFile(target);
  try {
    const { report } = await defineCodeInto(args, true, file);
    file.commit();
    return { ...report, sha256: report.sha256! };
  } catch (error) {
    file.discard();
    throw error;
  }
}

/**
 * The temporary file a bundle is written into, opened when the first writer needs it (the
 * manifest's blocks and plan are checked before anything is created), then renamed onto the
 * target or removed.
 */
class PartialFile implements BundleTarget<number> {
  private readonly temporary: string;
  private fd: number | undefined;
  /** The temporary file exists (until renamed or removed). */
  private created = false;

  constructor(private readonly target: string) {
    // A name the file system takes whatever the target's length (a name is at most 255 bytes).
    const name = Buffer.from(basename(target))
      .subarray(0, 160)
      .toString('utf8')
      .replace(/\uFFFD+$/, '');
    this.temporary = join(dirname(target), `.${name}.${randomBytes(6).toString('hex')}.partial`);
  }

  readonly sink = (bound: () => number | undefined): BundleSink<number> => {
    const inner = fileSink(this.open())(bound);
    return {
      write: (chunk) => {
        try {
          inner.write(chunk);
        } catch (error) {
          throw new BundleWriteError('write', this.target, error);
        }
      },
      finish: () => inner.finish(),
    };
  };

  take(bundle: Buffer): number {
    const sink = this.sink(() => bundle.length);
    sink.write(bundle);
    return sink.finish();
  }

  restart(): void {
    if (this.fd === undefined) return;
    try {
      ftruncateSync(this.fd, 0);
    } catch (error) {
      throw new BundleWriteError('write', this.target, error);
    }
  }

  bytes(output: number): number {
    return output;
  }

  /** The bytes are all written: the file takes the target's name. */
  commit(): void {
    const fd = this.open();
    this.fd = undefined;
    try {
      closeSync(fd);
    } catch (error) {
      throw new BundleWriteError('close', this.target, error);
    }
    try {
      renameSync(this.temporary, this.target);
    } catch (error) {
      throw new BundleWriteError('rename', this.target, error);
    }
    this.created = false;
  }

  /** The call failed: the temporary file goes, whatever was written into it. */
  discard(): void {
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {}
      this.fd = undefined;
    }
    if (this.created) {
      try {
        unlinkSync(this.temporary);
      } catch {}
      this.created = false;
    }
  }

  private open(): number {
    if (this.fd !== undefined) return this.fd;
    if (this.created) throw new Error('bundle file already closed');
    try {
      this.fd = openSync(this.temporary, 'wx', 0o666);
    } catch (error) {
      throw new BundleWriteError('create', this.target, error);
    }
    this.created = true;
    return this.fd;
  }
}
