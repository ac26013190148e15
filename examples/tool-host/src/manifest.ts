import { type Code, type RunValue, checkCode, checkRun, parseRun } from '@agentproto/aip-26';
import type { RegistrationProblem } from './errors.js';

/**
 * A tool manifest as this host takes it: a name, AIP-26 `code` and `run` blocks, and the
 * optional `runner` block (AIP-17; only `limits.timeout_ms` is used here). Other fields are
 * kept in the registry as written and not interpreted.
 */
export interface ToolManifest {
  name: string;
  description?: string;
  code: Code;
  run: RunValue;
  runner?: Record<string, unknown>;
  [field: string]: unknown;
}

/** Lower-case letters, digits and single hyphens: a name that is safe in a path, a log and a URL. */
const TOOL_NAME = /^[a-z0-9](?:-?[a-z0-9]){0,63}$/;

export type ManifestCheck = { ok: true; manifest: ToolManifest } | { ok: false; problems: RegistrationProblem[] };

/**
 * The checks that need no I/O: the name, and the `code` and `run` blocks against the AIP-26
 * schema. Every problem is reported, each with its JSON pointer, not only the first.
 */
export function checkToolManifest(value: unknown): ManifestCheck {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return {
      ok: false,
      problems: [{ code: 'TOOL_MANIFEST_INVALID', pointer: '', message: 'a tool manifest must be a JSON object' }],
    };
  }
  const manifest = value as Record<string, unknown>;
  const problems: RegistrationProblem[] = [];
  if (typeof manifest.name !== 'string' || !TOOL_NAME.test(manifest.name)) {
    problems.push({
      code: 'TOOL_NAME_INVALID',
      pointer: '/name',
      message: 'name must be 1 to 64 lower-case letters, digits and single hyphens',
    });
  }
  if (manifest.description !== undefined && typeof manifest.description !== 'string') {
    problems.push({ code: 'TOOL_MANIFEST_INVALID', pointer: '/description', message: 'description must be a string' });
  }
  if (
    manifest.runner !== undefined &&
    (manifest.runner === null || typeof manifest.runner !== 'object' || Array.isArray(manifest.runner))
  ) {
    problems.push({ code: 'TOOL_MANIFEST_INVALID', pointer: '/runner', message: 'runner must be an object' });
  }
  for (const [field, check] of [
    ['code', checkCode],
    ['run', checkRun],
  ] as const) {
    if (manifest[field] === undefined) {
      problems.push({ code: 'AIP26_MANIFEST_INVALID', pointer: `/${field}`, message: `a tool needs a ${field} block` });
      continue;
    }
    const result = check(manifest[field], { pointer: `/${field}` });
    if (!result.ok) {
      for (const problem of result.problems)
        problems.push({
          code: 'AIP26_MANIFEST_INVALID',
          pointer: problem.pointer,
          reason: problem.keyword,
          message: problem.message,
        });
    } else if (field === 'run') {
      // The schema admits `run: "tool.exe"` and `{ file: "../x.py" }`; parseRun is what
      // refuses an unknown extension or a run file outside the bundle, and it needs no bundle.
      const refused = runProblem(manifest.run as RunValue);
      if (refused) problems.push(refused);
    }
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, manifest: manifest as ToolManifest };
}

function runProblem(run: RunValue): RegistrationProblem | undefined {
  try {
    parseRun(run);
    return undefined;
  } catch (error) {
    const { code, reason, message } = error as { code?: unknown; reason?: unknown; message?: unknown };
    if (typeof code !== 'string') throw error;
    return { code, pointer: '/run', ...(typeof reason === 'string' ? { reason } : {}), message: String(message) };
  }
}

/** The manifest's name when it is usable, for messages about a refused manifest. */
export function nameOf(value: unknown): string | undefined {
  const name = (value as { name?: unknown } | null)?.name;
  return typeof name === 'string' && TOOL_NAME.test(name) ? name : undefined;
}
