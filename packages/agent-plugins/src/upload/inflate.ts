// Bounded inflation over fflate's streaming decoders: the input is pushed a slice at a time and
// every chunk of output is counted before it is kept, so a bomb stops within a slice's worth.
import { fflate } from '#libraries';
import { type UploadTree, UploadRefused, refuse } from './tree-builder.js';

/** Input bytes pushed at a time: at most ~1,032 times this comes out of one push. */
const SLICE = 16 * 1024;

function joined(chunks: readonly Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : 'damaged data';
}

/**
 * Compressed entries up to this size are inflated in one call into a buffer of their declared
 * size plus one byte: what inflates past it is dropped, never kept, and the work is bounded by
 * the input (deflate expands at most 1,032 times). Larger ones stream, stopping at the first
 * chunk past the declared size. One call is ~10× faster for the small files packages are made of.
 */
const ONE_CALL = 64 * 1024;

/**
 * The raw deflate data `data` inflated: exactly `size` bytes, counted against the upload's
 * limits before they are held. More or fewer bytes than `size`, or damaged data, refuse the upload.
 */
export function inflateEntry(data: Uint8Array, size: number, tree: UploadTree, name: string): Uint8Array {
  if (data.length <= ONE_CALL) {
    tree.unpack(size);
    let out: Uint8Array;
    try {
      out = fflate().inflateSync(data, { out: new Uint8Array(size + 1) });
    } catch (error) {
      throw refuse('upload.malformed', name, `holds damaged deflate data (${message(error)})`);
    }
    if (out.length !== size)
      throw refuse(
        'upload.malformed',
        name,
        `inflates to ${out.length > size ? 'more than' : out.length} bytes, not the ${size} it declares`,
      );
    return out;
  }
  const chunks: Uint8Array[] = [];
  let length = 0;
  let ended = false;
  const inflater = new (fflate().Inflate)((chunk, final) => {
    length += chunk.length;
    if (length > size) throw refuse('upload.malformed', name, `inflates to more than the ${size} bytes it declares`);
    tree.unpack(chunk.length);
    chunks.push(chunk);
    if (final) ended = true;
  });
  try {
    for (let at = 0; at < data.length && !ended; at += SLICE) {
      const end = Math.min(data.length, at + SLICE);
      inflater.push(data.subarray(at, end), end === data.length);
    }
    if (data.length === 0) inflater.push(new Uint8Array(0), true);
  } catch (error) {
    if (error instanceof UploadRefused) throw error;
    throw refuse('upload.malformed', name, `holds damaged deflate data (${message(error)})`);
  }
  if (!ended || length !== size)
    throw refuse('upload.malformed', name, `inflates to ${length} bytes, not the ${size} it declares`);
  return joined(chunks, length);
}

/**
 * The single gzip member `data` holds, inflated and counted against the upload's limits as it
 * comes out. A second member, or damaged or truncated data, refuses the upload.
 */
export function gunzipUpload(data: Uint8Array, tree: UploadTree): Uint8Array {
  const chunks: Uint8Array[] = [];
  let length = 0;
  let ended = false;
  // A tar holds a header (and up to 511 bytes of padding) per entry beside the files' bytes.
  const headroom = 1024 * tree.limits.maxEntries + 1024 * 1024;
  const gunzip = new (fflate().Gunzip)((chunk, final) => {
    length += chunk.length;
    tree.unpack(chunk.length, headroom);
    chunks.push(chunk);
    if (final) ended = true;
  });
  gunzip.onmember = () => {
    throw refuse('upload.malformed', '', 'holds a second gzip member: one archive is one member');
  };
  try {
    for (let at = 0; at < data.length; at += SLICE) {
      const end = Math.min(data.length, at + SLICE);
      gunzip.push(data.subarray(at, end), end === data.length);
    }
  } catch (error) {
    if (error instanceof UploadRefused) throw error;
    throw refuse('upload.malformed', '', `is not gzip data, or it is damaged (${message(error)})`);
  }
  if (!ended) throw refuse('upload.malformed', '', 'ends before its gzip stream does');
  return joined(chunks, length);
}
