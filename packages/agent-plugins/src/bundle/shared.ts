import { posix } from 'node:path';
import { type Finding, findingFrom } from '../findings.js';
import { BUNDLE_FINDING_CODES } from './codes.js';
import type { PackageFile } from './include.js';

/**
 * Copies a shared folder (`references/`, `templates/`, …) into every skill, at
 * `<folder>/…` inside the skill, so a skill keeps its documents when it is installed on its
 * own. Links in SKILL.md that climbed out of the skill to the shared folder
 * (`../../references/x.md`, the way they resolve in the source tree) are rewritten to the
 * copy (`references/x.md`). A shared file that would land on a file the skill already has
 * is an error, and that file keeps the skill's own bytes.
 *
 * `skills` maps a skill name to its files (paths relative to the skill folder); `folder` is
 * the shared folder's name as SKILL.md links name it, `files` its files relative to it.
 */
export function shareResources(
  skills: ReadonlyMap<string, ReadonlyMap<string, PackageFile>>,
  folder: string,
  files: ReadonlyMap<string, PackageFile>,
): { skills: Map<string, Map<string, PackageFile>>; findings: Finding[] } {
  const findings: Finding[] = [];
  const out = new Map<string, Map<string, PackageFile>>();
  for (const [name, own] of skills) {
    const merged = new Map(own);
    for (const [path, file] of files) {
      const target = `${folder}/${path}`;
      if (merged.has(target)) {
        findings.push(
          findingFrom(BUNDLE_FINDING_CODES, 'bundle.shared-clash', `skills/${name}/${target}`, `skill "${name}" already has ${target}; the shared copy was not written`),
        );
        continue;
      }
      merged.set(target, file);
    }
    const skillMd = merged.get('SKILL.md');
    if (skillMd) merged.set('SKILL.md', { ...skillMd, bytes: rewriteSharedLinks(skillMd.bytes, folder) });
    out.set(name, merged);
  }
  return { skills: out, findings };
}

/**
 * Markdown link targets (`](target)`) that climb out of `skills/<name>/` to the shared
 * folder become relative to the skill: `../../references/x.md` → `references/x.md`. Only
 * targets that, resolved from `skills/<name>/SKILL.md`, land in `<folder>/` at the content
 * root are touched; the bytes around them are kept as they are.
 */
export function rewriteSharedLinks(bytes: Uint8Array, folder: string): Uint8Array {
  const text = Buffer.from(bytes).toString('utf8');
  const rewritten = text.replace(/\]\(([^)\s]+)\)/g, (whole, target: string) => {
    if (!target.startsWith('../')) return whole;
    // Where the link points from skills/<any>/SKILL.md, as a path from the content root.
    const resolved = posix.normalize(posix.join('skills/x', target));
    if (!resolved.startsWith(`${folder}/`)) return whole;
    return `](${resolved})`;
  });
  return rewritten === text ? bytes : Buffer.from(rewritten, 'utf8');
}
