// The test projects: one per package that has tests. Vitest 4 reads this list through
// `test.projects` in vitest.config.ts.
export const projects = [
  'packages/archive',
  'packages/documents',
  'packages/fs-inside',
  'packages/oci',
  'packages/content-cache',
  'packages/git',
  'packages/sandbox',
  'packages/aip-26',
  'packages/aip-17',
  'packages/skill-providers',
  'packages/agent-plugins',
  'packages/cli',
  'packages/testkit',
  'examples/custom-provider',
  'examples/tool-host',
  'examples/embed-validation',
  'examples/validate-in-browser',
  'test/demo',
  'test/packaging',
  'test/docs',
] as const;
