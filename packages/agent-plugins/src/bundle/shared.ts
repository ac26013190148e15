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
  options: { skillsDir?: string } = {},
): { skills: Map<string, Map<string, PackageFile>>; findings: Finding[] } {
  const findings: Finding[] = [];
  const out = new Map<string, Map<string, PackageFile>>();
  // The copy is named after the folder's last segment: `docs/references` → `references/`.
  const copyAs = posix.basename(folder);
  const skillsDir = options.skillsDir ?? 'skills';
  for (const [name, own] of skills) {
    const merged = new Map(own);
    for (const [path, file] of files) {
      const target = `${copyAs}/${path}`;
      if (merged.has(target)) {
        findings.push(
          findingFrom(
            BUNDLE_FINDING_CODES,
            'bundle.shared-clash',
            `skills/${name}/${target}`,
            `skill "${name}" already has ${target}; the shared copy was not written`,
          ),
        );
        continue;
      }
      merged.set(target, file);
    }
    const skillMd = merged.get('SKILL.md');
    if (skillMd)
      merged.set('SKILL.md', { ...skillMd, bytes: rewriteSharedLinks(skillMd.bytes, folder, `${skillsDir}/${name}`) });
    out.set(name, merged);
  }
  return { skills: out, findings };
}

/**
 * Markdown link targets (`](target)`) that climb out of the skill's folder to the shared
 * folder become relative to the skill: `../../references/x.md` → `references/x.md`. Only
 * targets that, resolved from `<skillDir>/SKILL.md` (paths from the content root), land in
 * `<folder>/` are touched, and they point at the copy, named after the folder's last
 * segment; the bytes around them are kept as they are.
 */
export function rewriteSharedLinks(bytes: Uint8Array, folder: string, skillDir = 'skills/x'): Uint8Array {
  const text = Buffer.from(bytes).toString('utf8');
  const copyAs = posix.basename(folder);
  const rewritten = text.replace(/\]\(([^)\s]+)\)/g, (whole, target: string) => {
    if (!target.startsWith('../')) return whole;
    const resolved = posix.normalize(posix.join(skillDir, target));
    if (!resolved.startsWith(`${folder}/`)) return whole;
    return `](${copyAs}/${resolved.slice(folder.length + 1)})`;
  });
  return rewritten === text ? bytes : Buffer.from(rewritten, 'utf8');
}
