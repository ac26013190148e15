import { afterAll, describe, expect, it } from 'vitest';
import { FINDING_CODES, type Finding, PINNED_SCHEMAS, RULES } from '../src/index.js';
import { mcpSchemaId } from '../src/schemas.js';
import { MCP_FINDING_CODES, type McpServerConfig, buildServers, readServers } from '../src/mcp/index.js';
import { SECRET_FINDING_CODES } from '../src/secrets/index.js';
import { serverSchemaAccepts } from '../src/mcp/schema.js';

const SCHEMA = mcpSchemaId('1.0.0');
const NO_FILES: ReadonlySet<string> = new Set();

// Every finding any test produces, so the last block can check each against the code table.
const produced: Finding[] = [];
const build = (config: McpServerConfig[], files: ReadonlySet<string> = NO_FILES) => {
  const result = buildServers(config, { files });
  produced.push(...result.findings);
  return result;
};
const read = (value: unknown) => {
  const result = readServers(value);
  produced.push(...result.findings);
  return result;
};
const readOne = (name: string, entry: unknown) => read({ $schema: SCHEMA, mcpServers: { [name]: entry } });
const codes = (findings: readonly Finding[]) => findings.map((f) => `${f.code} ${f.path}`);
const severities = (findings: readonly Finding[]) => findings.map((f) => `${f.rule} ${f.severity}`);

describe('buildServers: transports (§7.2.1)', () => {
  it('a stdio server is written with type, command, args, env and cwd in that order', () => {
    const { servers, findings } = build([
      { name: 's', cwd: '${PLUGIN_DATA}', env: { B: '2', A: '1' }, args: ['serve'], command: 'npx' },
    ]);
    expect(findings).toEqual([]);
    expect(JSON.stringify(servers)).toBe(
      '{"s":{"type":"stdio","command":"npx","args":["serve"],"env":{"A":"1","B":"2"},"cwd":"${PLUGIN_DATA}"}}',
    );
  });

  it.each([
    ['transport = "http"', { transport: 'http' }, 'streamable-http'],
    ['no transport and only url', {}, 'streamable-http'],
    ['transport = "sse"', { transport: 'sse' }, 'sse'],
  ] as const)('%s is written as type %s, with url then headers', (_what, extra, type) => {
    const { servers, findings } = build([
      { name: 'r', headers: { 'X-Tenant': 'public' }, url: 'https://example.com/mcp', ...extra },
    ]);
    expect(findings).toEqual([]);
    expect(JSON.stringify(servers.r)).toBe(
      `{"type":"${type}","url":"https://example.com/mcp","headers":{"X-Tenant":"public"}}`,
    );
  });

  it('empty args, env and headers are omitted: they mean the same as absent', () => {
    const { servers } = build([
      { name: 'a', command: 'npx', args: [], env: {} },
      { name: 'b', transport: 'http', url: 'https://example.com', headers: {} },
    ]);
    expect(servers).toEqual({
      a: { type: 'stdio', command: 'npx' },
      b: { type: 'streamable-http', url: 'https://example.com' },
    });
  });

  it('enabled = false is not packaged and reported as AR9O4; enabled = true is packaged', () => {
    const { servers, findings } = build([
      { name: 'off', command: 'npx', enabled: false },
      { name: 'on', command: 'npx', enabled: true },
    ]);
    expect(Object.keys(servers)).toEqual(['on']);
    expect(findings).toEqual([
      {
        code: 'mcp.server-disabled',
        rule: 'AR9O4',
        severity: 'warning',
        path: 'mcp.json#/mcpServers/off',
        message: 'is disabled and is left out: mcp.json has no enabled flag',
      },
    ]);
  });

  it.each([
    [
      'an unknown transport',
      { name: 'x', transport: 'websocket', url: 'https://example.com' } as unknown as McpServerConfig,
      'mcp.transport-unknown',
    ],
    [
      'command and url without a transport',
      { name: 'x', command: 'npx', url: 'https://example.com' },
      'mcp.transport-ambiguous',
    ],
    [
      'enabled that is not a boolean',
      { name: 'x', command: 'npx', enabled: 'no' } as unknown as McpServerConfig,
      'mcp.field-type',
    ],
    ['no command and no url', { name: 'x' }, 'mcp.field-missing'],
  ])('%s skips the server with an AR9O2 error', (_what, config, code) => {
    const { servers, findings } = build([config, { name: 'ok', command: 'npx' }]);
    expect(Object.keys(servers)).toEqual(['ok']);
    expect(findings.map((f) => f.code)).toEqual([code]);
    expect(severities(findings)).toEqual(['AR9O2 error']);
  });

  it.each([
    [
      'url and headers on a stdio server',
      { name: 'x', command: 'npx', url: 'https://example.com', transport: 'stdio', headers: { A: 'b' } },
      ['headers', 'url'],
    ],
    [
      'command, args, env and cwd on a remote server',
      {
        name: 'x',
        transport: 'http',
        url: 'https://example.com',
        command: 'npx',
        args: ['a'],
        env: { A: 'b' },
        cwd: './',
      },
      ['args', 'command', 'cwd', 'env'],
    ],
  ] as const)('%s are left out with an AR9O4 warning each; the server is packaged', (_what, config, fields) => {
    const { servers, findings } = build([config as McpServerConfig]);
    expect(Object.keys(servers)).toEqual(['x']);
    expect(findings.map((f) => `${f.code} ${f.rule} ${f.severity}`)).toEqual(
      fields.map(() => 'mcp.field-not-packaged AR9O4 warning'),
    );
    expect(findings.map((f) => fields.find((field) => f.message.startsWith(`has ${field},`)))).toEqual(fields);
  });
});

