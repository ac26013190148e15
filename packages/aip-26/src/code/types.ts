/** A source as a manifest declares it (AIP-26 §"defineCode standard signature", normative). */
export type Source =
  | { inline: { path: string; content: string } }
  | { local: string | { path: string; as?: string; glob?: string } }
  | { github: { repo: string; ref: string; path?: string; as?: string } }
  | { ref: string | { path: string } };

export interface CodeSpec {
  sources: Source[];
}

/** The `code` block: a string shorthand for one `ref` source, or the object form. */
export type Code = string | CodeSpec;

/** What is left of the bundle's caps when a github source is fetched. */
export interface GithubFetchLimits {
  /** Bytes of files the source may still add. */
  maxBytes: number;
  /** Files the bundle may hold. */
  maxFiles: number;
}

/** The connector for `github` sources: the only place that sees credentials. */
export interface GithubAccess {
  /**
   * A tar.gz of the repository at `ref` (a resolved commit), narrowed to `subpath` when given.
   * `limits` is what is left of the bundle's caps: a connector should stop fetching past
   * them (githubConnector does, while fetching); the archive is checked against them anyway.
   */
  fetch(repo: string, ref: string, subpath?: string, limits?: GithubFetchLimits): Promise<Buffer>;
  /** The full commit a ref names. */
  resolveRef(repo: string, ref: string): Promise<string>;
}

export interface WorkspaceEntry {
  name: string;
  type: 'file' | 'directory';
  /** Optional facts a reader may give for free, saving a `stat` per file. */
  size?: number;
  executable?: boolean;
}

/**
 * The workspace reader for `local` and `ref` sources. Paths are workspace-relative,
 * normalised, `/`-separated; `''` is the workspace root.
 */
export interface WorkspaceFs {
  readFile(path: string): Promise<Uint8Array>;
  readDir(path: string): Promise<WorkspaceEntry[]>;
  /** The manifest of a code-workspace folder (`manifest.yaml` or a lean `CODE.md`), parsed. */
  readManifest(path: string): Promise<Record<string, unknown>>;
  /**
   * Optional: reads a file of known size into `target`, so the bundle writer can reuse its
   * buffers. It must fill all of `target` with the file's bytes, or reject: `target` is a
   * reused buffer, and any byte left unwritten would go into the bundle as it was (bytes of
   * an earlier bundle).
   */
  readFileInto?(path: string, target: Buffer): Promise<void>;
  /** Optional: what is at a path, so a huge file is refused before it is read. */
  stat?(path: string): Promise<{ type: 'file' | 'directory'; size: number; executable: boolean } | undefined>;
}

/** The normative arguments of `defineCode`. */
export interface DefineCodeArgs {
  /**
   * The manifest's `code` block: a string (one `ref` source, the shorthand) or
   * `{ sources: [...] }`, as the manifest holds it, unchecked: it is checked against the
   * AIP-26 schema first (ManifestValidationError, `AIP26_MANIFEST_INVALID`).
   */
  code: Code;
  /**
   * The folder `local` and `ref` paths are relative to (the manifest's workspace), absolute.
   * Read through `fs` when given, else through `nodeWorkspaceFs(workspaceRoot)`, which refuses
   * links that leave it.
   */
  workspaceRoot: string;
  /**
   * The connector for `github` sources (`githubConnector()`): the only part that sees a
   * token. Default none: a `github` source is then refused (`AIP26_SOURCE_UNRESOLVED`,
   * reason `no-github-connector`).
   */
  github?: GithubAccess;
  /** The workspace reader for `local` and `ref` sources. Default `nodeWorkspaceFs(workspaceRoot)`. */
  fs?: WorkspaceFs;
}

export interface BundleLimits {
  /** Uncompressed bytes of the merged bundle. Default 100 MiB. */
  maxBytes?: number;
  /** Files in the merged bundle. Default 50,000. */
  maxFiles?: number;
}

export const DEFAULT_LIMITS: Required<BundleLimits> = { maxBytes: 100 * 1024 * 1024, maxFiles: 50_000 };
