const PLACEHOLDER = {};

/**
 * An empty array that holds objects from the start (for V8, its elements are already of
 * the kind objects need), for the arrays a bundle fills as it goes: its queue of entries,
 * its blocks compressing, the stack of a folder walk.
 *
 * An empty `[]` starts as an array of small integers and changes kind at its first object.
 * V8 remembers that change for the next `[]` made at the same place only while the array
 * is still young when it happens, and an array filled after an await often is not: code a
 * first bundle had optimized for arrays of objects then met a fresh array of the other kind
 * at the start of the next bundle, threw itself away and was compiled again.
 */
export function objectArray<T>(): T[] {
  const array = [PLACEHOLDER as T];
  array.length = 0;
  return array;
}
