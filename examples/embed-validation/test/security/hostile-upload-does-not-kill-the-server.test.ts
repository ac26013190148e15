import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { entriesOf, tarGz } from '../support/archive.js';
import { post } from '../support/http.js';

const repoRoot = fileURLToPath(new URL('../../../..', import.meta.url));
const GOLDEN = fileURLToPath(new URL('../../../../packages/agent-plugins/test/golden/1.1.0', import.meta.url));
const SCHEMA = 'https://agent-plugins.org/schemas/1.1.0/plugin.schema.json';
const children: ChildProcess[] = [];
const folders: string[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await Promise.all(folders.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/**
 * The example's serve command in its own process with a 256 MiB heap, as a host would run
 * it: a request that exhausted the heap would abort this process (V8 cannot throw there),
 * and the next request would find nobody listening.
 */
async function serve(): Promise<{ child: ChildProcess; url: string }> {
  const tempRoot = await mkdtemp(join(tmpdir(), 'embed-validation-hostile-'));
  folders.push(tempRoot);
  const child = spawn(
    process.execPath,
    [
      '--max-old-space-size=256',
      '--conditions=@agentproto/source',
      '--import',
      'tsx',
      'examples/embed-validation/src/serve.ts',
      '--port',
      '0',
      '--temp-root',
      tempRoot,
    ],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code, signal) => reject(new Error(`exited with ${code ?? signal}: ${output}`)));
  });
  return { child, url };
}

const plugin = (skillMd: string) =>
  tarGz([
    { name: 'plugin.json', body: JSON.stringify({ $schema: SCHEMA, name: 'acme.tools' }) },
    { name: 'skills/x/SKILL.md', body: skillMd },
  ]);

describe('the validation endpoint survives hostile uploads', () => {
  it('answers the 589-byte upload (`name: ` and 350,000 `[` in SKILL.md) with a finding, then validates the next plugin', async () => {
    const { child, url } = await serve();
    const upload = await plugin(`---\nname: ${'['.repeat(350_000)}\n---\n`);
    expect(upload.length).toBeLessThanOrEqual(589);

    const answer = await post(`${url}/validate`, upload);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ ok: false, skills: [] });
    expect(answer.body.findings.map((finding: { code: string }) => finding.code)).toContain(
      'skill.frontmatter-too-large',
    );

    const next = await post(`${url}/validate`, await tarGz(await entriesOf(GOLDEN)));
    expect(next).toMatchObject({ status: 200, body: { ok: true, skills: ['release', 'review'] } });
    expect(child.exitCode).toBeNull();
  }, 120_000);

  it('answers SKILL.md front matter nested 32,000 deep, an alias bomb and a plugin.json nested 100,000 deep, one after the other, and stays up', async () => {
    const { child, url } = await serve();
    const bomb = [
      'a0: &a0 [x, x, x, x, x, x, x, x, x, x]',
      ...Array.from({ length: 9 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array(10).fill(`*a${i}`).join(', ')}]`),
    ].join('\n');
    const uploads: [Buffer, string][] = [
      [await plugin(`---\nname: ${'['.repeat(32_000)}\n---\n`), 'skill.frontmatter-too-deep'],
      [await plugin(`---\nname: x\ndescription: d\n${bomb}\n---\n`), 'skill.frontmatter-too-complex'],
      [await plugin(`---\nname: ${'{a: '.repeat(8_000)}\n---\n`), 'skill.frontmatter-too-deep'],
      [
        await tarGz([{ name: 'plugin.json', body: `${'['.repeat(100_000)}${']'.repeat(100_000)}` }]),
        'plugin.over-limit',
      ],
    ];
    for (const [upload, code] of uploads) {
      const answer = await post(`${url}/validate`, upload);
      expect(answer.status, code).toBe(200);
      expect(answer.body.findings.map((finding: { code: string }) => finding.code)).toContain(code);
    }
    expect(await post(`${url}/validate`, await tarGz(await entriesOf(GOLDEN)))).toMatchObject({
      status: 200,
      body: { ok: true },
    });
    expect(child.exitCode).toBeNull();
  }, 120_000);
});
