import { readFile } from 'node:fs/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SKILLS_LOCK_SCHEMA_ID, SKILLS_SCHEMA_ID, parseSkillDeclarationText } from '@agentproto/skill-providers';
import { parseSkillDeclaration } from '../src/entries/index.js';

// The published schema, compiled on its own as an editor or a console would: the parser and
// it must agree on every declaration generated here.
const schemaUrl = new URL('../../../schemas/skills/1/skills.schema.json', import.meta.url);
const lockUrl = new URL('../../../schemas/skills/1/skills-lock.schema.json', import.meta.url);
const schema = JSON.parse(await readFile(schemaUrl, 'utf8'));
const ajv = new Ajv2020({ strict: true, strictTypes: false });
ajv.addSchema(schema);
ajv.addSchema(JSON.parse(await readFile(lockUrl, 'utf8')));
const validDocument = ajv.getSchema(SKILLS_SCHEMA_ID)!;

const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);

const segment = fc.stringMatching(/^[a-z0-9]{1,4}(-[a-z0-9]{1,4}){0,3}$/);
const name = segment;
const dir = fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/'));
const ref = fc.oneof(
  fc.constantFrom('main', 'v1.4.0', 'release/2.0', 'refs/heads/main'),
  fc.stringMatching(/^[0-9a-f]{40}$/),
);
const repository = fc.oneof(
  fc.tuple(segment, segment).map(([org, repo]) => `https://git.example.com/${org}/${repo}.git`),
  fc.tuple(segment, segment).map(([org, repo]) => `git@code.example.com:${org}/${repo}.git`),
);
const config = fc.dictionary(
  fc.stringMatching(/^[a-z_]{1,12}$/),
  fc.jsonValue({ maxDepth: 2 }).filter((v) => !Object.is(v, -0)),
  { maxKeys: 3 },
);
const gitObject = fc.record(
  { provider: fc.constant('git'), source: repository, version: ref, path: dir, name, config: fc.constant({}) },
  { requiredKeys: ['provider', 'source', 'version', 'name'] },
);
const otherObject = fc.record(
  {
    provider: fc.constantFrom('tarball', 'local', 'acme-registry'),
    // A URL with an `@` after its `://` may carry credentials in its userinfo (`a://:@a`): the
    // parser refuses those (SKILL_URL_HAS_CREDENTIALS, tested in entries.test.ts), a rule the
    // schema cannot say, so valid declarations are generated without them.
    source: fc.stringMatching(/^[a-z][a-z0-9:/.@ _-]{0,30}[a-z0-9]$/).filter((source) => !/:\/\/.*@/.test(source)),
    version: fc.stringMatching(/^[A-Za-z0-9.:*^~@-]{1,20}$/),
    path: dir,
    name,
    config,
  },
  { requiredKeys: ['provider', 'source', 'version', 'name'] },
);
const gitString = fc
  .tuple(repository, fc.option(ref, { nil: undefined }), dir)
  .map(([repo, at, path]) => `${repo}${at ? `@${at}` : ''}#${path}`);

/** Entries whose installed names are unique (a git string installs the last segment of its directory). */
const declaration = fc.array(fc.oneof(gitString, gitObject, otherObject), { maxLength: 6 }).map((entries) => {
  const seen = new Set<string>();
  return entries.filter((entry) => {
    // The directory is what follows `#`: a one-segment directory has no `/` of its own.
    const directory = typeof entry === 'string' ? entry.slice(entry.lastIndexOf('#') + 1) : '';
    const installed = typeof entry === 'string' ? directory.slice(directory.lastIndexOf('/') + 1) : entry.name;
    if (seen.has(installed)) return false;
    seen.add(installed);
    return true;
  });
});

