import { type RunnerProblem, RunnerDefinitionError } from './errors.js';
import { runnerSchemaProblems } from './schema.js';
import type { RunnerDefinition } from './types.js';

const FORMS = ['inline', 'ref', 'file'] as const;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A runner block as a parent manifest embeds it: plain, `{ inline }`, `{ ref }` or `{ file }`. */
type UnwrappedBlock =
  | { readonly form: 'plain'; readonly value: unknown; readonly pointer: string }
  | { readonly form: 'ref' | 'file'; readonly target: string }
  | { readonly form: 'invalid'; readonly problems: RunnerProblem[] };

/**
 * Tells the composition forms (AIP-17 "Composition pattern") from a plain block. Their keys
 * are disjoint from the block's own (`engine`, `image`, `needs`, `limits`), so a block with
 * one of `inline`/`ref`/`file` as its only key is that form; with other keys beside it, it is
 * neither, and refused rather than guessed. A missing block is the empty one (all defaults).
 */
export function unwrapBlock(block: unknown): UnwrappedBlock {
  if (block === undefined) return { form: 'plain', value: {}, pointer: '' };
  if (!isObject(block)) return { form: 'plain', value: block, pointer: '' };
  const keys = Object.keys(block);
  const forms = FORMS.filter((f) => Object.hasOwn(block, f));
  if (forms.length === 0) return { form: 'plain', value: block, pointer: '' };
  if (keys.length > 1) {
    const found = keys.map((k) => JSON.stringify(k)).join(', ');
    return {
      form: 'invalid',
      problems: [
        { pointer: '', message: `must be a runner block or exactly one of "inline", "ref", "file"; it has ${found}` },
      ],
    };
  }
  const form = forms[0]!;
  const value = block[form];
  if (form === 'inline') return { form: 'plain', value, pointer: '/inline' };
  if (typeof value !== 'string' || value === '')
    return { form: 'invalid', problems: [{ pointer: `/${form}`, message: 'must be a non-empty string' }] };
  return { form, target: value };
}

/**
 * The definition in a plain block, checked against `$defs/runner`: a deep copy, so the
 * caller's object is never frozen or shared. Throws `RunnerDefinitionError` with every problem.
 */
export function checkedDefinition(value: unknown, pointer: string, subject?: string): RunnerDefinition {
  const problems = runnerSchemaProblems(value, pointer);
  if (problems.length > 0) throw new RunnerDefinitionError(problems, subject === undefined ? {} : { subject });
  return structuredClone(value) as RunnerDefinition;
}
