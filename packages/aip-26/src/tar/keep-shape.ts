/** The object kept for each class given to keepShape, by its class. */
const kept = new Map<unknown, object>();

/**
 * Keeps `object` for the life of the process, in place of the one kept before for its
 * class: for its shape alone. Either the last object of a class that a bundle made, once it
 * let go of everything of that bundle, or one made once for this, that nothing uses.
 *
 * V8 gives the objects of a class a hidden class, which lives only as long as some object
 * has it, and the code it optimizes checks for it. A class whose objects live for one bundle
 * (the overlay, the ordered writer and its feed, a source's state, the workspace reader, the
 * twin finder) lost its hidden class at the first full collection after that bundle, and
 * every function compiled against it was thrown away and compiled again in the next bundle,
 * on one of the two cores the compressor works on. Measured on 2,000 files with a full
 * collection between bundles, as a host that bundles now and then has: optimizing compiles
 * during the second bundle 131-228 ms before (`add`, `set`, `added`, `addWalked`,
 * `writeQueued`, `breathe` thrown away after every bundle), 29-84 ms with these kept and
 * the per-file readers made without closures; the second bundle 0.967x its time (paired,
 * 14 alternating runs).
 */
export function keepShape(object: object): void {
  kept.set(object.constructor, object);
}
