/**
 * Bounds on an untrusted document, checked before and while it is parsed, so that no input
 * that passes them can make a parser allocate without end or run for long: the work a parser
 * does is linear in the bytes, and its memory about 1 KiB per byte at worst (YAML, an error
 * object per token), so `maxBytes` is the memory bound; `maxDepth` keeps every recursive
 * step (the YAML composer, `toJS`, schema checks, the callers' own walks) far from the stack
 * limit; `maxNodes` bounds what alias expansion and dotted TOML keys can build.
 */
export interface DocumentLimits {
  /** Most bytes of UTF-8 text. */
  maxBytes: number;
  /** Most levels of nested collections (a scalar at the top is depth 0). */
  maxDepth: number;
  /** Most values (collections and scalars) in the parsed result, aliases expanded. */
  maxNodes: number;
  /** YAML: most alias uses, weighted as the `yaml` library weighs them (`maxAliasCount`). */
  maxAliases: number;
}

const KIB = 1024;

/**
 * Configurations, manifests, declarations, plugin.json: far above any real one. The `yaml`
 * library parses some 10-40 µs per byte of hostile input (an error object per token), so
 * 128 KiB is a few seconds and ~100 MiB at worst; JSON and TOML cost far less.
 */
export const DOCUMENT_LIMITS: Readonly<DocumentLimits> = Object.freeze({
  maxBytes: 128 * KIB,
  maxDepth: 64,
  maxNodes: 100_000,
  maxAliases: 100,
});

/**
 * The YAML front matter of a Markdown file (SKILL.md, CODE.md): a few fields, a few hundred
 * bytes in practice (an Agent Skills description is at most 1,024 characters); 32 KiB keeps a
 * hostile one to ~16 MiB and about a second of parsing on a busy machine.
 */
export const FRONTMATTER_LIMITS: Readonly<DocumentLimits> = Object.freeze({ ...DOCUMENT_LIMITS, maxBytes: 32 * KIB });
