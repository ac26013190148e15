import { join, resolve } from 'node:path';
import {
  FINDING_CODES,
  type Finding,
  type FindingCodeInfo,
  type LoadedPluginConfig,
  type PackageFile,
  PluginPackageInvalidError,
  PluginRejectedError,
  SIDECAR,
  SPEC_VERSIONS,
  type SpecVersion,
  buildPlugin,
  emitPlugin,
  explain,
  importPlugin,
  loadPluginConfig,
  omittedOf,
  pullPlugin,
  pushPlugin,
  validatePlugin,
  verifyPlugin,
  writePlugin,
} from '@agentproto/agent-plugins';
import { CommandError } from '../command-error.js';
import { printFailure } from '../failure.js';
import { plural, printable, shellQuote } from '../format.js';
import { initPlugin } from './plugin-init.js';
import { hintFor } from '../hints.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, printJson } from '../io.js';
import { registryAuthFromEnv } from '../registry-env.js';
import { type Invocation, flagOption, textOption } from '../table.js';
import type { Terminal } from '../terminal.js';
import { UsageError } from '../usage.js';

/**
 * `plugin validate --strict` fails with exit status 2 on an error finding, as the product's
 * publish step does on the first error: the package, not the command line, is what is wrong.
 */
const EXIT_STRICT = EXIT_USAGE;

/** The configuration `plugin import` writes beside the content root it imports. */
const IMPORTED_CONFIG_FILE = 'plugin.config.json';

/** The error code printed when a conformant client would load nothing of the plugin. */
const REJECTED = 'PLUGIN_REJECTED';

/** The error code printed when a build or emit wrote its package but left something configured out. */
const INCOMPLETE = 'PLUGIN_INCOMPLETE';

type Subcommand = 'init' | 'build' | 'validate' | 'verify' | 'import' | 'emit' | 'explain' | 'push' | 'pull';

interface Parsed {
  positionals: string[];
  out?: string;
  spec?: SpecVersion;
  replace: boolean;
  json: boolean;
  strict: boolean;
  insecureHttp: boolean;
  explain?: string;
}

/** `agentproto plugin <build|validate|verify|import|emit|explain|push|pull> …`, as the command table read it. */
export async function runPlugin(invocation: Invocation, term: Terminal): Promise<number> {
  const parsed = parse(invocation);
  switch (invocation.sub as Subcommand) {
    case 'init':
      return init(parsed, term);
    case 'build':
      return build(parsed, term);
    case 'validate':
      return validate(parsed, term);
    case 'verify':
      return verify(parsed, term);
    case 'import':
      return importCommand(parsed, term);
    case 'emit':
      return emit(parsed, term);
    case 'explain':
      return explainCommand(parsed, term);
    case 'push':
      return push(parsed, term);
    case 'pull':
      return pull(parsed, term);
  }
}

/** The options by name, the version of --spec checked. */
function parse(invocation: Invocation): Parsed {
  const spec = textOption(invocation, 'spec');
  if (spec !== undefined && !(SPEC_VERSIONS as readonly string[]).includes(spec)) {
    throw new UsageError(`--spec must be one of ${SPEC_VERSIONS.join(', ')}, not ${JSON.stringify(spec)}`);
  }
  const out = textOption(invocation, 'out');
  const explainCode = textOption(invocation, 'explain');
  return {
    positionals: [...invocation.positionals],
    ...(out === undefined ? {} : { out }),
    ...(spec === undefined ? {} : { spec: spec as SpecVersion }),
    ...(explainCode === undefined ? {} : { explain: explainCode }),
    replace: flagOption(invocation, 'replace'),
    json: flagOption(invocation, 'json'),
    strict: flagOption(invocation, 'strict'),
    insecureHttp: flagOption(invocation, 'insecure-http'),
  };
}

/** The positional arguments `sub` takes, by name, or a usage error naming them. */
function positionals(parsed: Parsed, sub: Subcommand, names: readonly string[]): string[] {
  if (parsed.positionals.length !== names.length) throw new UsageError(`plugin ${sub} takes ${names.join(' and ')}`);
  return parsed.positionals;
}

function requireOut(parsed: Parsed, sub: Subcommand): string {
  if (parsed.out === undefined) throw new UsageError(`plugin ${sub} needs --out DIR`);
  return resolve(parsed.out);
}

