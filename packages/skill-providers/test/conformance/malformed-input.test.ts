import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openContentStore, type ContentStore } from '@agentproto/content-cache';
import {
  assertReturnsOrThrowsCoded,
  type EntryPointUnderTest,
  malformedDocumentBytes,
  malformedVariant,
  wrongValue,
} from '@agentproto/testkit';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as skills from '../../src/index.js';
import { parseSkillDeclaration, parseSkillEntry } from '../../src/entries/index.js';

// Issue 12, "Honest exit statuses and no crashes": "No input may produce 'unexpected error'.
// [...] feeds [...] every public parse/validate entry point generated malformed documents
// (wrong types, missing keys, huge values, wrong encodings) and asserts a typed error or
// finding every time." A skills declaration is the document here: each entry point gets a
// valid one (a local folder, a git URL on a closed loopback port, the string form), changed
// one to three times, and must return or throw an error with a stable `code`.

/** FC_SEED=<n> replays a failing run; the seed is in every test's name and in fast-check's report. */
const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
const RUNS = 100;

let root = '';
let cache: ContentStore;

const declaration = () => [
  { provider: 'local', source: join(root, 'skills'), version: '*', name: 'review', path: 'review' },
  // Port 9 (discard) on loopback: nothing listens, so a resolve fails fast and never leaves the host.
  { provider: 'git', source: 'http://127.0.0.1:9/skills.git', version: 'v1', name: 'remote', path: 'skills/remote' },
  'http://127.0.0.1:9/skills.git#v1',
];

// biome-ignore lint/suspicious/noExplicitAny: each entry point takes an input of its own type
type EntryPoint = EntryPointUnderTest<any>;

/**
 * Every public entry point that takes a declaration or part of one, in one place: a new one
 * goes here (the test below fails until it does).
 */
const ENTRY_POINTS: Record<string, EntryPoint> = {
  // Not exported: prepareSkills and resolveSkills read every declaration through these two.
  parseSkillDeclaration: {
    input: () => malformedVariant(declaration()),
    call: (value) => parseSkillDeclaration(value),
  },
  parseSkillEntry: {
    input: () => fc.oneof(...declaration().map((entry) => malformedVariant(entry))),
    call: (value) => parseSkillEntry(value, 0),
  },
  parseGitString: {
    input: () =>
      fc.oneof(
        wrongValue,
        fc.string({ maxLength: 60 }),
        malformedVariant('https://github.com/org/skills.git#v1:skills/review'),
      ),
    call: (value) => skills.parseGitString(value),
  },
  parseSkillDeclarationText: {
    input: () =>
      fc.tuple(
        fc.oneof(malformedDocumentBytes(declaration()), malformedDocumentBytes({ skills: declaration() })),
        fc.constantFrom('json' as const, 'yaml' as const),
      ),
    call: ([bytes, format]) => skills.parseSkillDeclarationText(bytes, { source: `skills.${format}`, format }),
  },
  resolveSkills: {
    input: () => malformedVariant(declaration()),
    call: (value) =>
      skills.resolveSkills(value, {
        cache,
        registry: skills.createRegistry([skills.localProvider({ roots: [root] }), skills.gitProvider()]),
      }),
  },
};

const lock = () => ({
  lockfileVersion: 1,
  skills: [
    {
      declaration: {
        provider: 'git',
        source: 'http://127.0.0.1:9/skills.git',
        version: 'v1',
        path: 'skills/remote',
        config: {},
      },
      name: 'remote',
      provider: 'git',
      version: '0123456789abcdef0123456789abcdef01234567',
      contentId: '89abcdef0123456789abcdef0123456789abcdef',
    },
  ],
});
ENTRY_POINTS.parseSkillLock = {
  input: () => malformedVariant(lock()),
  call: (value) => skills.parseSkillLock(value, 'skills.lock.json'),
};
ENTRY_POINTS.parseSkillLockText = {
  input: () => malformedDocumentBytes(lock()),
  call: (bytes) => skills.parseSkillLockText(bytes, { source: 'skills.lock.json' }),
};

/** Exports that match the pattern but take no document, and why. */
const NOT_DOCUMENT_INPUT: Record<string, string> = {
  loadRegistry: "takes the host's list of provider packages to import, not a document",
  importFrom: "takes a folder and a module specifier of the host's, not a document",
  resolveFrom: "takes a folder and a module specifier of the host's, not a document",
};

const ENTRY_POINT_NAME =
  /^(parse|validate|read|import|define|resolve|verify|check|load|scan|desugar|plan|normalize|inherit|assert)/;

describe(`skill declarations: a malformed one ends in a result or a typed error (seed ${SEED})`, () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'malformed-skills-'));
    await mkdir(join(root, 'skills', 'review'), { recursive: true });
    await writeFile(join(root, 'skills', 'review', 'SKILL.md'), '---\nname: review\ndescription: Reviews.\n---\n');
    cache = await openContentStore({ root: join(root, 'store') });
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('the table names every exported parse/resolve/load/import entry point', () => {
    const exported = Object.entries(skills)
      .filter(([name, value]) => typeof value === 'function' && ENTRY_POINT_NAME.test(name))
      .map(([name]) => name);
    expect(exported.filter((name) => !(name in ENTRY_POINTS) && !(name in NOT_DOCUMENT_INPUT))).toEqual([]);
  });

  it('the fixture is valid: it parses, and its local entry resolves', async () => {
    expect(parseSkillDeclaration(declaration()).map((source) => source.provider)).toEqual(['local', 'git', 'git']);
    const [local] = await skills.resolveSkills([declaration()[0]!], {
      cache,
      registry: skills.createRegistry([skills.localProvider({ roots: [root] })]),
    });
    expect(local?.name).toBe('review');
  });

  for (const [name, entry] of Object.entries(ENTRY_POINTS)) {
    it(`${name}: returns, or throws an error with a stable code`, async () => {
      await assertReturnsOrThrowsCoded(name, entry, {
        seed: SEED,
        numRuns: name === 'resolveSkills' ? RUNS / 4 : RUNS,
      });
    }, 120_000);
  }
});
