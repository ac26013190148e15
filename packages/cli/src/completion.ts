import { EXIT_OK } from './io.js';
import { GROUPS, type Invocation, type PathKind, describeOption, optionsOf } from './table.js';
import type { Terminal } from './terminal.js';

/**
 * `agentproto completion <bash|zsh|fish>`: a completion script made from the command table,
 * so it offers exactly the groups, subcommands and options the parser takes, and files or
 * folders where the table says a path goes.
 */
export async function runCompletion(invocation: Invocation, term: Terminal): Promise<number> {
  const script = invocation.sub === 'bash' ? bashScript() : invocation.sub === 'zsh' ? zshScript() : fishScript();
  term.stdout.write(script);
  return EXIT_OK;
}

/** The first words: the groups, then what else the program takes on its own. */
const FIRST_WORDS = [...Object.keys(GROUPS), 'help', '--help', '--version'];

interface Command {
  group: string;
  sub: string;
  /** Every option, `--name`. */
  options: string[];
  /** The options that take a value, with what the value is. */
  values: { option: string; kind: PathKind | undefined }[];
  /** What each positional is, in order. */
  positionals: (PathKind | undefined)[];
  /** The last positional takes one or more arguments: it is also every one after it. */
  variadic: boolean;
}

function commands(): Command[] {
  return Object.entries(GROUPS).flatMap(([group, spec]) =>
    Object.entries(spec.subcommands).map(([sub, subSpec]) => {
      const options = Object.entries(optionsOf(group, sub));
      return {
        group,
        sub,
        options: [...options.map(([name]) => `--${name}`), '--help'],
        values: options
          .filter(([, option]) => option.type === 'string')
          .map(([name, option]) => ({ option: `--${name}`, kind: option.path })),
        positionals: subSpec.positionals.map((positional) => positional.path ?? positional.completes),
        variadic: subSpec.positionals.at(-1)?.variadic === true,
      };
    }),
  );
}

/** compgen's action for a path kind: folders, files, or nothing to offer. */
function compgen(kind: PathKind | undefined): string {
  if (kind === 'folder' || kind === 'new-folder' || kind === 'store') return 'COMPREPLY=($(compgen -d -- "$cur"))';
  if (kind === 'file' || kind === 'new-file') return 'COMPREPLY=($(compgen -f -- "$cur"))';
  return 'COMPREPLY=()';
}

function bashScript(): string {
  const all = commands();
  const groupCases = Object.entries(GROUPS)
    .map(([group, spec]) => `    ${group}) words="${Object.keys(spec.subcommands).join(' ')}" ;;`)
    .join('\n');
  const optionCases = all
    .map(
      ({ group, sub, options, values }) =>
        `    "${group} ${sub}") options="${options.join(' ')}"; takes_value="${values.map((v) => v.option).join(' ')}" ;;`,
    )
    .join('\n');
  const valueCases = all
    .flatMap(({ group, sub, values }) =>
      values.map(({ option, kind }) => `    "${group} ${sub} ${option}") ${compgen(kind)}; return ;;`),
    )
    .join('\n');
  const positionalCases = all
    .flatMap(({ group, sub, positionals, variadic }) => [
      ...positionals.map((kind, i) => `    "${group} ${sub} ${i}") ${compgen(kind)} ;;`),
      // After the numbered ones: every further argument of a variadic last positional.
      ...(variadic ? [`    "${group} ${sub} "*) ${compgen(positionals.at(-1))} ;;`] : []),
    ])
    .join('\n');
  return `# agentproto completion for bash: source <(agentproto completion bash)
_agentproto() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  local prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local group="\${COMP_WORDS[1]}" sub="\${COMP_WORDS[2]}"
  local words options takes_value
  COMPREPLY=()
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W "${FIRST_WORDS.join(' ')}" -- "$cur"))
    return
  fi
  if [[ $group == help ]]; then
    case "$COMP_CWORD" in
      2) COMPREPLY=($(compgen -W "${Object.keys(GROUPS).join(' ')}" -- "$cur")) ;;
      3) group="\${COMP_WORDS[2]}"; _agentproto_subcommands; COMPREPLY=($(compgen -W "$words" -- "$cur")) ;;
    esac
    return
  fi
  _agentproto_subcommands
  if [[ $COMP_CWORD -eq 2 ]]; then
    COMPREPLY=($(compgen -W "$words --help" -- "$cur"))
    return
  fi
  case "$group $sub" in
${optionCases}
    *) return ;;
  esac
  case "$group $sub $prev" in
${valueCases}
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
    return
  fi
  # Which positional this is: the words after the subcommand that are neither options nor their values.
  local i n=0
  for ((i = 3; i < COMP_CWORD; i++)); do
    local word="\${COMP_WORDS[i]}"
    if [[ $word == -* ]]; then continue; fi
    if [[ " $takes_value " == *" \${COMP_WORDS[i-1]} "* ]]; then continue; fi
    n=$((n + 1))
  done
  case "$group $sub $n" in
${positionalCases}
  esac
}
_agentproto_subcommands() {
  case "$group" in
${groupCases}
    *) words="" ;;
  esac
}
complete -o filenames -F _agentproto agentproto
`;
}