/** `plugin init [dir]`: a new project, and the commands that build and check it. */
async function init(parsed: Parsed, term: Terminal): Promise<number> {
  const result = await initPlugin(parsed.positionals[0] ?? '.');
  if (parsed.json) printJson(term, result);
  else {
    const config = shellQuote(join(result.dir, 'plugin.toml'));
    const out = shellQuote(join(result.dir, 'dist'));
    term.stdout.write(
      `${shellQuote(result.dir)}: wrote ${result.files.map(shellQuote).join(', ')}\nnext: agentproto plugin build ${config} --out ${out} && agentproto plugin validate ${out}\n`,
    );
  }
  return EXIT_OK;
}

/** `plugin build <config> --out DIR`: the package the configuration describes, written whole. */
async function build(parsed: Parsed, term: Terminal): Promise<number> {
  const [configFile] = positionals(parsed, 'build', ['a configuration file']) as [string];
  const out = requireOut(parsed, 'build');
  working(term, 'building the package of', configFile);
  const loaded = await loadConfig(configFile);
  const pkg = await buildPlugin(loaded.config, {
    contentRoot: loaded.contentRoot,
    ...(parsed.spec ? { spec: parsed.spec } : {}),
  });
  const files = [...pkg.files.keys()];
  if (!pkg.rejected) await writePlugin(pkg.files, out, { replace: parsed.replace });
  const omitted = omittedOf(pkg.findings);
  if (parsed.json)
    printJson(term, {
      out,
      spec: pkg.spec,
      rejected: pkg.rejected,
      written: !pkg.rejected,
      files,
      omitted,
      findings: pkg.findings,
    });
  else {
    printFindings(term, pkg.findings);
    if (!pkg.rejected)
      term.stdout.write(`${shellQuote(out)}: ${plural(files.length, 'file')}, Agent Plugins ${pkg.spec}\n`);
  }
  if (pkg.rejected) return rejected(term, pkg.findings, resolve(configFile), 'nothing was written');
  return leftOut(term, 'build', out, pkg.findings, parsed.strict);
}

/**
 * The exit status of a build or emit that wrote its package: an error finding means something
 * configured was left out (exit 1; the package's sidecar records it, so validate and verify
 * see it too); with --strict, any error or warning finding fails as validate --strict does
 * (exit 2). A package is written either way: it is what a client would load.
 */
function leftOut(
  term: Terminal,
  sub: 'build' | 'emit',
  out: string,
  findings: readonly Finding[],
  strict: boolean,
): number {
  const first =
    findings.find((f) => f.severity === 'error') ??
    (strict ? findings.find((f) => f.severity === 'warning') : undefined);
  if (first === undefined) return EXIT_OK;
  if (strict) {
    printFailure(term, {
      code: first.rule,
      message: `${first.code} ${shellQuote(first.path)}: ${first.message} (${sub} --strict fails on any error or warning finding)`,
    });
    return EXIT_STRICT;
  }
  const n = omittedOf(findings).length;
  printFailure(term, {
    code: INCOMPLETE,
    message: `${shellQuote(out)}: ${n} configured ${n === 1 ? 'part was' : 'parts were'} left out (${first.rule} ${first.code} ${shellQuote(first.path)}); the package records ${n === 1 ? 'it' : 'them'} in ${SIDECAR}`,
    hint: `'agentproto plugin explain ${first.code}' says what the rule asks`,
  });
  return EXIT_FAILURE;
}

/** `plugin validate <dir>`: the folder as a conformant client loads it. */
async function validate(parsed: Parsed, term: Terminal): Promise<number> {
  if (parsed.explain !== undefined) {
    if (parsed.positionals.length > 0 || parsed.strict)
      throw new UsageError('plugin validate --explain CODE takes no folder and no --strict');
    return printExplanation(parsed.explain, parsed.json, term);
  }
  const [dirArg] = positionals(parsed, 'validate', ['a plugin folder']) as [string];
  const dir = resolve(dirArg);
  working(term, 'validating', dir);
  const result = await validatePlugin(dir);
  const firstError = result.findings.find((f) => f.severity === 'error');
  if (parsed.json) printJson(term, { dir, ...result });
  else {
    printFindings(term, result.findings);
    if (!result.rejected) {
      const mcp = result.mcpDisabled ? ', MCP disabled' : '';
      // What a client drops is counted beside what it loads; each one has its own error line above.
      const skipped = (list: readonly string[]) => (list.length > 0 ? ` (${list.length} skipped)` : '');
      term.stdout.write(
        `${shellQuote(dir)}: Agent Plugins ${result.spec}, ${countOf(result.skills, 'skill')}${skipped(result.skippedSkills)}, ${countOf(result.servers, 'server')}${skipped(result.skippedServers)}${mcp}, ${countOf(result.findings, 'finding')}\n`,
      );
    }
  }
  if (parsed.strict && firstError !== undefined) {
    printFailure(term, {
      code: firstError.rule,
      message: `${firstError.code} ${shellQuote(firstError.path)}: ${firstError.message} (validate --strict fails on any error finding)`,
    });
    return EXIT_STRICT;
  }
  if (result.rejected) return rejected(term, result.findings, dir);
  return EXIT_OK;
}

