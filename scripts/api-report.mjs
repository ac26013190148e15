// The record of every public API: one API Extractor report per public entry point, committed as
// packages/<p>/etc/<name>.api.md, so a change to what hosts can call shows up in review.
//
//   node scripts/api-report.mjs           writes the reports (pnpm api)
//   node scripts/api-report.mjs --check   fails when a report is out of date or missing, when an
//                                         etc/ report names no entry point, or on any API Extractor
//                                         error or warning (e.g. ae-forgotten-export)
//
// Entry points come from each public package.json `exports`: every subpath whose `import` types
// are a built declaration file. `.` is reported as `<unscoped-name>.api.md`, `./paths` as
// `<unscoped-name>-paths.api.md`. It reads dist/, so run `pnpm build` first.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PACKAGES = join(ROOT, 'packages');
const REPORT_SUFFIX = '.api.md';

/** Every public package: its folder, its manifest, and the unscoped name its reports carry. */
function publicPackages() {
  return readdirSync(PACKAGES, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(PACKAGES, entry.name, 'package.json')))
    .map((entry) => {
      const dir = join(PACKAGES, entry.name);
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      return { dir, manifest, unscoped: manifest.name.replace(/^@[^/]+\//, '') };
    })
    .filter(({ manifest }) => manifest.private !== true)
    .sort((a, b) => a.manifest.name.localeCompare(b.manifest.name));
}

/** The declaration file an ESM consumer gets for one export target: `import.types`, else `types`. */
function declarationOf(target) {
  if (typeof target === 'string') return target.endsWith('.d.ts') ? target : undefined;
  if (target === null || typeof target !== 'object' || Array.isArray(target)) return undefined;
  for (const condition of ['import', 'types', 'default']) {
    const found = target[condition] === undefined ? undefined : declarationOf(target[condition]);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** `{ subpath, declaration, report }` for each entry point a package exports. */
function entryPoints({ manifest, unscoped }) {
  const exports =
    typeof manifest.exports === 'string' || Object.keys(manifest.exports ?? {}).every((key) => !key.startsWith('.'))
      ? { '.': manifest.exports ?? manifest.types }
      : manifest.exports;
  return Object.entries(exports)
    .map(([subpath, target]) => ({ subpath, declaration: declarationOf(target) }))
    .filter(({ declaration }) => declaration !== undefined)
    .map(({ subpath, declaration }) => ({
      subpath,
      declaration,
      report: `${subpath === '.' ? unscoped : `${unscoped}-${subpath.slice(2).replaceAll('/', '-')}`}${REPORT_SUFFIX}`,
    }));
}

/** The whole API Extractor configuration: no config file, nothing merged from its defaults. */
function configFor(pkg, entry, tempFolder) {
  return {
    projectFolder: pkg.dir,
    mainEntryPointFilePath: join(pkg.dir, entry.declaration),
    bundledPackages: [],
    newlineKind: 'lf',
    enumMemberOrder: 'by-name',
    compiler: {
      // The built declarations, resolved as a Node ESM consumer resolves them: sibling packages
      // through their exports to their own dist/ declarations, never to src/.
      overrideTsconfig: {
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2023'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          strict: true,
        },
        // The entry point alone: without it, every file under the package folder (src/, test/,
        // the CJS declarations) would join the program.
        files: [join(pkg.dir, entry.declaration)],
      },
      skipLibCheck: false,
    },
    apiReport: {
      enabled: true,
      reportFileName: entry.report,
      reportFolder: join(pkg.dir, 'etc'),
      reportTempFolder: tempFolder,
      includeForgottenExports: false,
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      compilerMessageReporting: { default: { logLevel: 'warning' } },
      extractorMessageReporting: {
        default: { logLevel: 'warning' },
        // A type an exported signature uses that the entry point does not export: hosts could
        // receive it but not name it. A failure, not a line in the report that a review may miss.
        'ae-forgotten-export': { logLevel: 'warning', addToApiReportFile: false },
        // The packages do not sort their API into alpha/beta/public stages: everything an entry
        // point exports is public, so an untagged declaration is not a finding.
        'ae-missing-release-tag': { logLevel: 'none' },
        'ae-undocumented': { logLevel: 'none' },
      },
      // The comments are written for readers, not in strict TSDoc syntax; API Extractor does not
      // render them anywhere, so their syntax is not checked.
      tsdocMessageReporting: { default: { logLevel: 'none' } },
    },
  };
}

/** The differences between two texts as `diff -u` prints them, or a summary where it cannot. */
function difference(before, after, label) {
  try {
    execFileSync('diff', ['-u', '--label', `${label} (committed)`, '--label', `${label} (built)`, before, after], {
      encoding: 'utf8',
    });
    return '';
  } catch (error) {
    if (error.status === 1) return error.stdout;
    return `  (could not compare: ${error.message})\n`;
  }
}

function main(args) {
  const unknown = args.filter((arg) => arg !== '--check');
  if (unknown.length > 0) {
    process.stderr.write(`api-report: unknown argument ${unknown.join(' ')}; usage: api-report.mjs [--check]\n`);
    return 2;
  }
  const check = args.includes('--check');
  const tempFolder = mkdtempSync(join(tmpdir(), 'agentproto-api-report-'));
  const problems = [];
  try {
    for (const pkg of publicPackages()) {
      const entries = entryPoints(pkg);
      const where = relative(ROOT, pkg.dir);
      if (entries.length === 0) problems.push(`${pkg.manifest.name}: exports no declaration file`);
      for (const entry of entries) {
        const label = `${pkg.manifest.name}${entry.subpath === '.' ? '' : entry.subpath.slice(1)}`;
        const declaration = join(pkg.dir, entry.declaration);
        if (!existsSync(declaration)) {
          problems.push(`${label}: ${relative(ROOT, declaration)} is missing; run pnpm build first`);
          continue;
        }
        if (!check) mkdirSync(join(pkg.dir, 'etc'), { recursive: true });
        const extractorConfig = ExtractorConfig.prepare({
          configObject: configFor(pkg, entry, tempFolder),
          configObjectFullPath: undefined,
          packageJsonFullPath: join(pkg.dir, 'package.json'),
        });
        const result = Extractor.invoke(extractorConfig, {
          // In check mode nothing in etc/ is written: a changed report is a failure to fix by hand.
          localBuild: !check,
          messageCallback(message) {
            message.handled = true;
            if (message.logLevel !== 'error' && message.logLevel !== 'warning') return;
            // API Extractor's own progress notes ("report created", "not copied") are warnings
            // too; a changed or missing report is reported below, with its diff.
            if (message.category === 'console' && message.logLevel === 'warning') return;
            const at = message.sourceFilePath
              ? `${relative(ROOT, message.sourceFilePath)}:${message.sourceFileLine}:${message.sourceFileColumn} `
              : '';
            problems.push(`${label}: ${message.logLevel} ${at}[${message.messageId}] ${message.text}`);
          },
        });
        const committed = join(pkg.dir, 'etc', entry.report);
        if (check && result.apiReportChanged) {
          const built = join(tempFolder, entry.report);
          const diff = existsSync(committed)
            ? difference(committed, built, relative(ROOT, committed))
            : `  ${relative(ROOT, committed)} does not exist\n`;
          problems.push(
            `${label}: ${relative(ROOT, committed)} is out of date (run pnpm api and commit it):\n${diff.trimEnd()}`,
          );
        } else if (!check && result.apiReportChanged) {
          process.stdout.write(`api-report: wrote ${relative(ROOT, committed)}\n`);
        }
      }
      // A report left behind by an entry point that is gone records an API nobody can call.
      const reports = new Set(entries.map(({ report }) => report));
      const etc = join(pkg.dir, 'etc');
      const stale = existsSync(etc)
        ? readdirSync(etc).filter((file) => file.endsWith(REPORT_SUFFIX) && !reports.has(file))
        : [];
      for (const file of stale) {
        if (check) problems.push(`${pkg.manifest.name}: ${where}/etc/${file} names no entry point in exports`);
        else {
          rmSync(join(etc, file));
          process.stdout.write(`api-report: removed ${where}/etc/${file}\n`);
        }
      }
    }
  } finally {
    rmSync(tempFolder, { recursive: true, force: true });
  }
  if (problems.length === 0) {
    if (check) process.stdout.write('api-report: every API report is current\n');
    return 0;
  }
  process.stderr.write(`${problems.join('\n')}\n`);
  process.stderr.write(`api-report: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n`);
  return 1;
}

process.exitCode = main(process.argv.slice(2));