describe('buildServers: command is one token (§7.2.1, §4.1)', () => {
  it.each(['npx', 'uvx', 'node', 'my-server', 'server.exe', 'python3.12', './bin/server', './scripts/mcp-launch.sh'])(
    '%s is packaged',
    (command) => {
      const { servers, findings } = build([{ name: 's', command }], new Set(['bin/server', 'scripts/mcp-launch.sh']));
      expect(findings).toEqual([]);
      expect(servers.s).toEqual({ type: 'stdio', command });
    },
  );

  it.each([
    ['an absolute POSIX path', '/usr/bin/server'],
    ['a drive path', 'C:\\tools\\server.exe'],
    ['a UNC path', '\\\\host\\share\\server'],
    ['a parent path', '../bin/server'],
    ['"..".', '..'],
    ['a "./" path through ".."', './bin/../../server'],
    ['a "./" path with an inner ".."', './a/../server'],
    ['${PLUGIN_ROOT}/.. after the rewrite', '${PLUGIN_ROOT}/../server'],
  ])('%s escapes the plugin root: AR9O5 error, not packaged', (_what, command) => {
    const { servers, findings } = build([{ name: 's', command }]);
    expect(servers).toEqual({});
    expect(findings.filter((f) => f.severity === 'error').map((f) => `${f.code} ${f.rule} ${f.path}`)).toEqual([
      'mcp.command-escapes AR9O5 mcp.json#/mcpServers/s/command',
    ]);
  });

  it.each([
    ['a shell command line', 'npx -y @acme/server'],
    ['a shell sequence', 'npx;rm'],
    ['a pipe', 'server|tee'],
    ['a quoted name', '"server"'],
    ['a variable', '$HOME/bin/server'],
    ['a placeholder', '${SERVER_BIN}'],
    ['${PLUGIN_ROOT} alone', '${PLUGIN_ROOT}'],
    ['a home path', '~/bin/server'],
    ['a path without "./"', 'bin/server'],
    ['a backslash path', '.\\bin\\server'],
    ['"./" alone', './'],
    ['a directory', './bin/'],
    ['an empty segment', './bin//server'],
    ['a "." segment', './bin/./server'],
    ['"."', '.'],
    ['an empty string', ''],
    ['a newline', 'server\n'],
  ])('%s is not one plain token: AR9O2 error, not packaged', (_what, command) => {
    const { servers, findings } = build([{ name: 's', command }]);
    expect(servers).toEqual({});
    expect(codes(findings)).toEqual(['mcp.command-invalid mcp.json#/mcpServers/s/command']);
    expect(severities(findings)).toEqual(['AR9O2 error']);
  });

  it('${PLUGIN_ROOT}/bin/x is rewritten to ./bin/x and reported as info', () => {
    const { servers, findings } = build([{ name: 's', command: '${PLUGIN_ROOT}/bin/server' }], new Set(['bin/server']));
    expect(servers.s).toEqual({ type: 'stdio', command: './bin/server' });
    expect(findings).toEqual([
      {
        code: 'mcp.command-rewritten',
        rule: 'AR9O3',
        severity: 'info',
        path: 'mcp.json#/mcpServers/s/command',
        message: 'is written as a "./" path: command is never expanded',
      },
    ]);
  });

  it('a "./" command that is not in the package is packaged with an AR9O2 warning', () => {
    const { servers, findings } = build(
      [
        { name: 's', command: './bin/missing' },
        { name: 't', command: '${PLUGIN_ROOT}/bin/missing' },
      ],
      new Set(['bin/server']),
    );
    expect(Object.keys(servers)).toEqual(['s', 't']);
    expect(codes(findings.filter((f) => f.severity === 'warning'))).toEqual([
      'mcp.command-not-bundled mcp.json#/mcpServers/s/command',
      'mcp.command-not-bundled mcp.json#/mcpServers/t/command',
    ]);
    expect(findings.every((f) => f.code !== 'mcp.command-not-bundled' || f.rule === 'AR9O2')).toBe(true);
  });

  it('files may list paths with or without a leading "./"', () => {
    expect(build([{ name: 's', command: './bin/server' }], new Set(['./bin/server'])).findings).toEqual([]);
  });

  it('a bare name is never looked up in files', () => {
    expect(build([{ name: 's', command: 'npx' }]).findings).toEqual([]);
  });
});

describe('buildServers: cwd forms (§7.2.1)', () => {
  it.each([
    './',
    './data',
    './data/cache',
    '${PLUGIN_ROOT}',
    '${PLUGIN_ROOT}/',
    '${PLUGIN_ROOT}/work',
    '${PLUGIN_DATA}',
    '${PLUGIN_DATA}/cache/x',
  ])('%s is packaged', (cwd) => {
    const { servers, findings } = build([{ name: 's', command: 'npx', cwd }]);
    expect(findings).toEqual([]);
    expect(servers.s).toEqual({ type: 'stdio', command: 'npx', cwd });
  });

  it.each([
    ['a bare relative path', 'data', 'mcp.cwd-invalid', 'AR9O2'],
    ['"."', '.', 'mcp.cwd-invalid', 'AR9O2'],
    ['an absolute path', '/tmp', 'mcp.cwd-invalid', 'AR9O2'],
    ['a glued PLUGIN_ROOT', '${PLUGIN_ROOT}x', 'mcp.cwd-invalid', 'AR9O2'],
    ['another variable', '${HOME}', 'mcp.cwd-invalid', 'AR9O2'],
    ['a backslash', '.\\data', 'mcp.cwd-invalid', 'AR9O2'],
    ['a control character', './da\tta', 'mcp.cwd-invalid', 'AR9O2'],
    ['an empty string', '', 'mcp.cwd-invalid', 'AR9O2'],
    ['"./.."', './..', 'mcp.cwd-escapes', 'AR9O5'],
    ['an inner ".."', './a/../b', 'mcp.cwd-escapes', 'AR9O5'],
    ['".." under PLUGIN_DATA', '${PLUGIN_DATA}/../other', 'mcp.cwd-escapes', 'AR9O5'],
    ['".." under PLUGIN_ROOT', '${PLUGIN_ROOT}/..', 'mcp.cwd-escapes', 'AR9O5'],
    ['another placeholder inside', './${WORKDIR}', 'mcp.placeholder-rejected', 'AR9O3'],
  ])('%s is an error and the server is not packaged', (_what, cwd, code, rule) => {
    const { servers, findings } = build([{ name: 's', command: 'npx', cwd }]);
    expect(servers).toEqual({});
    expect(findings.map((f) => `${f.code} ${f.rule} ${f.severity} ${f.path}`)).toEqual([
      `${code} ${rule} error mcp.json#/mcpServers/s/cwd`,
    ]);
  });
});

