// What a CommonJS consumer gets from each package: `require` it, note the file Node resolved and
// the kind of every export, call one function. The same report as probe.mjs, so the two compare.
const { readFileSync, writeFileSync } = require('node:fs');

async function probe(callsPath, reportPath) {
  const calls = JSON.parse(readFileSync(callsPath, 'utf8'));
  const report = {};
  for (const { name, fn, args } of calls) {
    const exports = require(name);
    report[name] = {
      resolved: require.resolve(name),
      exports: Object.fromEntries(Object.keys(exports).map((key) => [key, typeof exports[key]])),
      result: await exports[fn](...args),
    };
  }
  writeFileSync(reportPath, JSON.stringify(report));
}

probe(process.argv[2], process.argv[3]).catch((error) => {
  process.stderr.write(`${error?.stack ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
