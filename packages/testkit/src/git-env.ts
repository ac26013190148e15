/**
 * Environment for a git child that ignores whoever runs the tests: no global or system
 * config (a developer's `url.insteadOf` or credential helper must not change a result), no
 * terminal prompts (a test must fail, not hang, on a 401), and none of the inherited GIT_*
 * variables that would point git at another repository (tests may run inside a git hook).
 * GIT_TRACE* survive so a developer can still debug a failing test.
 */
export function isolatedGitEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('GIT_') && !key.startsWith('GIT_TRACE')) continue;
    env[key] = value;
  }
  return {
    ...env,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    ...extra,
  };
}
