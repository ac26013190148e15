import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OciRegistry, startOciRegistry } from '@agentproto/testkit';

let registry: OciRegistry;

beforeAll(async () => {
  registry = await startOciRegistry();
});

afterAll(async () => {
  await registry?.close();
});

async function uploadBlob(url: string, repository: string, data: Buffer): Promise<string> {
  const digest = `sha256:${createHash('sha256').update(data).digest('hex')}`;
  const started = await fetch(`${url}/v2/${repository}/blobs/uploads/`, { method: 'POST' });
  expect(started.status).toBe(202);
  const location = new URL(started.headers.get('location')!, url);
  location.searchParams.set('digest', digest);
  const done = await fetch(location, {
    method: 'PUT',
    body: data,
    headers: { 'content-type': 'application/octet-stream' },
  });
  expect(done.status).toBe(201);
  return digest;
}

describe('startOciRegistry', () => {
  it('serves the OCI distribution API on 127.0.0.1 and stores blobs where blobPath says', async () => {
    expect(registry.url).toBe(`http://127.0.0.1:${registry.port}`);
    expect(registry.host).toBe(`127.0.0.1:${registry.port}`);
    const ping = await fetch(`${registry.url}/v2/`);
    expect(ping.status).toBe(200);
    expect(ping.headers.get('docker-distribution-api-version')).toBe('registry/2.0');

    const data = Buffer.from('hello registry\n');
    const digest = await uploadBlob(registry.url, 'testkit/blobs', data);
    expect(await readFile(registry.blobPath(digest))).toEqual(data);
    const back = await fetch(`${registry.url}/v2/testkit/blobs/blobs/${digest}`);
    expect(Buffer.from(await back.arrayBuffer())).toEqual(data);
  });

  it('serves what is on disk: an edit to a stored blob is what the next GET returns', async () => {
    const data = Buffer.from('original bytes\n');
    const digest = await uploadBlob(registry.url, 'testkit/tamper', data);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(registry.blobPath(digest), Buffer.from('tampered bytes\n'));
    const back = await fetch(`${registry.url}/v2/testkit/tamper/blobs/${digest}`);
    expect(await back.text()).toBe('tampered bytes\n');
  });

  it('stops (connections refused) and restarts on the same port with the same storage', async () => {
    const digest = await uploadBlob(registry.url, 'testkit/restart', Buffer.from('kept\n'));
    await registry.stop();
    await expect(fetch(`${registry.url}/v2/`)).rejects.toThrow();
    await registry.restart();
    const back = await fetch(`${registry.url}/v2/testkit/restart/blobs/${digest}`);
    expect(await back.text()).toBe('kept\n');
  });
});
