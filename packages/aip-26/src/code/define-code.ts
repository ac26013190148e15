import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readArchive } from '@agentproto/archive';
import type { ContentStore } from '@agentproto/content-cache';
import { type RunOptions, type RunValue, assertRunFileInBundle, parseRun } from '../run/index.js';
import { DEFAULT_GZIP_LEVEL } from '../tar/index.js';
import type { BundleEntry, OpenedLaterEntry } from '../tar/bundle-plan.js';
import { keepShape } from '../tar/keep-shape.js';
import { BUNDLE_LAYOUT, OrderedBundleWriter, type SinkFactory, memorySink } from '../tar/write-bundle.js';
import { nodeWorkspaceFs } from '../workspace/node-workspace-fs.js';
import { buildArchive, buildArchiveTo, bundleEntryOf } from './archive.js';
import { SourceResolutionError } from './errors.js';
import { type BundleFile, Overlay, type OverlayListener, contentOf, isUnmeasured } from './overlay.js';
import { type CodePlan, type PlannedSource, planCode } from './plan.js';
import { findCaseTwins } from './path-rules.js';
import { resolveGithub } from './resolve-github.js';
import { resolveLocal } from './resolve-local.js';
import { validateCode } from './validate.js';
import { type BundleLimits, DEFAULT_LIMITS, type DefineCodeArgs, type Source, type WorkspaceFs } from './types.js';

/** `defineCodeWithReport`'s arguments: the normative ones, and what a host adds. */
export interface DefineCodeOptions extends DefineCodeArgs {
  /**
   * Caps on the merged bundle, checked while sources are read (BundleSizeError,
   * `AIP26_BUNDLE_TOO_LARGE`, as soon as one is passed). Default 100 MiB and 50,000 files.
   */
  limits?: BundleLimits;
  /** Stops the build between files (the signal's reason is thrown). Default none. */
  signal?: AbortSignal;
  /**
   * Keeps finished bundles. A plan whose every source is immutable (inline content, github
   * pinned to a full commit) is built once and then read back with its report, fetching
   * nothing. Any other plan is resolved and read every time, and its tar.gz is kept by the
   * digest of the merged files, so scan time and invocation time compress once. Default
   * none: every call resolves, reads and compresses.
   */
  cache?: ContentStore;
  /**
   * The manifest's `run` block, when the host wants it checked with the bundle: it is read
   * before anything else (RunResolutionError, PathError), and the file it starts must be in
   * the merged bundle (RunFileMissingError, `AIP26_RUN_FILE_MISSING`, naming the file), the
   * same refusal the runner gives at start, given at scan and bundle time instead.
   */
  run?: RunValue;
  /** How `run` is read (a host's own runner table). Default `DEFAULT_RUNNERS`. */
  runOptions?: RunOptions;
}

export interface SourceReport {
  /** `sources[i]`, with the chain of `ref`s that led to it. */
  source: string;
  kind: PlannedSource['kind'];
  declaration: Source;
  /** For github: the commit the ref resolved to. */
  commit?: string;
  files: number;
  bytes: number;
}

export interface CodeReport {
  sources: SourceReport[];
  /** Code-workspaces reached through `ref`, depth-first. */
  workspaces: string[];
  files: number;
  bytes: number;
}

export interface BundleReport extends CodeReport {
  /** SHA-256 of the tar.gz. */
  sha256: string;
  compressedBytes: number;
}

/**
 * AIP-26 `defineCode`, the normative signature: materializes the bundle a `code` block
 * declares and returns it as a deterministic tar.gz (the same sources give the same bytes).
 * Sources are merged in order, a later one overriding an earlier one's file.
 *
 * @example
 * ```ts
 * import { writeFile } from 'node:fs/promises';
 * import { defineCode, githubConnector } from '@agentproto/aip-26';
 *
 * const bundle = await defineCode({
 *   code: { sources: [{ local: 'tools/weather' }, { inline: { path: 'config.json', content: '{}' } }] },
 *   workspaceRoot: '/srv/workspaces/acme',
 *   github: githubConnector({ token: process.env.GITHUB_TOKEN }),
 * });
 * await writeFile('bundle.tar.gz', bundle);
 * ```
 *
 * @throws {ManifestValidationError} `AIP26_MANIFEST_INVALID`: the `code` block fails the schema.
 * @throws {SourceResolutionError} `AIP26_SOURCE_UNRESOLVED`: a source cannot be resolved; `reason`
 *   says why (`not-found`, `unsafe-path`, `cycle`, `unsafe-link`, `pin-required`, `fetch-failed`, ...).
 * @throws {BundleSizeError} `AIP26_BUNDLE_TOO_LARGE`: the merged bundle is over `limits`.
 */
