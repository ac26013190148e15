// Imported rather than read at run time: the bundler inlines it into dist (ESM and CJS
// alike), and vitest and tsx read it from src, so the version is right wherever main runs.
import packageJson from '../package.json' with { type: 'json' };

export const VERSION: string = packageJson.version;