/** zsh runs the bash function through its bash-completion layer, so both offer the same words. */
function zshScript(): string {
  return `#compdef agentproto
# agentproto completion for zsh: source <(agentproto completion zsh)
autoload -U +X bashcompinit && bashcompinit
${bashScript()}`;
}

function fishScript(): string {
  const quote = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const lines = [
    '# agentproto completion for fish: agentproto completion fish | source',
    'complete -c agentproto -f',
    ...Object.entries(GROUPS).map(
      ([group, spec]) => `complete -c agentproto -n __fish_use_subcommand -a ${group} -d ${quote(spec.summary)}`,
    ),
    `complete -c agentproto -n __fish_use_subcommand -l version -d 'print the version'`,
    `complete -c agentproto -n __fish_use_subcommand -a help -d 'show the help of a command'`,
  ];
  for (const [group, spec] of Object.entries(GROUPS)) {
    const inGroup = `__fish_seen_subcommand_from ${group}`;
    const subs = Object.keys(spec.subcommands);
    for (const [sub, subSpec] of Object.entries(spec.subcommands)) {
      lines.push(
        `complete -c agentproto -n ${quote(`${inGroup}; and not __fish_seen_subcommand_from ${subs.join(' ')}`)} -a ${sub} -d ${quote(subSpec.summary)}`,
      );
      const inSub = quote(`${inGroup}; and __fish_seen_subcommand_from ${sub}`);
      for (const [name, option] of Object.entries(optionsOf(group, sub))) {
        const value =
          option.type === 'boolean'
            ? ''
            : option.path === 'folder' || option.path === 'new-folder' || option.path === 'store'
              ? " -x -a '(__fish_complete_directories)'"
              : option.path === undefined
                ? ' -r'
                : ' -r -F';
        lines.push(
          `complete -c agentproto -n ${inSub} -l ${name}${value} -d ${quote(describeOption(option, sub).replaceAll('{defaultStore}', 'the platform cache folder'))}`,
        );
      }
      // Paths for the positionals, but not as the value of an option: after `--out` only folders.
      const valued = Object.entries(optionsOf(group, sub))
        .filter(([, option]) => option.type !== 'boolean')
        .map(([name]) => `--${name}`);
      const forPositional = quote(
        `${inGroup}; and __fish_seen_subcommand_from ${sub}${valued.length ? `; and not __fish_prev_arg_in ${valued.join(' ')}` : ''}`,
      );
      if (subSpec.positionals.some((positional) => (positional.path ?? positional.completes) !== undefined))
        lines.push(`complete -c agentproto -n ${forPositional} -F`);
    }
  }
  return `${lines.join('\n')}\n`;
}
