#!/usr/bin/env node
// The tests start real git and OpenSSH servers and a CNCF distribution registry, make
// the registry's token-signing certificate with openssl, compile the racing link swapper
// with cc (packages/testkit), and run git fetches under prlimit and bundles under unshare
// (util-linux), run the CLI's completion scripts in zsh and fish and the browser example in Chromium, so they need these programs (and the
// bundling bench compares with pigz). Missing ones are installed when we can (root with apt-get, as in CI and fresh
// containers); otherwise we name the command and fail: tests are never skipped silently.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Program → Debian package that provides it. */
const REQUIRED = [
  { program: 'git', pkg: 'git' },
  { program: 'sshd', pkg: 'openssh-server', also: ['/usr/sbin/sshd'] },
  { program: 'ssh', pkg: 'openssh-client' },
  { program: 'ssh-keygen', pkg: 'openssh-client' },
  { program: 'openssl', pkg: 'openssl' },
  { program: 'docker-registry', pkg: 'docker-registry', also: ['/usr/bin/docker-registry'] },
  { program: 'cc', pkg: 'gcc' },
  { program: 'prlimit', pkg: 'util-linux' },
  { program: 'unshare', pkg: 'util-linux' },
  // `agentproto completion zsh|fish` scripts are run in the real shells.
  { program: 'zsh', pkg: 'zsh' },
  { program: 'fish', pkg: 'fish' },
  // @agentproto/sandbox runs bundles and git inside bubblewrap; socat bridges a sandbox's
  // loopback port to the host-side egress proxy.
  { program: 'bwrap', pkg: 'bubblewrap' },
  { program: 'socat', pkg: 'socat' },
  // bench/aip-26.bench.ts compares bundling with `tar | pigz` (parallel gzip).
  { program: 'pigz', pkg: 'pigz' },
  // examples/validate-in-browser is tested in Debian's Chromium, driven by playwright-core.
  { program: 'chromium', pkg: 'chromium', also: ['/usr/bin/chromium'] },
];

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Found on PATH, or in the sbin folders a non-root PATH often leaves out (sshd lives there). */
function find(program, also = []) {
  const folders = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/sbin', '/sbin'];
  return [...also, ...folders.map((folder) => join(folder, program))].find(isExecutable);
}

/** `ensure-system-deps.mjs git` checks only those programs (the demo needs git alone). */
const wanted = process.argv.slice(2);
const checked = wanted.length === 0 ? REQUIRED : REQUIRED.filter(({ program }) => wanted.includes(program));
const purpose = wanted.length === 0 ? 'the tests need' : 'this needs';

function missingPackages() {
  const packages = checked.filter(({ program, also }) => !find(program, also)).map(({ pkg }) => pkg);
  // openssh-server depends on openssh-client: asking for both is harmless but noisy.
  return [...new Set(packages)].filter((pkg, _, all) => pkg !== 'openssh-client' || !all.includes('openssh-server'));
}

function run(command, args, env = process.env) {
  console.error(`ensure-system-deps: ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  return result.status === 0;
}

let missing = missingPackages();
if (missing.length === 0) process.exit(0);

const isRoot = process.getuid?.() === 0;
const aptGet = find('apt-get');
if (isRoot && aptGet) {
  console.error(`ensure-system-deps: ${purpose} ${missing.join(', ')}; installing with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (run(aptGet, ['update'], env)) run(aptGet, ['install', '-y', '--no-install-recommends', ...missing], env);
  missing = missingPackages();
  if (missing.length === 0) process.exit(0);
}

console.error(
  `ensure-system-deps: ${purpose} programs that are not installed (${missing.join(', ')}).\n` +
    `Install them, then run this again:\n\n` +
    `  sudo apt-get install -y ${missing.join(' ')}\n`,
);
process.exit(1);