describe('buildServers: env and ${VAR} placeholders (§9.1, §9.2)', () => {
  it.each(['PLUGIN_ROOT', 'PLUGIN_DATA', 'plugin_root', 'Plugin_Data'])(
    'env may not set %s: AR9O2 error, not packaged',
    (key) => {
      const { servers, findings } = build([{ name: 's', command: 'npx', env: { [key]: '/x' } }]);
      expect(servers).toEqual({});
      expect(codes(findings)).toEqual([`mcp.env-reserved mcp.json#/mcpServers/s/env/${key}`]);
    },
  );

  it('a reserved name that forwards itself is refused, not dropped', () => {
    const { servers, findings } = build([{ name: 's', command: 'npx', env: { PLUGIN_ROOT: '${PLUGIN_ROOT}' } }]);
    expect(servers).toEqual({});
    expect(findings.map((f) => f.code)).toEqual(['mcp.env-reserved']);
  });

  it('KEY = "${KEY}" is left out with an AR9O3 warning; the rest of the server is packaged', () => {
    const { servers, findings } = build([{ name: 's', command: 'npx', env: { API_KEY: '${API_KEY}', MODE: 'fast' } }]);
    expect(servers.s).toEqual({ type: 'stdio', command: 'npx', env: { MODE: 'fast' } });
    expect(findings.map((f) => `${f.code} ${f.rule} ${f.severity} ${f.path}`)).toEqual([
      'mcp.env-forward-dropped AR9O3 warning mcp.json#/mcpServers/s/env/API_KEY',
    ]);
  });

  it('when every env entry only forwards, env is omitted', () => {
    expect(build([{ name: 's', command: 'npx', env: { A: '${A}' } }]).servers.s).toEqual({
      type: 'stdio',
      command: 'npx',
    });
  });

  it.each([
    ['an env value forwarding another name', { env: { API_KEY: '${TOKEN}' } }, 'env/API_KEY'],
    ['an env value with a placeholder inside', { env: { URL: 'https://${HOST}/x' } }, 'env/URL'],
    ['an env name', { env: { '${NAME}': 'x' } }, 'env/${NAME}'],
    ['an argument', { args: ['--token', '${TOKEN}'] }, 'args/1'],
    ['an argument with text around', { args: ['--token=${TOKEN}'] }, 'args/0'],
    ['a lower-case placeholder', { args: ['${plugin_root}/x'] }, 'args/0'],
    ['an empty placeholder', { args: ['${}'] }, 'args/0'],
  ])('any other ${VAR} in %s is an AR9O3 error and the server is not packaged', (_what, extra, pointer) => {
    const { servers, findings } = build([
      { name: 's', command: 'npx', ...extra },
      { name: 'ok', command: 'npx' },
    ]);
    expect(Object.keys(servers)).toEqual(['ok']);
    expect(findings.map((f) => `${f.code} ${f.rule} ${f.severity} ${f.path}`)).toEqual([
      `mcp.placeholder-rejected AR9O3 error mcp.json#/mcpServers/s/${pointer}`,
    ]);
  });

  it.each([
    ['a url', { url: 'https://${HOST}/mcp' }, 'url'],
    ['a url with ${PLUGIN_ROOT}', { url: 'https://example.com/${PLUGIN_ROOT}' }, 'url'],
    ['a header value', { headers: { 'X-Tenant': '${TENANT}' } }, 'headers/X-Tenant'],
    ['a header value with ${PLUGIN_DATA}', { headers: { 'X-Dir': '${PLUGIN_DATA}' } }, 'headers/X-Dir'],
  ])('any ${VAR} in %s is an AR9O3 error: nothing is expanded there', (_what, extra, pointer) => {
    const { servers, findings } = build([{ name: 's', transport: 'http', url: 'https://example.com/mcp', ...extra }]);
    expect(servers).toEqual({});
    expect(findings.filter((f) => f.code === 'mcp.placeholder-rejected').map((f) => f.path)).toEqual([
      `mcp.json#/mcpServers/s/${pointer}`,
    ]);
  });

  it('${PLUGIN_ROOT} and ${PLUGIN_DATA} are kept in args, env values and cwd', () => {
    const config = {
      name: 's',
      command: 'npx',
      args: ['--config', '${PLUGIN_ROOT}/config/db.json', '${PLUGIN_DATA}${PLUGIN_ROOT}'],
      env: { DATA_DIR: '${PLUGIN_DATA}/db' },
      cwd: '${PLUGIN_ROOT}',
    };
    const { servers, findings } = build([config]);
    expect(findings).toEqual([]);
    expect(servers.s).toEqual({ type: 'stdio', command: 'npx', args: config.args, env: config.env, cwd: config.cwd });
  });

  it.each(['$HOME', '${', '$${', 'a}b', '$(cmd)'])('%s is not a placeholder in an argument', (arg) => {
    expect(build([{ name: 's', command: 'npx', args: [arg] }]).findings).toEqual([]);
  });

  it.each([
    ['empty', ''],
    ['with "="', 'A=B'],
    ['with a control character', 'A\nB'],
  ])('an env name that is %s cannot be set: AR9O2 error', (_what, key) => {
    const { servers, findings } = build([{ name: 's', command: 'npx', env: { [key]: 'x' } }]);
    expect(servers).toEqual({});
    expect(findings.map((f) => `${f.code} ${f.rule}`)).toEqual(['mcp.env-name-invalid AR9O2']);
  });
});

