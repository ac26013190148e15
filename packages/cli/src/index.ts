export { main } from './main.js';
export type { CliIO, Writer } from './io.js';
export { EXIT_OK, EXIT_FAILURE, EXIT_USAGE } from './io.js';