/** `plugin verify <config> <dir>`: whether the folder is exactly what the configuration builds now. */
async function verify(parsed: Parsed, term: Terminal): Promise<number> {
  const [configFile, dirArg] = positionals(parsed, 'verify', ['a configuration file', 'a plugin folder']) as [
    string,
    string,
  ];
  const dir = resolve(dirArg);
  working(term, 'building again to compare', configFile);
  const loaded = await loadConfig(configFile);
  const result = await verifyPlugin(dir, loaded.config, {
    contentRoot: loaded.contentRoot,
    ...(parsed.spec ? { spec: parsed.spec } : {}),
  });
  if (parsed.json) printJson(term, { dir, ...result });
  else if (result.ok) term.stdout.write(`${shellQuote(dir)}: up to date\n`);
  else {
    for (const kind of ['changed', 'missing', 'unexpected', 'edited'] as const)
      for (const path of result[kind]) term.stdout.write(`${kind}  ${shellQuote(path)}\n`);
    for (const pointer of result.packageJson ?? [])
      if (pointer !== 'package.json') term.stdout.write(`package.json  ${shellQuote(pointer)}\n`);
    for (const entry of result.omitted)
      term.stdout.write(`omitted  ${shellQuote(entry.path)} (${printable(entry.code)})\n`);
  }
  if (result.ok) return EXIT_OK;
  const summary = (['changed', 'missing', 'unexpected', 'edited'] as const)
    .filter((kind) => result[kind].length > 0)
    .map((kind) => `${result[kind].length} ${kind}`);
  const config = shellQuote(resolve(configFile));
  const first = result.omitted[0];
  if (summary.length === 0 && first !== undefined) {
    // Byte for byte what the configuration builds, and that build leaves something out.
    printFailure(term, {
      code: INCOMPLETE,
      message: `${shellQuote(dir)} is what ${config} builds, but its build left out ${countOf(result.omitted, 'part')} (${printable(first.code)} ${shellQuote(first.path)}), as ${SIDECAR} records`,
      hint: `'agentproto plugin explain ${printable(first.code)}' says what the rule asks; fix it and build again`,
    });
    return EXIT_FAILURE;
  }
  if (result.omitted.length > 0) summary.push(`${result.omitted.length} left out`);
  printFailure(term, {
    message: `${shellQuote(dir)} is not what ${config} builds: ${summary.join(', ')}`,
    hint: `build it again: agentproto plugin build ${config} --out ${shellQuote(dir)} --replace${parsed.spec ? ` --spec ${parsed.spec}` : ''}`,
  });
  return EXIT_FAILURE;
}

/**
 * `plugin import <dir> --out DIR`: the content root (skills, bundled files) and, beside it,
 * plugin.config.json, the imported configuration. The folder is written whole, as a package is.
 */
async function importCommand(parsed: Parsed, term: Terminal): Promise<number> {
  const [dirArg] = positionals(parsed, 'import', ['a plugin folder']) as [string];
  const out = requireOut(parsed, 'import');
  const dir = resolve(dirArg);
  working(term, 'importing', dir);
  const imported = await importPlugin(dir);
  const configFile = resolve(out, IMPORTED_CONFIG_FILE);
  const files = [...imported.content.keys()];
  const config = imported.rejected ? undefined : imported.config;
  if (config !== undefined) {
    // The content root is the output folder itself, so a bundled file of that name would be lost.
    if (imported.content.has(IMPORTED_CONFIG_FILE)) {
      throw new CommandError(
        `${shellQuote(dir)} bundles a root file named ${IMPORTED_CONFIG_FILE}, which the imported configuration would replace; nothing was written`,
      );
    }
    const written = new Map<string, PackageFile>(imported.content);
    written.set(IMPORTED_CONFIG_FILE, {
      bytes: new TextEncoder().encode(`${JSON.stringify(config, null, 2)}\n`),
      mode: 0o644,
    });
    await writePlugin(written, out, { replace: parsed.replace });
  }
  if (parsed.json) {
    printJson(term, {
      dir,
      out,
      spec: imported.spec,
      rejected: imported.rejected,
      configFile: config === undefined ? null : configFile,
      config: config ?? null,
      files: config === undefined ? [] : files,
      report: imported.report,
      findings: imported.findings,
    });
  } else {
    printFindings(term, imported.findings);
    for (const entry of imported.report)
      term.stdout.write(`report  ${shellQuote(entry.path)}: ${printable(entry.reason)}\n`);
    if (config !== undefined)
      term.stdout.write(`${shellQuote(out)}: ${plural(files.length, 'file')} and ${IMPORTED_CONFIG_FILE}\n`);
  }
  if (config === undefined) return rejected(term, imported.findings, dir, 'nothing was imported');
  return importedPartly(term, out, imported.findings, parsed.strict);
}

