import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { gitProvider, loadRegistry, type SkillSource } from '@agentproto/skill-providers';
import { tarballProvider } from '../src/index.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const PACKAGE = '@agentproto/example-custom-provider';

const source = (tokenSecretName: string): SkillSource => ({
  provider: 'tarball',
  source: 'https://skills.example.com/pack.tar.gz',
  version: `sha256:${'a'.repeat(64)}`,
  path: 'skills/review',
  name: 'review',
  config: { token_secret_name: tokenSecretName },
});

const codeOf = (run: () => void) => {
  try {
    run();
    return 'accepted';
  } catch (error) {
    return (error as { code?: string }).code;
  }
};

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('the package, loaded by name', () => {
  it('exports `providers`, which loadRegistry registers next to the built-ins', async () => {
    const registry = await loadRegistry({ providers: [gitProvider()], packages: [PACKAGE], from: packageDir });
    expect(registry.ids()).toEqual(['git', 'tarball']);
  });

  it("is found from the deployment's folder, not from the core library's", async () => {
    // From a folder where it is not installed (the system temp folder), the name finds nothing.
    await expect(loadRegistry({ packages: [PACKAGE], from: tmpdir() })).rejects.toMatchObject({
      code: 'SKILL_PROVIDER_INVALID',
    });
    await expect(loadRegistry({ packages: ['@agentproto/no-such-provider'], from: packageDir })).rejects.toThrow(
      `no package "@agentproto/no-such-provider" is installed in ${packageDir} or a folder above it`,
    );
  });

  it('takes the approved token secret names from TARBALL_TOKEN_SECRET_NAMES, read when a source is validated', async () => {
    const registry = await loadRegistry({ packages: [PACKAGE], from: packageDir });
    const provider = registry.get('tarball');
    expect(codeOf(() => provider.validate(source('acme-skills-token')))).toBe('SKILL_CREDENTIAL_NOT_APPROVED');
    vi.stubEnv('TARBALL_TOKEN_SECRET_NAMES', ' other-token , acme-skills-token,');
    expect(codeOf(() => provider.validate(source('acme-skills-token')))).toBe('accepted');
    expect(codeOf(() => provider.validate(source('acme-skills')))).toBe('SKILL_CREDENTIAL_NOT_APPROVED');
  });

  it("lets a host that creates the provider itself replace the environment's list", () => {
    vi.stubEnv('TARBALL_TOKEN_SECRET_NAMES', 'acme-skills-token');
    const provider = tarballProvider({ tokenSecretNames: ['vault-token'] });
    expect(codeOf(() => provider.validate(source('vault-token')))).toBe('accepted');
    expect(codeOf(() => provider.validate(source('acme-skills-token')))).toBe('SKILL_CREDENTIAL_NOT_APPROVED');
  });
});
