import { posix } from 'node:path';
import { SkillAbortedError } from './errors.js';
import type {
  FetchContext,
  ProviderContext,
  ResolvedSkillSource,
  SkillContentProvider,
  SkillSource,
} from './provider.js';

/**
 * A convenient base for providers: the four operations to implement, and `writeCredential`
 * for putting a temporary credential where it belongs.
 */
export abstract class BaseSkillProvider implements SkillContentProvider {
  abstract readonly id: string;
  abstract validate(source: SkillSource): void;
  abstract egressHosts(source: SkillSource): string[];
  abstract resolve(source: SkillSource, context: ProviderContext): Promise<ResolvedSkillSource>;
  abstract fetch(source: SkillSource, resolved: ResolvedSkillSource, context: FetchContext): Promise<void>;

  /**
   * Writes a credential file (mode 0600) into the private folder through the sandbox's file
   * API, and returns its path. The write is never abandoned half-way: when cancellation
   * arrives during it, this waits for the write to settle and only then rejects, so the
   * core's removal of the private folder cannot run before a late write lands there.
   */
  protected async writeCredential(
    context: ProviderContext,
    fileName: string,
    data: string | Uint8Array,
  ): Promise<string> {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(fileName))
      throw new TypeError(`writeCredential: "${fileName}" is not a plain file name`);
    if (context.signal.aborted) throw new SkillAbortedError(undefined, { cause: context.signal.reason });
    const path = posix.join(context.privateDir, fileName);
    // Awaited in full, whatever the signal does meanwhile.
    await context.sandbox.writeFile(path, data, { mode: 0o600 });
    if (context.signal.aborted) throw new SkillAbortedError(undefined, { cause: context.signal.reason });
    return path;
  }
}
