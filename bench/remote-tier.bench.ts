/**
 * The store's remote tier: two machines sharing an OCI registry.
 *
 * Each round, machine A (a fresh store root with the registry as its remote) prepares one
 * 50-file skill cold from the git server: the registry has nothing yet, so A resolves,
 * fetches from git and publishes, then pushes to the registry in the background (awaited
 * outside the timing). Then machine B (another fresh store root, same registry repository)
 * prepares the same declaration: it still lists refs at the git server (the authorization
 * check runs on every preparation), asks it for the commit and its trees without any file
 * content (the directory's tree id must come from the origin: the registry is believed in
 * nothing), then takes the skill from the registry once its files hash to that tree id.
 * Target: B's median wall time <= 0.5x A's, in the same run.
 *
 * The registry is Debian's CNCF distribution (docker-registry) on 127.0.0.1 with filesystem
 * storage; the git server is the testkit's smart HTTP server over `git http-backend`; the
 * repository is the one the skill-provider benchmark uses (20,000 files, 1,000 commits).
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type StoreEvent, ociRemote, openContentStore } from '@agentproto/content-cache';
import { prepareSkills } from '@agentproto/skill-providers';
import {
  type GitHttpServer,
  type OciRegistry,
  makeRepo,
  startGitHttpServer,
  startOciRegistry,
  tempDir,
} from '@agentproto/testkit';
import { median, report, time } from './lib.ts';
import { FILES_PER_SKILL, TARGET, buildSkillRepoSpec, skillRepoName } from './skill-repo.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const SKILL_DIR = `skills/${skillRepoName(TARGET)}`;

const work = await tempDir('agentproto-bench-remote-');
let server: GitHttpServer | undefined;
let registry: OciRegistry | undefined;
try {
  const spec = buildSkillRepoSpec(join(work.path, 'repos'));
  await makeRepo(spec);
  server = await startGitHttpServer({ root: spec.root });
  registry = await startOciRegistry({ storageDir: join(work.path, 'registry') });
  const url = server.urlFor('skills.git');
  const declaration = [{ provider: 'git', source: url, version: 'main', path: SKILL_DIR, name: skillRepoName(TARGET) }];
  const srv = server;
  const reg = registry;

  let failures = 0;
  const check = (ok: boolean, message: string) => {
    if (!ok) {
      failures += 1;
      console.error(`CHECK FAILED: ${message}`);
    }
  };

  const machine = async (name: string, repository: string) => {
    const events: StoreEvent[] = [];
    const store = await openContentStore({
      root: join(work.path, name),
      remote: ociRemote({ url: reg.url, repository, allowInsecureHttp: true }),
      onEvent: (event) => events.push(event),
    });
    return { store, events };
  };

  const a = { ms: [] as number[], gitRequests: [] as number[], gitBytes: [] as number[] };
  const b = { ms: [] as number[], gitRequests: [] as number[], gitBytes: [] as number[] };
  console.log(
    `${ROUNDS} rounds; skill ${SKILL_DIR} (${FILES_PER_SKILL} files); a fresh registry repository and two fresh store roots per round`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    const repository = `bench/remote-${round}`;
    const machineA = await machine(`a-${round}`, repository);
    srv.resetStats();
    let preparedA!: Awaited<ReturnType<typeof prepareSkills>>;
    a.ms.push(await time(async () => (preparedA = await prepareSkills(declaration, { cache: machineA.store }))));
    a.gitRequests.push(srv.stats.requests);
    a.gitBytes.push(srv.stats.bytesServed);
    check(
      preparedA[0]?.from === 'origin',
      `round ${round}: machine A should fill from the origin, got ${preparedA[0]?.from}`,
    );
    await machineA.store.remoteIdle();
    check(
      machineA.events.some((e) => e.type === 'remote-pushed'),
      `round ${round}: machine A pushed nothing`,
    );

    const machineB = await machine(`b-${round}`, repository);
    srv.resetStats();
    let preparedB!: Awaited<ReturnType<typeof prepareSkills>>;
    b.ms.push(await time(async () => (preparedB = await prepareSkills(declaration, { cache: machineB.store }))));
    b.gitRequests.push(srv.stats.requests);
    b.gitBytes.push(srv.stats.bytesServed);
    const fetchLog = srv.stats.log.filter((entry) => entry.method === 'POST' && entry.command !== 'ls-refs');
    // The one fetch B may send: the commit and the trees on the path, no file content (the proof).
    const fetches = fetchLog.filter(
      (entry) => !/^combine:blob:none\+tree:\d+$|^tree:0$/.test(entry.filter ?? ''),
    ).length;
    check(
      fetchLog.length === 1,
      `round ${round}: machine B sent ${fetchLog.length} fetches, expected one fetch of the commit and the trees on the path`,
    );
    check(
      preparedB[0]?.from === 'remote',
      `round ${round}: machine B should take the skill from the registry, got ${preparedB[0]?.from}`,
    );
    check(fetches === 0, `round ${round}: machine B sent ${fetches} fetch requests for file content to git`);
    check(
      preparedB[0]?.contentId === preparedA[0]?.contentId,
      `round ${round}: the machines disagree on the content id`,
    );
    check(
      machineB.events.every((e) => e.type !== 'remote-warning'),
      `round ${round}: machine B warned: ${JSON.stringify(machineB.events)}`,
    );
    await rm(machineA.store.root, { recursive: true, force: true });
    await rm(machineB.store.root, { recursive: true, force: true });
  }

  report(
    'machine B from the registry vs machine A cold from git (median ms)',
    median(b.ms),
    median(a.ms),
    'ms',
    '<= 0.5',
  );
  console.log(
    `  per-round ms: B ${b.ms.map((v) => v.toFixed(0)).join(' ')}; A ${a.ms.map((v) => v.toFixed(0)).join(' ')}`,
  );
  const ratios = b.ms.map((v, i) => v / a.ms[i]!);
  console.log(`  per-round ratios: ${ratios.map((r) => r.toFixed(2)).join(' ')}; median ${median(ratios).toFixed(3)}`);
  console.log(
    `  git server per preparation (median): A ${median(a.gitRequests)} requests / ${(median(a.gitBytes) / 1024).toFixed(1)} KiB; B ${median(b.gitRequests)} requests / ${(median(b.gitBytes) / 1024).toFixed(1)} KiB (the ref listing and one fetch of the commit and the trees on the path)`,
  );
  const ratio = median(b.ms) / median(a.ms);
  console.log(
    `summary remote tier: B ${median(b.ms).toFixed(0)} ms vs A ${median(a.ms).toFixed(0)} ms: ${ratio.toFixed(3)}x (target <= 0.5, ${ratio <= 0.5 ? 'met' : 'MISSED'})`,
  );
  if (failures > 0) process.exitCode = 1;
} finally {
  await server?.close();
  await registry?.close();
  await work.cleanup();
}
