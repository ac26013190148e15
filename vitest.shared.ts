import { defineProject } from 'vitest/config';

// Tests import every workspace package from its TypeScript source through the
// `@agentproto/source` export condition, so no build is needed before a test run.
export function packageProject(name: string) {
  return defineProject({
    resolve: { conditions: ['@agentproto/source', 'node', 'import', 'default'] },
    ssr: { resolve: { conditions: ['@agentproto/source', 'node', 'import', 'default'] } },
    test: {
      name,
      include: ['test/**/*.test.ts'],
      environment: 'node',
      testTimeout: 60_000,
      hookTimeout: 60_000,
    },
  });
}
