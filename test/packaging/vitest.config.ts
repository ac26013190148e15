import { defineProject } from 'vitest/config';

// Packs the public packages and installs the tarballs in a project outside the workspace, so it
// reads dist/, never src/: no `@agentproto/source` condition here. The test bounds each child
// process itself (build, pack, npm install, tsc) and gives its setup hook the sum.
export default defineProject({
  test: {
    name: 'packaging',
    include: ['*.test.ts'],
    environment: 'node',
    testTimeout: 120_000,
  },
});
