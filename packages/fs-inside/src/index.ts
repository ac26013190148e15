// Opening, reading and copying files only inside a root, proved on the open descriptor.

// Open and read through a descriptor proven to be inside the root
export {
  openInside,
  openDirInside,
  insideOpener,
  readFileInside,
  readDescriptorInto,
  lstatInside,
  realRootOf,
} from './open-inside.js';
export type { InsideHandle, InsideDir, InsideOpener, OpenInsideOptions, ReadInsideOptions } from './open-inside.js';

// Check a descriptor a caller opened itself
export { descriptorIsInside, descriptorPath } from './open-inside.js';

// Copy a folder, every file read inside the source root
export { copyInside } from './copy-inside.js';
export type { CopyInsideOptions } from './copy-inside.js';

// Errors
export { NotInsideError } from './open-inside.js';
export type { InsideProblem } from './open-inside.js';
