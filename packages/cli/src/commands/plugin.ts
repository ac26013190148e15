import { resolve } from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import {
  FINDING_CODES,
  type Finding,
  type FindingCodeInfo,
  type LoadedPluginConfig,
  type PackageFile,
  PluginPackageInvalidError,
  PluginRejectedError,
  SPEC_VERSIONS,
  type SpecVersion,
  buildPlugin,
  emitPlugin,
  explain,
  importPlugin,
  loadPluginConfig,
  pullPlugin,
  pushPlugin,
  validatePlugin,
  verifyPlugin,
  writePlugin,
} from '@agentproto/agent-plugins';
import { CommandError } from '../command-error.js';
import { type CliIO, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, printJson } from '../io.js';
import { registryAuthFromEnv } from '../registry-auth.js';
import { UsageError, usage } from '../usage.js';

/**
 * `plugin validate --strict` fails with exit status 2 on an error finding, as the product's
 * publish step does on the first error: the package, not the command line, is what is wrong.
 */
const EXIT_STRICT = EXIT_USAGE;

/** The configuration `plugin import` writes beside the content root it imports. */
export const IMPORTED_CONFIG_FILE = 'plugin.config.json';

/** The error code printed when a conformant client would load nothing of the plugin. */
const REJECTED = 'PLUGIN_REJECTED';

const SUBCOMMANDS = ['build', 'validate', 'verify', 'import', 'emit', 'explain', 'push', 'pull'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

const JSON_OPTION = { json: { type: 'boolean', default: false } } as const;
const HELP_OPTION = { help: { type: 'boolean', short: 'h', default: false } } as const;
const OUT = { out: { type: 'string' } } as const;
const SPEC = { spec: { type: 'string' } } as const;
const REPLACE = { replace: { type: 'boolean', default: false } } as const;
const INSECURE_HTTP = { 'insecure-http': { type: 'boolean', default: false } } as const;

/** Each subcommand accepts only its own options: any other is a wrong command line. */
const OPTIONS = {
  build: { ...OUT, ...SPEC, ...REPLACE, ...JSON_OPTION, ...HELP_OPTION },
  validate: { strict: { type: 'boolean', default: false }, explain: { type: 'string' }, ...JSON_OPTION, ...HELP_OPTION },
  verify: { ...SPEC, ...JSON_OPTION, ...HELP_OPTION },
  import: { ...OUT, ...REPLACE, ...JSON_OPTION, ...HELP_OPTION },
  emit: { ...OUT, ...SPEC, ...REPLACE, ...JSON_OPTION, ...HELP_OPTION },
  explain: { ...JSON_OPTION, ...HELP_OPTION },
  push: { ...INSECURE_HTTP, ...JSON_OPTION, ...HELP_OPTION },
  pull: { ...INSECURE_HTTP, ...JSON_OPTION, ...HELP_OPTION },
} as const;

interface Parsed {
  positionals: string[];
  out?: string;
  spec?: SpecVersion;
  replace: boolean;
  json: boolean;
  strict: boolean;
  insecureHttp: boolean;
  explain?: string;
  help: boolean;
}

/** `agentproto plugin <build|validate|verify|import|emit|explain|push|pull> …` */
export async function runPlugin(args: readonly string[], io: CliIO): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === '-h' || sub === '--help') return printUsage(io);
  if (!isSubcommand(sub)) {
    throw new UsageError(sub === undefined ? 'plugin needs a subcommand: build, validate, verify, import, emit, explain, push or pull' : `unknown command "plugin ${sub}"`);
  }
  const parsed = parse(sub, rest);
  if (parsed.help) return printUsage(io);
  switch (sub) {
    case 'build':
      return build(parsed, io);
    case 'validate':
      return validate(parsed, io);
    case 'verify':
      return verify(parsed, io);
    case 'import':
      return importCommand(parsed, io);
    case 'emit':
      return emit(parsed, io);
    case 'explain':
      return explainCommand(parsed, io);
    case 'push':
      return push(parsed, io);
    case 'pull':
      return pull(parsed, io);
  }
}

function isSubcommand(value: string | undefined): value is Subcommand {
  return (SUBCOMMANDS as readonly (string | undefined)[]).includes(value);
}