describe('buildServers: remote url (§7.2.1)', () => {
  it.each([
    'https://example.com/mcp',
    'https://example.com:8443/mcp?tenant=public',
    'HTTPS://EXAMPLE.COM/mcp',
    'http://localhost/mcp',
    'http://localhost:3000/mcp',
    'http://LOCALHOST:3000/mcp',
    'http://127.0.0.1:8080/mcp',
    'http://127.255.3.4/mcp',
    'http://[::1]:8080/mcp',
    'http://[0:0:0:0:0:0:0:1]/mcp',
  ])('%s is packaged as written', (url) => {
    const { servers, findings } = build([{ name: 'r', transport: 'http', url }]);
    expect(findings).toEqual([]);
    expect(servers.r).toEqual({ type: 'streamable-http', url });
  });

  it.each([
    ['not absolute', 'example.com/mcp', 'mcp.url-invalid'],
    ['a path', '/mcp', 'mcp.url-invalid'],
    ['empty', '', 'mcp.url-invalid'],
    ['another scheme', 'ftp://example.com/mcp', 'mcp.url-invalid'],
    ['a websocket', 'wss://example.com/mcp', 'mcp.url-invalid'],
    ['missing a host', 'https://', 'mcp.url-invalid'],
    ['with a space', 'https://exa mple.com/mcp', 'mcp.url-invalid'],
    ['with a tab the parser would strip', 'https://example.com/m\tcp', 'mcp.url-invalid'],
    ['with a backslash', 'https://example.com\\mcp', 'mcp.url-invalid'],
    ['with user and password', 'https://user:pass@example.com/mcp', 'mcp.url-userinfo'],
    ['with an empty userinfo', 'https://@example.com/mcp', 'mcp.url-userinfo'],
    ['with a fragment', 'https://example.com/mcp#part', 'mcp.url-fragment'],
    ['with an empty fragment', 'https://example.com/mcp#', 'mcp.url-fragment'],
    ['http to a public host', 'http://example.com/mcp', 'mcp.url-insecure'],
    ['http to a localhost subdomain', 'http://localhost.example.com/mcp', 'mcp.url-insecure'],
    ['http to a host under localhost', 'http://api.localhost/mcp', 'mcp.url-insecure'],
    ['http to localhost with a trailing dot', 'http://localhost./mcp', 'mcp.url-insecure'],
    ['http to 128.0.0.1', 'http://128.0.0.1/mcp', 'mcp.url-insecure'],
    ['http to an IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/mcp', 'mcp.url-insecure'],
    ['http to 0.0.0.0', 'http://0.0.0.0/mcp', 'mcp.url-insecure'],
  ])('a url %s is an AR9O2 error and the server is not packaged', (_what, url, code) => {
    const { servers, findings } = build([{ name: 'r', transport: 'sse', url }]);
    expect(servers).toEqual({});
    expect(findings.map((f) => `${f.code} ${f.rule} ${f.severity} ${f.path}`)).toEqual([
      `${code} AR9O2 error mcp.json#/mcpServers/r/url`,
    ]);
  });

  it('each url problem is reported', () => {
    const { findings } = build([{ name: 'r', transport: 'http', url: 'http://u:p@example.com/#x' }]);
    expect(findings.map((f) => f.code)).toEqual(['mcp.url-fragment', 'mcp.url-insecure', 'mcp.url-userinfo']);
  });
});

describe('buildServers: headers (§7.2.1, RFC 9110)', () => {
  const withHeaders = (headers: Record<string, string>) =>
    build([{ name: 'r', transport: 'http', url: 'https://example.com/mcp', headers }]);

  it('valid headers are packaged with names sorted', () => {
    const { servers, findings } = withHeaders({
      'X-Tenant': 'public-tenant',
      Accept: 'application/json',
      'X-Tab': 'a\tb',
      'X-Empty': '',
      "!#$%&'*+-.^_`|~": 'v',
    });
    expect(findings).toEqual([]);
    expect(Object.keys((servers.r as { headers: object }).headers)).toEqual([
      "!#$%&'*+-.^_`|~",
      'Accept',
      'X-Empty',
      'X-Tab',
      'X-Tenant',
    ]);
  });

  it.each(['X Tenant', 'X:Tenant', '', 'X-Ä', 'X(1)', 'X-Tenant\r\n', 'X/Y'])(
    'the header name %j is not a token: AR9O2 error',
    (name) => {
      const { servers, findings } = withHeaders({ [name]: 'v' });
      expect(servers).toEqual({});
      expect(findings.map((f) => f.code)).toEqual(['mcp.header-name-invalid']);
    },
  );

  it.each([
    ['CR LF', 'a\r\nInjected: 1'],
    ['NUL', 'a\u0000b'],
    ['DEL', 'a\u007fb'],
    ['an escape', '\u001b[31m'],
    ['a leading space', ' value'],
    ['a trailing tab', 'value\t'],
    ['a character above U+00FF', 'v€'],
  ])('a header value with %s is invalid: AR9O2 error', (_what, value) => {
    const { servers, findings } = withHeaders({ 'X-Tenant': value });
    expect(servers).toEqual({});
    expect(codes(findings)).toEqual(['mcp.header-value-invalid mcp.json#/mcpServers/r/headers/X-Tenant']);
  });

  it('the same name under different casing makes the entry invalid, and each spelling is reported', () => {
    const { servers, findings } = withHeaders({ 'X-Tenant': 'a', 'x-tenant': 'b', 'X-Other': 'c' });
    expect(servers).toEqual({});
    expect(codes(findings)).toEqual([
      'mcp.header-duplicate mcp.json#/mcpServers/r/headers/X-Tenant',
      'mcp.header-duplicate mcp.json#/mcpServers/r/headers/x-tenant',
    ]);
  });

  it.each(['Authorization', 'authorization', 'Proxy-Authorization', 'COOKIE'])(
    'a %s header is refused when building: AR9O2 error, not packaged',
    (name) => {
      const { servers, findings } = withHeaders({ [name]: 'Bearer x' });
      expect(servers).toEqual({});
      expect(findings.map((f) => `${f.code} ${f.rule} ${f.severity}`)).toEqual([
        'mcp.header-credential-rejected AR9O2 error',
      ]);
    },
  );
});

