/**
 * The forced command of every key the testkit sshd accepts. sshd runs it instead of
 * whatever the client asked for, with the request in SSH_ORIGINAL_COMMAND; it lets through
 * only what `git clone/fetch/ls-remote` send, `git-upload-pack '<path>'`, and runs
 * upload-pack on `<root>/<path>`. Anything else (a shell, `git-receive-pack`, a path
 * with `..`) exits 128 with a message on stderr, which ssh shows to the client.
 *
 * Written in POSIX sh so a session costs one small process, not a Node start-up.
 */
export function gitOnlyShellScript(root: string): string {
  return `#!/bin/sh
root=${shQuote(root)}
refuse() { printf 'testkit sshd: %s\\n' "$1" >&2; exit 128; }

cmd=\${SSH_ORIGINAL_COMMAND-}
case $cmd in
  "git-upload-pack '"*"'") repo=\${cmd#"git-upload-pack '"} ;;
  "git upload-pack '"*"'") repo=\${cmd#"git upload-pack '"} ;;
  *) refuse "only git-upload-pack is allowed, not: $cmd" ;;
esac
repo=\${repo%"'"}

# git quotes ' and ! with backslashes; such names are not worth supporting in fixtures.
case $repo in
  *"'"*|*'\\'*|*'!'*) refuse "unsupported characters in repository path" ;;
esac
# ssh://host/x.git asks for '/x.git' and host:x.git for 'x.git': both mean <root>/x.git.
while :; do
  case $repo in /*) repo=\${repo#/} ;; *) break ;; esac
done
case /$repo/ in
  //|*/../*|*/./*) refuse "repository path must stay inside the served root" ;;
esac

# The user's git config must not change what a test sees.
GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_CONFIG_GLOBAL GIT_CONFIG_NOSYSTEM
# Partial clone and wants by object id, as on hosted services (see the HTTP server).
exec git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true upload-pack "$root/$repo"
`;
}

/** Quotes a string for sh: single quotes, each inner ' written as '\''. */
export function shQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
