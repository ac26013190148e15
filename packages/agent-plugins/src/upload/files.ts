// Files a person picked or dropped in a browser, read into a package tree. Web APIs only.
import type { PackageUpload } from '../validate/core.js';
import { type UploadLimits, UploadRefused, UploadTree, refuse, refusedUpload } from './tree-builder.js';

/**
 * One file of a picked folder: its path inside the folder and its bytes. A `File` from an
 * `<input type="file" webkitdirectory>` is one already (its `webkitRelativePath`).
 */
export interface UploadedFile {
  /** `/`-separated path of the file inside what was picked, e.g. `acme.tools/plugin.json`. */
  path: string;
  /** Its content (a `File` is a `Blob`). */
  blob: Blob;
}

/** A browser File with the path a folder pick gives it; its name when it has none. */
function uploadedFileOf(file: UploadedFile | File): UploadedFile {
  if ('blob' in file && 'path' in file) return file;
  const picked = file as File & { webkitRelativePath?: string };
  return { path: picked.webkitRelativePath || picked.name, blob: picked };
}

/**
 * Reads files picked or dropped in a browser (a folder's `File` objects, or `{ path, blob }`)
 * into a package tree, bounded by `limits` (UploadLimits): the count, every name and the
 * total size are checked before a byte is read, and a file over the per-file limit is kept
 * unread (the reader refuses it as on a disk). A browser gives no links and no modes, so
 * every file is a regular one at 0o644. The picked folder itself, the single top folder of
 * every path, is dropped. Never throws on a bad upload: a refusal is a finding (upload.*).
 *
 * @example
 * input.addEventListener('change', async () => {
 *   const verdict = await validatePlugin(await readUploadedFiles(input.files ?? []));
 * });
 */
export async function readUploadedFiles(
  files: Iterable<UploadedFile | File> | ArrayLike<UploadedFile | File>,
  limits: UploadLimits = {},
): Promise<PackageUpload> {
  const list = Array.from(files as ArrayLike<UploadedFile | File>, uploadedFileOf);
  const total = list.reduce((sum, file) => sum + file.blob.size, 0);
  const tree = new UploadTree(limits, total);
  try {
    const wanted: { path: string; name: string; blob: Blob }[] = [];
    for (const file of list) {
      tree.countEntry();
      const path = tree.pathOf(file.path);
      if (file.blob.size > tree.limits.maxFileBytes)
        tree.add(path, { type: 'file', bytes: new Uint8Array(0), mode: 0o644, size: file.blob.size }, file.path);
      else {
        tree.unpack(file.blob.size);
        wanted.push({ path, name: file.path, blob: file.blob });
      }
    }
    for (const { path, name, blob } of wanted) {
      let bytes: Uint8Array;
      try {
        bytes = new Uint8Array(await blob.arrayBuffer());
      } catch {
        throw refuse('upload.malformed', path, 'could not be read: it changed or went away after it was picked');
      }
      tree.add(path, { type: 'file', bytes, mode: 0o644 }, name);
    }
    return tree.finish();
  } catch (error) {
    if (error instanceof UploadRefused) return refusedUpload(error.finding);
    throw error;
  }
}
