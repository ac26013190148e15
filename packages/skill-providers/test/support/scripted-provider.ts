import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  BaseSkillProvider,
  type FetchContext,
  type ProviderContext,
  type ResolvedSkillSource,
  type SkillSource,
} from '@agentproto/skill-providers';

/** A provider whose sources are names of trees held in memory; it records every call. */
export class ScriptedProvider extends BaseSkillProvider {
  readonly id: string;
  readonly calls: Array<{ op: 'validate' | 'resolve' | 'fetch'; source: string; privateDir?: string }> = [];
  active = 0;
  maxActive = 0;
  /** Runs inside resolve/fetch, for tests to pause or fail at a phase. */
  hooks: {
    resolve?: (context: ProviderContext, source: string) => Promise<void>;
    fetch?: (context: FetchContext, source: string) => Promise<void>;
  } = {};

  constructor(
    readonly trees: Record<string, Record<string, string>>,
    id = 'scripted',
  ) {
    super();
    this.id = id;
  }

  validate(source: SkillSource): void {
    this.calls.push({ op: 'validate', source: source.source });
    if (!(source.source in this.trees)) throw Object.assign(new Error(`no tree ${source.source}`), { code: 'NO_TREE' });
  }

  egressHosts(): string[] {
    return [];
  }

  async resolve(source: SkillSource, context: ProviderContext): Promise<ResolvedSkillSource> {
    this.calls.push({ op: 'resolve', source: source.source, privateDir: context.privateDir });
    this.active += 1;
    this.maxActive = Math.max(this.maxActive, this.active);
    try {
      await this.hooks.resolve?.(context, source.source);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { version: `v-${source.source}`, contentId: `c-${source.source}` };
    } finally {
      this.active -= 1;
    }
  }

  async fetch(source: SkillSource, _resolved: ResolvedSkillSource, context: FetchContext): Promise<void> {
    this.calls.push({ op: 'fetch', source: source.source, privateDir: context.privateDir });
    await this.hooks.fetch?.(context, source.source);
    await mkdir(context.destination);
    for (const [path, text] of Object.entries(this.trees[source.source] ?? {}))
      await writeFile(join(context.destination, path), text);
  }

  count(op: 'validate' | 'resolve' | 'fetch'): number {
    return this.calls.filter((call) => call.op === op).length;
  }
}

export const entryOf = (source: string, name = source) => ({ provider: 'scripted', source, version: '1', name });
