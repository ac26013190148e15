import { packageBuild } from '../../tsup.shared.ts';
import { writeValidators } from './scripts/validators.ts';

// The pinned schemas' validators, compiled ahead of time into src/generated/validators.ts.
await writeValidators(import.meta.dirname);

// modern-tar ships as ESM only: inlined, so the CJS build requires nothing ESM. yaml is
// inlined from its ES module build, as @agentproto/documents does (INLINED_FILES in tsup.shared.ts).
export default packageBuild(['src/index.ts', 'src/browser.ts'], ['modern-tar', 'yaml']);
