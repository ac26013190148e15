// The one safe tar(.gz) reader every package uses, and the rules archive entries obey.

// Read an archive: every entry checked (names, links, pax, sizes, bombs, end of archive)
export { readArchive, checkReadOptions } from './read-archive.js';
export type { ArchiveSource, ArchiveLimits, ReadArchiveOptions, ArchiveFile, ArchiveVisitor } from './read-archive.js';

// Streaming pieces the reader is built from, for a caller that reads a stream itself
export { GunzipOneMember } from './gunzip-one-member.js';
export { TarEndMarker } from './tar-end.js';

// Entry rules (safe names, links that stay inside, git metadata) and errors: what a browser gets too (browser.ts)
export * from './browser.js';

// The one archive order
export { archiveOrderKey, sortInArchiveOrder } from './entry-order.js';