export async function defineCode(args: DefineCodeArgs): Promise<Buffer> {
  // Only the bundle is returned: its digest is not taken (a report is made and dropped).
  return (await defineCodeWith(args, false)).bundle;
}

/**
 * `defineCode` plus what each source resolved to (github refs to commits) and the bundle's
 * digest, for a trust UI and audit; with `cache`, a pinned plan is built once; with `run`,
 * the file it starts must be in the bundle.
 *
 * @example
 * ```ts
 * import { defineCodeWithReport } from '@agentproto/aip-26';
 * import { openContentStore } from '@agentproto/content-cache';
 *
 * const { bundle, report } = await defineCodeWithReport({
 *   code: manifest.code,
 *   run: manifest.run,
 *   workspaceRoot: '/srv/workspaces/acme',
 *   cache: await openContentStore(),
 *   limits: { maxBytes: 20 * 1024 * 1024 },
 * });
 * console.log(report.sha256, report.sources.map((s) => `${s.source} ${s.commit ?? ''}`));
 * ```
 *
 * @throws {ManifestValidationError} `AIP26_MANIFEST_INVALID`: the `code` block fails the schema.
 * @throws {RunResolutionError} `AIP26_RUN_INVALID`: `run` names no runnable thing.
 * @throws {PathError} `AIP26_UNSAFE_PATH`: `run`'s file is not a bundle-internal path.
 * @throws {RunFileMissingError} `AIP26_RUN_FILE_MISSING`: `run`'s file is not in the merged bundle.
 * @throws {SourceResolutionError} `AIP26_SOURCE_UNRESOLVED`: a source cannot be resolved (see `reason`).
 * @throws {BundleSizeError} `AIP26_BUNDLE_TOO_LARGE`: the merged bundle is over `limits`.
 * @throws {ContentCacheError} `CACHE_FILL_FAILED`, `CACHE_IO`: with `cache`, the store failed.
 */
export async function defineCodeWithReport(args: DefineCodeOptions): Promise<{ bundle: Buffer; report: BundleReport }> {
  const { bundle, report } = await defineCodeWith(args, true);
  return { bundle, report: { ...report, sha256: report.sha256! } };
}

/** A report whose `sha256` is there only when the bundle was digested. */
export type MaybeDigestedReport = Omit<BundleReport, 'sha256'> & { sha256: string | undefined };

/** `defineCodeWithReport`, with the bundle's SHA-256 only when `digest` is true (or it comes from the store). */
async function defineCodeWith(
  args: DefineCodeOptions,
  digest: boolean,
): Promise<{ bundle: Buffer; report: MaybeDigestedReport }> {
  const { output, report } = await defineCodeInto(args, digest, IN_MEMORY);
  return { bundle: output, report };
}

/**
 * Where a bundle goes: the sink the archive writer fills, what an already finished bundle
 * (the store's copy) becomes, and how to start over when the writer that packed while
 * listing declined its entries (see OrderedBundleWriter) and the sorted writer takes over.
 */
export interface BundleTarget<T> {
  /**
   * Takes chunks before the bundle's bound is known (a file, or memory filled
   * provisionally: see memorySink): a workspace folder packed while it is listed is listed
   * without a `stat` of each file, each measured as it is opened to be packed.
   */
  sink: SinkFactory<T>;
  take(bundle: Buffer): T;
  restart(): void;
  bytes(output: T): number;
}

const IN_MEMORY: BundleTarget<Buffer> = {
  sink: memorySink,
  take: (bundle) => bundle,
  restart() {},
  bytes: (bundle) => bundle.length,
};

