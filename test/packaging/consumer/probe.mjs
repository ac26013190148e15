// What an ESM consumer gets from each package: `import` it, note the file Node resolved and the
// kind of every export, call one function. Reads the list of calls from argv[2] and writes one
// JSON report to argv[3] (not stdout, which a called function may write to).
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const [callsPath, reportPath] = process.argv.slice(2);
const calls = JSON.parse(await readFile(callsPath, 'utf8'));
const report = {};
for (const { name, fn, args } of calls) {
  const exports = await import(name);
  report[name] = {
    resolved: fileURLToPath(import.meta.resolve(name)),
    exports: Object.fromEntries(Object.keys(exports).map((key) => [key, typeof exports[key]])),
    result: await exports[fn](...args),
  };
}
await writeFile(reportPath, JSON.stringify(report));
