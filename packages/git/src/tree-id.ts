import { createHash } from 'node:crypto';
import { GitInvalidArgumentError } from './errors.js';

/**
 * Git's own object ids, computed from content alone. This is what proves that a tree from
 * somewhere else (a shared registry, another machine) is the content a repository names:
 * the origin gives the tree id of a directory at a commit, and the files must hash to it.
 * Nothing here reads the repository or trusts any other id; the formats are git's
 * (`hash-object.c`, `tree.c`, `fsck.c`), checked against `git write-tree` in the tests.
 */

/** A mode git writes in trees: regular file, executable file, symlink, directory. */
type GitTreeMode = '100644' | '100755' | '120000' | '40000';

export interface GitTreeEntry {
  /** One path segment: not empty, no `/` and no NUL. Bytes, or a string taken as UTF-8. */
  name: string | Uint8Array;
  mode: GitTreeMode;
  /** 40 lower-case hex digits: the entry's blob or tree id. */
  oid: string;
}

/** The id git gives a blob of these bytes: `sha1("blob <length>\0" + bytes)`. */
export function gitBlobId(data: Uint8Array): string {
  return createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
}

/** The tree object's content (without its header), entries in git's order. */
function gitTreeContent(entries: readonly GitTreeEntry[]): Buffer {
  const rows = entries.map((entry) => {
    const name = typeof entry.name === 'string' ? Buffer.from(entry.name, 'utf8') : Buffer.from(entry.name);
    if (name.length === 0 || name.includes(0x2f) || name.includes(0)) {
      throw new GitInvalidArgumentError('entries', `${JSON.stringify(name.toString('utf8'))} is not one path segment`);
    }
    if (!MODES.has(entry.mode))
      throw new GitInvalidArgumentError('entries', `mode ${JSON.stringify(entry.mode)} is not one git writes`);
    if (!/^[0-9a-f]{40}$/.test(entry.oid))
      throw new GitInvalidArgumentError('entries', `${JSON.stringify(entry.oid)} is not an object id`);
    return { name, directory: entry.mode === '40000', mode: entry.mode, oid: entry.oid };
  });
  rows.sort((a, b) => compareEntryNames(a.name, a.directory, b.name, b.directory));
  for (let i = 1; i < rows.length; i++) {
    // git's fsck calls this a duplicate entry: a tree that names one thing twice.
    if (rows[i - 1]!.name.equals(rows[i]!.name))
      throw new GitInvalidArgumentError('entries', `${JSON.stringify(rows[i]!.name.toString('utf8'))} appears twice`);
  }
  return Buffer.concat(
    rows.flatMap((row) => [
      Buffer.from(`${row.mode} `, 'latin1'),
      row.name,
      Buffer.from([0]),
      Buffer.from(row.oid, 'hex'),
    ]),
  );
}

/** The id git gives the tree holding exactly these entries. */
export function gitTreeId(entries: readonly GitTreeEntry[]): string {
  const content = gitTreeContent(entries);
  return createHash('sha1').update(`tree ${content.length}\0`).update(content).digest('hex');
}

/** A file tree in memory, as git would store it. */
export type GitTreeNode =
  | { kind: 'file'; data: Uint8Array; executable?: boolean }
  | { kind: 'symlink'; target: string | Uint8Array }
  | { kind: 'directory'; entries: ReadonlyMap<string, GitTreeNode> | Readonly<Record<string, GitTreeNode>> };

/**
 * The tree id of a whole tree in memory: each file a blob (`100755` when executable), each
 * link a blob of its target (`120000`), each directory a tree (`40000`), recursively. An
 * empty directory is the empty tree, which git itself never writes but a crafted
 * repository can hold; so an empty folder added to a tree changes its id.
 */
export function gitTreeIdOf(root: Extract<GitTreeNode, { kind: 'directory' }>): string {
  // A stack, not recursion: a crafted, very deep tree cannot exhaust the call stack.
  const ids = new Map<GitTreeNode, string>();
  const stack: { node: Extract<GitTreeNode, { kind: 'directory' }>; expanded: boolean }[] = [
    { node: root, expanded: false },
  ];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const children = entriesOf(top.node);
    if (!top.expanded) {
      top.expanded = true;
      for (const [, child] of children) if (child.kind === 'directory') stack.push({ node: child, expanded: false });
      continue;
    }
    stack.pop();
    ids.set(
      top.node,
      gitTreeId(
        children.map(([name, child]) => {
          if (child.kind === 'directory') return { name, mode: '40000', oid: ids.get(child)! };
          if (child.kind === 'symlink')
            return {
              name,
              mode: '120000',
              oid: gitBlobId(typeof child.target === 'string' ? Buffer.from(child.target, 'utf8') : child.target),
            };
          return { name, mode: child.executable ? '100755' : '100644', oid: gitBlobId(child.data) };
        }),
      ),
    );
  }
  return ids.get(root)!;
}

const MODES = new Set<string>(['100644', '100755', '120000', '40000']);

function entriesOf(node: Extract<GitTreeNode, { kind: 'directory' }>): [string, GitTreeNode][] {
  return node.entries instanceof Map ? [...node.entries] : Object.entries(node.entries);
}

/**
 * git's `base_name_compare`: bytes, where a directory's name ends with an implicit `/`
 * (so `a.b` sorts before the directory `a`, which sorts before `a0`).
 */
function compareEntryNames(a: Buffer, aDir: boolean, b: Buffer, bDir: boolean): number {
  const common = Math.min(a.length, b.length);
  const head = Buffer.compare(a.subarray(0, common), b.subarray(0, common));
  if (head !== 0) return head;
  const next = (name: Buffer, dir: boolean) => (name.length > common ? name[common]! : dir ? 0x2f : 0);
  return next(a, aDir) - next(b, bDir);
}
