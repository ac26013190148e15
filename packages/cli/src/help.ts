import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { shellQuote } from './format.js';
import {
  GROUPS,
  type GroupSpec,
  OUTPUT_OPTIONS,
  type OptionSpec,
  type SubcommandSpec,
  describeOption,
} from './table.js';

/** Help is wrapped to this many columns, the width of the narrowest terminal people use. */
const WIDTH = 80;
/** A left column wider than this does not push every description right: its text starts after it. */
const MAX_LEFT = 26;

/** The line a wrong command line ends with, instead of the whole help. */
export function helpPointer(group?: string, sub?: string): string {
  const words = ['agentproto', group, sub, '--help'].filter((word) => word !== undefined);
  return `Run '${words.join(' ')}' for usage.`;
}

/**
 * The store used when no --store is given, as content-cache's `defaultCacheRoot` computes it,
 * here so that help does not load the cache to print one path (a test holds the two equal).
 */
export function defaultStoreRoot(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'agentproto');
  return join(homedir(), '.cache', 'agentproto');
}

/** `agentproto --help`: one line per command group, a few examples, and where to read more. */
export function overview(): string {
  const groups = Object.entries(GROUPS).map(([name, spec]) => [name, spec.summary] as const);
  return [
    'Usage: agentproto <command> <subcommand> [options]',
    '',
    'Commands:',
    ...columns(groups),
    '',
    'Examples:',
    '  agentproto cache put ./my-skill --name my-skill',
    '  agentproto skills prepare skills.yaml',
    '  agentproto plugin validate dist/acme.tools --strict',
    '  agentproto help plugin build',
    '',
    'Options:',
    ...columns([...outputOptionRows(), ['--version', 'print the version']]),
    '',
    ...wrap('Exit status: 0 done, 1 problems found, 2 wrong command line or a --strict failure.', WIDTH),
    ...wrap(
      "Run 'agentproto <command> --help' for a command's subcommands, options and examples, and 'agentproto <command> <subcommand> --help' for one subcommand's.",
      WIDTH,
    ),
    '',
  ].join('\n');
}

/** `agentproto <group> --help`: its subcommands, every option (saying which subcommands take it), examples. */
export function groupHelp(group: string): string {
  const spec = GROUPS[group]!;
  const subs = Object.entries(spec.subcommands);
  const options = Object.entries(spec.options).map(([name, option]) => {
    const takers = subs.filter(([, sub]) => sub.options.includes(name)).map(([subName]) => subName);
    const prefix =
      takers.length === subs.length || typeof option.description !== 'string' ? '' : `${takers.join(', ')}: `;
    return [optionLabel(name, option), `${prefix}${describeOption(option)}`] as const;
  });
  return [
    `Usage: agentproto ${group} <subcommand> [options]`,
    '',
    ...wrap(spec.description, WIDTH),
    '',
    'Subcommands:',
    ...columns(subs.map(([name, sub]) => [usageOf(name, sub), sub.summary] as const)),
    '',
    'Options:',
    ...columns([...options, ...outputOptionRows()]),
    ...notes(spec),
    '',
    'Examples:',
    ...spec.examples.map((example) => `  ${example}`),
    '',
    ...exitStatus(spec),
    '',
    ...wrap(`Run 'agentproto ${group} <subcommand> --help' for one subcommand's options and examples.`, WIDTH),
    '',
  ].join('\n');
}

/** `agentproto <group> <sub> --help`: that subcommand's usage, its options and its examples only. */
export function subcommandHelp(group: string, sub: string): string {
  const spec = GROUPS[group]!;
  const subSpec = spec.subcommands[sub]!;
  const options = subSpec.options.map((name) => {
    const option = spec.options[name]!;
    return [optionLabel(name, option), describeOption(option, sub)] as const;
  });
  return [
    `Usage: agentproto ${group} ${usageOf(sub, subSpec)} [options]`,
    '',
    ...wrap(`${capitalize(subSpec.summary)}.`, WIDTH),
    '',
    'Options:',
    ...columns([...options, ...outputOptionRows()]),
    ...notes(spec, subSpec),
    '',
    'Examples:',
    ...subSpec.examples.map((example) => `  ${example}`),
    '',
    ...exitStatus(spec),
    '',
  ].join('\n');
}

function usageOf(name: string, sub: SubcommandSpec): string {
  const shown = (p: SubcommandSpec['positionals'][number]) =>
    p.shown ?? `${p.optional ? `[${p.name}]` : `<${p.name}>`}${p.variadic ? '...' : ''}`;
  return [name, ...sub.positionals.map(shown)].join(' ');
}

function optionLabel(name: string, option: OptionSpec): string {
  return option.placeholder === undefined ? `--${name}` : `--${name} ${option.placeholder}`;
}

function outputOptionRows(): (readonly [string, string])[] {
  return [
    ...Object.entries(OUTPUT_OPTIONS).map(
      ([name, option]) => [optionLabel(name, option), describeOption(option)] as const,
    ),
    ['-h, --help', 'show this help'],
  ];
}

/** The group's notes; for one subcommand, only those about an option it takes (registry credentials). */
function notes(spec: GroupSpec, sub?: SubcommandSpec): string[] {
  const relevant = (spec.notes ?? []).filter(
    (note) => sub === undefined || !note.startsWith('Registry credentials') || sub.options.includes('insecure-http'),
  );
  return relevant.flatMap((note) => ['', ...wrap(note, WIDTH)]);
}

function exitStatus(spec: GroupSpec): string[] {
  return ['Exit status:', ...spec.exitStatus.flatMap((text, status) => hanging(`  ${status}  `, text))];
}

/**
 * Two columns, the left as wide as its widest cell (up to MAX_LEFT), the right wrapped to
 * WIDTH under itself; `{defaultStore}` in a description is the default store's path.
 */
function columns(rows: readonly (readonly [string, string])[]): string[] {
  const left = Math.min(MAX_LEFT, Math.max(...rows.map(([label]) => label.length)));
  return rows.flatMap(([label, text]) => {
    const described = text.replaceAll('{defaultStore}', shellQuote(defaultStoreRoot()));
    return hanging(`  ${label.padEnd(left)}  `, described, 2 + left + 2);
  });
}

/** `head` then `text` wrapped, its next lines indented to `indent` (default: head's width). */
function hanging(head: string, text: string, indent = head.length): string[] {
  const [first = '', ...rest] = wrap(text, WIDTH - indent, WIDTH - head.length);
  return [`${head}${first}`.trimEnd(), ...rest.map((line) => `${' '.repeat(indent)}${line}`)];
}

/** Words filled into lines of at most `width` (the first line `firstWidth`); a longer word stands alone. */
function wrap(text: string, width: number, firstWidth = width): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const limit = lines.length === 0 ? firstWidth : width;
    if (line !== '' && line.length + 1 + word.length > limit) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
