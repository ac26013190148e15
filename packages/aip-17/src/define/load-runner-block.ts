import { checkedDefinition, unwrapBlock } from './block.js';
import { RunnerDefinitionError, RunnerUnresolvedError } from './errors.js';
import type { RunnerDefinition } from './types.js';

/** How the host resolves the two composition forms that point elsewhere. */
export interface RunnerBlockResolvers {
  /** `{ ref: "@agentik/runners/python-3.12" }` → the runner block the registry holds under that ref. */
  resolveRef?(ref: string): unknown | Promise<unknown>;
  /**
   * `{ file: "./RUNNER.md" }` → the runner block that file holds (for a RUNNER.md, its front
   * matter, parsed). The host reads and parses it: it knows the workspace root, and this
   * package does no I/O.
   */
  loadFile?(path: string): unknown | Promise<unknown>;
}

/**
 * Reads a `runner` block in any of its forms (AIP-17 "Composition pattern"): plain, `{ inline }`,
 * `{ ref }` through `resolveRef`, `{ file }` through `loadFile`. Returns the definition, checked
 * against the schema (a copy), ready for `defineRunner`. What a resolver returns must itself be a
 * plain or inline block: a ref that names another ref is refused, so resolution cannot loop.
 *
 * @throws {RunnerUnresolvedError} `AIP17_RUNNER_UNRESOLVED`: no resolver for the form, the resolver failed (its error is the `cause`), or it found nothing.
 * @throws {RunnerDefinitionError} `AIP17_RUNNER_INVALID`: the block, or what a resolver returned, fails the schema.
 * @example
 * ```ts
 * import { defineRunner, loadRunnerBlock } from '@agentproto/aip-17';
 *
 * const definition = await loadRunnerBlock(manifest.runner, {
 *   loadFile: async (path) => frontmatterOf(await readFile(join(workspace, path), 'utf8')),
 * });
 * const runner = defineRunner(definition, host);
 * ```
 */
export async function loadRunnerBlock(block: unknown, resolvers: RunnerBlockResolvers = {}): Promise<RunnerDefinition> {
  const unwrapped = unwrapBlock(block);
  if (unwrapped.form === 'invalid') throw new RunnerDefinitionError(unwrapped.problems);
  if (unwrapped.form === 'plain') return checkedDefinition(unwrapped.value, unwrapped.pointer);
  const { form, target } = unwrapped;
  const resolve = form === 'ref' ? resolvers.resolveRef : resolvers.loadFile;
  if (resolve === undefined)
    throw new RunnerUnresolvedError(form, target, `the host passed no ${form === 'ref' ? 'resolveRef' : 'loadFile'}`);
  let resolved: unknown;
  try {
    resolved = await resolve.call(resolvers, target);
  } catch (error) {
    throw new RunnerUnresolvedError(form, target, 'the resolver failed', { cause: error });
  }
  // Nothing found is not "no runner block": defaulting here would hide a dangling ref.
  if (resolved === undefined || resolved === null)
    throw new RunnerUnresolvedError(form, target, `the ${form === 'ref' ? 'registry' : 'file'} holds no runner block`);
  const subject = `runner ${form} ${JSON.stringify(target)}`;
  const inner = unwrapBlock(resolved);
  if (inner.form === 'invalid') throw new RunnerDefinitionError(inner.problems, { subject });
  if (inner.form !== 'plain')
    throw new RunnerDefinitionError(
      [{ pointer: `/${inner.form}`, message: 'is not allowed here: a resolved runner block must be plain or inline' }],
      { subject },
    );
  return checkedDefinition(inner.value, inner.pointer, subject);
}
