import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import * as skills from '@agentproto/skill-providers';

const errorClasses = Object.entries(skills)
  .filter(([, value]) => typeof value === 'function' && value.prototype instanceof skills.SkillError)
  .map(([name]) => name)
  .sort();

async function errorsSection(): Promise<string> {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
  return readme.slice(readme.indexOf('\n## Errors'));
}

describe('errors', () => {
  it('the README documents every exported error class, and the package exports every one it documents', async () => {
    const section = await errorsSection();
    const documented = [...new Set([...section.matchAll(/`(\w+Error)`/g)].map((match) => match[1]!))]
      .filter((name) => name !== 'SkillError')
      .sort();
    expect(errorClasses).toEqual(documented);
  });

  it('each row of the table names codes its class carries', async () => {
    const rows = [...(await errorsSection()).matchAll(/^\| ((?:`SKILL_[A-Z_]+`(?:, )?)+) \| `(\w+)` \|/gm)];
    expect(rows.length).toBeGreaterThan(20);
    const sample: Record<string, skills.SkillError> = {
      SkillConfigError: new skills.SkillConfigError('s', 'o', 'r'),
      CredentialNotApprovedError: new skills.CredentialNotApprovedError('n', 'V'),
      SecretMissingError: new skills.SecretMissingError('n'),
      TransportUnsupportedError: new skills.TransportUnsupportedError('SSH', 'local'),
      UnknownProviderError: new skills.UnknownProviderError('x', []),
      ProviderRegistrationError: new skills.ProviderRegistrationError('x', 'r'),
      ProviderResultInvalidError: new skills.ProviderResultInvalidError({ index: 0, name: 'a', provider: 'p' }),
      SkillFileMissingError: new skills.SkillFileMissingError({ index: 0, name: 'a', provider: 'p' }, '', 'missing'),
      SkillContentMismatchError: new skills.SkillContentMismatchError('e', 'a', 'm'),
      SkillAbortedError: new skills.SkillAbortedError(undefined),
      CredentialCleanupError: new skills.CredentialCleanupError({ index: 0, name: 'a', provider: 'p' }),
      LocalSourceNotFoundError: new skills.LocalSourceNotFoundError('/s', undefined, 'cannot be read'),
      LocalVersionMismatchError: new skills.LocalVersionMismatchError('/s', 'e', 'a'),
      LocalSourceChangedError: new skills.LocalSourceChangedError('/s', 'p', undefined),
      SkillLockInvalidError: new skills.SkillLockInvalidError('lock', '/skills', 'r'),
      SkillLockDriftError: new skills.SkillLockDriftError({ index: 0, name: 'a', provider: 'p' }, 'unlocked', 'd'),
      SkillLinkConflictError: new skills.SkillLinkConflictError('/d/a', 'a file'),
      SkillLinkNameInvalidError: new skills.SkillLinkNameInvalidError('..', 'r'),
      SkillLinkError: new skills.SkillLinkError('/d', 'r'),
    };
    for (const [, codes, name] of rows) {
      const error = sample[name!];
      if (!error) continue;
      expect(
        codes!.split(', ').map((code) => code.slice(1, -1)),
        name,
      ).toContain(error.code);
      expect(error.name).toBe(name);
      expect(error).toBeInstanceOf(skills.SkillError);
    }
  });

  it('messages and codes stay as they were for the classes that replaced a bare SkillError', () => {
    expect(new skills.LocalSourceNotFoundError('/s', undefined, 'cannot be read')).toMatchObject({
      code: 'SKILL_NOT_FOUND',
      message: 'local source /s cannot be read',
    });
    expect(new skills.LocalSourceNotFoundError('/s', 'a/b', 'is not a folder').message).toBe(
      'local source /s: "a/b" is not a folder',
    );
    expect(new skills.ProviderResultInvalidError({ index: 2, name: 'a', provider: 'p' })).toMatchObject({
      code: 'SKILL_PROVIDER_RESULT_INVALID',
      message: 'skill #2 "a": provider p resolved to an invalid version or content id',
    });
  });
});
