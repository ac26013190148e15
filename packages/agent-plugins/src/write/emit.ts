import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SIDECAR, byteOrder } from '../bundle/include.js';
import { buildPlugin } from '../build/build.js';
import { renderSidecar } from '../build/sidecar-render.js';
import type { PluginConfig } from '../config/types.js';
import { type Finding, sortFindings } from '../findings.js';
import { importPlugin } from '../import/index.js';
import type { SpecVersion } from '../schemas.js';
import { type PluginValidation, validatePlugin } from '../validate/index.js';
import { writePlugin } from './write.js';

export interface EmitOptions {
  /** Where the configuration's skills and included files are read from (absolute). */
  contentRoot: string;
  /** The version to emit; the configuration's own by default. Converting drops what the target lacks, with a finding. */
  spec?: SpecVersion;
  /** Replace an existing, non-empty output folder. */
  replace?: boolean;
}

export interface EmitResult {
  spec: SpecVersion;
  /** The emitted package's paths, in byte order. */
  files: string[];
  /** Everything left out on the way (build, read back, rebuild), sorted, each once. */
  findings: Finding[];
  /** The emitted folder as a conformant client loads it. */
  validation: PluginValidation;
}

/** The configuration builds a plugin a conformant client would reject: nothing was emitted. */
export class PluginRejectedError extends Error {
  override name = 'PluginRejectedError';
  readonly code = 'PLUGIN_REJECTED';
  constructor(readonly findings: readonly Finding[]) {
    const first = findings.find((f) => f.severity === 'error');
    super(
      `the plugin would be rejected by a conformant client${first ? `: ${first.rule} ${first.path}: ${first.message}` : ''}`,
    );
  }
}

/**
 * Writes a clean package folder holding only the Agent Plugins files. The package is built,
 * written to a scratch folder, read back the way a client loads it (importPlugin), and built
 * again from what was read: anything a client would skip is reported rather than shipped,
 * and `spec` converts the package to another version on the way. The output folder appears
 * whole (writePlugin renames a finished folder into place) and is validated at the end.
 */
export async function emitPlugin(config: PluginConfig, outDir: string, options: EmitOptions): Promise<EmitResult> {
  const first = await buildPlugin(config, { contentRoot: options.contentRoot });
  if (first.rejected) throw new PluginRejectedError(first.findings);
  const scratch = await mkdtemp(join(tmpdir(), 'agent-plugins-emit-'));
  try {
    const written = join(scratch, 'package');
    await writePlugin(first.files, written);
    const imported = await importPlugin(written);
    if (imported.rejected || !imported.config) throw new PluginRejectedError(imported.findings);
    const content = join(scratch, 'content');
    await writePlugin(imported.content, content);
    const spec = options.spec ?? first.spec;
    const second = await buildPlugin({ ...imported.config, spec }, { contentRoot: content, spec });
    if (second.rejected) throw new PluginRejectedError(second.findings);
    // What the first build left out never reaches the second (it is not in the package read
    // back), so the emitted sidecar records the omissions of every step. The record's own
    // findings (package.build-omitted) only repeat those, and are not listed twice.
    const findings = unique(
      [...first.findings, ...imported.findings, ...second.findings].filter((f) => f.code !== OMITTED),
    );
    const files = new Map(second.files);
    files.set(SIDECAR, renderSidecar(spec, files, findings));
    await writePlugin(files, outDir, { replace: options.replace ?? false });
    const validation = await validatePlugin(outDir);
    return {
      spec,
      files: [...files.keys()].sort(byteOrder),
      findings: unique([...findings, ...validation.findings.filter((f) => f.code !== OMITTED)]),
      validation,
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

const OMITTED = 'package.build-omitted';

function unique(findings: Finding[]): Finding[] {
  const seen = new Set<string>();
  return sortFindings(
    findings.filter((f) => {
      const key = `${f.code}\0${f.path}\0${f.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    }),
  );
}
