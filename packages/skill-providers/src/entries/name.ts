/**
 * The Agent Skills name rule, for installed names:
 *
 * | Rule                                   | Refused            |
 * |----------------------------------------|--------------------|
 * | 1 to 64 characters                     | `''`, 65 characters |
 * | only `a-z`, `0-9` and `-`              | `Example`, `a_b`, `é` |
 * | no `-` at the start or the end          | `-a`, `a-`         |
 * | no `--`                                | `a--b`             |
 *
 * Returns why `name` breaks the rule, or undefined when it is acceptable. Pure.
 */
export function skillNameProblem(name: string): string | undefined {
  if (typeof name !== 'string') return 'is not a string';
  if (name === '') return 'is empty';
  if (name.length > 64) return 'is longer than 64 characters';
  if (!/^[a-z0-9-]+$/.test(name)) return 'may hold only lower-case letters a-z, digits and "-"';
  if (name.startsWith('-') || name.endsWith('-')) return 'begins or ends with "-"';
  if (name.includes('--')) return 'contains "--"';
  return undefined;
}
