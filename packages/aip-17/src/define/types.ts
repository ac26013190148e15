import type { RunValue } from '@agentproto/aip-26';

/** Where the body runs (AIP-17 `runner.engine`). */
export type RunnerEngine = 'in-process' | 'subprocess' | 'sandbox';

/** The primary language runtime of the body (AIP-17 `runner.needs.language`). */
export type RunnerLanguage = 'node' | 'python' | 'multi';

/** The `runner` block as a manifest writes it (AIP-17, normative). Every field optional. */
export interface RunnerDefinition {
  /** Where the body runs. Default `subprocess`. */
  readonly engine?: RunnerEngine;
  /** A sandbox template id of the host's registry; only a `sandbox` runner has one. */
  readonly image?: string;
  /** Declarative dependency requirements. */
  readonly needs?: {
    readonly language?: RunnerLanguage;
    readonly native?: readonly string[];
    readonly npm?: readonly string[];
    readonly pip?: readonly string[];
  };
  /** Resource caps, each an integer of at least 1. */
  readonly limits?: {
    readonly memory_mb?: number;
    readonly timeout_ms?: number;
    readonly cpu_ms?: number;
  };
}

/** The resource caps of a handle, every one populated. */
export interface RunnerLimits {
  /** Hard memory cap in MiB. */
  readonly memory_mb: number;
  /** Wall-clock cap in ms. */
  readonly timeout_ms: number;
  /**
   * CPU-time cap in ms; `0` means no cap (the spec's default). A declared cap is at least 1
   * (the schema's `minimum`), so `0` never collides with one.
   */
  readonly cpu_ms: number;
}

/** A runner block with the defaults applied and the image resolved (AIP-17 `RunnerHandle`). Deeply frozen. */
export interface RunnerHandle {
  /** Where the body runs, as declared (before `resolveForOrigin`), else `subprocess`. */
  readonly engine: RunnerEngine;
  /** The sandbox template id (explicit or auto-picked); `null` for the other engines. */
  readonly image: string | null;
  /** The needs, every list present (`[]` when undeclared). */
  readonly needs: {
    readonly language: RunnerLanguage;
    readonly native: readonly string[];
    readonly npm: readonly string[];
    readonly pip: readonly string[];
  };
  /** The caps: declared, else the host's defaults, else the spec's recommended ones. */
  readonly limits: RunnerLimits;
  /**
   * Applies the host's downgrade rule for a manifest from `origin`: an `in-process` runner from
   * an origin outside `host.trustedOrigins` becomes a copy with engine `subprocess`, image
   * `null` and `downgraded: true`, and the host's logger gets one warning. Otherwise a copy
   * with `downgraded: false`. An absent origin is untrusted.
   */
  resolveForOrigin(origin: string | undefined): ResolvedRunnerHandle;
}

/** A handle after the downgrade rule, with whether it fired. Deeply frozen. */
export type ResolvedRunnerHandle = RunnerHandle & { readonly downgraded: boolean };

/** A sandbox template of the host's registry (AIP-17 ADAPTER.md "Image resolution"). */
export interface SandboxTemplate {
  /** The id a manifest names in `runner.image`, e.g. `mcp-node-server`. Unique in a registry. */
  readonly id: string;
  /** The languages the image serves. */
  readonly language: readonly RunnerLanguage[];
  /** OS packages the image has pre-installed. */
  readonly baked: { readonly native: readonly string[] };
  /** What the image offers (`stdio`, `browser`, …); informative, the auto-pick ignores it. */
  readonly capabilities?: readonly string[];
  /** The auto-pick prefers lighter tiers: `light` < `standard` < `heavy`. */
  readonly cost_tier: 'light' | 'standard' | 'heavy';
  /** Informative; the auto-pick ignores it. */
  readonly cold_start_ms?: number;
}

/** Where warnings go: the downgrade of an `in-process` request, a legacy block, an unenforceable cap. */
export interface RunnerLogger {
  /** One warning: a line for humans, and facts for an audit log (`event`, `id`, …). Never a secret. */
  warn(message: string, details: Readonly<Record<string, unknown>>): void;
}

/** Caps the host can set for manifests that declare none. */
export interface RunnerDefaults {
  /** Default 256 (the spec's RECOMMENDED value). */
  readonly memory_mb?: number;
  /** Default 600000, 10 minutes (the spec's RECOMMENDED value). */
  readonly timeout_ms?: number;
  /** Default 0: no cap (the spec's default). */
  readonly cpu_ms?: number;
}

/** The host's policy for `defineRunner` and `validateRunner`. Every field optional. */
export interface RunnerHost {
  /** Names the manifest in warnings (`[runner] downgrading <id> …`). Default `runner`. */
  readonly id?: string;
  /** The manifest's AIP-26 `run` value: a `run` file's extension gives `needs.language` when the block omits it. */
  readonly run?: RunValue;
  /** Default caps. */
  readonly defaults?: RunnerDefaults;
  /** The sandbox template registry. Without one, a `sandbox` runner cannot resolve its image. */
  readonly images?: readonly SandboxTemplate[];
  /**
   * The origins whose manifests may run `in-process`. Default `['host']`: an allow-list, so an
   * origin the host never heard of (a typo, a new source kind) is untrusted.
   */
  readonly trustedOrigins?: readonly string[];
  /** Receives the warnings. Default: none (the `downgraded` flag is there either way). */
  readonly logger?: RunnerLogger;
  /** Which caps the host's isolation can enforce; `validateRunner` warns about a declared cap it cannot. */
  readonly enforceable?: { readonly memory_mb: boolean; readonly timeout_ms: boolean; readonly cpu_ms: boolean };
}
