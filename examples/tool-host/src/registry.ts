import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Code } from '@agentproto/aip-26';
import lockfile from 'proper-lockfile';
import { RegistryCorruptError } from './errors.js';
import type { ToolManifest } from './manifest.js';

/** What registration learnt about one source of the bundle. */
export interface RegisteredSource {
  /** `sources[i]`, with the chain of `ref`s that led to it. */
  source: string;
  kind: 'inline' | 'local' | 'github';
  /** github only: the repository and the ref as the manifest wrote it. */
  repo?: string;
  ref?: string;
  /** github only: what the ref named on the server (`commit` for a full commit id). */
  refKind?: 'branch' | 'tag' | 'head' | 'commit';
  /** github only: the full commit the ref resolved to at registration (AIP-26: "record the resolved SHA"). */
  commit?: string;
  files: number;
  bytes: number;
}

export interface RegisteredTool {
  name: string;
  /** The manifest as it was registered. */
  manifest: ToolManifest;
  /** The `code` block that runs: the manifest's own github sources pinned to `commit`. */
  code: Code;
  /** Where `local` and `ref` sources are read from. */
  workspaceRoot: string;
  sources: RegisteredSource[];
  registeredAt: string;
}

interface RegistryFile {
  format: 1;
  tools: Record<string, RegisteredTool>;
}

/**
 * The registered tools, one JSON file. Readers never lock: every write replaces the file by
 * one rename, so a reader sees the old registry or the new one, never half of one. Writers
 * take a lock for the whole read-modify-write, so two hosts registering at once both land.
 */
export class ToolRegistry {
  constructor(readonly file: string) {}

  async list(): Promise<RegisteredTool[]> {
    return Object.values((await this.read()).tools);
  }

  async get(name: string): Promise<RegisteredTool | undefined> {
    const tools = (await this.read()).tools;
    return Object.hasOwn(tools, name) ? tools[name] : undefined;
  }

  /** Adds the tool, or replaces the one of the same name. */
  async put(tool: RegisteredTool): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true });
    const release = await lockfile.lock(this.file, {
      lockfilePath: `${this.file}.lock`,
      realpath: false, // the registry file need not exist yet
      stale: 10_000,
      retries: { retries: 200, factor: 1.2, minTimeout: 5, maxTimeout: 100, randomize: true },
    });
    try {
      // Read under the lock: another writer may have added a tool since we last looked.
      const registry = await this.read();
      registry.tools[tool.name] = tool;
      await this.replace(`${JSON.stringify(registry, null, 2)}\n`);
    } finally {
      await release();
    }
  }

  private async read(): Promise<RegistryFile> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { format: 1, tools: {} };
      throw error;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new RegistryCorruptError(this.file, 'not JSON');
    }
    const registry = value as Partial<RegistryFile> | null;
    if (registry?.format !== 1 || registry.tools === null || typeof registry.tools !== 'object') {
      throw new RegistryCorruptError(this.file, 'no "format": 1 with a "tools" object');
    }
    return registry as RegistryFile;
  }

  private async replace(text: string): Promise<void> {
    const temporary = join(dirname(this.file), `.${basename(this.file)}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      const handle = await open(temporary, 'wx', 0o600);
      try {
        await handle.writeFile(text);
        // Synced before the rename: otherwise, after a crash, the rename may be on disk
        // before the bytes, and the registry would be an empty file.
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, this.file);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }
}