describe('buildServers: server names', () => {
  it.each([
    ['empty', ''],
    ['with a newline', 'a\nb'],
    ['with an escape', 'a\u001b[2Jb'],
  ])('a name that is %s is refused: AR9O2 error', (_what, name) => {
    const { servers, findings } = build([
      { name, command: 'npx' },
      { name: 'ok', command: 'npx' },
    ]);
    expect(Object.keys(servers)).toEqual(['ok']);
    expect(findings.map((f) => `${f.code} ${f.rule} ${f.severity}`)).toEqual(['mcp.server-name-invalid AR9O2 error']);
  });

  it('a name that is not a string is refused at #/mcpServers', () => {
    const { findings } = build([{ name: 7, command: 'npx' } as unknown as McpServerConfig]);
    expect(codes(findings)).toEqual(['mcp.server-name-invalid mcp.json#/mcpServers']);
  });

  it('a name used twice packages neither server, whatever the order', () => {
    const config: McpServerConfig[] = [
      { name: 'dup', command: 'a' },
      { name: 'ok', command: 'npx' },
      { name: 'dup', command: 'b' },
    ];
    for (const order of [config, [...config].reverse()]) {
      const { servers, findings } = build(order);
      expect(servers).toEqual({ ok: { type: 'stdio', command: 'npx' } });
      expect(findings).toEqual([
        {
          code: 'mcp.server-name-duplicate',
          rule: 'AR9O2',
          severity: 'error',
          path: 'mcp.json#/mcpServers/dup',
          message: 'is configured 2 times; none of them is packaged',
        },
      ]);
    }
  });

  it('a disabled server does not clash with an enabled one of the same name', () => {
    const { servers } = build([
      { name: 'x', command: 'old', enabled: false },
      { name: 'x', command: 'npx' },
    ]);
    expect(servers).toEqual({ x: { type: 'stdio', command: 'npx' } });
  });

  it.each([
    ['a/b', 'a~1b'],
    ['a~b', 'a~0b'],
    ['~/', '~0~1'],
    ['~1', '~01'],
    ['é space', 'é space'],
  ])('the name %j appears in finding paths as %j (RFC 6901)', (name, token) => {
    const { servers, findings } = build([{ name, command: 'npx', env: { 'K/~': '${OTHER}' } }]);
    expect(servers).toEqual({});
    expect(findings.map((f) => f.path)).toEqual([`mcp.json#/mcpServers/${token}/env/K~1~0`]);
  });

  it('any other name is packaged as written, including __proto__', () => {
    const { servers, findings } = build([
      { name: '__proto__', command: 'npx' },
      { name: 'Has Spaces.and/slash', command: 'npx' },
    ]);
    expect(findings).toEqual([]);
    expect(Object.keys(servers)).toEqual(['Has Spaces.and/slash', '__proto__']);
    expect(Object.getPrototypeOf(servers)).toBe(Object.prototype);
    expect(JSON.stringify(servers)).toContain('"__proto__":{"type":"stdio","command":"npx"}');
  });
});

describe('buildServers: isolation and determinism', () => {
  const config: McpServerConfig[] = [
    { name: 'zeta', transport: 'sse', url: 'https://legacy.example.com/sse' },
    {
      name: 'alpha',
      command: '${PLUGIN_ROOT}/bin/validator',
      args: ['--data', '${PLUGIN_DATA}/validator'],
      env: { Z: '1', CONFIG: '${PLUGIN_ROOT}/config.json', KEY: '${KEY}' },
      cwd: '${PLUGIN_ROOT}',
    },
    { name: 'bad-url', transport: 'http', url: 'http://example.com' },
    {
      name: 'mid',
      transport: 'http',
      url: 'https://deploy.example.com/mcp',
      headers: { 'X-Tenant': 'public', Accept: 'application/json' },
    },
    { name: 'bad-env', command: 'npx', env: { PLUGIN_DATA: '/x' } },
    { name: 'Beta', command: 'uvx', enabled: false },
    { name: 'ä', command: './bin/missing' },
  ];

  it('one bad entry never keeps the others out', () => {
    const { servers } = build(config, new Set(['bin/validator']));
    expect(Object.keys(servers)).toEqual(['alpha', 'mid', 'zeta', 'ä']);
  });

  it('the same servers in any order give identical mcpServers JSON and findings', () => {
    const reference = build(config, new Set(['bin/validator']));
    const text = JSON.stringify(reference.servers, null, 2);
    expect(Object.keys(reference.servers)).toEqual(['alpha', 'mid', 'zeta', 'ä']);
    for (let seed = 1; seed <= 20; seed++) {
      const shuffled = [...config].sort((a, b) => (hash(a.name, seed) - hash(b.name, seed)) | 0);
      const result = build(shuffled, new Set(['bin/validator']));
      expect(JSON.stringify(result.servers, null, 2)).toBe(text);
      expect(result.findings).toEqual(reference.findings);
    }
    expect(JSON.stringify(build([...config].reverse(), new Set(['bin/validator'])).servers, null, 2)).toBe(text);
  });

  it('the input is not changed and the output shares nothing with it', () => {
    const input: McpServerConfig[] = [{ name: 's', command: 'npx', args: ['a'], env: { A: '1' } }];
    const copy = structuredClone(input);
    const { servers } = build(input);
    expect(input).toEqual(copy);
    const s = servers.s as { args: string[]; env: Record<string, string> };
    expect(s.args).not.toBe(input[0]?.args);
    expect(s.env).not.toBe(input[0]?.env);
  });

  it('what it builds reads back unchanged and without findings', () => {
    const built = build(config, new Set(['bin/validator']));
    const back = read({ $schema: SCHEMA, mcpServers: built.servers });
    expect(back).toEqual({ servers: built.servers, mcpDisabled: false, findings: [] });
  });
});

function hash(text: string, seed: number): number {
  let h = seed;
  for (const ch of text) h = Math.imul(h ^ (ch.codePointAt(0) ?? 0), 0x9e3779b1);
  return h;
}

