import { join } from 'node:path';

/**
 * Where everything lives under a store root. Every folder is on the root's filesystem, so
 * a staged tree reaches its final place with one `rename`.
 *
 *   objects/<objectId>/content/         the tree, immutable once published
 *   objects/<objectId>/COMPLETE.json    its completion marker, published by the same rename
 *   keys/<keyDigest>.json               key record: which object a key resolved to
 *   links/<declarationDigest>           declaration link -> ../objects/<objectId>/content
 *   staging/<random>/ + <random>.lock/  one acquisition's private folder and its liveness lock
 *   trash/                              objects and leftovers on their way out
 *   quarantine/                         corrupt objects set aside by verify
 *   facts/<nameDigest>.json             small immutable facts callers remember (recall/remember)
 *   publish.lock/                       the publication lock (proper-lockfile)
 *   private/<id>/ + <id>.owner          private folders of acquisitions (credentials), 0700,
 *                                       and their owner records (see private-dirs.ts)
 */
export const MARKER = 'COMPLETE.json';
export const CONTENT = 'content';
export const TEMP_PREFIX = '.tmp-';

export class StoreLayout {
  constructor(readonly root: string) {}
  get objects() {
    return join(this.root, 'objects');
  }
  get keys() {
    return join(this.root, 'keys');
  }
  get links() {
    return join(this.root, 'links');
  }
  get staging() {
    return join(this.root, 'staging');
  }
  get trash() {
    return join(this.root, 'trash');
  }
  get quarantine() {
    return join(this.root, 'quarantine');
  }
  get facts() {
    return join(this.root, 'facts');
  }
  get publishLock() {
    return join(this.root, 'publish.lock');
  }
  get private() {
    return join(this.root, 'private');
  }
  get folders() {
    return [this.objects, this.keys, this.links, this.staging, this.trash, this.quarantine, this.facts];
  }
  object(id: string) {
    return join(this.objects, id);
  }
  content(id: string) {
    return join(this.objects, id, CONTENT);
  }
  marker(id: string) {
    return join(this.objects, id, MARKER);
  }
  key(digest: string) {
    return join(this.keys, `${digest}.json`);
  }
  link(digest: string) {
    return join(this.links, digest);
  }
  fact(digest: string) {
    return join(this.facts, `${digest}.json`);
  }
  /** A link's target, relative so the store can be moved or mounted elsewhere whole. */
  linkTarget(objectId: string) {
    return `../objects/${objectId}/${CONTENT}`;
  }
  objectIdOfLinkTarget(target: string): string | undefined {
    const match = /^\.\.\/objects\/([0-9a-f]{64})\/content$/.exec(target);
    return match?.[1];
  }
}
