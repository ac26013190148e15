// Parsing documents nobody vouches for (front matter, manifests, plugin configs,
// declarations): one implementation, one parser configuration, for every package.

// Every parser, its limits and its errors: what a browser gets too (browser.ts)
export * from './browser.js';

// Read a document from a disk, bounded before a byte past the limit is read
export { readBoundedFile } from './read.js';
