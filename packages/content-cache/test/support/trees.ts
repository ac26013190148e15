import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Fill } from '@agentproto/content-cache';

/** A fill that writes the given files (path -> text) with plain fs calls. */
export function fillWith(files: Record<string, string>, modes: Record<string, number> = {}): Fill {
  return async (destination) => {
    await mkdir(destination);
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(destination, path)), { recursive: true });
      await writeFile(join(destination, path), text, { mode: modes[path] ?? 0o644 });
    }
  };
}

export function keyFor(
  contentId: string,
  declaration: unknown = { source: 'https://example.test/skills.git', path: 'skills/a' },
  version = contentId,
) {
  return { provider: 'git', declaration: declaration as never, version, contentId };
}
