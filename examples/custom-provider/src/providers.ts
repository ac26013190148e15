import type { SkillContentProvider } from '@agentproto/skill-providers';
import { tarballProvider } from './provider.js';

/**
 * What `loadRegistry({ packages: ['@agentproto/example-custom-provider'] })` registers: the
 * tarball provider, configured by the deployment's environment (the approved token secret
 * names in TARBALL_TOKEN_SECRET_NAMES), since a host that loads a package by name has no
 * way to pass it options. A host that wants other options imports `tarballProvider` instead.
 */
export const providers: readonly SkillContentProvider[] = [tarballProvider()];