describe('readServers: top level (§7.2.1, §7.2.2)', () => {
  it('the §7.2.1 example loads with every server', () => {
    const example = {
      $schema: SCHEMA,
      mcpServers: {
        'local-validator': {
          type: 'stdio',
          command: './bin/validator',
          args: ['--data', '${PLUGIN_DATA}/validator'],
          env: { CONFIG: '${PLUGIN_ROOT}/config.json' },
          cwd: '${PLUGIN_ROOT}',
        },
        'deployment-api': {
          type: 'streamable-http',
          url: 'https://deploy.example.com/mcp',
          headers: { 'X-Tenant': 'public-tenant' },
        },
        'legacy-events': { type: 'sse', url: 'https://legacy.example.com/sse' },
      },
    };
    const result = read(example);
    expect(result.findings).toEqual([]);
    expect(result.mcpDisabled).toBe(false);
    expect(result.servers).toEqual(example.mcpServers);
    expect(Object.keys(result.servers)).toEqual(['deployment-api', 'legacy-events', 'local-validator']);
  });

  it('an empty mcpServers is valid', () => {
    expect(read({ $schema: SCHEMA, mcpServers: {} })).toEqual({ servers: {}, mcpDisabled: false, findings: [] });
  });

  it.each([
    [
      'an unknown top-level field',
      { $schema: SCHEMA, mcpServers: { s: { type: 'stdio', command: 'npx' } }, 'x/y': 1 },
      'mcp.top-level-field-unknown mcp.json#/x~1y',
    ],
    ['no mcpServers', { $schema: SCHEMA }, 'mcp.servers-missing mcp.json#/mcpServers'],
    ['an array mcpServers', { $schema: SCHEMA, mcpServers: [] }, 'mcp.servers-not-object mcp.json#/mcpServers'],
    ['a null mcpServers', { $schema: SCHEMA, mcpServers: null }, 'mcp.servers-not-object mcp.json#/mcpServers'],
  ])('%s disables MCP with an AR9O2 error', (_what, value, expected) => {
    const result = read(value);
    expect(result.mcpDisabled).toBe(true);
    expect(result.servers).toEqual({});
    expect(codes(result.findings)).toEqual([expected]);
    expect(severities(result.findings)).toEqual(['AR9O2 error']);
  });

  it.each([null, [], 'x', 1])(
    'a document that is not an object (%j) disables MCP; checkMcpManifestVersion reports it',
    (value) => {
      expect(read(value)).toEqual({ servers: {}, mcpDisabled: true, findings: [] });
    },
  );

  it('$schema is not checked here', () => {
    expect(read({ $schema: 'https://example.com/other.json', mcpServers: {} }).mcpDisabled).toBe(false);
  });
});

describe('readServers: entries are checked one by one (§7.2.1, §7.2.2)', () => {
  it.each([
    ['not an object', 'npx', 'mcp.server-not-object', ''],
    ['null', null, 'mcp.server-not-object', ''],
    ['without type', { command: 'npx' }, 'mcp.type-missing', '/type'],
    ['of an unknown type', { type: 'http', url: 'https://example.com' }, 'mcp.type-unknown', '/type'],
    ['with an unknown field', { type: 'stdio', command: 'npx', enabled: true }, 'mcp.field-unknown', '/enabled'],
    [
      'with a field of another variant',
      { type: 'stdio', command: 'npx', url: 'https://example.com' },
      'mcp.field-unknown',
      '/url',
    ],
    ['remote with a stdio field', { type: 'sse', url: 'https://example.com', env: {} }, 'mcp.field-unknown', '/env'],
    ['stdio without command', { type: 'stdio' }, 'mcp.field-missing', '/command'],
    ['remote without url', { type: 'streamable-http' }, 'mcp.field-missing', '/url'],
    ['with a numeric command', { type: 'stdio', command: 1 }, 'mcp.field-type', '/command'],
    ['with args not an array', { type: 'stdio', command: 'npx', args: 'serve' }, 'mcp.field-type', '/args'],
    ['with a numeric argument', { type: 'stdio', command: 'npx', args: ['a', 2] }, 'mcp.field-type', '/args/1'],
    ['with env an array', { type: 'stdio', command: 'npx', env: [] }, 'mcp.field-type', '/env'],
    ['with a numeric env value', { type: 'stdio', command: 'npx', env: { A: 1 } }, 'mcp.field-type', '/env/A'],
    ['with a numeric cwd', { type: 'stdio', command: 'npx', cwd: 1 }, 'mcp.field-type', '/cwd'],
    [
      'with headers a string',
      { type: 'sse', url: 'https://example.com', headers: 'X: y' },
      'mcp.field-type',
      '/headers',
    ],
    [
      'with a null header value',
      { type: 'sse', url: 'https://example.com', headers: { X: null } },
      'mcp.field-type',
      '/headers/X',
    ],
    [
      'with env PLUGIN_ROOT',
      { type: 'stdio', command: 'npx', env: { PLUGIN_ROOT: '/x' } },
      'mcp.env-reserved',
      '/env/PLUGIN_ROOT',
    ],
    [
      'with a command escaping the root (§4.1 example)',
      { type: 'stdio', command: '../bin/server' },
      'mcp.command-escapes',
      '/command',
    ],
    [
      'with a cwd not plugin-relative (§4.1 example)',
      { type: 'stdio', command: 'npx', cwd: 'data' },
      'mcp.cwd-invalid',
      '/cwd',
    ],
    [
      'with a ${PLUGIN_ROOT} command, which is never expanded',
      { type: 'stdio', command: '${PLUGIN_ROOT}/bin/server' },
      'mcp.command-invalid',
      '/command',
    ],
    ['with a shell command line', { type: 'stdio', command: 'npx -y x' }, 'mcp.command-invalid', '/command'],
    [
      'with an http url to a public host',
      { type: 'streamable-http', url: 'http://example.com' },
      'mcp.url-insecure',
      '/url',
    ],
    ['with a url fragment', { type: 'streamable-http', url: 'https://example.com/#x' }, 'mcp.url-fragment', '/url'],
    ['with url userinfo', { type: 'streamable-http', url: 'https://u:p@example.com/' }, 'mcp.url-userinfo', '/url'],
    ['with a relative url', { type: 'streamable-http', url: '/mcp' }, 'mcp.url-invalid', '/url'],
    [
      'with a header name that is not a token',
      { type: 'sse', url: 'https://example.com', headers: { 'X Y': 'v' } },
      'mcp.header-name-invalid',
      '/headers/X Y',
    ],
    [
      'with a header value holding CR LF',
      { type: 'sse', url: 'https://example.com', headers: { X: 'a\r\nb' } },
      'mcp.header-value-invalid',
      '/headers/X',
    ],
  ])('an entry %s is skipped with an error; the other servers load', (_what, entry, code, pointer) => {
    const result = read({ $schema: SCHEMA, mcpServers: { bad: entry, good: { type: 'stdio', command: 'npx' } } });
    expect(result.mcpDisabled).toBe(false);
    expect(result.servers).toEqual({ good: { type: 'stdio', command: 'npx' } });
    expect(codes(result.findings)).toEqual([`${code} mcp.json#/mcpServers/bad${pointer}`]);
    expect(result.findings[0]?.severity).toBe('error');
  });

  it('a duplicated header name is reported for each spelling', () => {
    const result = readOne('r', { type: 'sse', url: 'https://example.com', headers: { A: '1', a: '2' } });
    expect(result.servers).toEqual({});
    expect(result.findings.map((f) => f.code)).toEqual(['mcp.header-duplicate', 'mcp.header-duplicate']);
  });

  it('every failing rule of an entry is reported, not only the first', () => {
    const result = readOne('s', { type: 'stdio', command: '/bin/x', cwd: '/tmp', env: { PLUGIN_DATA: '' }, extra: 1 });
    expect(result.findings.map((f) => f.code)).toEqual([
      'mcp.command-escapes',
      'mcp.cwd-invalid',
      'mcp.env-reserved',
      'mcp.field-unknown',
    ]);
  });
});

