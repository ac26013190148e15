import { join } from 'node:path';
import { dependencyFolder, packageBuild } from '../../tsup.shared.ts';

// yaml is 72 CommonJS modules: node 20 loaded them in 60-80 ms, one inlined file in ~20 ms
// (a cost every process that reads a manifest pays). Its ES module build is the one inlined:
// the CommonJS one requires 'process', which an ES module bundle cannot.
export default packageBuild(['src/index.ts', 'src/browser.ts'], ['yaml'], {
  yaml: join(dependencyFolder('yaml'), 'browser', 'index.js'),
});