function parse(sub: Subcommand, args: string[]): Parsed {
  let values: Record<string, unknown>;
  let positionals: string[];
  try {
    // One table per subcommand; the values are read by name below, each checked for its type.
    const options: NonNullable<ParseArgsConfig['options']> = OPTIONS[sub];
    ({ values, positionals } = parseArgs({ args, options, strict: true, allowPositionals: true }));
  } catch (error) {
    throw new UsageError(`plugin ${sub}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const text = (name: string): string | undefined => {
    const value = values[name];
    if (typeof value !== 'string') return undefined;
    if (value === '') throw new UsageError(`--${name} must not be empty`);
    return value;
  };
  const spec = text('spec');
  if (spec !== undefined && !(SPEC_VERSIONS as readonly string[]).includes(spec)) {
    throw new UsageError(`--spec must be one of ${SPEC_VERSIONS.join(', ')}, not ${JSON.stringify(spec)}`);
  }
  const out = text('out');
  const explainCode = text('explain');
  return {
    positionals,
    ...(out === undefined ? {} : { out }),
    ...(spec === undefined ? {} : { spec: spec as SpecVersion }),
    ...(explainCode === undefined ? {} : { explain: explainCode }),
    replace: values.replace === true,
    json: values.json === true,
    strict: values.strict === true,
    insecureHttp: values['insecure-http'] === true,
    help: values.help === true,
  };
}

function printUsage(io: CliIO): number {
  io.stdout.write(usage());
  return EXIT_OK;
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

/** `plugin build <config> --out DIR`: the package the configuration describes, written whole. */
async function build(parsed: Parsed, io: CliIO): Promise<number> {
  const [configFile] = positionals(parsed, 'build', ['a configuration file']) as [string];
  const out = requireOut(parsed, 'build');
  const loaded = await loadConfig(configFile);
  const pkg = await buildPlugin(loaded.config, { contentRoot: loaded.contentRoot, ...(parsed.spec ? { spec: parsed.spec } : {}) });
  const files = [...pkg.files.keys()];
  if (!pkg.rejected) await writePlugin(pkg.files, out, { replace: parsed.replace });
  if (parsed.json) printJson(io, { out, spec: pkg.spec, rejected: pkg.rejected, written: !pkg.rejected, files, findings: pkg.findings });
  else {
    printFindings(io, pkg.findings);
    if (!pkg.rejected) io.stdout.write(`${out}: ${files.length} files, Agent Plugins ${pkg.spec}\n`);
  }
  if (pkg.rejected) return rejected(io, pkg.findings, resolve(configFile), 'nothing was written');
  return EXIT_OK;
}

/** `plugin validate <dir>`: the folder as a conformant client loads it. */
async function validate(parsed: Parsed, io: CliIO): Promise<number> {
  if (parsed.explain !== undefined) {
    if (parsed.positionals.length > 0 || parsed.strict) throw new UsageError('plugin validate --explain CODE takes no folder and no --strict');
    return printExplanation(parsed.explain, parsed.json, io);
  }
  const [dirArg] = positionals(parsed, 'validate', ['a plugin folder']) as [string];
  const dir = resolve(dirArg);
  const result = await validatePlugin(dir);
  const firstError = result.findings.find((f) => f.severity === 'error');
  if (parsed.json) printJson(io, { dir, ...result });
  else {
    printFindings(io, result.findings);
    if (!result.rejected) {
      const mcp = result.mcpDisabled ? ', MCP disabled' : '';
      io.stdout.write(`${dir}: Agent Plugins ${result.spec}, ${count(result.skills, 'skill')}, ${count(result.servers, 'server')}${mcp}, ${count(result.findings, 'finding')}\n`);
    }
  }
  if (parsed.strict && firstError !== undefined) {
    io.stderr.write(`agentproto: ${firstError.rule}: ${firstError.code} ${firstError.path}: ${firstError.message} (validate --strict fails on any error finding)\n`);
    return EXIT_STRICT;
  }
  if (result.rejected) return rejected(io, result.findings, dir);
  return EXIT_OK;
}

/** `plugin verify <config> <dir>`: whether the folder is exactly what the configuration builds now. */
async function verify(parsed: Parsed, io: CliIO): Promise<number> {
  const [configFile, dirArg] = positionals(parsed, 'verify', ['a configuration file', 'a plugin folder']) as [string, string];
  const dir = resolve(dirArg);
  const loaded = await loadConfig(configFile);
  const result = await verifyPlugin(dir, loaded.config, { contentRoot: loaded.contentRoot, ...(parsed.spec ? { spec: parsed.spec } : {}) });
  if (parsed.json) printJson(io, { dir, ...result });
  else if (result.ok) io.stdout.write(`${dir}: up to date\n`);
  else {
    for (const kind of ['changed', 'missing', 'unexpected', 'edited'] as const) for (const path of result[kind]) io.stdout.write(`${kind}  ${path}\n`);
    for (const pointer of result.packageJson ?? []) if (pointer !== 'package.json') io.stdout.write(`package.json  ${pointer}\n`);
  }
  if (result.ok) return EXIT_OK;
  const summary = (['changed', 'missing', 'unexpected', 'edited'] as const).filter((kind) => result[kind].length > 0).map((kind) => `${result[kind].length} ${kind}`);
  io.stderr.write(`agentproto: ${dir} is not what ${resolve(configFile)} builds: ${summary.join(', ')}\n`);
  return EXIT_FAILURE;
}

/**
 * `plugin import <dir> --out DIR`: the content root (skills, bundled files) and, beside it,
 * plugin.config.json, the imported configuration. The folder is written whole, as a package is.
 */
async function importCommand(parsed: Parsed, io: CliIO): Promise<number> {
  const [dirArg] = positionals(parsed, 'import', ['a plugin folder']) as [string];
  const out = requireOut(parsed, 'import');
  const dir = resolve(dirArg);
  const imported = await importPlugin(dir);
  const configFile = resolve(out, IMPORTED_CONFIG_FILE);
  const files = [...imported.content.keys()];
  const config = imported.rejected ? undefined : imported.config;
  if (config !== undefined) {
    // The content root is the output folder itself, so a bundled file of that name would be lost.
    if (imported.content.has(IMPORTED_CONFIG_FILE)) {
      throw new CommandError(`${dir} bundles a root file named ${IMPORTED_CONFIG_FILE}, which the imported configuration would replace; nothing was written`);
    }
    const written = new Map<string, PackageFile>(imported.content);
    written.set(IMPORTED_CONFIG_FILE, { bytes: new TextEncoder().encode(`${JSON.stringify(config, null, 2)}\n`), mode: 0o644 });
    await writePlugin(written, out, { replace: parsed.replace });
  }
  if (parsed.json) {
    printJson(io, {
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
    printFindings(io, imported.findings);
    for (const entry of imported.report) io.stdout.write(`report  ${entry.path}: ${entry.reason}\n`);
    if (config !== undefined) io.stdout.write(`${out}: ${files.length} files and ${IMPORTED_CONFIG_FILE}\n`);
  }
  if (config === undefined) return rejected(io, imported.findings, dir, 'nothing was imported');
  return EXIT_OK;
}

/** `plugin emit <config> --out DIR`: a clean package, read back and built again, in --spec's version. */
async function emit(parsed: Parsed, io: CliIO): Promise<number> {
  const [configFile] = positionals(parsed, 'emit', ['a configuration file']) as [string];
  const out = requireOut(parsed, 'emit');
  const loaded = await loadConfig(configFile);
  let result;
  try {
    result = await emitPlugin(loaded.config, out, { contentRoot: loaded.contentRoot, replace: parsed.replace, ...(parsed.spec ? { spec: parsed.spec } : {}) });
  } catch (error) {
    if (!(error instanceof PluginRejectedError)) throw error;
    const findings = [...error.findings];
    if (parsed.json) printJson(io, { out, rejected: true, written: false, files: [], findings });
    else printFindings(io, findings);
    return rejected(io, findings, resolve(configFile), 'nothing was emitted');
  }
  if (parsed.json) printJson(io, { out, rejected: false, written: true, ...result });
  else {
    printFindings(io, result.findings);
    io.stdout.write(`${out}: ${result.files.length} files, Agent Plugins ${result.spec}\n`);
  }
  return EXIT_OK;
}

/** `plugin explain CODE`: the text of an AR9O rule or of a finding code. */
async function explainCommand(parsed: Parsed, io: CliIO): Promise<number> {
  const [code] = positionals(parsed, 'explain', ['one code (AR9O0–AR9O5 or a finding code)']) as [string];
  return printExplanation(code, parsed.json, io);
}

function printExplanation(code: string, json: boolean, io: CliIO): number {
  const text = explain(code);
  if (text === undefined) throw new UsageError(`unknown code ${JSON.stringify(code)}: give an AR9O rule (AR9O0–AR9O5) or a finding code`);
  const info = Object.hasOwn(FINDING_CODES, code) ? (FINDING_CODES as Readonly<Record<string, FindingCodeInfo>>)[code] : undefined;
  if (json) printJson(io, { code, rule: info?.rule ?? code, ...(info ? { severity: info.severity } : {}), text });
  else io.stdout.write(`${code}: ${text}\n`);
  return EXIT_OK;
}

/**
 * `plugin push <dir> <ref>`: the clean package of the folder, as an OCI artifact under the
 * tag. A package with an error finding is refused before anything is uploaded: its findings
 * print, and the command exits 1. Registry failures exit 1 with their REGISTRY_* code.
 */
async function push(parsed: Parsed, io: CliIO): Promise<number> {
  const [dirArg, ref] = positionals(parsed, 'push', ['a plugin folder', 'a reference (host[:port]/repository:tag)']) as [string, string];
  const dir = resolve(dirArg);
  let result;
  try {
    result = await pushPlugin(dir, ref, registryOptions(parsed));
  } catch (error) {
    if (!(error instanceof PluginPackageInvalidError)) throw error;
    return refusedPackage(io, parsed.json, error, { dir, ref, pushed: false });
  }
  if (parsed.json) printJson(io, { dir, pushed: true, ...result });
  else {
    printFindings(io, result.findings);
    io.stdout.write(`pushed ${result.ref}: ${result.files.length} files, Agent Plugins ${result.spec}\ndigest ${result.digest}\npinned ${result.pinned}\n`);
  }
  return EXIT_OK;
}

/**
 * `plugin pull <ref> <dir>`: the artifact's package, checked against its digests, extracted
 * safely and validated, then renamed into `dir` (absent or an empty folder). A package with
 * an error finding prints its findings, exits 1, and leaves nothing at `dir`.
 */
async function pull(parsed: Parsed, io: CliIO): Promise<number> {
  const [ref, dirArg] = positionals(parsed, 'pull', ['a reference (host[:port]/repository:tag or …@sha256:…)', 'a destination folder']) as [string, string];
  const dir = resolve(dirArg);
  let result;
  try {
    result = await pullPlugin(ref, dir, registryOptions(parsed));
  } catch (error) {
    if (!(error instanceof PluginPackageInvalidError)) throw error;
    return refusedPackage(io, parsed.json, error, { dir, ref, pulled: false });
  }
  if (parsed.json) printJson(io, { pulled: true, ...result });
  else {
    const { validation } = result;
    printFindings(io, validation.findings);
    io.stdout.write(
      `${result.dir}: ${result.ref}, ${result.config.files} files, Agent Plugins ${validation.spec}, ${count(validation.skills, 'skill')}, ${count(validation.servers, 'server')}\ndigest ${result.digest}\n`,
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
function refusedPackage(io: CliIO, json: boolean, error: PluginPackageInvalidError, facts: Record<string, unknown>): number {
  const findings = [...error.findings];
  if (json) printJson(io, { ...facts, code: error.code, findings });
  else printFindings(io, findings);
  io.stderr.write(`agentproto: ${error.code}: ${error.message}\n`);
  return EXIT_FAILURE;
}

/** Configuration errors carry PLUGIN_CONFIG_INVALID and name the file and key; main prints them. */
function loadConfig(file: string): Promise<LoadedPluginConfig> {
  return loadPluginConfig(resolve(file));
}

/** One line a finding: `<severity> <rule> <code> <path>: <message>`, on stderr. */
function printFindings(io: CliIO, findings: readonly Finding[]): void {
  for (const f of findings) io.stderr.write(`${f.severity} ${f.rule} ${f.code} ${f.path}: ${f.message}\n`);
}

/** The failure line of a plugin a conformant client would load nothing of: exit 1. */
function rejected(io: CliIO, findings: readonly Finding[], subject: string, consequence?: string): number {
  const first = findings.find((f) => f.severity === 'error');
  const why = first ? ` (${first.rule} ${first.code} ${first.path})` : '';
  io.stderr.write(`agentproto: ${REJECTED}: ${subject}: a conformant client rejects the plugin${why}${consequence ? `; ${consequence}` : ''}\n`);
  return EXIT_FAILURE;
}

function count(items: readonly unknown[], noun: string): string {
  return `${items.length} ${noun}${items.length === 1 ? '' : 's'}`;
}