describe('readServers: what a client loads but reports (§9.2, §7.2.1)', () => {
  it.each([
    ['an argument', { type: 'stdio', command: 'npx', args: ['${HOME}/x'] }, '/args/0'],
    [
      'a forwarding env value, which is kept',
      { type: 'stdio', command: 'npx', env: { API_KEY: '${API_KEY}' } },
      '/env/API_KEY',
    ],
    ['a cwd', { type: 'stdio', command: 'npx', cwd: './${DIR}' }, '/cwd'],
    ['a url', { type: 'streamable-http', url: 'https://example.com/${PATH}' }, '/url'],
    ['a url with ${PLUGIN_ROOT}', { type: 'streamable-http', url: 'https://example.com/?r=${PLUGIN_ROOT}' }, '/url'],
    [
      'a header value',
      { type: 'sse', url: 'https://example.com', headers: { 'X-Tenant': '${TENANT}' } },
      '/headers/X-Tenant',
    ],
  ])('an unsupported ${VAR} in %s is an AR9O3 warning and the server loads unchanged', (_what, entry, pointer) => {
    const result = readOne('s', entry);
    expect(result.servers.s).toEqual(entry);
    expect(result.findings.map((f) => `${f.code} ${f.rule} ${f.severity} ${f.path}`)).toEqual([
      `mcp.placeholder-literal AR9O3 warning mcp.json#/mcpServers/s${pointer}`,
    ]);
  });

  it.each(['Authorization', 'proxy-authorization', 'Cookie'])(
    'a %s header is an AR9O2 warning and the server loads',
    (name) => {
      const entry = { type: 'streamable-http', url: 'https://example.com', headers: { [name]: 'Bearer x' } };
      const result = readOne('s', entry);
      expect(result.servers.s).toEqual(entry);
      expect(result.findings.map((f) => `${f.code} ${f.rule} ${f.severity}`)).toEqual([
        'mcp.header-credential AR9O2 warning',
      ]);
    },
  );

  it.each([
    ['a case variant of PLUGIN_ROOT in env', { type: 'stdio', command: 'npx', env: { plugin_root: 'x' } }],
    ['an env name with "="', { type: 'stdio', command: 'npx', env: { 'A=B': 'x' } }],
    ['an empty server name', { type: 'stdio', command: 'npx' }],
  ])('%s is not an entry rule of the spec, so the server loads', (_what, entry) => {
    const name = _what.includes('server name') ? '' : 's';
    const result = readOne(name, entry);
    expect(result.findings).toEqual([]);
    expect(result.servers[name]).toEqual(entry);
  });

  it('a "./" command is not looked up: a reader does not know the package files', () => {
    expect(readOne('s', { type: 'stdio', command: './bin/anything' }).findings).toEqual([]);
  });

  it.each([
    ['a/b', 'a~1b'],
    ['~', '~0'],
    ['~/~1', '~0~1~01'],
  ])('the server %j is reported at mcpServers/%s (RFC 6901)', (name, token) => {
    const result = readOne(name, { type: 'stdio' });
    expect(result.findings.map((f) => f.path)).toEqual([`mcp.json#/mcpServers/${token}/command`]);
  });

  it('a __proto__ server from JSON.parse stays an own member', () => {
    const result = read(
      JSON.parse(
        `{"$schema":"${SCHEMA}","mcpServers":{"__proto__":{"type":"stdio","command":"npx","env":{"__proto__":"x"}}}}`,
      ),
    );
    expect(result.findings).toEqual([]);
    expect(Object.keys(result.servers)).toEqual(['__proto__']);
    expect(JSON.stringify(result.servers)).toBe(
      '{"__proto__":{"type":"stdio","command":"npx","env":{"__proto__":"x"}}}',
    );
  });

  it('the same document with members in any order reads to identical JSON', () => {
    const a = { type: 'stdio', env: { B: '1', A: '2' }, command: 'npx' };
    const b = { url: 'https://example.com', type: 'sse' };
    const one = read({ $schema: SCHEMA, mcpServers: { a, b } });
    const two = read({ mcpServers: { b, a }, $schema: SCHEMA });
    expect(JSON.stringify(two)).toBe(JSON.stringify(one));
    expect(JSON.stringify(one.servers)).toBe(
      '{"a":{"type":"stdio","command":"npx","env":{"A":"2","B":"1"}},"b":{"type":"sse","url":"https://example.com"}}',
    );
  });

  it('the input is not changed', () => {
    const doc = {
      $schema: SCHEMA,
      mcpServers: { s: { type: 'stdio', command: 'npx', args: ['a'], env: { B: '1', A: '2' } } },
    };
    const copy = structuredClone(doc);
    read(doc);
    expect(doc).toEqual(copy);
  });
});