/**
 * The exit status of an import that wrote its folder: an error finding means a conformant
 * client skips part of the package (a server, a skill, a denied path), so the imported
 * configuration lacks it (exit 1; the report lines name each part). With --strict, any error
 * or warning finding fails with exit 2, as build and emit do.
 */
function importedPartly(term: Terminal, out: string, findings: readonly Finding[], strict: boolean): number {
  const first =
    findings.find((f) => f.severity === 'error') ??
    (strict ? findings.find((f) => f.severity === 'warning') : undefined);
  if (first === undefined) return EXIT_OK;
  if (strict) {
    printFailure(term, {
      code: first.rule,
      message: `${first.code} ${shellQuote(first.path)}: ${first.message} (import --strict fails on any error or warning finding)`,
    });
    return EXIT_STRICT;
  }
  printFailure(term, {
    code: INCOMPLETE,
    message: `${shellQuote(out)}: the import left out what a conformant client skips (${first.rule} ${first.code} ${shellQuote(first.path)}); each part has a report line`,
    hint: `'agentproto plugin explain ${first.code}' says what the rule asks`,
  });
  return EXIT_FAILURE;
}

/** `plugin emit <config> --out DIR`: a clean package, read back and built again, in --spec's version. */
async function emit(parsed: Parsed, term: Terminal): Promise<number> {
  const [configFile] = positionals(parsed, 'emit', ['a configuration file']) as [string];
  const out = requireOut(parsed, 'emit');
  working(term, 'emitting the package of', configFile);
  const loaded = await loadConfig(configFile);
  let result;
  try {
    result = await emitPlugin(loaded.config, out, {
      contentRoot: loaded.contentRoot,
      replace: parsed.replace,
      ...(parsed.spec ? { spec: parsed.spec } : {}),
    });
  } catch (error) {
    if (!(error instanceof PluginRejectedError)) throw error;
    const findings = [...error.findings];
    if (parsed.json) printJson(term, { out, rejected: true, written: false, files: [], findings });
    else printFindings(term, findings);
    return rejected(term, findings, resolve(configFile), 'nothing was emitted');
  }
  if (parsed.json)
    printJson(term, { out, rejected: false, written: true, omitted: omittedOf(result.findings), ...result });
  else {
    printFindings(term, result.findings);
    term.stdout.write(`${shellQuote(out)}: ${plural(result.files.length, 'file')}, Agent Plugins ${result.spec}\n`);
  }
  return leftOut(term, 'emit', out, result.findings, parsed.strict);
}

/** `plugin explain CODE`: the text of an AR9O rule or of a finding code. */
async function explainCommand(parsed: Parsed, term: Terminal): Promise<number> {
  const [code] = positionals(parsed, 'explain', ['one code (AR9O0–AR9O5 or a finding code)']) as [string];
  return printExplanation(code, parsed.json, term);
}

function printExplanation(code: string, json: boolean, term: Terminal): number {
  const text = explain(code);
  if (text === undefined)
    throw new UsageError(`unknown code ${JSON.stringify(code)}: give an AR9O rule (AR9O0–AR9O5) or a finding code`);
  const info = Object.hasOwn(FINDING_CODES, code)
    ? (FINDING_CODES as Readonly<Record<string, FindingCodeInfo>>)[code]
    : undefined;
  if (json) printJson(term, { code, rule: info?.rule ?? code, ...(info ? { severity: info.severity } : {}), text });
  else term.stdout.write(`${code}: ${text}\n`);
  return EXIT_OK;
}

/**
 * `plugin push <dir> <ref>`: the clean package of the folder, as an OCI artifact under the
 * tag. A package with an error finding is refused before anything is uploaded: its findings
 * print, and the command exits 1. Registry failures exit 1 with their REGISTRY_* code.
 */
