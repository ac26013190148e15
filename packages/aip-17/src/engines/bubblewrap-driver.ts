import { spawnSync } from 'node:child_process';
import type { RunnerLanguage, RunnerLimits, SandboxTemplate } from '../define/types.js';
import { RunnerNeedsError } from './errors.js';
import {
  BUNDLE_ROOT,
  type LocalRunOptions,
  type RunFolder,
  extractBundle,
  localEnforcement,
  lookUp,
  makeRunFolder,
  removeRunFolder,
  runInFolder,
} from './local.js';
import type { SandboxBox, SandboxCreateRequest, SandboxDriver } from './types.js';

/** Options of `bubblewrapDriver`: where and how boxes run on this machine. */
export interface BubblewrapDriverOptions extends LocalRunOptions {
  /** The template id a host registers it under. Default `local-bubblewrap`. */
  id?: string;
  /** Where runtimes are looked for, for the template's languages and `needs.language`. Default `/usr/local/bin:/usr/bin:/bin`. */
  path?: string;
}

/** A created local sandbox: a run folder on this machine. */
export interface BubblewrapBox extends SandboxBox {
  /** The box's host folder, removed by `destroy`. */
  readonly folder: string;
}

/** What a box was created with, kept beside it. */
interface BoxState {
  readonly folder: RunFolder;
  readonly env: Readonly<Record<string, string>>;
  readonly limits: RunnerLimits;
  readonly network: { egress: readonly string[] } | undefined;
}

/** A `SandboxDriver` on this machine, with its template. */
export interface BubblewrapDriver extends SandboxDriver<BubblewrapBox> {
  /** Its entry for `defineRunner`'s `images` registry. */
  readonly template: SandboxTemplate;
}

const RUNTIMES: Record<Exclude<RunnerLanguage, 'multi'>, string> = { node: 'node', python: 'python3' };

/**
 * A local `sandbox` driver on bubblewrap: each box is a run folder on this machine, and
 * `exec` runs as the isolated subprocess engine does (bundle read-only at /bundle, scratch
 * /tmp, system folders read-only, own PID and network namespaces, rlimits). It honours what
 * it can of `needs` at `create`: `language` (the runtime is installed) and `native` (the
 * Debian package is installed, by `dpkg-query`); it installs nothing, so `npm` and `pip`
 * needs are refused. The template's languages are the runtimes found now (`multi` when
 * both are); it declares no baked packages, since `create` checks the real ones.
 *
 * @example
 * ```ts
 * import { bubblewrapDriver, createRunner, defineRunner } from '@agentproto/aip-17';
 *
 * const driver = bubblewrapDriver();
 * const runner = createRunner({ sandbox: driver });
 * const handle = defineRunner({ engine: 'sandbox' }, { run: manifest.run, images: [driver.template] });
 * const outcome = await runner.run({ runner: handle, origin: 'workspace', bundle, run: manifest.run });
 * ```
 *
 * @throws {RunnerNeedsError} `AIP17_NEEDS_UNSUPPORTED` (from `create`): npm or pip needs; `AIP17_NEEDS_MISSING`: a runtime or Debian package is not installed.
 * @throws {SandboxUnavailableError} `SANDBOX_UNAVAILABLE` (from `create`): this machine cannot isolate.
 */
export function bubblewrapDriver(options: BubblewrapDriverOptions = {}): BubblewrapDriver {
  const id = options.id ?? 'local-bubblewrap';
  const path = options.path ?? '/usr/local/bin:/usr/bin:/bin';
  const hasRuntime = (language: RunnerLanguage) =>
    language === 'multi' || lookUp(RUNTIMES[language], path) !== undefined;
  const boxes = new WeakMap<BubblewrapBox, BoxState>();
  const stateOf = (box: BubblewrapBox): BoxState => {
    const state = boxes.get(box);
    if (state === undefined) throw new TypeError('not a box of this driver, or destroyed');
    return state;
  };
  const languages = (['node', 'python'] as const).filter(hasRuntime);
  const template: SandboxTemplate = {
    id,
    language: languages.length === 2 ? [...languages, 'multi'] : languages,
    baked: { native: [] },
    capabilities: ['stdio'],
    cost_tier: 'light',
  };
  return {
    template,
    enforcement: localEnforcement({ memory_mb: 1, timeout_ms: 1, cpu_ms: 1 }),
    async create(request: SandboxCreateRequest): Promise<BubblewrapBox> {
      const unsupported = [...request.needs.npm.map((n) => `npm:${n}`), ...request.needs.pip.map((n) => `pip:${n}`)];
      if (unsupported.length > 0)
        throw new RunnerNeedsError(
          'AIP17_NEEDS_UNSUPPORTED',
          id,
          unsupported,
          'this sandbox has no network install; bundle the packages instead',
        );
      const missing = [
        ...(hasRuntime(request.needs.language) ? [] : [`language:${request.needs.language}`]),
        ...request.needs.native.filter((name) => !debianPackageInstalled(name)).map((name) => `native:${name}`),
      ];
      if (missing.length > 0)
        throw new RunnerNeedsError('AIP17_NEEDS_MISSING', id, missing, 'not installed on this machine');
      const folder = await makeRunFolder(options);
      const box: BubblewrapBox = { bundleRoot: BUNDLE_ROOT, folder: folder.work };
      boxes.set(box, { folder, env: { ...request.env }, limits: request.limits, network: request.network });
      return box;
    },
    async upload(box, bundle) {
      await extractBundle(stateOf(box).folder, bundle, options);
    },
    async exec(box, request) {
      const state = stateOf(box);
      const result = await runInFolder(
        state.folder,
        {
          argv: request.argv,
          env: state.env,
          limits: state.limits,
          timeoutMs: request.timeoutMs,
          network: state.network,
          stdin: request.stdin,
          signal: request.signal,
        },
        options,
      );
      return { reason: result.reason, stdout: result.stdout, stderr: result.stderr };
    },
    async destroy(box) {
      const state = boxes.get(box);
      boxes.delete(box);
      if (state) await removeRunFolder(state.folder);
    },
  };
}

/** Whether Debian's package database says `name` is installed. */
function debianPackageInstalled(name: string): boolean {
  // A package name is [a-z0-9][a-z0-9+.-]+ (Debian policy 5.6.1); anything else is no package.
  if (!/^[a-z0-9][a-z0-9+.-]+(:[a-z0-9-]+)?$/.test(name)) return false;
  const dpkgQuery = lookUp('dpkg-query', '/usr/bin:/bin');
  if (dpkgQuery === undefined) return false;
  const result = spawnSync(dpkgQuery, ['-W', '-f', '${Status}', name], { encoding: 'utf8', timeout: 10_000 });
  return result.status === 0 && /\binstall ok installed\b/.test(result.stdout);
}
