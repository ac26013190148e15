import { runIsolated, startEgressProxy } from './src/index.ts';
const t0 = performance.now();
const r = await runIsolated({
  argv: ['node', '/app/main.js'],
  env: { PATH: '/usr/bin:/bin' },
  mounts: [
    { source: '/tmp/sbx', target: '/app' },
    { source: '/tmp/sbx-scratch', target: '/scratch', writable: true },
  ],
  cwd: '/app',
  limits: { memoryMb: 256, maxProcesses: 50 },
});
console.log(r.reason, r.stdout.toString(), r.stderr.toString(), performance.now() - t0);
const egress = await startEgressProxy({ allow: ['127.0.0.1:9'] });
const r2 = await runIsolated({
  argv: [
    '/bin/sh',
    '-c',
    'printf "CONNECT 127.0.0.1:22 HTTP/1.1\\r\\n\\r\\n" | socat - TCP:127.0.0.1:3128; echo; printf "CONNECT 127.0.0.1:9 HTTP/1.1\\r\\n\\r\\n" | timeout 1 socat - TCP:127.0.0.1:3128',
  ],
  env: { PATH: '/usr/bin:/bin' },
  egress,
  timeoutMs: 5000,
});
console.log(r2.reason, JSON.stringify(r2.stdout.toString()), r2.stderr.toString(), egress.refused);
await egress.close();