/** `defineCodeWith`, the bundle going to `target`. */
export async function defineCodeInto<T>(
  args: DefineCodeOptions,
  digest: boolean,
  target: BundleTarget<T>,
): Promise<{ output: T; report: MaybeDigestedReport }> {
  const { fs, plan } = await prepare(args);
  const pinned = args.cache ? pinnedDigest(plan) : undefined;
  if (args.cache && pinned) {
    // The store keeps the report with its digest: a pinned bundle is always digested.
    const made = await pinnedBundle(args.cache, pinned, async () => {
      const { output, report } = await build(args, fs, plan, true, IN_MEMORY);
      return { bundle: output, report: { ...report, sha256: report.sha256! } };
    });
    // Read back from the store: its files were not merged here, so list them.
    if (args.run !== undefined)
      assertRunFileInBundle(
        args.run,
        await bundlePaths(made.bundle, { ...DEFAULT_LIMITS, ...args.limits }),
        args.runOptions,
      );
    return { output: target.take(made.bundle), report: made.report };
  }
  return build(args, fs, plan, digest, target);
}

/** The file paths of a bundle this package wrote (the pinned store's copy). */
async function bundlePaths(bundle: Buffer, limits: Required<BundleLimits>): Promise<string[]> {
  const paths: string[] = [];
  // Headroom for the tar headers (pax records included) of every file and folder.
  const maxBytes = limits.maxBytes + 8 * 1024 * (limits.maxFiles + 1) * 2;
  await readArchive(
    bundle,
    { maxBytes, maxFiles: limits.maxFiles, maxEntryBytes: limits.maxBytes },
    {
      async directory() {},
      async file(file, body) {
        for await (const _chunk of body);
        paths.push(file.path);
      },
    },
  );
  return paths;
}

async function build<T>(
  args: DefineCodeOptions,
  fs: WorkspaceFs,
  plan: CodePlan,
  digest: boolean,
  target: BundleTarget<T>,
): Promise<{ output: T; report: MaybeDigestedReport }> {
  if (!args.cache && plan.sources.length === 1 && plan.sources[0]!.kind === 'local')
    return buildWhileListing(args, fs, plan, digest, target);
  const { overlay, report } = await materialize(args, fs, plan);
  const { output, sha256 } = args.cache
    ? await digested(cachedArchive(args.cache, overlay.files), digest, target)
    : await buildArchiveTo(overlay.files, digest, target.sink);
  return { output, report: { ...report, sha256, compressedBytes: target.bytes(output) } };
}

/**
 * A plan of one workspace source: its files come in archive order as the folder is listed
 * (see OrderedBundleWriter), so they are packed and compressed while the listing goes on,
 * each measured as it is opened to be packed, not by a `stat` as it is listed. Every check
 * runs as in `build`, in the same order: a source or limit refusal, a missing run file or
 * case twins are thrown before any packing error, and the bundle is only returned once
 * they all passed. Files that do not come in order (names beyond ASCII may list in another
 * order) are packed the usual way once listed: the same bytes.
 */
async function buildWhileListing<T>(
  args: DefineCodeOptions,
  fs: WorkspaceFs,
  plan: CodePlan,
  digest: boolean,
  target: BundleTarget<T>,
): Promise<{ output: T; report: MaybeDigestedReport }> {
  const writer = new OrderedBundleWriter({}, digest, target.sink);
  const feed = new WriterFeed(writer);
  let materialized: Awaited<ReturnType<typeof materialize>>;
  try {
    materialized = await materialize(args, fs, plan, feed);
  } catch (error) {
    writer.stop();
    throw error;
  }
  const { overlay, report } = materialized;
  writer.end();
  let written: { output: T; sha256: string | undefined };
  if (writer.declined) {
    // The declined writer gives its sink nothing after it stopped: the file is written from its start again.
    target.restart();
    await overlay.measureAll();
    written = await buildArchiveTo(overlay.files, digest, target.sink);
  } else written = await writer.result();
  const { output, sha256 } = written;
  // Files measured as they were opened are all counted now (one source: its bytes are the bundle's).
  const bytes = overlay.totalBytes;
  // Kept for the next bundle, as the writer keeps itself once it gave its output (see
  // keepShape). Not after a writer that declined: they would hold it, and it holds the
  // entries it had queued when it stopped.
  if (!writer.declined) {
    overlay.keepForNext();
    keepShape(feed);
  }
  return {
    output,
    report: {
      ...report,
      bytes,
      sources: report.sources.map((source) => ({ ...source, bytes })),
      sha256,
      compressedBytes: target.bytes(output),
    },
  };
}

/** Each merged file, as it is set, goes on to the writer; the listing then awaits the writer's pace. */
class WriterFeed<T> implements OverlayListener {
  constructor(private readonly writer: OrderedBundleWriter<T>) {}

