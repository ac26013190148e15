import { packageBuild } from '../../tsup.shared.ts';

// p-limit (and its yocto-queue) ship as ESM only.
export default packageBuild(['src/index.ts'], ['p-limit', 'yocto-queue']);