async function push(parsed: Parsed, term: Terminal): Promise<number> {
  const [dirArg, ref] = positionals(parsed, 'push', [
    'a plugin folder',
    'a reference (host[:port]/repository:tag)',
  ]) as [string, string];
  const dir = resolve(dirArg);
  let result;
  term.status(`pushing ${shellQuote(dir)} to ${ref}`);
  try {
    result = await pushPlugin(dir, ref, registryOptions(parsed));
  } catch (error) {
    if (!(error instanceof PluginPackageInvalidError)) throw error;
    return refusedPackage(term, parsed.json, error, { dir, ref, pushed: false });
  }
  if (parsed.json) printJson(term, { dir, pushed: true, ...result });
  else {
    printFindings(term, result.findings);
    term.stdout.write(
      `pushed ${printable(result.ref)}: ${plural(result.files.length, 'file')}, Agent Plugins ${result.spec}\ndigest ${result.digest}\npinned ${result.pinned}\n`,
    );
  }
  return EXIT_OK;
}

/**
 * `plugin pull <ref> <dir>`: the artifact's package, checked against its digests, extracted
 * safely and validated, then renamed into `dir` (absent or an empty folder). A package with
 * an error finding prints its findings, exits 1, and leaves nothing at `dir`.
 */
async function pull(parsed: Parsed, term: Terminal): Promise<number> {
  const [ref, dirArg] = positionals(parsed, 'pull', [
    'a reference (host[:port]/repository:tag or …@sha256:…)',
    'a destination folder',
  ]) as [string, string];
  const dir = resolve(dirArg);
  let result;
  term.status(`pulling ${ref}`);
  try {
    result = await pullPlugin(ref, dir, registryOptions(parsed));
  } catch (error) {
    if (!(error instanceof PluginPackageInvalidError)) throw error;
    return refusedPackage(term, parsed.json, error, { dir, ref, pulled: false });
  }
  if (parsed.json) printJson(term, { pulled: true, ...result });
  else {
    const { validation } = result;
    printFindings(term, validation.findings);
    term.stdout.write(
      `${shellQuote(result.dir)}: ${printable(result.ref)}, ${plural(result.config.files, 'file')}, Agent Plugins ${validation.spec}, ${countOf(validation.skills, 'skill')}, ${countOf(validation.servers, 'server')}\ndigest ${result.digest}\n`,
    );
  }
  return EXIT_OK;
}

/** Registry options from the command line and, for credentials, the environment only. */
function registryOptions(parsed: Parsed) {
  const auth = registryAuthFromEnv();
  return { allowInsecureHttp: parsed.insecureHttp, ...(auth === undefined ? {} : { auth }) };
}

/** A package push or pull refused for its findings: the findings, then the error's code line; exit 1. */
function refusedPackage(
  term: Terminal,
  json: boolean,
  error: PluginPackageInvalidError,
  facts: Record<string, unknown>,
): number {
  const findings = [...error.findings];
  if (json) printJson(term, { ...facts, code: error.code, findings });
  else printFindings(term, findings);
  const hint = hintFor(error, { group: 'plugin' });
  printFailure(term, { code: error.code, message: error.message, error, ...(hint === undefined ? {} : { hint }) });
  return EXIT_FAILURE;
}

/** Configuration errors carry PLUGIN_CONFIG_INVALID and name the file and key; main prints them. */
function loadConfig(file: string): Promise<LoadedPluginConfig> {
  return loadPluginConfig(resolve(file));
}

/** A status line while a package is built or read, which the library reports no progress of. */
function working(term: Terminal, what: string, path: string): void {
  term.status(`${what} ${shellQuote(resolve(path))}`);
}

/**
 * One line a finding: `<severity> <rule> <code> <path>: <message>`, on stderr; the severity
 * red or yellow on a colour terminal, the path a shell word.
 */
function printFindings(term: Terminal, findings: readonly Finding[]): void {
  const paint = { error: term.red, warning: term.yellow, info: term.dim } as Readonly<
    Record<string, (text: string) => string>
  >;
  for (const f of findings) {
    const severity = (paint[f.severity] ?? String)(f.severity);
    term.stderr.write(`${severity} ${f.rule} ${f.code} ${shellQuote(f.path)}: ${printable(f.message)}\n`);
  }
}

/** The failure line of a plugin a conformant client would load nothing of: exit 1. */
function rejected(term: Terminal, findings: readonly Finding[], subject: string, consequence?: string): number {
  const first = findings.find((f) => f.severity === 'error');
  const why = first ? ` (${first.rule} ${first.code} ${shellQuote(first.path)})` : '';
  printFailure(term, {
    code: REJECTED,
    message: `${shellQuote(subject)}: a conformant client rejects the plugin${why}${consequence ? `; ${consequence}` : ''}`,
    ...(first ? { hint: `'agentproto plugin explain ${first.code}' says what the rule asks` } : {}),
  });
  return EXIT_FAILURE;
}

function countOf(items: readonly unknown[], noun: string): string {
  return plural(items.length, noun);
}
