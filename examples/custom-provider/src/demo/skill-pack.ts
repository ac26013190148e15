import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';

export interface PublishedPack {
  file: string;
  bytes: number;
  /** `sha256:<hex>` of the .tar.gz file: what a declaration pins. */
  pin: string;
  /** The top folder every entry is under, as release tarballs usually have. */
  top: string;
}

/** Writes `files` (path → text) as a .tar.gz under a top folder `top`, as a publisher would. */
export async function publishSkillPack(
  file: string,
  top: string,
  files: Record<string, string>,
): Promise<PublishedPack> {
  const archive = pack();
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const chunk of archive) chunks.push(chunk as Buffer);
  })();
  for (const [path, body] of Object.entries(files)) {
    const mode = body.startsWith('#!') ? 0o755 : 0o644;
    await new Promise<void>((resolve, reject) =>
      archive.entry({ name: `${top}/${path}`, mode }, body, (error) => (error ? reject(error) : resolve())),
    );
  }
  archive.finalize();
  await collected;
  const bytes = gzipSync(Buffer.concat(chunks));
  await writeFile(file, bytes);
  return { file, bytes: bytes.length, pin: `sha256:${createHash('sha256').update(bytes).digest('hex')}`, top };
}
