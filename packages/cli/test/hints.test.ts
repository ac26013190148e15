import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { linkSkills } from '@agentproto/skill-providers';
import { describe, expect, it } from 'vitest';
import { type CodedError, hintFor } from '../src/hints.js';
import { scratchFolders } from './support/scratch.js';

const scratch = scratchFolders();

describe('hints read the facts of the error', () => {
  it('SKILL_LINK_NAME_INVALID (a name no folder can take, which prepare never hands over): rename the entry', async () => {
    const dir = await scratch();
    await mkdir(join(dir, 'skill'));
    const error = (await linkSkills([{ name: '../up', dir: join(dir, 'skill') }], join(dir, 'into')).catch(
      (caught: unknown) => caught,
    )) as CodedError;
    expect(error.code).toBe('SKILL_LINK_NAME_INVALID');
    expect(hintFor(error, { group: 'skills' })).toBe(
      "each skill becomes --link-into DIR/<name>: give the entry a name that follows the rule (its 'name' field), or prepare without --link-into",
    );
  });

  it('SKILL_LINK_CONFLICT says what is at which path, quoted for a shell', async () => {
    const dir = await scratch();
    await mkdir(join(dir, 'skill'));
    const into = join(dir, 'agent skills');
    await mkdir(join(into, 'review'), { recursive: true });
    const error = (await linkSkills([{ name: 'review', dir: join(dir, 'skill') }], into).catch(
      (caught: unknown) => caught,
    )) as CodedError;
    expect(error.code).toBe('SKILL_LINK_CONFLICT');
    expect(hintFor(error, { group: 'skills' })).toBe(
      `--link-into replaces only the links and copies it made; a folder is at '${join(into, 'review')}': move it elsewhere, or choose another --link-into DIR`,
    );
  });
});
