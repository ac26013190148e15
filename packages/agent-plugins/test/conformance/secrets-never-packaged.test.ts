import { createHash, createHmac, generateKeyPairSync } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateSshKey, renderings } from '@agentproto/testkit';
import {
  FINDING_CODES,
  type Finding,
  type McpServerConfig,
  PluginPackageInvalidError,
  SECRET_RULES,
  buildPlugin,
  buildServers,
  detectSecret,
  importPlugin,
  pushPlugin,
  readServers,
  validatePlugin,
  writePlugin,
} from '../../src/index.js';
import { mcpSchemaId } from '../../src/schemas.js';

// The rules these tests are built from (reference/agent-plugins/1.0.0/spec.md, the same
// sentences in 1.1.0-draft):
// §7.2.1: "Header values are visible package data, not a portable secret mechanism. Plugins
//          MUST NOT embed credentials or other secrets in `headers`."
// §9.2:   "Configured `env` values are visible package data, not a portable secret mechanism.
//          Plugins MUST NOT embed credentials or other secrets in `env`."

const made: string[] = [];
afterAll(async () => {
  await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
});
const scratch = async (): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'agent-plugins-secrets-'));
  made.push(dir);
  return dir;
};

/**
 * `length` characters of `alphabet`, the same on every run, from a label: real token shapes
 * without a real token in the source (and nothing a scanner of this repository would flag).
 */
function filler(
  label: string,
  length: number,
  alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789',
): string {
  let out = '';
  for (let round = 0; out.length < length; round += 1) {
    for (const byte of createHash('sha256').update(`${label}/${round}`).digest())
      out += alphabet[byte % alphabet.length];
  }
  return out.slice(0, length);
}
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
function realJwt(): string {
  const head = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ sub: 'svc-acme', iat: 1767225600 })}`;
  return `${head}.${createHmac('sha256', filler('jwt-key', 32)).update(head).digest('base64url')}`;
}
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const sshKey = await generateSshKey({ dir: await scratch() });
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });

/** One real token shape per rule of the table, and the rule that must name it. */
const TOKENS: ReadonlyArray<readonly [string, string]> = [
  ['github-token', `ghp_${filler('ghp', 36)}`],
  ['github-token', `gho_${filler('gho', 36)}`],
  ['github-fine-grained-token', `github_pat_${filler('pat1', 22)}_${filler('pat2', 59)}`],
  [
    'openai-project-key',
    `sk-proj-${filler('proj', 64, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-')}`,
  ],
  ['openai-legacy-key', `sk-${filler('oa1', 20)}T3BlbkFJ${filler('oa2', 20)}`],
  ['anthropic-api-key', `sk-ant-api03-${filler('ant', 93)}AA`],
  ['aws-access-key-id', `AKIA${filler('akia', 16, UPPER)}`],
  ['aws-access-key-id', `ASIA${filler('asia', 16, UPPER)}`],
  ['slack-token', `xoxb-${filler('s1', 12, '0123456789')}-${filler('s2', 13, '0123456789')}-${filler('s3', 24)}`],
  [
    'slack-webhook',
    `https://hooks.slack.com/services/T${filler('w1', 8, UPPER)}/B${filler('w2', 8, UPPER)}/${filler('w3', 24)}`,
  ],
  ['stripe-key', `sk_live_${filler('stripe', 99)}`],
  ['stripe-key', `rk_test_${filler('rk', 24)}`],
  ['google-api-key', `AIza${filler('gapi', 35, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-')}`],
  ['google-oauth-secret', `GOCSPX-${filler('gcs', 28)}`],
  ['gitlab-token', `glpat-${filler('gl', 20)}`],
  ['npm-token', `npm_${filler('npm', 36)}`],
  ['huggingface-token', `hf_${filler('hf', 34)}`],
  ['sendgrid-api-key', `SG.${filler('sg1', 22)}.${filler('sg2', 43)}`],
  ['pypi-token', `pypi-AgEIcHlwaS5vcmc${filler('pypi', 70)}`],
  ['docker-pat', `dckr_pat_${filler('dckr', 27)}`],
  ['jwt', realJwt()],
  ['private-key', sshKey.privateKeyText],
  ['private-key', rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()],
  ['private-key', rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()],
];

