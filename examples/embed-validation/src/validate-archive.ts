import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type Finding, type SpecVersion, validatePlugin } from '@agentproto/agent-plugins';
import { extractTarGz } from '@agentproto/aip-26';

export interface ArchiveLimits {
  /** Most bytes of the tar stream once inflated, counted as zlib inflates (a gzip bomb stops here). */
  maxUnpackedBytes: number;
  /** Most files in the archive. */
  maxFiles: number;
}

export interface PluginArchiveReport {
  /** False when any finding is an error: a conformant client rejects the plugin or skips a part of it. */
  ok: boolean;
  /** The version plugin.json targets; null when it names none the validator supports. */
  spec: SpecVersion | null;
  /** True when a client loads nothing of the plugin. */
  rejected: boolean;
  /** Sorted by path, then code. Messages never quote a value from the package. */
  findings: Finding[];
  skills: string[];
  servers: string[];
  mcpDisabled: boolean;
  /** The folder of the archive that was validated: '' for its root, or its single top folder. */
  root: string;
  files: number;
  bytes: number;
}

/**
 * Extracts a packaged plugin (.tar.gz) into a fresh folder under `tempRoot`, validates it as
 * a client loads it, and removes the folder, whatever happens. Throws ArchiveError
 * (`UNSAFE_ARCHIVE`, with `reason` and `entry`) for an archive that breaks a rule of the
 * safe reader: `..` or absolute names, links, devices and FIFOs, duplicates, over a limit,
 * truncated, not gzip. A plugin that extracts but is invalid is not an error: its findings say why.
 */
export async function validatePluginArchive(
  archive: Uint8Array,
  options: ArchiveLimits & { tempRoot: string },
): Promise<PluginArchiveReport> {
  // mkdtemp makes the folder 0700 and with a name nobody can guess: no other local user
  // can read the upload, or plant a link in it before the extraction starts.
  const work = await mkdtemp(join(options.tempRoot, 'plugin-'));
  try {
    // extractTarGz builds the tree beside `package` and renames it into place only once every
    // entry passed: nothing of a refused archive is ever validated or left behind.
    const extracted = await extractTarGz(archive, join(work, 'package'), {
      maxBytes: options.maxUnpackedBytes,
      maxFiles: options.maxFiles,
    });
    const root = await pluginRoot(join(work, 'package'));
    const validation = await validatePlugin(root === '' ? join(work, 'package') : join(work, 'package', root));
    return {
      ok: !validation.findings.some((finding) => finding.severity === 'error'),
      spec: validation.spec ?? null,
      rejected: validation.rejected,
      findings: validation.findings,
      skills: validation.skills,
      servers: validation.servers,
      mcpDisabled: validation.mcpDisabled,
      root,
      files: extracted.files.length,
      bytes: extracted.bytes,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * Where plugin.json should be: the archive's root, or, when the root holds nothing but one
 * folder, that folder (what `tar czf acme.tools.tar.gz acme.tools/` makes). Anything else is
 * validated at the root, where a missing plugin.json is a finding.
 */
async function pluginRoot(dir: string): Promise<string> {
  const entries = await readdir(dir, { withFileTypes: true });
  const only = entries.length === 1 ? entries[0]! : undefined;
  return only?.isDirectory() ? only.name : '';
}
