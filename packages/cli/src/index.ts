// The `agentproto` command as a function, for a host that runs it in-process.
export { main } from './main.js';
export type { CliIO, Writer } from './io.js';

// Exit statuses: 0 done, 1 the job failed or found what it checks for, 2 a wrong command line or a --strict check failed
export { EXIT_OK, EXIT_FAILURE, EXIT_USAGE } from './io.js';
