import { packageBuild } from '../../tsup.shared.ts';
import { writeValidators } from './scripts/validators.ts';

// The pinned schemas' validators, compiled ahead of time into src/generated/validators.ts.
await writeValidators(import.meta.dirname);

// modern-tar ships as ESM only: inlined, so the CJS build requires nothing ESM. yaml is
// @agentproto/documents' (its LineCounter, isMap and isSeq): one copy in a process.
const INLINED = ['modern-tar'];

// Two builds, as the two entries load their libraries differently (src/libraries.ts): the Node
// entry requires them on first use; the browser entry is built for a browser, where
// `#libraries` resolves to libraries.browser.ts (static imports). The Node build also
// writes both entries' declarations; its clean leaves the browser build's files alone, and the
// browser build cleans nothing, so the two can run at once.
export default [
  {
    ...packageBuild(['src/index.ts'], INLINED),
    dts: { entry: ['src/index.ts', 'src/browser.ts'] },
    clean: ['!browser.js', '!browser.js.map', '!browser.cjs', '!browser.cjs.map'],
  },
  {
    ...packageBuild(['src/browser.ts'], INLINED),
    platform: 'browser' as const,
    dts: false,
    clean: false,
    onSuccess: undefined,
  },
];
