/**
 * Validators compiled ahead of time with Ajv standalone, for the packages that ship their
 * pinned schemas' checks precompiled (agent-plugins, aip-26): checking a document then
 * compiles nothing and loads no Ajv compiler. Each package passes its own Ajv, so the code
 * and the runtime helpers come from the Ajv version it depends on.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface StandaloneTools<A> {
  /** An Ajv made with `code: { source: true, esm: true }`, its schemas added. */
  ajv: A;
  /** `ajv/dist/standalone`'s default export. */
  standaloneCode: (ajv: A, refs: Record<string, string>) => string;
  /** `(specifier) => import(specifier)` from the package, so Ajv's runtime helpers resolve there. */
  load: (specifier: string) => Promise<unknown>;
}

/**
 * The standalone code of the validators `refs` names (export name to schema reference), as an
 * expression: a function scope that returns those validators, so two Ajv instances' names never
 * meet in one file. Ajv's runtime helpers are inlined from their installed source.
 */
export async function standaloneScope<A>(tools: StandaloneTools<A>, refs: Record<string, string>): Promise<string> {
  let code = tools.standaloneCode(tools.ajv, refs).replace(/^"use strict";/, '');
  const exported: string[] = [];
  code = code.replace(/export const (\w+) = (\w+);/g, (_, name: string, fn: string) => {
    exported.push(`${name}: ${fn}`);
    return '';
  });
  if (exported.length !== Object.keys(refs).length) throw new Error('Ajv standalone code exports an unexpected set');
  const helpers = new Map<string, string>();
  code = code.replace(/require\("ajv\/dist\/runtime\/(\w+)"\)\.default/g, (_, name: string) => {
    helpers.set(name, `runtime_${name}`);
    return `runtime_${name}`;
  });
  if (code.includes('require(')) throw new Error('Ajv standalone code requires a module the generator does not inline');
  let prelude = '';
  for (const [name, local] of helpers) prelude += `const ${local} = ${await runtimeHelper(tools.load, name)};\n`;
  return `(() => {\n${prelude}${code}\nreturn { ${exported.join(', ')} };\n})()`;
}

/** The source of a runtime helper the compiled code calls, copied from the installed Ajv. */
async function runtimeHelper(load: (specifier: string) => Promise<unknown>, name: string): Promise<string> {
  const helper = (await load(`ajv/dist/runtime/${name}.js`)) as { default: unknown };
  const fn = typeof helper.default === 'function' ? helper.default : (helper.default as { default: unknown }).default;
  if (typeof fn !== 'function') throw new Error(`ajv/dist/runtime/${name} has no default function`);
  return fn.toString();
}

/** Writes `text` to `file` when it differs from what is there (a build that changes nothing touches nothing). */
export async function writeIfChanged(file: string, text: string): Promise<void> {
  const current = await readFile(file, 'utf8').catch(() => undefined);
  if (current === text) return;
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, text);
}