/** One change the schema can express, each a reason to refuse. */
const breakages: Array<(entry: Record<string, unknown>) => unknown> = [
  (e) => ({ ...e, provider: undefined }),
  (e) => ({ ...e, source: undefined }),
  (e) => ({ ...e, version: undefined }),
  (e) => ({ ...e, name: undefined }),
  (e) => ({ ...e, provider: '' }),
  (e) => ({ ...e, version: '' }),
  (e) => ({ ...e, source: '' }),
  (e) => ({ ...e, provider: 'a b' }),
  (e) => ({ ...e, version: 'main\tx' }),
  (e) => ({ ...e, source: ' https://git.example.com/a/b.git' }),
  (e) => ({ ...e, source: 'https://git.example.com/a/b.git\n' }),
  (e) => ({ ...e, name: 'Review' }),
  (e) => ({ ...e, name: 'a--b' }),
  (e) => ({ ...e, name: '-a' }),
  (e) => ({ ...e, name: 'a-' }),
  (e) => ({ ...e, name: 'a'.repeat(65) }),
  (e) => ({ ...e, name: 7 }),
  (e) => ({ ...e, path: 3 }),
  (e) => ({ ...e, config: [] }),
  (e) => ({ ...e, config: 'x' }),
  (e) => ({ ...e, config: null }),
  (e) => ({ ...e, extra: true }),
  () => 42,
  () => null,
  () => '',
  () => ['https://git.example.com/a/b.git'],
];

const SCHEMA_FALLBACK = 'does not match the skills declaration schema';

describe(`the skills declaration schema and the parser agree (seed ${SEED})`, () => {
  it('the schema sits where its $id says (schemas/README.md) and the lock schema beside it', () => {
    expect(schema.$id).toBe(SKILLS_SCHEMA_ID);
    expect(new URL(SKILLS_SCHEMA_ID).pathname).toBe('/schemas/skills/1/skills.schema.json');
    expect(new URL(SKILLS_LOCK_SCHEMA_ID).pathname).toBe('/schemas/skills/1/skills-lock.schema.json');
  });

  it('a generated valid declaration passes both, as an array and as { skills }', () => {
    fc.assert(
      fc.property(declaration, (value) => {
        expect(validDocument(value), JSON.stringify(validDocument.errors)).toBe(true);
        expect(validDocument({ $schema: SKILLS_SCHEMA_ID, skills: value })).toBe(true);
        expect(parseSkillDeclaration(value)).toHaveLength(value.length);
        const text = JSON.stringify({ $schema: SKILLS_SCHEMA_ID, skills: value });
        expect(parseSkillDeclarationText(text, { source: 'skills.json' })).toHaveLength(value.length);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it("a declaration broken in one way the schema can say fails both, and the parser's own message words it", () => {
    const broken = fc
      .tuple(
        declaration.filter((value) => value.length > 0),
        fc.nat(),
        fc.integer({ min: 0, max: breakages.length - 1 }),
      )
      .map(([value, at, which]) => {
        const index = at % value.length;
        const entry = value[index]!;
        const object =
          typeof entry === 'string'
            ? { provider: 'git', source: 'https://git.example.com/a/b.git', version: 'main', name: 'x' }
            : entry;
        const copy: unknown[] = [...value];
        copy[index] = breakages[which]!(object as Record<string, unknown>);
        return { copy, index };
      });
    fc.assert(
      fc.property(broken, ({ copy, index }) => {
        expect(validDocument(copy)).toBe(false);
        let thrown: unknown;
        try {
          parseSkillDeclaration(copy);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toMatchObject({ code: expect.stringMatching(/^SKILL_(ENTRY|NAME|DECLARATION)_/) });
        // The parser found it by itself: its message, not the schema's fallback, at the entry's index
        // (or an earlier one that a string entry made into the same broken object).
        expect((thrown as Error).message).not.toContain(SCHEMA_FALLBACK);
        expect((thrown as { index?: number }).index).toBeLessThanOrEqual(index);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('a document that is neither form fails both', () => {
    for (const value of [{}, { skills: 'x' }, { skills: [], extra: 1 }, 'text', 3]) {
      expect(validDocument(value)).toBe(false);
      expect(() => parseSkillDeclarationText(JSON.stringify(value), { source: 'skills.json' })).toThrow(
        expect.objectContaining({ code: expect.stringMatching(/^SKILL_(DECLARATION|ENTRY)_INVALID$/) }),
      );
    }
  });
});
