import { describe, expect, it } from 'vitest';
import { type Code, RunnerConflictError, inheritBlocks, nodeWorkspaceFs, planCode } from '../../src/index.js';
import { makeWorkspace } from '../support/workspace.js';

// ADAPTER.md, "Inheritance semantics":
//   `runner`  — "Inherited. Tool MAY override fields field-by-field; host merges."
//   `secrets` — "Inherited. Tool MAY add additional bindings. Conflicts: tool overrides workspace."
//   `network` — "Inherited. Tool MAY add to `network.egress`. Cannot narrow."
// A code-workspace that references another is, to it, what a tool is to a workspace: the
// referencing manifest wins at every level of a chain. aip-26.md §"Overlay merge" ("Last
// wins") keeps siblings (several `ref` sources of one manifest) in declaration order.

function workspaceManifest(memory: number, secret: string, extra = ''): string {
  return `kind: code-workspace\ncode:\n  sources:\n    - inline: { path: ${secret}.txt, content: x }\n${extra}runner:\n  limits: { memory_mb: ${memory} }\nsecrets:\n  API_KEY: { vault: ${secret} }\nnetwork:\n  egress: [${secret}.example]\n`;
}

async function inherited(files: Record<string, string>, manifest: Record<string, unknown>) {
  const workspaceRoot = await makeWorkspace(files);
  const { workspaces } = await planCode(manifest.code as Code, nodeWorkspaceFs(workspaceRoot));
  return { merged: inheritBlocks(manifest, workspaces), workspaces };
}

