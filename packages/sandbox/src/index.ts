// Isolation on Linux with bubblewrap: a process that sees only the folders it is given, in
// its own PID and network namespaces, reaching only granted hosts through a host-side proxy.

// Check that this machine can isolate
export { checkSandbox } from './check.js';

// Run a command isolated
export { defaultRunAs, processesInNamespace, SANDBOX_PROXY, spawnIsolated } from './spawn.js';
export { runIsolated } from './run.js';

// Grant hosts: the only way out of a sandbox
export { startEgressProxy } from './egress-proxy.js';

// Errors a host can catch (each with a stable `code`)
export { EgressHostError, SandboxSetupError, SandboxSpecError, SandboxUnavailableError } from './errors.js';

// Types a host passes or receives
export type { CheckSandboxOptions, SandboxSupport } from './check.js';
export type { ExitReason, IsolatedCommand, IsolatedExit, IsolatedProcess, Mount, ProcessLimits } from './spawn.js';
export type { IsolatedResult, RunIsolatedOptions } from './run.js';
export type { EgressAttempt, EgressProxy, EgressProxyOptions } from './egress-proxy.js';
export type { SandboxUnavailableReason } from './errors.js';