describe('messages never quote a value (headers, env, url and args may hold credentials)', () => {
  const CANARY = 'canary-7f3a9c-secret';
  const secretConfig: McpServerConfig[] = [
    {
      name: 'env',
      command: 'npx',
      env: { PLUGIN_ROOT: CANARY, TOKEN: `${CANARY}\${OTHER}`, 'A=B': CANARY },
      args: [`--token=${CANARY}\${X}`],
    },
    { name: 'url', transport: 'http', url: `http://user:${CANARY}@example.com/mcp?token=${CANARY}#${CANARY}` },
    { name: 'url2', transport: 'http', url: `https://exa mple.com/${CANARY}` },
    {
      name: 'hdr',
      transport: 'http',
      url: 'https://example.com',
      headers: { Authorization: `Bearer ${CANARY}`, 'X-Key': `${CANARY}\r\n`, 'x-key': `\${${CANARY}}` },
    },
    { name: 'cmd', command: `${CANARY} --flag`, cwd: `/abs/${CANARY}` },
    { name: 'esc', command: `../${CANARY}`, cwd: `./../${CANARY}` },
  ];

  it('building reports each problem without the secret', () => {
    const { findings } = build(secretConfig);
    expect(findings.length).toBeGreaterThan(10);
    for (const f of findings) {
      expect(f.message).not.toContain(CANARY);
      expect(f.path).not.toContain(CANARY);
    }
  });

  it('reading reports each problem without the secret', () => {
    const { findings } = read({
      $schema: SCHEMA,
      mcpServers: {
        env: {
          type: 'stdio',
          command: 'npx',
          env: { PLUGIN_DATA: CANARY, TOKEN: `\${${CANARY}}` },
          args: [`\${${CANARY}}`],
          cwd: CANARY,
        },
        url: { type: 'sse', url: `http://user:${CANARY}@example.com/${CANARY}#${CANARY}` },
        hdr: { type: 'sse', url: 'https://example.com', headers: { Cookie: CANARY, 'X-Key': `\u0000${CANARY}`, X: 1 } },
        cmd: { type: 'stdio', command: `\${${CANARY}}` },
        typ: { type: CANARY, command: CANARY },
        bad: CANARY,
      },
    });
    expect(findings.length).toBeGreaterThan(8);
    for (const f of findings) {
      expect(f.message).not.toContain(CANARY);
      expect(f.path).not.toContain(CANARY);
    }
  });
});

describe('MCP_FINDING_CODES', () => {
  it('the server definitions are the same in every pinned version, so one validator serves both', () => {
    const defs = (v: '1.0.0' | '1.1.0') => (PINNED_SCHEMAS[v].mcp as { $defs: unknown }).$defs;
    expect(defs('1.1.0')).toEqual(defs('1.0.0'));
  });

  it('the schema backstop accepts what building writes and refuses what breaks #/$defs/server', () => {
    const { servers } = build(
      [
        { name: 'a', command: './bin/x', args: ['${PLUGIN_ROOT}'], env: { A: '1' }, cwd: '${PLUGIN_DATA}/c' },
        { name: 'b', transport: 'http', url: 'https://example.com', headers: { 'X-A': 'b' } },
        { name: 'c', transport: 'sse', url: 'http://localhost:1/sse' },
      ],
      new Set(['bin/x']),
    );
    expect(Object.values(servers).map(serverSchemaAccepts)).toEqual([true, true, true]);
    expect(serverSchemaAccepts({ type: 'stdio', command: '' })).toBe(false);
    expect(serverSchemaAccepts({ type: 'stdio', command: 'npx', env: { PLUGIN_DATA: 'x' } })).toBe(false);
    expect(serverSchemaAccepts({ type: 'stdio', command: 'npx', cwd: 'data' })).toBe(false);
    expect(serverSchemaAccepts({ type: 'sse', url: 'https://example.com', command: 'npx' })).toBe(false);
  });

  it('no code reuses a document-level mcp.json code, and any code in FINDING_CODES has the same meaning there', () => {
    for (const code of ['mcp.not-object', 'mcp.schema-missing', 'mcp.schema-unsupported', 'mcp.spec-mismatch']) {
      expect(Object.hasOwn(MCP_FINDING_CODES, code), code).toBe(false);
    }
    for (const [code, info] of Object.entries(MCP_FINDING_CODES)) {
      if (Object.hasOwn(FINDING_CODES, code))
        expect(FINDING_CODES[code as keyof typeof FINDING_CODES], code).toEqual(info);
    }
  });

  it.each(Object.entries(MCP_FINDING_CODES))('%s has an AR9O rule and a text citing the spec', (_code, info) => {
    expect(RULES).toContain(info.rule);
    expect(['AR9O2', 'AR9O3', 'AR9O4', 'AR9O5']).toContain(info.rule);
    expect(info.text).toMatch(/§\d/);
  });

  afterAll(() => {
    // Every finding the tests produced carries the rule and severity its code has in the table
    // (the server check also reports likely secrets, whose codes are the secrets module's).
    for (const f of produced) {
      const info =
        MCP_FINDING_CODES[f.code as keyof typeof MCP_FINDING_CODES] ??
        SECRET_FINDING_CODES[f.code as keyof typeof SECRET_FINDING_CODES];
      expect(info, f.code).toBeDefined();
      expect([f.rule, f.severity]).toEqual([info.rule, info.severity]);
    }
    const unused = Object.keys(MCP_FINDING_CODES).filter((code) => !produced.some((f) => f.code === code));
    expect(unused).toEqual(['mcp.schema-violation']);
  });
});
