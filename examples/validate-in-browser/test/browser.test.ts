import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Finding, type PluginValidation, validatePlugin } from '@agentproto/agent-plugins';
import { type Browser, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { folderTree, tarGzOf, zipOf } from '../../../packages/agent-plugins/test/support/archives.js';
import { pluginSandbox } from '../../../packages/agent-plugins/test/support/read-fixtures.js';
import { PACKAGE_CASES } from '../../../packages/agent-plugins/test/support/validate-packages.js';
import { PAGE_CSP, type PageServer, startPageServer } from '../src/serve.js';

// Issue 17, "A page people can use": "Tested in a real browser: Debian's chromium driven by
// playwright-core [...] pointed at the system binary (no browser download), started by the
// test; the test uploads the repo's golden and conformance packages through the file input and
// checks that the rendered findings equal the Node validator's; it runs the page under a CSP
// that forbids unsafe-eval; and it saves a screenshot of one verdict as a test artifact."

const CHROMIUM = '/usr/bin/chromium';
/** Where the screenshot of a verdict is kept (dist/ is not committed; CI keeps the workspace). */
const SCREENSHOT = fileURLToPath(new URL('../dist/verdict.png', import.meta.url));
const golden = (spec: string) =>
  fileURLToPath(new URL(`../../../packages/agent-plugins/test/golden/${spec}/`, import.meta.url));

let server: PageServer;
let browser: Browser;
let page: Page;
/** What the page printed to its console: a CSP violation (eval, inline script, a connection) shows here. */
const consoleErrors: string[] = [];
const scratch: string[] = [];

beforeAll(async () => {
  // The page bundles the workspace's sources, as every test here runs them.
  server = await startPageServer(0, true);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    chromiumSandbox: false,
    // No background connections: this machine's network is closed, and the page needs none.
    args: [
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = await browser.newPage({ viewport: { width: 1100, height: 1400 } });
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(error.message));
  await page.goto(server.url);
  await page.getByText('Ready: choose or drop a plugin.').waitFor();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Rendered {
  outcome: string;
  findings: Pick<Finding, 'code' | 'path' | 'rule' | 'severity' | 'message'>[];
  skills: string[];
  servers: string[];
}

/** Waits for the page's verdict on `source` and reads it back from the DOM, as a person sees it. */
async function renderedVerdict(source: string): Promise<Rendered> {
  await page
    .getByRole('status')
    .filter({ hasText: `Validated ${source}:` })
    .waitFor();
  return page.evaluate(READ_VERDICT);
}

/** Read in the page: the outcome heading, each finding's data and message, the lists. */
const READ_VERDICT = `(() => {
  const texts = (selector) => Array.from(document.querySelectorAll(selector), (node) => node.textContent ?? '');
  return {
    outcome: document.getElementById('outcome')?.textContent ?? '',
    findings: Array.from(document.querySelectorAll('li.finding'), (item) => ({
      code: item.dataset.code ?? '',
      path: item.dataset.path ?? '',
      rule: item.dataset.rule ?? '',
      severity: item.dataset.severity ?? '',
      message: item.querySelector('.message')?.textContent ?? '',
    })),
    skills: texts('#skills li'),
    servers: texts('#servers li'),
  };
})()`;

/** What the page must show for the Node validator's verdict (findings in file groups, in order). */
function expected(verdict: PluginValidation): Rendered {
  const files: string[] = [];
  for (const finding of verdict.findings) {
    const file = finding.path.split('#')[0] ?? '';
    if (!files.includes(file)) files.push(file);
  }
  return {
    outcome: verdict.rejected ? 'Rejected: a client loads nothing of this plugin' : 'Loads',
    findings: files.flatMap((file) =>
      verdict.findings
        .filter((finding) => (finding.path.split('#')[0] ?? '') === file)
        .map(({ code, path, rule, severity, message }) => ({ code, path, rule, severity, message })),
    ),
    skills: verdict.rejected ? [] : verdict.skills,
    servers: verdict.rejected ? [] : verdict.servers,
  };
}

/** An upload's file, written where the file chooser can take it. */
function uploadFile(name: string, bytes: Uint8Array): string {
  const dir = mkdtempSync(join(tmpdir(), 'validate-in-browser-'));
  scratch.push(dir);
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

/** The packages people would upload: the golden ones and every package of the validation table. */
function packages(): { name: string; dir: string; links: boolean }[] {
  const made = PACKAGE_CASES.map((packageCase) => {
    const box = pluginSandbox();
    scratch.push(box.base);
    packageCase.make(box);
    return { name: packageCase.name, dir: box.root, links: /link/.test(packageCase.name) };
  });
  return [
    { name: 'the golden 1.0.0 package', dir: golden('1.0.0'), links: false },
    { name: 'the golden 1.1.0 package', dir: golden('1.1.0'), links: false },
    ...made,
  ];
}

describe('the page, in Debian Chromium under a CSP without unsafe-eval', () => {
  it('is served with the policy, and its own meta tag says the same', async () => {
    const response = await page.request.get(server.url);
    expect(response.headers()['content-security-policy']).toBe(PAGE_CSP);
    expect(PAGE_CSP).not.toMatch(/unsafe-eval|unsafe-inline/);
    const meta = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
    expect(meta).toBe(PAGE_CSP);
  });

  it('refuses eval and inline script: the policy is in force, so a bundle that needed either would fail here', async () => {
    // A script of the page's own origin that tries eval, and an inline one: both refused.
    await page.route('**/probe.js', (route) =>
      route.fulfill({
        contentType: 'text/javascript',
        body: 'try { eval("1 + 1"); document.body.dataset.evalRan = "yes"; } catch (e) { document.body.dataset.evalRefused = e.name; }',
      }),
    );
    await page.addScriptTag({ url: `${server.url}probe.js` });
    expect(await page.locator('body').getAttribute('data-eval-refused')).toBe('EvalError');
    expect(await page.locator('body').getAttribute('data-eval-ran')).toBeNull();
    await expect(page.addScriptTag({ content: 'document.body.dataset.inlineRan = "yes";' })).rejects.toThrow();
    expect(await page.locator('body').getAttribute('data-inline-ran')).toBeNull();
    await page.unroute('**/probe.js');
    // The refusals were reported to the console; what the page itself printed is checked last.
    expect(consoleErrors.splice(0).every((text) => /Content Security Policy|unsafe-eval|EvalError/i.test(text))).toBe(
      true,
    );
  });

  for (const { name, dir, links } of packages()) {
    it(`${name}: the zip, the tar.gz${links ? '' : ' and the folder'} render the Node validator's verdict`, async () => {
      const want = expected(await validatePlugin(dir));
      await page.setInputFiles('#archive', uploadFile('plugin.zip', zipOf(folderTree(dir))));
      expect(await renderedVerdict('plugin.zip')).toEqual(want);
      await page.setInputFiles('#archive', uploadFile('plugin.tar.gz', tarGzOf(dir)));
      expect(await renderedVerdict('plugin.tar.gz')).toEqual(want);
      // A folder picked in a browser carries no links (the browser follows them): only packages
      // without links are picked as folders.
      if (!links) {
        await page.setInputFiles('#folder', dir);
        const picked = await page.evaluate<number>("document.getElementById('folder').files.length");
        expect(picked).toBeGreaterThan(0);
        expect(await renderedVerdict(`folder ${dir.split('/').filter(Boolean).pop()}`)).toEqual(want);
      }
    });
  }

  it('validates an archive dropped on the drop zone', async () => {
    const zip = zipOf(folderTree(golden('1.1.0')));
    const dataTransfer = await page.evaluateHandle(`(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([new Uint8Array(${JSON.stringify([...zip])})], 'dropped.zip'));
      return transfer;
    })()`);
    await page.dispatchEvent('#drop', 'drop', { dataTransfer });
    expect(await renderedVerdict('dropped.zip')).toEqual(expected(await validatePlugin(golden('1.1.0'))));
  });

  it('explains a finding on demand, from the keyboard', async () => {
    const box = pluginSandbox();
    scratch.push(box.base);
    box.file(
      'plugin.json',
      '{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"acme.tools","colour":"blue"}\n',
    );
    mkdirSync(join(box.root, 'skills'));
    await page.setInputFiles('#archive', uploadFile('acme.tar.gz', tarGzOf(box.root)));
    await renderedVerdict('acme.tar.gz');
    const summary = page.locator('li.finding summary').first();
    await summary.focus();
    await page.keyboard.press('Enter');
    await expect(page.locator('li.finding details[open] .explain').first().textContent()).resolves.toMatch(/AR9O0/);
  });

  it('saves a screenshot of one verdict', async () => {
    const box = pluginSandbox();
    scratch.push(box.base);
    PACKAGE_CASES.find((c) => c.name.startsWith('a skill with a bad name'))?.make(box);
    await page.setInputFiles('#archive', uploadFile('acme.tools.zip', zipOf(folderTree(box.root))));
    await renderedVerdict('acme.tools.zip');
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect((await import('node:fs')).statSync(SCREENSHOT).size).toBeGreaterThan(10_000);
  });

  it('printed no error to its console: no CSP violation, no failed script', () => {
    expect(consoleErrors).toEqual([]);
  });
});