  added(path: string, file: BundleFile, overlay: Overlay): Promise<void> | undefined {
    this.writer.add(writerEntryOf(path, file, overlay));
    return this.writer.pace();
  }
}

/**
 * A merged file as OrderedBundleWriter takes it: an unmeasured one is opened when the
 * archive reaches it, and its bytes count against the limit (BundleSizeError) before any is read.
 */
function writerEntryOf(path: string, file: BundleFile, overlay: Overlay): BundleEntry | OpenedLaterEntry {
  if (!isUnmeasured(file)) return bundleEntryOf(path, file);
  return {
    path,
    open: async () => {
      const opened = await file.open();
      try {
        overlay.measured(path, file, opened.size);
      } catch (error) {
        opened.close();
        throw error;
      }
      return opened;
    },
  };
}

async function digested<T>(
  made: Promise<Buffer>,
  digest: boolean,
  target: BundleTarget<T>,
): Promise<{ output: T; sha256: string | undefined }> {
  const bundle = await made;
  return {
    output: target.take(bundle),
    sha256: digest ? createHash('sha256').update(bundle).digest('hex') : undefined,
  };
}

/**
 * The identity of a plan whose every source is immutable: inline content and github
 * sources pinned to a full commit (a commit id names its content, whichever host serves
 * it). Undefined when a source can change (a workspace file, a branch or a tag).
 */
function pinnedDigest(plan: CodePlan): string | undefined {
  const parts: unknown[] = [];
  for (const source of plan.sources) {
    if (source.kind === 'local') return undefined;
    if (source.kind === 'github' && !/^[0-9a-f]{40}$/.test(source.ref)) return undefined;
    parts.push(
      source.kind === 'inline'
        ? ['inline', source.path, source.content]
        : ['github', source.repo, source.ref, source.path, source.as ?? null],
    );
  }
  return createHash('sha256')
    .update(JSON.stringify([plan.workspaces.map((w) => w.path), parts]))
    .digest('hex');
}

/** A pinned plan's bundle and report, built once and then read from the store: no source is fetched again. */
async function pinnedBundle(
  cache: ContentStore,
  digest: string,
  make: () => Promise<{ bundle: Buffer; report: BundleReport }>,
): Promise<{ bundle: Buffer; report: BundleReport }> {
  const key = {
    provider: 'aip-26-pinned',
    declaration: { format: BUNDLE_LAYOUT, gzipLevel: DEFAULT_GZIP_LEVEL },
    version: digest,
    contentId: bundleContentId(digest),
  };
  const stored = await cache.acquire(key, async (_destination, ctx) => {
    const made = await make();
    await ctx.writeFile(BUNDLE, made.bundle);
    await ctx.writeFile(REPORT, `${JSON.stringify(made.report)}\n`);
  });
  const [bundle, report] = await Promise.all([
    readFile(join(stored.path, BUNDLE)),
    readFile(join(stored.path, REPORT), 'utf8'),
  ]);
  return { bundle, report: JSON.parse(report) as BundleReport };
}

/**
 * Resolves every source and applies every rule without building the tarball: the
 * registration-time check a host runs before it provisions anything.
 */
export async function scanCode(args: DefineCodeOptions): Promise<CodeReport> {
  const { fs, plan } = await prepare(args);
  return (await materialize(args, fs, plan)).report;
}

/**
 * Schema checks and plan: everything that is refused before any source content is read.
 * The blocks are checked before anything uses them (planCode checks `code` first).
 */
async function prepare(args: DefineCodeOptions): Promise<{ fs: WorkspaceFs; plan: CodePlan }> {
  validateCode(args.code);
  if (args.run !== undefined) parseRun(args.run, args.runOptions);
  const fs: WorkspaceFs = args.fs ?? nodeWorkspaceFs(args.workspaceRoot);
  return { fs, plan: await planCode(args.code, fs) };
}

const BUNDLE = 'bundle.tar.gz';
const REPORT = 'report.json';

/**
 * The content id of a kept bundle. The store addresses an object by provider and content id
 * alone (not the declaration), so what decides the bytes besides the inputs goes in here:
 * the archive layout and the gzip level. A bundle kept by an earlier layout (layout 1 was
 * filed under the bare digest) is then another object, never handed out as this writer's.
 */
function bundleContentId(digest: string): string {
  return `${digest};layout=${BUNDLE_LAYOUT};gzip=${DEFAULT_GZIP_LEVEL}`;
}