describe('ADAPTER.md "Inheritance semantics": the referencing manifest wins at every level, siblings later wins', () => {
  it('a chain a → b: a (which references b) wins memory_mb and the secret over b', async () => {
    const files = {
      'cw/a/manifest.yaml': workspaceManifest(1024, 'from-a', '    - ref: cw/b\n'),
      'cw/b/manifest.yaml': workspaceManifest(2048, 'from-b'),
    };
    const { merged, workspaces } = await inherited(files, { code: './cw/a' });
    expect(workspaces.map((w) => [w.path, w.depth])).toEqual([
      ['cw/a', 1],
      ['cw/b', 2],
    ]);
    expect(merged.runner).toEqual({ limits: { memory_mb: 1024 } });
    expect(merged.secrets).toEqual({ API_KEY: { vault: 'from-a' } });
    // "Cannot narrow": egress of the whole chain.
    expect(merged.network?.egress).toEqual(['from-b.example', 'from-a.example']);
  });

  it('the tool wins over the whole chain, and keeps what it does not set from the nearest level that does', async () => {
    const files = {
      'cw/a/manifest.yaml':
        'kind: code-workspace\ncode: { sources: [ { ref: cw/b } ] }\nrunner:\n  limits: { memory_mb: 1024 }\n',
      'cw/b/manifest.yaml':
        'kind: code-workspace\ncode: { sources: [ { ref: cw/d } ] }\nrunner:\n  limits: { memory_mb: 2048, timeout_ms: 5000 }\nsecrets:\n  B_ONLY: { vault: b }\n  API_KEY: { vault: from-b }\n',
      'cw/d/manifest.yaml':
        'kind: code-workspace\ncode: { sources: [ { inline: { path: d.txt, content: d } } ] }\nrunner:\n  engine: sandbox\n  limits: { memory_mb: 4096, timeout_ms: 9000 }\nsecrets:\n  API_KEY: { vault: from-d }\n',
    };
    const { merged } = await inherited(files, {
      code: './cw/a',
      runner: { limits: { timeout_ms: 100 } },
      secrets: { TOOL: { vault: 't' } },
    });
    expect(merged.runner).toEqual({ engine: 'sandbox', limits: { memory_mb: 1024, timeout_ms: 100 } });
    expect(merged.secrets).toEqual({ API_KEY: { vault: 'from-b' }, B_ONLY: { vault: 'b' }, TOOL: { vault: 't' } });
  });

  it('siblings keep "later wins": the second ref of the tool overrides the first, whatever the first references', async () => {
    const files = {
      'cw/a/manifest.yaml': workspaceManifest(1024, 'from-a', '    - ref: cw/b\n'),
      'cw/b/manifest.yaml': workspaceManifest(2048, 'from-b'),
      'cw/c/manifest.yaml': workspaceManifest(512, 'from-c'),
    };
    const { merged } = await inherited(files, { code: { sources: [{ ref: 'cw/a' }, { ref: 'cw/c' }] } });
    expect(merged.runner).toEqual({ limits: { memory_mb: 512 } });
    expect(merged.secrets).toEqual({ API_KEY: { vault: 'from-c' } });
    const reversed = await inherited(files, { code: { sources: [{ ref: 'cw/c' }, { ref: 'cw/a' }] } });
    // a comes later: a (over its own b) wins.
    expect(reversed.merged.runner).toEqual({ limits: { memory_mb: 1024 } });
    expect(reversed.merged.secrets).toEqual({ API_KEY: { vault: 'from-a' } });
  });

  it('siblings inside a workspace: its later ref wins, and the workspace itself wins over both', async () => {
    const files = {
      'cw/a/manifest.yaml':
        'kind: code-workspace\ncode: { sources: [ { ref: cw/b }, { ref: cw/c } ] }\nsecrets:\n  A: { vault: a }\n',
      'cw/b/manifest.yaml': workspaceManifest(2048, 'from-b'),
      'cw/c/manifest.yaml': workspaceManifest(512, 'from-c'),
    };
    const { merged } = await inherited(files, { code: './cw/a' });
    expect(merged.runner).toEqual({ limits: { memory_mb: 512 } });
    expect(merged.secrets).toEqual({ API_KEY: { vault: 'from-c' }, A: { vault: 'a' } });
  });

  it('a lean CODE.md in the chain is a level like any other', async () => {
    const files = {
      'cw/a/manifest.yaml': workspaceManifest(1024, 'from-a', '    - ref: .code/py\n'),
      '.code/py/CODE.md':
        '---\nschema: code/v2\nsource: { local: ./s.py }\nrunner: { limits: { memory_mb: 8192 } }\nsecrets: { API_KEY: { vault: from-lean } }\n---\n',
      '.code/py/s.py': 's',
    };
    const { merged } = await inherited(files, { code: './cw/a' });
    expect(merged.runner).toEqual({ limits: { memory_mb: 1024 } });
    expect(merged.secrets).toEqual({ API_KEY: { vault: 'from-a' } });
  });

  // ADAPTER.md: "Hosts MUST validate that the merged `runner` is internally consistent".
  it('a language conflict anywhere in the chain is still refused', async () => {
    const files = {
      'cw/a/manifest.yaml':
        'kind: code-workspace\ncode: { sources: [ { ref: cw/b } ] }\nrunner: { needs: { language: node } }\n',
      'cw/b/manifest.yaml':
        'kind: code-workspace\ncode: { sources: [ { inline: { path: b.py, content: b } } ] }\nrunner: { needs: { language: python } }\n',
    };
    await expect(inherited(files, { code: './cw/a' })).rejects.toBeInstanceOf(RunnerConflictError);
  });

  it("a list without depths (a host's own) counts every workspace as a sibling: later wins", () => {
    const merged = inheritBlocks({}, [
      { path: 'x', manifest: { runner: { limits: { memory_mb: 1 } } } },
      { path: 'y', manifest: { runner: { limits: { memory_mb: 2 } } } },
    ]);
    expect(merged.runner).toEqual({ limits: { memory_mb: 2 } });
  });

  it('a manifest, list or entry that is not a mapping gives no blocks, never a TypeError', () => {
    expect(inheritBlocks(null as never, [{ path: 'x', manifest: { secrets: { A: { vault: 'a' } } } }])).toEqual({
      secrets: { A: { vault: 'a' } },
    });
    expect(inheritBlocks({ secrets: { B: 1 } }, null as never)).toEqual({ secrets: { B: 1 } });
    expect(inheritBlocks({}, [null, 7, { path: 5n, manifest: [] }] as never)).toEqual({});
  });

  it("a manifest key named __proto__ is data, not the merged object's prototype", () => {
    const runner = JSON.parse('{"limits": {"__proto__": {"polluted": true}, "timeout_ms": 5}}') as Record<
      string,
      unknown
    >;
    const merged = inheritBlocks({ runner }, [{ path: 'x', manifest: { runner: { limits: { memory_mb: 1 } } } }]);
    const limits = merged.runner!.limits as Record<string, unknown>;
    expect(Object.getPrototypeOf(limits)).toBe(Object.prototype);
    expect((limits as { polluted?: unknown }).polluted).toBeUndefined();
  });
});
