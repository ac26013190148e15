import { packageBuild } from '../../tsup.shared.ts';
import { writeValidators } from './scripts/validators.ts';

// The checked definitions of CODE.schema.json, compiled ahead of time into src/generated/validators.ts.
await writeValidators(import.meta.dirname);

export default packageBuild();
