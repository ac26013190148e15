import { packageBuild } from '../../tsup.shared.ts';

// yaml is inlined from its ES module build: one file, not 72 CommonJS modules (see INLINED_FILES
// in tsup.shared.ts), a cost every process that reads a manifest paid.
export default packageBuild(['src/index.ts', 'src/browser.ts'], ['yaml']);
