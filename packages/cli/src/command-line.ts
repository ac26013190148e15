import { parseArgs } from 'node:util';
import { closest } from './suggest.js';
import { GROUPS, type Invocation, RENAMED_OPTIONS, isGroup, optionsOf } from './table.js';
import { UsageError } from './usage.js';

/** What a command line asks for, once the table has read it. */
export type Request =
  | { kind: 'overview' }
  | { kind: 'version' }
  | { kind: 'help'; group: string; sub?: string }
  | { kind: 'run'; invocation: Invocation };

const HELP_FLAGS = ['-h', '--help'];

/**
 * Reads a command line (without the program name, `--verbose` taken out) against the table.
 * Every mistake is a UsageError in the product's words, with the closest valid word when one
 * is near; node's parser only splits the words, its own messages never reach the user.
 */
export function readCommandLine(args: readonly string[]): Request {
  const [first, ...rest] = args;
  if (first === undefined) return { kind: 'overview' };
  if (first === 'help' || HELP_FLAGS.includes(first)) return helpTopic(rest);
  if (first === '--version') return { kind: 'version' };
  if (!isGroup(first)) throw unknownCommand(first);
  const group = GROUPS[first]!;
  const [sub, ...words] = rest;
  const helpAsked = asksHelp(rest);
  if (sub === undefined || !Object.hasOwn(group.subcommands, sub)) {
    if (helpAsked) return { kind: 'help', group: first };
    const names = Object.keys(group.subcommands);
    if (sub === undefined || sub.startsWith('-'))
      throw new UsageError(`${first} needs a subcommand: ${listed(names, 'or')}`);
    const suggestion = closest(sub, names);
    throw new UsageError(`unknown command ${JSON.stringify(`${first} ${sub}`)}`, {
      ...(suggestion === undefined ? {} : { suggestion: `${first} ${suggestion}` }),
    });
  }
  // `-h` or `--help` anywhere asks for the subcommand's help, whatever else the line holds.
  if (helpAsked) return { kind: 'help', group: first, sub };
  return { kind: 'run', invocation: readOptions(first, sub, words) };
}

/** `help`, `help plugin`, `help plugin build`; options after them change nothing. */
function helpTopic(words: readonly string[]): Request {
  const [topic, sub] = words.filter((word) => !word.startsWith('-'));
  if (topic === undefined) return { kind: 'overview' };
  if (!isGroup(topic)) {
    const suggestion = closest(topic, Object.keys(GROUPS));
    throw new UsageError(
      `no help for ${JSON.stringify(topic)}: the commands are ${listed(Object.keys(GROUPS), 'and')}`,
      {
        ...(suggestion === undefined ? {} : { suggestion: `help ${suggestion}` }),
      },
    );
  }
  if (sub === undefined) return { kind: 'help', group: topic };
  const names = Object.keys(GROUPS[topic]!.subcommands);
  if (names.includes(sub)) return { kind: 'help', group: topic, sub };
  const suggestion = closest(sub, names);
  throw new UsageError(
    `no help for ${JSON.stringify(`${topic} ${sub}`)}: its subcommands are ${listed(names, 'and')}`,
    {
      ...(suggestion === undefined ? {} : { suggestion: `help ${topic} ${suggestion}` }),
    },
  );
}

/** A first word that is no command: `plugins` → `plugin`, `versoin` → `--version`. */
function unknownCommand(word: string): UsageError {
  const words = [...Object.keys(GROUPS), 'help', '--help', '--version'];
  // Compared without their dashes, so that `versoin` and `-version` find `--version`.
  const bare = words.map((candidate) => candidate.replace(/^-+/, ''));
  const found = closest(word.replace(/^-+/, ''), bare);
  const suggestion = found === undefined ? undefined : words[bare.indexOf(found)];
  const message = word.startsWith('-') ? `unknown option ${word}` : `unknown command ${JSON.stringify(word)}`;
  return new UsageError(message, suggestion === undefined ? {} : { suggestion });
}

/**
 * The options and positionals of `group sub`, by the table: each option must be one the
 * subcommand takes, a string option needs a non-empty value, a flag takes none, and the
 * positionals must be exactly those named (the last, when variadic, one or more).
 */
