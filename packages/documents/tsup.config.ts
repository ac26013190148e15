import { packageBuild } from '../../tsup.shared.ts';

// yaml is inlined from its ES module build: one file, not 72 CommonJS modules (see INLINED_FILES
// in tsup.shared.ts), a cost every process that reads a manifest paid; smol-toml too, for the
// same reason (9 modules, loaded with this package whether a TOML document is read or not).
export default packageBuild(['src/index.ts', 'src/browser.ts'], ['yaml', 'smol-toml']);
