// Opening, reading and copying files only inside a root, proved on the open descriptor.
export {
  openInside,
  openDirInside,
  readFileInside,
  readDescriptorInto,
  descriptorIsInside,
  descriptorPath,
  lstatInside,
  realRootOf,
  NotInsideError,
} from './open-inside.js';
export type { InsideHandle, InsideDir, InsideProblem, OpenInsideOptions, ReadInsideOptions } from './open-inside.js';
export { copyInside } from './copy-inside.js';
export type { CopyInsideOptions } from './copy-inside.js';