/** The merged files' identity: sorted paths, execute bits and SHA-256 of contents. */
async function mergedDigest(files: ReadonlyMap<string, BundleFile>): Promise<string> {
  const digest = createHash('sha256');
  for (const path of [...files.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))) {
    const file = files.get(path)!;
    if (isUnmeasured(file)) throw new Error(`${JSON.stringify(path)} was not measured before it was digested`);
    digest.update(
      `${path}\0${file.executable ? 'x' : '-'}\0${createHash('sha256')
        .update(await contentOf(file))
        .digest('hex')}\n`,
    );
  }
  return digest.digest('hex');
}

async function cachedArchive(cache: ContentStore, files: ReadonlyMap<string, BundleFile>): Promise<Buffer> {
  const digest = await mergedDigest(files);
  const key = {
    provider: 'aip-26-bundle',
    declaration: { format: BUNDLE_LAYOUT, gzipLevel: DEFAULT_GZIP_LEVEL },
    version: digest,
    contentId: bundleContentId(digest),
  };
  const stored = await cache.acquire(key, async (_destination, ctx) => {
    await ctx.writeFile(BUNDLE, await buildArchive(files));
  });
  return readFile(join(stored.path, BUNDLE));
}

/**
 * The plan's files merged into an overlay. With a `listener` (a writer packing while the
 * folder is listed), workspace files are listed unmeasured and measured as they are opened.
 */
async function materialize(
  args: DefineCodeOptions,
  fs: WorkspaceFs,
  plan: CodePlan,
  listener?: OverlayListener,
): Promise<{ overlay: Overlay; report: CodeReport }> {
  const measureOnOpen = listener !== undefined;
  const limits = { ...DEFAULT_LIMITS, ...args.limits };
  const overlay = new Overlay(limits, listener);
  const sources: SourceReport[] = [];
  for (const source of plan.sources) {
    args.signal?.throwIfAborted();
    const entry: SourceReport = {
      source: source.label,
      kind: source.kind,
      declaration: source.declaration,
      files: 0,
      bytes: 0,
    };
    if (source.kind === 'inline') {
      const data = Buffer.from(source.content, 'utf8');
      await overlay.set(source.path, { data, executable: false, source: source.label }, source.declaration);
      entry.files = 1;
      entry.bytes = data.length;
    } else if (source.kind === 'local') {
      Object.assign(entry, await resolveLocal(source, fs, overlay, args.signal, measureOnOpen));
    } else {
      const remaining = { bytes: limits.maxBytes - overlay.totalBytes, files: limits.maxFiles };
      Object.assign(entry, await resolveGithub(source, args.github, overlay, remaining));
    }
    sources.push(entry);
  }
  try {
    checkMerged(args, plan, overlay);
  } catch (error) {
    // A limit refusal comes first. Files not measured yet (they are as they are opened) are
    // measured now: measureAll throws BundleSizeError when their bytes are over the limit.
    if (measureOnOpen) await overlay.measureAll();
    throw error;
  }
  return {
    overlay,
    report: {
      sources,
      workspaces: plan.workspaces.map((w) => w.path),
      files: overlay.files.size,
      bytes: overlay.totalBytes,
    },
  };
}

/** The checks of the merged files: the run file is among them, and no two differ by case alone. */
function checkMerged(args: DefineCodeOptions, plan: CodePlan, overlay: Overlay): void {
  // The run file is looked for among the merged files, before any archive is written.
  if (args.run !== undefined) assertRunFileInBundle(args.run, overlay.files.keys(), args.runOptions);
  const twins = findCaseTwins(overlay.files.keys());
  if (twins.length > 0) {
    const [a, b] = twins[0]!;
    // A twin may be a folder prefix (`Lib` / `lib`): name the source of a file below it.
    const ownerOf = (prefix: string) =>
      [...overlay.files].find(([path]) => path === prefix || path.startsWith(`${prefix}/`))![1].source;
    const firstSource = ownerOf(a);
    const secondSource = ownerOf(b);
    const declaration = plan.sources.find((s) => s.label === secondSource)?.declaration ?? secondSource;
    throw new SourceResolutionError(
      secondSource,
      declaration,
      'case-twin',
      `${JSON.stringify(b)} differs from ${JSON.stringify(a)} (from ${firstSource}) only by case: they collide on case-insensitive filesystems`,
    );
  }
}