function readOptions(group: string, sub: string, args: readonly string[]): Invocation {
  const command = `${group} ${sub}`;
  const options = optionsOf(group, sub);
  // Non-strict: the tokens come back whatever they are, and each is judged below.
  const { tokens } = parseArgs({
    args: [...args],
    options: Object.fromEntries(Object.entries(options).map(([name, option]) => [name, { type: option.type }])),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: Record<string, string | string[] | true> = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') {
      positionals.push(token.value);
      continue;
    }
    if (token.kind !== 'option') continue;
    const { name, rawName } = token;
    if (Object.hasOwn(RENAMED_OPTIONS, name))
      throw new UsageError(`${command}: --${name} is now --${RENAMED_OPTIONS[name]}`);
    const option = Object.hasOwn(options, name) ? options[name] : undefined;
    if (option === undefined || !rawName.startsWith('--')) throw unknownOption(group, sub, rawName);
    if (option.type === 'boolean') {
      if (token.value !== undefined) throw new UsageError(`${command}: --${name} takes no value`);
      values[name] = true;
      continue;
    }
    // `--out --json`: node reads `--json` as the value; the user forgot the value.
    const missing = token.value === undefined || (!token.inlineValue && /^-./.test(token.value));
    if (missing) throw new UsageError(`${command}: --${name} needs a value (${option.placeholder ?? 'a value'})`);
    if (token.value === '') throw new UsageError(`${command}: --${name} must not be empty`);
    if (option.choices !== undefined && !option.choices.includes(token.value))
      throw new UsageError(
        `${command}: --${name} must be one of ${option.choices.join(', ')}, not ${JSON.stringify(token.value)}`,
        { ...withSuggestion(closest(token.value, option.choices), (near) => `--${name} ${near}`) },
      );
    if (option.multiple) values[name] = [...((values[name] as string[] | undefined) ?? []), token.value];
    else values[name] = token.value; // the last one counts, as with node's parser
  }
  const spec = GROUPS[group]!.subcommands[sub]!;
  const expected = spec.positionals;
  const required = expected.filter((positional) => !positional.optional).length;
  const most = expected.at(-1)?.variadic ? Number.POSITIVE_INFINITY : expected.length;
  if (positionals.length < required || positionals.length > most) {
    if (expected.length === 0)
      throw new UsageError(`${command} takes no arguments, not ${JSON.stringify(positionals[0])}`);
    throw new UsageError(
      `${command} takes ${listed(
        expected.map((positional) => positional.what),
        'and',
      )}`,
    );
  }
  for (const name of spec.required ?? [])
    if (values[name] === undefined)
      throw new UsageError(`${command} needs --${name} ${options[name]!.placeholder ?? ''}`.trim());
  const invocation = { group, sub, values, positionals };
  spec.check?.(invocation);
  return invocation;
}

function withSuggestion(found: string | undefined, spell: (word: string) => string): { suggestion?: string } {
  return found === undefined ? {} : { suggestion: spell(found) };
}

/**
 * An option the subcommand does not take: the closest of its own, else the subcommands of the
 * group that take exactly this one (`plugin validate --out`: build, import and emit do).
 */
function unknownOption(group: string, sub: string, raw: string): UsageError {
  const command = `${group} ${sub}`;
  const name = raw.replace(/^-+/, '');
  const own = Object.keys(optionsOf(group, sub));
  const near = closest(name, own);
  if (near !== undefined) return new UsageError(`${command}: unknown option ${raw}`, { suggestion: `--${near}` });
  const takers = Object.entries(GROUPS[group]!.subcommands)
    .filter(([, spec]) => spec.options.includes(name))
    .map(([other]) => other);
  if (raw.startsWith('--') && takers.length > 0)
    return new UsageError(`${command} takes no ${raw}: it is an option of ${group} ${listed(takers, 'and')}`);
  return new UsageError(`${command}: unknown option ${raw}`);
}

/** Whether `-h` or `--help` stands anywhere before `--`: the line asks for help, whatever else it holds. */
export function asksHelp(args: readonly string[]): boolean {
  return beforeSeparator(args).some((arg) => HELP_FLAGS.includes(arg));
}

/** The words before `--`: after it, nothing is an option. */
export function beforeSeparator(args: readonly string[]): readonly string[] {
  const end = args.indexOf('--');
  return end === -1 ? args : args.slice(0, end);
}

/** `a, b or c`. */
function listed(words: readonly string[], last: 'and' | 'or'): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} ${last} ${words.at(-1)}`;
}
