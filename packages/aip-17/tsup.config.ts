import { packageBuild } from '../../tsup.shared.ts';

// The pinned schema ships as dist/aip-17/RUNNER.schema.json (export `./schemas/aip-17/RUNNER.schema.json`),
// for host manifest schemas that `$ref` the runner block; the code itself uses the copy tsup inlines.
export default { ...packageBuild(), publicDir: 'schemas' };
