import { normalizeDirectoryPath } from '@agentproto/git';
import { type EntryLocation, SkillPathUnsafeError } from './errors.js';
import { quote } from './render.js';

/** normalizeDirectoryPath, its refusal turned into a SkillPathUnsafeError. */
export function normalizePath(path: string, at: EntryLocation): string {
  try {
    return normalizeDirectoryPath(path);
  } catch (error) {
    const reason = (error as { reason?: unknown }).reason;
    throw new SkillPathUnsafeError(
      quote(path, 80),
      typeof reason === 'string' ? reason : 'is not a safe relative path',
      at,
      {
        cause: error,
      },
    );
  }
}