/** Values that look a little like secrets and are not; each with where it sits. */
const HARMLESS: ReadonlyArray<readonly [string, string, { field: 'env' | 'header' | 'arg' | 'url'; name?: string }]> = [
  ['"sk-" in prose', 'use an sk- key from your account settings', { field: 'arg' }],
  ['a forwarding placeholder', '${OPENAI_API_KEY}', { field: 'env', name: 'OPENAI_API_KEY' }],
  ['a placeholder in a header', 'Bearer ${TOKEN}', { field: 'header', name: 'X-Auth-Token' }],
  [
    'a plugin placeholder path under a credential name',
    '${PLUGIN_DATA}/credentials.json',
    { field: 'env', name: 'GOOGLE_APPLICATION_CREDENTIALS' },
  ],
  ['API_KEY = "changeme" (a template stand-in, decided: not a secret)', 'changeme', { field: 'env', name: 'API_KEY' }],
  ['<your-api-key>', '<your-api-key>', { field: 'header', name: 'X-Api-Key' }],
  ['a UUID', '123e4567-e89b-12d3-a456-426614174000', { field: 'arg' }],
  ['a git SHA', createHash('sha1').update('commit').digest('hex'), { field: 'arg' }],
  ['a sha256 digest', `sha256:${createHash('sha256').update('layer').digest('hex')}`, { field: 'arg' }],
  [
    'an npm integrity (SRI) digest',
    `sha512-${createHash('sha512').update('tarball').digest('base64')}`,
    { field: 'arg' },
  ],
  [
    'base64 of ordinary text',
    Buffer.from('The quick brown fox jumps over the lazy dog, twice over.').toString('base64'),
    { field: 'arg' },
  ],
  ['a model name', 'claude-3-5-sonnet-20241022', { field: 'arg' }],
  ['a long identifier', 'AcmeReviewToolingServerVersion2', { field: 'arg' }],
  ['a public header', 'public-tenant', { field: 'header', name: 'X-Tenant' }],
  ['a token limit', '4096', { field: 'env', name: 'MAX_TOKENS' }],
  ['a token endpoint', 'https://auth.example.com/oauth/token', { field: 'env', name: 'TOKEN_URL' }],
  [
    'a URL with a placeholder password',
    'postgres://app:${DB_PASSWORD}@db.example.com/app',
    { field: 'env', name: 'DATABASE_URL' },
  ],
  ['a public URL', 'https://mcp.example.com/mcp?region=eu', { field: 'url' }],
  ['an Authorization line with a placeholder', 'Authorization: Bearer ${TOKEN}', { field: 'arg' }],
  ['NAME=value of a setting', 'LOG_LEVEL=debug', { field: 'arg' }],
  ['a map key in prose', 'key: value', { field: 'arg' }],
];

const secretFindings = (findings: readonly Finding[]) => findings.filter((f) => f.code.startsWith('secret.'));
const tokenValue = (token: string) => token.split('\n')[1] ?? token;

