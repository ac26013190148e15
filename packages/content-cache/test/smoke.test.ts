import { expect, it } from 'vitest';
import { placeholder } from '@agentproto/content-cache';
it('resolves the package source', () => { expect(placeholder).toBe(1); });