describe('§7.2.1, §9.2 "Plugins MUST NOT embed credentials or other secrets": known token shapes', () => {
  it('every rule of the table has a token shape here', () => {
    expect(new Set(TOKENS.map(([rule]) => rule))).toEqual(new Set(SECRET_RULES.map((r) => r.id)));
  });

  it.each(TOKENS.map(([rule, token]) => [rule, token.slice(0, 12), token] as const))(
    '%s (%s…) in env, a header, an arg and a url is found',
    (rule, _shown, token) => {
      for (const [field, name] of [
        ['env', 'CONFIG'],
        ['header', 'X-Tenant'],
        ['arg', undefined],
        ['url', undefined],
      ] as const) {
        const value = field === 'url' ? `https://mcp.example.com/mcp/${token}` : `prefix ${token}`;
        const match = detectSecret(value, { field, ...(name ? { name } : {}) });
        expect(match?.rule, `${rule} in ${field}`).toBe(rule);
        // Never the value: at most the vendor's public marker.
        const marker = SECRET_RULES.find((r) => r.id === rule)!.prefix;
        if (marker === 0) expect(match?.masked).toBeUndefined();
        else {
          expect(match?.masked).toHaveLength(marker + 1);
          expect(match?.masked?.endsWith('…')).toBe(true);
          expect(token).toContain(match?.masked?.slice(0, -1));
        }
      }
    },
  );

  it.each(HARMLESS.map(([what, value, context]) => [what, value, context] as const))(
    '%s is not a secret',
    (_what, value, context) => {
      expect(detectSecret(value, context)).toBeUndefined();
    },
  );

  it.each([
    [
      'a literal under a credential-like env name',
      'sk-live-short',
      { field: 'env', name: 'OPENAI_API_KEY' },
      'credential-name',
    ],
    [
      'a literal under a credential-like header',
      filler('hdr', 16),
      { field: 'header', name: 'X-Api-Key' },
      'credential-name',
    ],
    ['a --token flag value', 'hunter2hunter2', { field: 'arg', name: 'token' }, 'credential-name'],
    [
      'a password in a connection string',
      'postgres://app:s3cr3t-pw@db.example.com/app',
      { field: 'env', name: 'DATABASE_URL' },
      'url-password',
    ],
    ['a token in a URL query', 'https://mcp.example.com/mcp?api_key=abc123', { field: 'url' }, 'credential-name'],
    ['NAME=value inside an argument (docker -e)', 'OPENAI_API_KEY=sk-live-123', { field: 'arg' }, 'credential-name'],
    [
      'an Authorization line inside an argument (--header)',
      'Authorization: Bearer abc123def',
      { field: 'arg' },
      'credential-name',
    ],
    [
      'a random 40-character string (AWS secret access key shape)',
      filler('aws-secret', 40, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'),
      { field: 'arg' },
      'high-entropy',
    ],
  ] as const)('%s is found', (_what, value, context, rule) => {
    expect(detectSecret(value, context)?.rule).toBe(rule);
  });
});

describe('§7.2.1, §9.2 "Plugins MUST NOT embed credentials or other secrets": building refuses, reading reports', () => {
  const ghp = `ghp_${filler('build-ghp', 36)}`;
  const apiKey = filler('build-api-key', 32);
  const config: McpServerConfig[] = [
    {
      name: 'openai',
      command: 'npx',
      args: ['-y', 'openai-mcp'],
      env: { OPENAI_API_KEY: 'sk-live-0123456789abcdef', LOG_LEVEL: 'info' },
    },
    { name: 'github', command: 'npx', args: ['github-mcp', `--token=${ghp}`] },
    {
      name: 'remote',
      transport: 'http',
      url: 'https://mcp.example.com/mcp',
      headers: { 'X-Api-Key': apiKey, 'X-Tenant': 'public-tenant' },
    },
    {
      name: 'clean',
      command: 'npx',
      args: ['clean-mcp'],
      env: { OPENAI_API_KEY: '${OPENAI_API_KEY}', HOME_DIR: '${PLUGIN_DATA}/home' },
    },
  ];
  const everyValue = ['sk-live-0123456789abcdef', ghp, apiKey];

  it('buildServers: an error naming the path and the rule, the server left out, no value in any message', () => {
    const { servers, findings } = buildServers(config, { files: new Set() });
    expect(Object.keys(servers)).toEqual(['clean']);
    expect(secretFindings(findings).map((f) => [f.code, f.severity, f.path])).toEqual([
      ['secret.embedded-rejected', 'error', 'mcp.json#/mcpServers/github/args/1'],
      ['secret.embedded-rejected', 'error', 'mcp.json#/mcpServers/openai/env/OPENAI_API_KEY'],
      ['secret.embedded-rejected', 'error', 'mcp.json#/mcpServers/remote/headers/X-Api-Key'],
    ]);
    expect(secretFindings(findings)[0]?.message).toContain('(ghp_…), rule github-token');
    const printed = JSON.stringify(findings);
    for (const value of everyValue) expect(printed).not.toContain(value.slice(4));
    for (const f of secretFindings(findings))
      expect(FINDING_CODES[f.code as keyof typeof FINDING_CODES]).toMatchObject({ severity: f.severity, rule: f.rule });
  });

  it('readServers: a warning at the same paths, and the client still loads each server (§7.2.2: the entry itself is valid)', () => {
    const mcpJson = {
      $schema: mcpSchemaId('1.0.0'),
      mcpServers: {
        openai: { type: 'stdio', command: 'npx', env: { OPENAI_API_KEY: 'sk-live-0123456789abcdef' } },
        remote: { type: 'streamable-http', url: 'https://mcp.example.com/mcp', headers: { 'X-Api-Key': apiKey } },
      },
    };
    const { servers, findings } = readServers(mcpJson);
    expect(Object.keys(servers)).toEqual(['openai', 'remote']);
    expect(secretFindings(findings).map((f) => [f.code, f.severity, f.path])).toEqual([
      ['secret.embedded', 'warning', 'mcp.json#/mcpServers/openai/env/OPENAI_API_KEY'],
      ['secret.embedded', 'warning', 'mcp.json#/mcpServers/remote/headers/X-Api-Key'],
    ]);
    expect(JSON.stringify(findings)).not.toContain(apiKey);
  });

  it('a package on disk: buildPlugin leaves the servers out; validatePlugin and importPlugin warn about a hand-written mcp.json; pushPlugin refuses it', async () => {
    const root = await scratch();
    await mkdir(join(root, 'skills/review'), { recursive: true });
    await writeFile(join(root, 'skills/review/SKILL.md'), '---\nname: review\ndescription: Reviews.\n---\n# review\n');
    const pkg = await buildPlugin({ name: 'acme.tools', mcp: config }, { contentRoot: root });
    const mcpJson = JSON.parse(Buffer.from(pkg.files.get('mcp.json')!.bytes).toString('utf8')) as {
      mcpServers: Record<string, unknown>;
    };
    expect(Object.keys(mcpJson.mcpServers)).toEqual(['clean']);
    for (const [, file] of pkg.files)
      for (const value of everyValue) expect(Buffer.from(file.bytes).toString('utf8')).not.toContain(value);

    // A package someone wrote by hand, with the secret in it, as a client meets it.
    const out = join(await scratch(), 'pkg');
    const files = new Map(pkg.files);
    const handWritten = {
      $schema: mcpSchemaId('1.0.0'),
      mcpServers: {
        ...mcpJson.mcpServers,
        remote: { type: 'streamable-http', url: 'https://mcp.example.com/mcp', headers: { 'X-Api-Key': apiKey } },
      },
    };
    files.set('mcp.json', { bytes: new TextEncoder().encode(JSON.stringify(handWritten)), mode: 0o644 });
    files.delete('.agentproto-generated.json');
    await writePlugin(files, out);
    const validation = await validatePlugin(out);
    expect(validation.servers).toEqual(['clean', 'remote']);
    expect(secretFindings(validation.findings).map((f) => `${f.severity} ${f.code} ${f.path}`)).toEqual([
      'warning secret.embedded mcp.json#/mcpServers/remote/headers/X-Api-Key',
    ]);
    const imported = await importPlugin(out);
    expect(secretFindings(imported.findings).map((f) => `${f.severity} ${f.code} ${f.path}`)).toEqual([
      'warning secret.embedded mcp.json#/mcpServers/remote/headers/X-Api-Key',
    ]);
    expect(JSON.stringify([validation.findings, imported.findings])).not.toContain(apiKey);
    expect(await readFile(join(out, 'mcp.json'), 'utf8')).toContain(apiKey); // the package did hold it

    // Publishing is building again: the push is refused before any request (nothing listens
    // at the reference), the findings name the header, and no rendering of the error holds the key.
    const refused = await pushPlugin(out, '127.0.0.1:9/acme/tools:1.0.0', { allowInsecureHttp: true }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(PluginPackageInvalidError);
    const invalid = refused as PluginPackageInvalidError;
    // The clean package the push would upload lacks the server, and its build record says why.
    expect(
      invalid.findings.filter((f) => f.severity === 'error').map((f) => `${f.code} ${f.path} ${f.message}`),
    ).toEqual([
      'package.build-omitted mcp.json#/mcpServers/remote/headers/X-Api-Key was left out when the package was built (secret.embedded-rejected); the build recorded it in .agentproto-generated.json',
    ]);
    for (const text of renderings(invalid)) expect(text).not.toContain(apiKey);
  });
});

describe('the same for plugin.json URL fields (package data too; §5.4 checks them only as strings)', () => {
  it('a token in repository or author.url: left out at build with an error, a warning on read, never printed', async () => {
    const token = `ghp_${filler('clone-url', 36)}`;
    const root = await scratch();
    const pkg = await buildPlugin(
      {
        name: 'acme.tools',
        homepage: 'https://acme.example.com/tools',
        repository: `https://x-access-token:${token}@github.com/acme/tools`,
        author: { name: 'Acme', url: `https://acme.example.com/?token=${token}` },
      },
      { contentRoot: root },
    );
    expect(secretFindings(pkg.findings).map((f) => `${f.severity} ${f.code} ${f.path}`)).toEqual([
      'error secret.embedded-rejected plugin.json#/author/url',
      'error secret.embedded-rejected plugin.json#/repository',
    ]);
    const manifest = JSON.parse(Buffer.from(pkg.files.get('plugin.json')!.bytes).toString('utf8')) as Record<
      string,
      unknown
    >;
    expect(manifest).toMatchObject({ homepage: 'https://acme.example.com/tools', author: { name: 'Acme' } });
    expect(manifest).not.toHaveProperty('repository');
    expect(JSON.stringify([...pkg.files.values()].map((f) => Buffer.from(f.bytes).toString('utf8')))).not.toContain(
      token,
    );

    const out = join(await scratch(), 'pkg');
    await mkdir(out, { recursive: true });
    await writeFile(
      join(out, 'plugin.json'),
      JSON.stringify({
        $schema: 'https://agent-plugins.org/schemas/1.0.0/plugin.schema.json',
        name: 'acme.tools',
        repository: `https://x-access-token:${token}@github.com/acme/tools`,
      }),
    );
    const validation = await validatePlugin(out);
    expect(validation.rejected).toBe(false);
    expect(secretFindings(validation.findings).map((f) => `${f.severity} ${f.code} ${f.path}`)).toEqual([
      'warning secret.embedded plugin.json#/repository',
    ]);
    expect(JSON.stringify(validation.findings)).not.toContain(token.slice(4));
  });
});

describe('scanning stays linear on values as large as mcp.json may hold (128 KiB)', () => {
  // Each of these once took seconds to minutes: a scheme or query pattern retried from every position.
  const N = 128 * 1024;
  it.each([
    ['letters', 'a'.repeat(N)],
    ['scheme separators', 'a://'.repeat(N / 4)],
    ['user-info openings', 'http://u:'.repeat(N / 9)],
    ['query marks', `http://x${'?a'.repeat(N / 2)}`],
    ['assignments', 'a=b '.repeat(N / 4)],
  ])('%s', (_what, value) => {
    for (const context of [{ field: 'env', name: 'API_KEY' }, { field: 'arg' }] as const) {
      const started = performance.now();
      detectSecret(value, context);
      expect(performance.now() - started).toBeLessThan(2_000);
    }
  });
});

describe('the secret never reaches a message, whatever the value', () => {
  it.each(TOKENS.map(([rule, token]) => [rule, token] as const))(
    '%s: the message holds at most the public marker',
    (_rule, token) => {
      const { findings } = buildServers([{ name: 's', command: 'npx', env: { CONFIG: token } }], { files: new Set() });
      const [finding] = secretFindings(findings);
      expect(finding).toBeDefined();
      // Everything past the marker is withheld: no 8 consecutive characters of the token's body.
      const marker = /\((.+?)…\)/.exec(finding!.message)?.[1] ?? '';
      const body = marker === '' ? tokenValue(token) : token.slice(token.indexOf(marker) + marker.length);
      for (let i = 0; i + 8 <= body.length; i += 4) expect(finding!.message).not.toContain(body.slice(i, i + 8));
    },
  );
});
